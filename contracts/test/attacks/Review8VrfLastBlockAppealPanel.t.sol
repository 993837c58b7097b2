// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";
import {VRFRandomness} from "../../src/VRFRandomness.sol";
import {IVRFCoordinatorV2Plus} from "../../src/interfaces/IVRFCoordinatorV2Plus.sol";
import {MockVRFCoordinator} from "../mocks/MockVRFCoordinator.sol";

/// @title Review8VrfLastBlockAppealPanel (follow-up of outside review 8's VRF last-block delivery; appeals)
/// @notice Property (as round 0 since `Review8VrfLastBlockDeliveryRefunded`): a panel draw uses a randomness
/// value only from its `obtainableAt` on, so an appellant never chooses between drawing on a seed and a
/// refund. With `VRFRandomness.obtainableAt` = delivery block + 1, `AppealModule._sync` refunds a round
/// whose VRF value was delivered in its snapshot's last readable block (Cancelled, `obtainableAt >
/// readable`), but `AppealModule._startDraw` still draws in the delivery block itself, behind the delivery.
/// @dev Attack: the appellant (able to backrun the oracle's last-block delivery: a bundle) reads the seed,
/// draws the panel in that block if it likes it; otherwise it lets the round lapse, which is now refunded
/// (a free re-roll: it may appeal again on fresh randomness). Before the `+ 1` the lapse was the appellant's
/// abandonment (bond forfeited). Fix (AppealModule, the lead's file): in `_startDraw`, after `fulfil`,
/// `if (block.number < src.obtainableAt(rd.drawRequest)) revert TooEarly(rd.drawRequest, obtainableAt)`
/// (the name the node already retries on), as `AuditSessions._startDraw`.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review8VrfLastBlockAppeal*' -vv`,
/// skip removed), tier 1, 4 segments, appeal of segment 0, bond 42 TRUST, delivery at `readable`:
/// - main 481282f (delivery block counted): a draw behind the delivery draws 7 seats; the lapse ends the
///   round Expired (abandoned), appellant's cost 42 TRUST (an honest appellant forfeits on an outage).
/// - branch vrf (`obtainableAt` = delivery + 1, AppealModule unchanged): a draw behind the delivery still
///   draws 7 seats; the lapse ends it Cancelled, cost 0: the option is free.
/// - fixed (`AppealModule._startDraw` reverts `TooEarly` before `obtainableAt`): 0 seats drawn in the
///   delivery block, the lapse Cancelled, cost 0: the refund is the only ending, chosen by nobody.
contract Review8VrfLastBlockAppealPanel is AppealsFixture {
    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    MockVRFCoordinator internal coord;
    VRFRandomness internal vrf;

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
        coord = new MockVRFCoordinator();
        VRFRandomness.Config memory c;
        c.keyHash = keccak256("lane");
        c.subscriptionId = 1;
        c.requestConfirmations = 3;
        c.callbackGasLimit = 60_000;
        c.timeoutBlocks = 400; // longer than a snapshot's readability: a slow answer still counts
        vrf = new VRFRandomness(IVRFCoordinatorV2Plus(address(coord)), owner, c);
        vm.startPrank(owner);
        vrf.setRequester(address(sessions), true);
        vrf.setRequester(address(appeals), true);
        sessions.setRandomness(IRandomness(address(vrf)));
        vm.stopPrank();
    }

    /// @dev Round 0 on VRF (delivered once its confirmations passed, drawn the block after), voted PASS.
    function _finalizedOnVrf() internal returns (uint256 sid) {
        sid = _open(_uniform(4, 1), FEE);
        uint256 request = sessions.sessionOf(sid).drawRequest;
        vm.roll(block.number + CANARY_COMMIT_BLOCKS + 1);
        assertTrue(coord.fulfill(vrf.coordinatorRequestOf(request), 11), "round 0 value delivered");
        vm.roll(block.number + 1);
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 0, 0, 0);
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
    }

    /// @dev `_closeAndSettle` with the slash seed delivered by the coordinator.
    function _closeAndSettleOnVrf(uint256 sid) internal {
        uint256 end = appeals.sessionAppeals(sid).lastWindowEnd;
        if (block.number <= end) vm.roll(end + 1);
        assertTrue(appeals.advance(sid), "outcome final");
        vm.roll(block.number + 3);
        assertTrue(coord.fulfill(vrf.coordinatorRequestOf(sessions.sessionOf(sid).slashRequest), 5), "slash");
        vm.roll(block.number + 1);
        escrow.settleAppeals(sid, 1024);
        uint256 rounds = appeals.sessionAppeals(sid).roundCount;
        for (uint256 r = 0; r <= rounds; ++r) {
            address[] memory list = _roundAuditors(sid, r);
            if (list.length != 0) settlement.settleBatch(sid, r, list);
        }
    }

    function test_AppellantNeverChoosesOnALastBlockDelivery() public {
        uint256 sid = _finalizedOnVrf();
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segs(0));
        uint256 bond = before - token.balanceOf(appellant);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        uint256 readable = _sortition().snapshotReadableUntil(rd.epoch);
        vm.roll(readable);
        assertTrue(coord.fulfill(vrf.coordinatorRequestOf(rd.drawRequest), 7), "delivered in the last block");
        emit log_named_decimal_uint("bond (TRUST)", bond, 18);
        emit log_named_uint("obtainableAt - readable", vrf.obtainableAt(rd.drawRequest) - readable);
        uint256 snap = vm.snapshotState();
        // Branch 1, a seed it likes: drawn behind the delivery, in the delivery block (reverts once fixed).
        bool drewEarly;
        try appeals.drawPanel(sid, round, 64) {
            drewEarly = appeals.roundOf(sid, round).drawnSeats != 0;
        } catch {}
        emit log_named_uint(
            "branch draw: panel seats drawn in the delivery block", appeals.roundOf(sid, round).drawnSeats
        );
        vm.revertToState(snap);
        // Branch 2, a seed it dislikes: nobody can draw from readable + 1 on; the round lapses.
        vm.roll(readable + 1);
        _closeAndSettleOnVrf(sid);
        rd = appeals.roundOf(sid, round);
        uint256 cost = before - token.balanceOf(appellant);
        emit log_named_uint(
            "branch lapse: round status (7 Cancelled: refunded, 8 Expired)", uint256(rd.status)
        );
        emit log_named_decimal_uint("branch lapse: appellant's cost (TRUST)", cost, 18);
        assertTrue(rd.status == IAuditSessions.Status.Cancelled, "usable only after readable: refund");
        assertTrue(
            !drewEarly, "Review8: the appellant draws behind a last-block delivery or takes the refund"
        );
    }
}
