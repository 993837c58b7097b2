// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Review24DrawProbe} from "./Review24DrawProbe.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review24CappedEarlierDepthTwoExact (outside review 24 of 9aecdcc, DrawModule `_cappedEarlier` at n = 1)
/// @notice Property: at depth 2 the failing segment s has two earlier panels (round 0 and round 1), and W_E
/// leaves out every auditor of either exactly once: `_cappedEarlier` must read round 1's seat words through
/// `earlierRounds`' packed round list (n = 1), not round 0's only, and not this round's own.
/// Attack tried: X, an auditor that sat on s in ROUND 1 only (not round 0) and on neither other named segment
/// before, tops up 2,900 TRUST before round 2's snapshot, sits on segments 0 and 1 of round 2 and reaches the
/// cap (2) before s: a walk that read round 0 only would keep X's 3,200 in W_E.
/// World: seat cap 2, k_0 = 1 in tier 1 (k_1 = 3, k_2 = 7), 13 honest auditors of 300 TRUST, a 4-segment PASS
/// session; round 1 on segments 0, 1, 2 (9 seats, capacity 9) drawn, voted PASS and finalized; then 20
/// refusers of 125 TRUST and X's top-up; round 2 on 0, 1, 2 (21 seats, E 29, capacity 23, charged), the
/// refusers' stake locked elsewhere; s = 2.
/// Measured (command below; weights in TRUST): earlierRounds(s) = (packed 1, count 1); 20 of 21 seats drawn,
/// the draw fails on s. Without the top-up: X 1 round-2 seat, no earlier-panel auditor of s capped, W_E 5,200
/// = rule R's, W_R 2,500 = rule R's (UNFILLABLE, 5,000 <= 5,200). With it: X at the cap (2 seats on segments
/// 0 and 1), 1 earlier-panel auditor of s capped, W_E 5,200 = rule R's (X's 3,200 out once; a walk reading
/// round 0 only would report 8,400), W_R 2,500.
/// Severity: none (property holds).
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review24CappedEarlierDepthTwo*' -vv`.
contract Review24CappedEarlierDepthTwoExact is Review24DrawProbe {
    uint256 internal constant SEGMENTS = 4;
    uint256 internal constant HONEST = 13;
    uint256 internal constant REFUSERS = 20;

    event log_named_uint(string key, uint256 val);
    event log_named_address(string key, address val);

    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatCap = 2;
        p.seatsPerTier = [uint8(1), uint8(1), uint8(3)];
    }

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    function _refuser(uint256 i) internal pure returns (address) {
        return address(uint160(0x24D20000 + i));
    }

    function _satOn(uint256 sid, uint256 round, address a, uint256 segment) internal view returns (bool) {
        uint256[] memory segs = drawModule.seatsOf(sid, round, a);
        for (uint256 j = 0; j < segs.length; ++j) {
            if (segs[j] == segment) return true;
        }
        return false;
    }

    /// @dev An auditor on s in round 1 only and on no panel of segments 0 and 1 (address(0) if none).
    function _roundOneOnly(uint256 sid, uint256 s) internal view returns (address) {
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address a = auditorAddrs[i];
            if (!_satOn(sid, 1, a, s) || _satOn(sid, 0, a, s)) continue;
            bool other = false;
            for (uint256 g = 0; g < s; ++g) {
                if (_satOn(sid, 0, a, g) || _satOn(sid, 1, a, g)) other = true;
            }
            if (!other) return a;
        }
        return address(0);
    }

    function _run(uint256 topUp)
        internal
        returns (IAppealModule.Round memory rd, uint256 ruleWE, uint256 ruleWR)
    {
        _deployAppeals();
        _addAuditors(1, HONEST, 300e18);
        _nextEpoch();
        uint256 sid = _passedSession(SEGMENTS, FEE);
        uint256[] memory named = new uint256[](3);
        named[0] = 0;
        named[1] = 1;
        named[2] = 2;
        uint256 s = 2;
        uint256 r1 = _appeal(sid, named);
        _drawRound(sid, r1);
        _publishRound(sid, r1);
        _voteRound(sid, r1, 0, 0, 0);
        assertTrue(
            appeals.roundOf(sid, r1).status == IAuditSessions.Status.Finalized, "setup: round 1 decided"
        );
        address x = _roundOneOnly(sid, s);
        emit log_named_address("X (on s in round 1 only)", x);
        if (topUp != 0 && x != address(0)) {
            token.transfer(x, topUp);
            vm.prank(x);
            staking.stake(x, topUp);
        }
        for (uint256 i = 0; i < REFUSERS; ++i) {
            _joinTier(_refuser(i), 1, 125e18);
        }
        _nextEpoch();
        IAppealModule.Quote memory q = appeals.quote(sid, named);
        assertTrue(q.refusalsCharged && q.depth == 2, "setup: depth 2, charged");
        uint256 r2 = _appeal(sid, named);
        (uint256 packed, uint256 n) = appeals.earlierRounds(sid, s);
        emit log_named_uint("earlierRounds(s): count", n);
        emit log_named_uint("earlierRounds(s): packed", packed);
        for (uint256 i = 0; i < REFUSERS; ++i) {
            _busyElsewhere(_refuser(i), 0);
        }
        _drawProbing(sid, r2, 1);
        rd = appeals.roundOf(sid, r2);
        uint256 epoch = rd.epoch;
        ruleWE = _sortition().totalWeightAt(1, epoch) - _weightAt(1, provider, epoch);
        uint256 cappedEarlier = 0;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address a = auditorAddrs[i];
            if (_satOn(sid, 0, a, s) || _satOn(sid, 1, a, s)) {
                ruleWE -= _weightAt(1, a, epoch);
                if (drawModule.seatsOf(sid, r2, a).length >= 2) ++cappedEarlier;
            }
        }
        for (uint256 i = 0; i < REFUSERS; ++i) {
            ruleWR += _weightAt(1, _refuser(i), epoch);
        }
        emit log_named_uint("round 2 seats", rd.totalSeats);
        emit log_named_uint("drawn seats", rd.drawnSeats);
        emit log_named_uint(
            "X round-2 seats (cap 2)", x == address(0) ? 0 : drawModule.seatsOf(sid, r2, x).length
        );
        emit log_named_uint("earlier-panel auditors of s at the cap", cappedEarlier);
        emit log_named_uint("rule R's W_E", ruleWE);
        emit log_named_uint("contract's W_E (probed)", probed.eligibleWeight);
        emit log_named_uint("rule R's W_R", ruleWR);
        emit log_named_uint("contract's W_R (probed)", probed.refusedWeight);
        emit log_named_uint("refused", rd.refused ? 1 : 0);
        assertTrue(rd.status == IAuditSessions.Status.Cancelled && probed.failed, "setup: the draw failed");
        assertEq(probed.cursor, s, "setup: on s");
        assertEq(n, 1, "setup: one earlier appeal panel of s");
        if (topUp != 0) {
            assertTrue(x != address(0), "setup: X exists");
            assertEq(drawModule.seatsOf(sid, r2, x).length, 2, "setup: X at the cap before s");
        }
    }

    function test_DepthTwoEligibleExact() public {
        (IAppealModule.Round memory rd, uint256 we, uint256 wr) = _run(0);
        assertEq(probed.eligibleWeight, we, "W_E: every auditor of s's round-0 and round-1 panels out once");
        assertEq(probed.refusedWeight, wr, "W_R");
        assertTrue(rd.refused == (2 * wr > we), "rule R");
    }

    function test_DepthTwoRoundOneAuditorCappedOutOfEligible() public {
        (IAppealModule.Round memory rd, uint256 we, uint256 wr) = _run(2900e18);
        assertEq(probed.eligibleWeight, we, "W_E: X (round 1 on s, capped) out once");
        assertEq(probed.refusedWeight, wr, "W_R");
        assertTrue(rd.refused == (2 * wr > we), "rule R");
    }
}
