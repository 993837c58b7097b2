// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "./utils/AppealsFixture.sol";
import {IAppealModule} from "../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../src/interfaces/IRandomness.sol";

/// @notice The timing of an appeal panel's randomness against its snapshot (outside review 6,
/// `Review6AppealSeenSeedBuysNoFreeAbort`): whoever fixes the seed or not, at any block, a round nobody drew
/// while its value was obtainable and the snapshot readable is the appellant's abandonment (Expired drawn
/// short, bond forfeited, the contested outcome stands and is final, the escrow ends empty); a round is never
/// ended while it can still be drawn; one drawn in time is never abandoned. A value obtainable only after the
/// snapshot (`obtainableAt > readable`) would end Cancelled with the bond back: the lookahead source of the
/// fixture always delivers in time (its target is 2 blocks after the appeal, the snapshot readable for
/// epochs), so that branch is asserted as the rule but reached only through `obtainableAt`'s value here.
contract AppealsAbandonFuzzTest is AppealsFixture {
    uint256 internal constant PASS = 1;
    uint256 internal constant BOND = 7 * R;

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    /// @dev `look`: the seed is fixed (`fulfil`, permissionless) `lookAt` blocks after it is obtainable;
    /// `early`: someone pokes the round `earlyAt` blocks after the appeal, still within the snapshot;
    /// `draw`: the panel is drawn in time; then the round lapses `late` blocks past the snapshot.
    function testFuzz_aTimelySeedNobodyDrewForfeitsTheBond(
        bool look,
        uint16 lookAt,
        uint16 earlyAt,
        bool draw,
        uint16 late
    ) public {
        uint256 sid = _openReady(4, 1, new bytes32[](0));
        _voteRound0(sid, 0, 0, 0);
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
        uint256 before = token.balanceOf(appellant);
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        uint256 round = _appeal(sid, _segs(0));
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        uint256 readable = _sortition().snapshotReadableUntil(rd.epoch);
        IRandomness src = sessions.sourceOf(sid);
        uint256 obtainable = src.obtainableAt(rd.drawRequest);
        if (look) {
            vm.roll(bound(obtainable + lookAt, obtainable, readable));
            if (src.status(rd.drawRequest) != IRandomness.RequestStatus.Expired) src.fulfil(rd.drawRequest);
        }
        uint256 poke = block.number + earlyAt;
        if (poke <= readable) {
            vm.roll(poke);
            appeals.advance(sid);
            assertEq(
                uint256(appeals.roundOf(sid, round).status),
                uint256(IAuditSessions.Status.Created),
                "never ended while it can be drawn"
            );
        }
        if (draw && block.number + RANDOMNESS_DELAY + 1 <= readable) {
            _drawRound(sid, round);
            rd = appeals.roundOf(sid, round);
            assertEq(rd.drawnSeats, rd.totalSeats, "drawn in time");
            assertEq(uint256(rd.status), uint256(IAuditSessions.Status.Drawing), "drawn: not abandoned");
            return;
        }
        vm.roll(readable + 1 + uint256(late) % 1000);
        appeals.advance(sid);
        rd = appeals.roundOf(sid, round);
        bool inTime = src.obtainableAt(rd.drawRequest) <= readable;
        assertEq(
            uint256(rd.status),
            uint256(inTime ? IAuditSessions.Status.Expired : IAuditSessions.Status.Cancelled),
            "timely: abandoned (Expired); late: Cancelled"
        );
        assertEq(rd.drawnSeats, 0, "undrawn");
        assertEq(_outcomeOf(sid, 0), PASS, "the contested outcome stands");
        assertTrue(appeals.segmentAppeals(sid, 0).closed, "and is final");
        _closeAndSettle(sid);
        uint256 cost = before - token.balanceOf(appellant);
        assertEq(cost, inTime ? BOND : 0, "timely: the bond is forfeited; late: refunded");
        if (inTime) {
            assertTrue(token.balanceOf(address(treasury)) >= treasuryBefore + BOND, "to the treasury");
        }
        assertEq(token.balanceOf(address(escrow)), 0, "escrow empty");
    }
}
