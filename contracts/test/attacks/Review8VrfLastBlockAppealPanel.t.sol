// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfAppealsAttackFixture} from "./VrfAttackFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

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
contract Review8VrfLastBlockAppealPanel is VrfAppealsAttackFixture {
    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
        _useVrf(address(appeals));
    }

    /// @dev Round 0 on VRF (delivered once its confirmations passed, drawn the block after), voted PASS.
    function _finalizedOnVrf() internal returns (uint256 sid) {
        sid = _open(_uniform(4, 1), FEE);
        _finalizeRound0OnVrf(sid);
    }

    function test_AppellantNeverChoosesOnALastBlockDelivery() public {
        uint256 sid = _finalizedOnVrf();
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segs(0));
        uint256 bond = before - token.balanceOf(appellant);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        uint256 readable = _sortition().snapshotReadableUntil(rd.epoch);
        vm.roll(readable);
        assertTrue(_deliver(rd.drawRequest, 7), "delivered in the last block");
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
