// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Vm} from "../utils/TestBase.sol";
import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {StakingLedger} from "../../src/StakingLedger.sol";

/// @title Review26MinStakeLoweredAfterOpening (outside review 26 of a7a6f5e, fixed: admission recheck)
/// @notice Property (SessionOps `_checkStakeBacksLocks` NatSpec, outside review 22's fix): a session with
/// appeals opens only if `minStake[t] >= slashAmount x sessionLockSeats`, so "the session's own locks never
/// refuse [an eligible auditor] a seat (reason 5 cannot occur)" and every eligible account can take
/// `seatCap` seats of any round (the premise of `AppealMath.cappedCapacity`).
/// Attack (owner acting honestly, after the opening): the rule reads Staking's minimum once, at the
/// opening. `Staking.setParams` may LOWER it later (e.g. to onboard auditors); accounts at the new minimum
/// are eligible and counted by admission (live members), but back fewer locks than the open session can
/// ask. The NatSpec's "it may rise later, never lower" covers only a rise.
/// World: minStake 72 TRUST (= 8 TRUST x 9 segments, the rule's minimum), 5 tier-1 auditors of 72 TRUST sit
/// the 9-segment session's round 0 (27 seats); after the opening the owner sets minStake 10 TRUST and 40
/// auditors of 10 TRUST join (the devnet minimum). The appellant names all 9 segments (63 seats, capped
/// bound: E 42, capacity 7 + 8 x (21 - 7) = 119, refusalsCharged).
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review26*' -vv`): lowered: 52 of 63
/// seats drawn, 101 session-held exclusions (reason 5), 0 counted refusals (reason 3), 21 earlier-panel
/// (reason 4), status Cancelled (7), refused false: UNFILLABLE with nobody refusing, the 9 contested
/// outcomes stand. Control (minimum kept, the 40 late auditors at 72 TRUST): 63 of 63, 0 reason 5, 0 reason
/// 3. Without the `_KNOWN` skip the test fails at "no session-held exclusion".
/// Severity: LOW-MEDIUM (needs an owner change of Staking's minimum while sessions with appeals are open:
/// every such session's later rounds lose the premise; an honest appeal ends UNFILLABLE with nobody
/// refusing, as in Review22CapacityAssumesStakeForSeats).
/// Fix options: in admission (`AppealAdmission._check`) recheck `minStake[t] >= slashAmount x
/// sessionLockSeats` with Staking's current minimum (refuse the round with a named error instead of
/// admitting one that cannot fill), or snapshot the opening's minimum per session and have the draw treat
/// accounts below it as barred (reason 3 of nobody's doing is worse: prefer the admission recheck), or
/// forbid `Staking.setParams` lowering a tier's minimum while sessions with appeals are unsettled.
/// Fixed (the admission recheck, `AppealAdmission._checkStakeBacksLocks` and `check_session_appeal`): with
/// the minimum lowered to 10 TRUST the quote and the appeal revert MinStakeBelowSessionLocks(1, 10e18,
/// 72e18) (9 tier-1 segments x 8 TRUST), nothing paid; the control (minimum kept) is drawn 63 of 63.
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review26*' -vv`.
contract Review26MinStakeLoweredAfterOpening is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    function _stakingParams() internal pure override returns (StakingLedger.StakingParams memory p) {
        p = super._stakingParams();
        p.minStake = [uint96(72e18), uint96(72e18), uint96(72e18)];
    }

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    function _segsN(uint256 n) internal pure returns (uint256[] memory s) {
        s = new uint256[](n);
        for (uint256 i = 0; i < n; ++i) {
            s[i] = i;
        }
    }

    function _drawCounting(uint256 sid, uint256 round) internal returns (uint256[6] memory reasons) {
        vm.recordLogs();
        _drawRound(sid, round);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        bytes32 sig = keccak256("AuditorExcluded(uint256,uint256,address,uint256)");
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics.length == 0 || logs[i].topics[0] != sig) continue;
            (, uint256 reason) = abi.decode(logs[i].data, (uint256, uint256));
            ++reasons[reason];
        }
    }

    /// @dev The session opened under 72 TRUST; then 40 more auditors of `lateStake` join, under minimum
    /// `lateMin` if `lower` (the owner's change), and the 9-segment round is drawn.
    function _run(bool lower, uint256 lateStake)
        internal
        returns (IAppealModule.Round memory rd, uint256[6] memory reasons, IAppealModule.Quote memory q)
    {
        _deployAppeals();
        _addAuditors(1, 5, 72e18);
        _nextEpoch();
        uint256 sid = _passedSession(9, FEE);
        if (lower) {
            StakingLedger.StakingParams memory p = _stakingParams();
            p.minStake = [uint96(10e18), uint96(10e18), uint96(10e18)];
            vm.prank(owner);
            staking.setParams(p);
        }
        _addAuditors(1, 40, lateStake);
        _nextEpoch();
        q = appeals.quote(sid, _segsN(9));
        uint256 round = _appeal(sid, _segsN(9));
        reasons = _drawCounting(sid, round);
        rd = appeals.roundOf(sid, round);
        emit log_named_uint("quoted seats", q.totalSeats);
        emit log_named_uint("seats drawn", rd.drawnSeats);
        emit log_named_uint("counted refusals (reason 3)", reasons[3]);
        emit log_named_uint("earlier panel (reason 4)", reasons[4]);
        emit log_named_uint("session-held (reason 5)", reasons[5]);
        emit log_named_uint("status", uint256(rd.status));
        emit log_named_uint("refused", rd.refused ? 1 : 0);
    }

    /// @dev The attack: minimum lowered to 10 TRUST after the opening, 40 auditors of 10 TRUST join: the round
    /// is refused at admission (named error), not admitted to end UNFILLABLE with nobody refusing.
    function test_LoweredMinimumRefusedAtAdmission() public {
        _deployAppeals();
        _addAuditors(1, 5, 72e18);
        _nextEpoch();
        uint256 sid = _passedSession(9, FEE);
        StakingLedger.StakingParams memory p = _stakingParams();
        p.minStake = [uint96(10e18), uint96(10e18), uint96(10e18)];
        vm.prank(owner);
        staking.setParams(p);
        _addAuditors(1, 40, 10e18);
        _nextEpoch();
        bytes memory refusal =
            abi.encodeWithSelector(IAppealModule.MinStakeBelowSessionLocks.selector, 1, 10e18, 72e18);
        vm.expectRevert(refusal);
        appeals.quote(sid, _segsN(9));
        uint256 before = token.balanceOf(appellant);
        vm.expectRevert(refusal);
        vm.prank(appellant);
        appeals.appeal(sid, _segsN(9), type(uint256).max);
        assertEq(token.balanceOf(appellant), before, "nothing paid");
    }

    /// @dev Control: the minimum kept, the 40 late auditors at 72 TRUST: drawn in full, no reason 5.
    function test_ControlMinimumKept() public {
        (IAppealModule.Round memory rd, uint256[6] memory reasons,) = _run(false, 72e18);
        assertEq(reasons[5], 0, "no session-held exclusion");
        assertEq(reasons[3], 0, "nobody refused");
        assertEq(rd.drawnSeats, 63, "drawn in full");
    }
}
