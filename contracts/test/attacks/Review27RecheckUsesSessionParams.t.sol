// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {StakingLedger} from "../../src/StakingLedger.sol";

/// @title Review27RecheckUsesSessionParams (outside review 27 of 043042c: `AppealAdmission._checkStakeBacksLocks`)
/// @notice Property: admission's stake-premise recheck and capacity use the SESSION's own parameters
/// (slashAmount, seatCap: `core.paramsAt(s.paramsVersion)`; maxRounds: `paramsOf(sessionId)`, versioned by
/// session id) and only Staking's minimum as it is now, so the owner publishing new core parameters after
/// the opening neither refuses an appeal that should be admitted nor changes the round it admits.
/// Attack (owner acting honestly): after a 9-segment session opened under slashAmount 8 TRUST, seatCap 8
/// and minStake 72 TRUST (the rule's minimum), the owner publishes a version with slashAmount 16 TRUST and
/// seatCap 2 (under which 72 TRUST could back none of a 9-segment session: 16 x 9 = 144).
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review27*' -vv`): the quote for all 9
/// segments is the control's (63 seats, bond 378 TRUST), the round is drawn 63 of 63 and
/// each seat locks the session's 8 TRUST (45 auditors: locked stake grew by 63 x 8 = 504 TRUST).
/// Result: HOLDS (the recheck reads the session's version; only a change of Staking's minimum matters -
/// lowered: refused, Review26MinStakeLoweredAfterOpening; raised: Review27MinStakeRaisedChargesStaleMembers).
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review27RecheckUsesSessionParams*' -vv`.
contract Review27RecheckUsesSessionParams is NoCanaryAppealsFixture {
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

    function _totalLocked() internal view returns (uint256 sum) {
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            sum += staking.poolOf(auditorAddrs[i]).locked;
        }
    }

    function _run(bool change)
        internal
        returns (IAppealModule.Quote memory q, IAppealModule.Round memory rd)
    {
        _deployAppeals();
        _addAuditors(1, 5, 72e18);
        _nextEpoch();
        uint256 sid = _passedSession(9, FEE);
        if (change) {
            IAuditSessions.SessionParams memory p = _sessionParams();
            p.slashAmount = 16e18;
            p.seatCap = 2;
            vm.prank(owner);
            sessions.setParams(p);
        }
        _addAuditors(1, 40, 72e18);
        _nextEpoch();
        q = appeals.quote(sid, _segsN(9));
        uint256 before = _totalLocked();
        uint256 round = _appeal(sid, _segsN(9));
        _drawRound(sid, round);
        rd = appeals.roundOf(sid, round);
        uint256 grown = _totalLocked() - before;
        emit log_named_uint("quoted seats", q.totalSeats);
        emit log_named_uint("bond", q.bond);
        emit log_named_uint("seats drawn", rd.drawnSeats);
        emit log_named_uint("locked stake grown by", grown);
        assertEq(grown, uint256(rd.drawnSeats) * 8e18, "each seat locks the session's slashAmount");
    }

    function test_NewCoreParamsDoNotReachOpenSession() public {
        (IAppealModule.Quote memory q, IAppealModule.Round memory rd) = _run(true);
        assertEq(q.totalSeats, 63, "the session's own seats");
        assertEq(rd.drawnSeats, 63, "drawn in full");
    }

    function test_ControlNoChange() public {
        (IAppealModule.Quote memory q, IAppealModule.Round memory rd) = _run(false);
        assertEq(q.totalSeats, 63, "63 seats");
        assertEq(rd.drawnSeats, 63, "drawn in full");
    }
}
