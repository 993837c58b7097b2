// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Vm} from "./TestBase.sol";
import {AppealRefusals} from "./AppealRefusals.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAppealSettlement} from "../../src/interfaces/IAppealSettlement.sol";
import {AppealMath} from "../../src/libraries/AppealMath.sol";
import {AppealWord} from "../../src/libraries/AppealWord.sol";
import {SegmentWord} from "../../src/libraries/SegmentWord.sol";

/// @notice The AppealHandler's view of every `AppealSettled` event (outside reviews 5 and 6: a round that
/// ended undecided rescored the earlier rounds against INCONCLUSIVE). Each appeal's result is checked against
/// the counterfactual the lead's rule names, not against the contract's own helper: a segment whose last
/// panel ended REFUSED or UNFILLABLE settles every earlier appeal as if that panel had never been appealed
/// (against the outcome after the last decided panel); one whose last panel's keys were withheld over a
/// contested PASS as if that panel had voted FAIL; the undecided panel's own appellant is never rewarded.
abstract contract AppealScoringGhosts is AppealRefusals {
    /// @dev Decided appeals whose result differs from the counterfactual above (must stay 0).
    uint256 public ghostRescored;
    /// @dev Appeals a decided panel rejected (it kept the outcome they contested) with no later decided
    /// panel and no keys withheld over a PASS after it, whose appellant got any of its bond back or a
    /// reward (must stay 0).
    uint256 public ghostLostRefunded;
    /// @dev Rewards due to the appellant of a round that ended undecided (must stay 0).
    uint256 public ghostUndecidedRewards;
    /// @dev Coverage: decided appeals settled behind an undecided last panel (withheld over a PASS; any
    /// other undecided end), and lost appeals refunded because the provider withheld over a PASS (the
    /// accepted adverse inference, docs/appeals-canaries.md).
    uint256 public ghostBehindWithheldPass;
    uint256 public ghostBehindOtherUndecided;
    uint256 public ghostRefundedByWithholding;

    /// @dev `settleAppeals` with its events audited.
    function _settleAudited(uint256 sid, uint256 maxSegments) internal returns (uint256 resolved) {
        vm.recordLogs();
        try escrow.settleAppeals(sid, maxSegments) returns (uint256 r) {
            resolved = r;
        } catch {}
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 i = 0; i < logs.length; ++i) {
            if (
                logs[i].emitter != address(escrow) || logs[i].topics.length < 3
                    || logs[i].topics[0] != IAppealSettlement.AppealSettled.selector
            ) {
                continue;
            }
            (uint256 seg,, uint8 result, uint256 refund, uint256 due, uint256 paid,) =
                abi.decode(logs[i].data, (uint256, address, uint8, uint256, uint256, uint256, uint256));
            _audit(sid, uint256(logs[i].topics[2]), seg, result, refund + paid, due);
        }
    }

    function _audit(uint256 sid, uint256 round, uint256 seg, uint8 result, uint256 back, uint256 due)
        internal
    {
        uint256 w = appeals.appealWordOf(sid, seg);
        uint256 d = AppealWord.depth(w);
        IAppealModule.Round memory lastRound = appeals.roundOf(sid, AppealWord.roundAt(w, d));
        IAuditSessions.Status last = lastRound.status;
        if (AppealWord.roundAt(w, d) == round) {
            if (last != IAuditSessions.Status.Finalized && due != 0) ++ghostUndecidedRewards;
            return;
        }
        if (last == IAuditSessions.Status.Finalized) return; // every panel decided: nothing to rescore
        uint256 j = 1;
        while (AppealWord.roundAt(w, j) != round) ++j;
        bool withheldPass = last == IAuditSessions.Status.Expired
            && lastRound.drawnSeats == lastRound.totalSeats
            && AppealWord.appealedAt(w, d) == SegmentWord.OUTCOME_PASS;
        // Counterfactual: the outcome after the last decided panel, or a FAIL vote of the withheld panel.
        uint256 truth = withheldPass ? SegmentWord.OUTCOME_FAIL : AppealWord.appealedAt(w, d);
        uint256 contested = AppealWord.appealedAt(w, j);
        if (withheldPass) ++ghostBehindWithheldPass;
        else ++ghostBehindOtherUndecided;
        IAppealModule.Round memory decided;
        decided.status = IAuditSessions.Status.Finalized;
        IAppealModule.AppealResult expect = AppealMath.result(contested, truth, decided);
        if (uint8(expect) != result) ++ghostRescored;
        // Rejected by its own panel (the outcome after it is the one it contested) and nothing decided later.
        bool rejected = (j + 1 == d) && AppealWord.appealedAt(w, j + 1) == contested;
        if (rejected && back != 0) {
            if (withheldPass) ++ghostRefundedByWithholding;
            else ++ghostLostRefunded;
        }
    }
}
