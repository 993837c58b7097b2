// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase} from "../utils/TestBase.sol";
import {AppealMath} from "../../src/libraries/AppealMath.sol";

/// @title Review26StakePremiseBound (outside review 26 of a7a6f5e; holds, with the over-strictness measured)
/// @notice Property (SessionOps `_checkStakeBacksLocks`, `AppealMath.sessionLockSeats`): the bound is the most
/// seat locks one auditor can hold for one session: one per segment of its tier (round 0 never seats it twice
/// on a segment, a segment's appeal panels exclude its earlier panels' auditors, reason 4, and a segment
/// that did not decide is closed, so a segment has at most maxRounds appeal panels) and at most seatCap per
/// round over round 0 and at most min(maxRounds x n, 255) appeal rounds (each names >= 1 segment at a new
/// depth; `TooManyRounds`); and the Python twin (`consensus.session_stake.session_lock_seats`) agrees.
/// Checks: (1) grid checksum: sessionLockSeats over n in 1..20 and {255, 256, 300, 1024}, n_t in 1..n,
/// seatCap 1..8, maxRounds 0..4 (n outermost, then n_t, seatCap, maxRounds; h = h x 1,000,003 + v + 1 mod
/// 2^64) equals the constant tests/consensus/test_review26_session_stake_differential.py computes with the
/// Python twin; (2) fuzz: the closed form equals a round-by-round model (round 0 then each admissible
/// appeal round adds min(seatCap, segments of the tier not yet sat on)); (3) over-strictness figures.
/// Over-strictness (LOW, usability): for any session of <= 255 segments the tier term binds
/// (seatCap x (min(maxRounds x n, 255) + 1) >= n + 1 > n_t for seatCap, maxRounds >= 1), so the rule is
/// minStake >= slashAmount x n_t whatever seatCap, maxRounds or the rounds the session will really have. The
/// devnet (200 TRUST, 8 TRUST, seatCap 8) opens at most 25 segments of a tier with appeals; MAX_SEGMENTS 1024
/// of one tier needs 8,192 TRUST. Locks one auditor can hold at a session's first appeal round (round 0
/// and that round) are at most 2 x seatCap = 16 (128 TRUST): the 26..1024-segment sessions that the
/// rule refuses are unsafe only after ceil(n_t / seatCap) - 1 rounds that each seat the same auditor
/// seatCap times.
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review26*' -vv`.
contract Review26StakePremiseBound is TestBase {
    uint256 internal constant GRID_CHECKSUM = 0x7506c3745ace3fbe;

    event log_named_uint(string key, uint256 val);

    function _bigN(uint256 i) internal pure returns (uint256) {
        if (i < 20) return i + 1;
        if (i == 20) return 255;
        if (i == 21) return 256;
        if (i == 22) return 300;
        return 1024;
    }

    /// @dev (1) The grid checksum the Python twin computes.
    function test_GridChecksumMatchesPython() public pure {
        uint64 h = 0;
        for (uint256 i = 0; i < 24; ++i) {
            uint256 n = _bigN(i);
            for (uint256 nt = 1; nt <= n; ++nt) {
                for (uint256 c = 1; c <= 8; ++c) {
                    for (uint256 mr = 0; mr <= 4; ++mr) {
                        uint256 v = AppealMath.sessionLockSeats(nt, n, c, mr);
                        unchecked {
                            h = h * 1_000_003 + uint64(v) + 1;
                        }
                    }
                }
            }
        }
        assertEq(uint256(h), GRID_CHECKSUM, "sessionLockSeats grid checksum = Python twin's");
    }

    /// @dev The round-by-round model: round 0 and each admissible appeal round seat one auditor at most
    /// seatCap times, never twice on a segment of its tier.
    function _model(uint256 nt, uint256 n, uint256 cap, uint256 maxRounds)
        internal
        pure
        returns (uint256 seats)
    {
        uint256 rounds = maxRounds * n;
        if (rounds > 255) rounds = 255;
        for (uint256 r = 0; r <= rounds && seats < nt; ++r) {
            uint256 add = nt - seats;
            seats += add < cap ? add : cap;
        }
    }

    /// @dev (2) The closed form equals the model (fuzz).
    function testFuzz_ClosedFormIsTheRoundModel(uint256 n, uint256 nt, uint256 cap, uint256 maxRounds)
        public
        pure
    {
        n = 1 + n % 1024;
        nt = 1 + nt % n;
        cap = 1 + cap % 64;
        maxRounds = maxRounds % 5;
        assertEq(AppealMath.sessionLockSeats(nt, n, cap, maxRounds), _model(nt, n, cap, maxRounds), "model");
    }

    /// @dev (3) The figures: devnet 25 segments per tier; the tier term binds for every n <= 255.
    function test_OverStrictnessFigures() public {
        uint256 slash = 8e18;
        uint256 minStake = 200e18;
        uint256 most = 0;
        for (uint256 nt = 1; nt <= 1024; ++nt) {
            if (slash * AppealMath.sessionLockSeats(nt, nt, 8, 1) <= minStake) most = nt;
        }
        emit log_named_uint("devnet: most segments of a tier per session (200 / 8 TRUST, cap 8)", most);
        assertEq(most, 25, "25 segments");
        emit log_named_uint(
            "1024 segments of one tier need (wei)", slash * AppealMath.sessionLockSeats(1024, 1024, 8, 1)
        );
        assertEq(slash * AppealMath.sessionLockSeats(1024, 1024, 8, 1), 8192e18, "8,192 TRUST");
        for (uint256 n = 1; n <= 255; ++n) {
            assertEq(AppealMath.sessionLockSeats(n, n, 1, 1), n, "tier term binds (seatCap 1, maxRounds 1)");
        }
        // Locks at a session's first appeal round: round 0 and that round, 2 x seatCap = 16 (128 TRUST).
        emit log_named_uint("locks on one auditor at the first appeal round (cap 8)", 2 * 8);
    }
}
