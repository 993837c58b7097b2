// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review15DefenderChurnSplitsTheRound (outside review 15 of 7cd4068, `DrawModule._decisiveRefusals`)
/// @notice Property (docs/appeals-canaries.md "Dead leaves"): the defender cannot veto an appeal of a PASS:
/// a draw the live tier could seat, failed by lock refusals, ends REFUSED (the contested PASS voided).
/// Attack: 7cd4068 charges a failed draw of several segments only if `live >= k_0 + ... + k_{d-1} + k_d`,
/// counting every earlier-panel seat whether its auditor is still live or not. The defender's round-0
/// auditors (the provider's friends) LEAVE before the appeal's snapshot: each lowers `live` by one and the bar
/// not at all. Then its accounts that stayed refuse (stake locked elsewhere) and the round ends UNFILLABLE:
/// both PASSes final, the appellant pays R per drawn seat. Each segment appealed alone (its live earlier
/// count 0) ends REFUSED.
/// Measured (this file): 15 tier-1 auditors of 1,000 TRUST, k_0 = 3, k_1 = 7, 2 PASS segments; every round-0
/// auditor and extras deregister before the appeal's epoch, leaving 9 live (< 3 + 7 = 10); 3 live ones busy.
/// Round {0, 1}: the draw fails at 6 of 14 seats, not refused (UNFILLABLE), both PASS stand (outcome 1), the
/// appellant loses 36 TRUST (R per drawn seat). Round {0} alone: 6 of 7 drawn, REFUSED, the PASS voided. Before 7cd4068 the 2-segment round was
/// REFUSED too. The node refuses to send the 2-segment round (`live_shortfall`: 9 < 10, "appeal them one per
/// round"; tests/consensus/test_review15_multi_segment_churn.py), so only a forced appeal, or one whose
/// transaction lands in the next epoch after the defender left in the quoted one (the node reads the current
/// epoch's snapshot, `Protocol.snapshot_members`; the round draws from the epoch it is mined in), is exposed.
/// Severity LOW (node-mitigated; the boundary race needs a quote near an epoch's end).
/// Fix proposals: (1) the node checks both the current snapshot and the one the next epoch will take (the
/// live tree now), or `appeal` takes the expected epoch and reverts if it moved; (2) on chain, Review 13's
/// exact admission (a per-tier live count at the snapshot) lets the draw drop the earlier-seats bar.
/// Mutations (tried, reverted): removing the `rd.segmentCount > 1` clause in `_decisiveRefusals` makes the
/// `_KNOWN` test pass (REFUSED) and fails `Review13SeatableSegmentVoidsItsUnseatableNeighbour` (the trade-off);
/// `segmentCount >= 1` (the bar on single rounds too) fails `test_OneSegmentAloneIsRefused`.
/// Fix (built, proposal (2)): admission reads the exact live count at the round's snapshot and fixes the
/// round's chargeability there (`Round.refusalsCharged` iff eligible >= 2 k, eligible = live - k_0 - ... -
/// k_{d}, every earlier-panel seat subtracted as if its auditor were still live); the draw re-judges nothing,
/// so the several-segment bar is gone and a round of one or of several segments of the same tier and depth is
/// judged alike. After (this file): with 9 live both the 1- and the 2-segment round are refused up front
/// (NotEnoughEligibleAuditors 6 < 7, before any bond: the defender's leaving now costs appealability, not
/// money); with 10 live (4 busy) both are admitted with `refusalsCharged` false (7 < 14) and both end
/// UNFILLABLE (PASSes stand, R per drawn seat), as the quote said. Honest trade-off: in a tier with
/// k <= eligible < 2k, a refusing minority (e.g. the defender's accounts) ends the round UNFILLABLE; the
/// defender's round-0 friends leaving can push a tier below 2k, which the appellant sees in the quote.
/// Command: scripts/forge test --match-path 'contracts/test/attacks/Review15DefenderChurnSplitsTheRound*' -vv
contract Review15DefenderChurnSplitsTheRound is AppealsFixture {
    event log_named_uint(string key, uint256 val);

    uint256 internal sid;

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.canaryRateBps = 0;
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    function _onRound0(address a) internal view returns (bool) {
        return drawModule.seatsOf(sid, 0, a).length != 0;
    }

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 15, STAKE);
        _nextEpoch();
        sid = _open(_uniform(2, 1), FEE);
        _commitCanaries(sid, new bytes32[](0));
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 0, 0, 0); // both PASS (the contested, wrong, verdict)
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
    }

    /// @dev Every round-0 auditor and extras deregister before the appeal's epoch, leaving `keep` live;
    /// then `busy` live ones have their stake locked elsewhere (they refuse every seat).
    function _churn(uint256 keep, uint256 busy) internal {
        uint256 live = auditorAddrs.length;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            if (_onRound0(auditorAddrs[i])) {
                vm.prank(auditorAddrs[i]);
                registry.deregister();
                --live;
            }
        }
        for (uint256 i = 0; i < auditorAddrs.length && live > keep; ++i) {
            address a = auditorAddrs[i];
            if (_onRound0(a)) continue;
            vm.prank(a);
            registry.deregister();
            --live;
        }
        assertEq(live, keep, "setup: live");
        _nextEpoch();
        uint256 made = 0;
        for (uint256 i = auditorAddrs.length; i > 0 && made < busy; --i) {
            address a = auditorAddrs[i - 1];
            if (registry.isRegistered(a)) {
                uint256 free = staking.seatQuote(a).free;
                vm.prank(address(drawModule));
                (bool ok,,) = staking.lockSeat(a, 1, 0xB05E + i, free - 7e18, 0);
                assertTrue(ok, "setup: busy");
                ++made;
            }
        }
    }

    function test_NineLiveRefusesBothRoundsUpFront() public {
        _churn(9, 3);
        vm.expectRevert(
            abi.encodeWithSelector(IAppealModule.NotEnoughEligibleAuditors.selector, sid, 0, 6, 7)
        );
        appeals.quote(sid, _segs(0));
        vm.expectRevert(
            abi.encodeWithSelector(IAppealModule.NotEnoughEligibleAuditors.selector, sid, 0, 6, 7)
        );
        appeals.quote(sid, _segs(0, 1));
    }

    function test_OneAndTwoSegmentRoundsAreJudgedAlike() public {
        _churn(10, 4);
        IAppealModule.Quote memory one = appeals.quote(sid, _segs(0));
        IAppealModule.Quote memory two = appeals.quote(sid, _segs(0, 1));
        assertTrue(!one.refusalsCharged && !two.refusalsCharged, "eligible 7 < 14: neither charged");
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segs(0, 1));
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        emit log_named_uint("seats drawn (of 14)", rd.drawnSeats);
        emit log_named_uint("refused (1 = REFUSED)", rd.refused ? 1 : 0);
        assertTrue(rd.status == IAuditSessions.Status.Cancelled && !rd.refused, "UNFILLABLE, as quoted");
        _closeAndSettle(sid);
        emit log_named_uint("appellant net loss", before - token.balanceOf(appellant));
        assertEq(before - token.balanceOf(appellant), uint256(rd.drawnSeats) * R, "R per drawn seat");
        assertEq(_outcomeOf(sid, 0), 1, "segment 0 PASS stands");
        assertEq(_outcomeOf(sid, 1), 1, "segment 1 PASS stands");
    }

    function test_OneSegmentAloneEndsTheSame() public {
        _churn(10, 4);
        uint256 round = _appeal(sid, _segs(0));
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        emit log_named_uint("segment 0 alone: seats drawn (of 7)", rd.drawnSeats);
        assertTrue(rd.status == IAuditSessions.Status.Cancelled && !rd.refused, "UNFILLABLE, as quoted");
        _closeAndSettle(sid);
        assertEq(_outcomeOf(sid, 0), 1, "the PASS stands");
    }
}
