// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IDrawModule} from "../../src/interfaces/IDrawModule.sol";
import {Vm} from "../utils/TestBase.sol";

/// @title Review21ResumedRefusalWeight (outside review 21 of 29b4b57, DrawModule `_resumeWeights`)
/// @notice Property (rule R across paginated draw calls): when a failing segment's rejections span several
/// `drawPanel` calls (a call stops after MAX_REJECTIONS_PER_CALL = 64 rejections inside the segment), the
/// refused weight W_R and the earlier-panel weight taken out of W_E that the first call measured are carried
/// to the call that fails (`_resumeWeights`, 128-bit halves), exactly once: the round ends REFUSED iff
/// 2 W_R > W_E with W_R and W_E read independently from the snapshot.
/// Attack tried: make the failing segment's refusals straddle a call boundary so that the first call's
/// refusals (or its reason-4 weight) are dropped or counted twice. Set-up: 9 honest tier-1 auditors of X TRUST,
/// a 2-segment PASS session (round 0: 3 auditors on segment 0), then 70 refusing accounts of 100 TRUST (free
/// stake locked in another session), a one-segment appeal (k_1 = 7 seats). The 6 eligible honest auditors
/// fill 6 seats; 70 refusals + 3 reason-4 rejections: the first call stops inside the segment after 64
/// rejections, the second one fails. W_R = 70 x 100 = 7,000 TRUST of weight; W_E = W_R + 6 X.
/// Measured (command below): X = 1,166 TRUST: 2 draw calls (first: 64 rejections, stopped inside the
/// segment), W_R 7,000e6 units, W_E 13,996e6, REFUSED (correct: 14,000 > 13,996; had the first call's
/// 58+ refusals been lost W_R would be <= 1,200 and the round UNFILLABLE). X = 1,167: W_E 14,002e6,
/// UNFILLABLE (correct). The boundary is exact to one TRUST of stake in both directions: HELD.
/// Severity: none (held); kept to pin the resumed bookkeeping.
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review21*' -vv`.
contract Review21ResumedRefusalWeight is NoCanaryAppealsFixture {
    uint256 internal constant HONEST = 9;
    uint256 internal constant REFUSERS = 70;

    event log_named_uint(string key, uint256 val);

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    function _weightOf(address a, uint256 epoch) internal view returns (uint256) {
        (bool exists, uint256 leaf) = _sortition().leafOf(1, a);
        return exists ? _sortition().leafWeightAt(1, epoch, leaf) : 0;
    }

    function _refuser(uint256 i) internal pure returns (address) {
        return address(uint160(0x21EF0000 + i));
    }

    /// @dev Runs the set-up with honest stake `honestStake`; returns the round, W_R, W_E and the draw calls.
    function _run(uint256 honestStake)
        internal
        returns (IAppealModule.Round memory rd, uint256 wr, uint256 we, uint256 calls, uint256 firstCall)
    {
        _deployAppeals();
        _addAuditors(1, HONEST, honestStake);
        _nextEpoch();
        uint256 sid = _passedSession(2, FEE);
        for (uint256 i = 0; i < REFUSERS; ++i) {
            address a = _refuser(i);
            _joinTier(a, 1, 100e18);
        }
        _nextEpoch();
        uint256[] memory named = new uint256[](1);
        assertTrue(appeals.quote(sid, named).refusalsCharged, "setup: charged");
        uint256 round = _appeal(sid, named);
        for (uint256 i = 0; i < REFUSERS; ++i) {
            _busyElsewhere(_refuser(i), 0);
        }
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        for (uint256 i = 0; i < 16; ++i) {
            rd = appeals.roundOf(sid, round);
            bool open = rd.status == IAuditSessions.Status.Created
                || (rd.status == IAuditSessions.Status.Drawing && rd.drawnSeats < rd.totalSeats);
            if (!open) break;
            vm.recordLogs();
            appeals.drawPanel(sid, round, 16);
            uint256 n = _exclusions(vm.getRecordedLogs());
            if (calls == 0) firstCall = n;
            ++calls;
        }
        rd = appeals.roundOf(sid, round);
        uint256 epoch = rd.epoch;
        for (uint256 i = 0; i < REFUSERS; ++i) {
            wr += _weightOf(_refuser(i), epoch);
        }
        we = _sortition().totalWeightAt(1, epoch);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            if (_seatedOn(sid, auditorAddrs[i], 0)) we -= _weightOf(auditorAddrs[i], epoch);
        }
        emit log_named_uint("draw calls", calls);
        emit log_named_uint("rejections in the first call", firstCall);
        emit log_named_uint("drawn seats", rd.drawnSeats);
        emit log_named_uint("W_R (weight units)", wr);
        emit log_named_uint("W_E (weight units)", we);
        emit log_named_uint("refused", rd.refused ? 1 : 0);
        assertTrue(rd.status == IAuditSessions.Status.Cancelled, "setup: the draw fails");
        assertEq(rd.drawnSeats, 6, "setup: the 6 eligible honest auditors are seated");
        assertGe(calls, 2, "setup: the failing segment spans calls");
        assertEq(firstCall, 64, "setup: the first call stops inside the segment");
        assertTrue(rd.refused == (2 * wr > we), "REFUSED iff 2 W_R > W_E");
    }

    function _exclusions(Vm.Log[] memory logs) internal pure returns (uint256 n) {
        bytes32 sig = IDrawModule.AuditorExcluded.selector;
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics.length != 0 && logs[i].topics[0] == sig) ++n;
        }
    }

    /// @dev W_R just over half of W_E: REFUSED only if the first call's refusals are carried.
    function test_ResumedRefusalsCarriedRefused() public {
        (IAppealModule.Round memory rd,,,,) = _run(1166e18);
        assertTrue(rd.refused, "2 W_R > W_E by 4 TRUST: REFUSED");
    }

    /// @dev W_R just under half of W_E: UNFILLABLE (nothing counted twice, reason-4 weight out once).
    function test_ResumedRefusalsCarriedUnfillable() public {
        (IAppealModule.Round memory rd,,,,) = _run(1167e18);
        assertTrue(!rd.refused, "2 W_R < W_E by 2 TRUST: UNFILLABLE");
    }
}
