// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AttackBase} from "./AttackBase.sol";
import {Binomial} from "./Binomial.sol";

/// @title SlashCoinsUnknownAtCommit (issue 12, attack 2: predictable slash coins)
/// @notice Property: slash coins come from randomness that does not exist until the reveals close,
/// and p_slash uses the reputation fixed at the draw. So an auditor that lies where it expects
/// no slash is slashed as often as p_slash says, and the order in which anyone settles sessions
/// does not change any session's slashes.
/// @dev Tier 1, 3 seats per segment, quorum 2: one liar among three never changes an outcome, so
/// each lie is an incorrect vote. The attacker stakes 3,000 TRUST beside four honest 1,000 TRUST
/// auditors, so it holds most of the 8 seats it may take per 8-segment session.
/// The lying test stops after 100 wrong votes. If coins are unknown at commit, each wrong vote is
/// slashed independently with probability p_slash >= pMin = 0.2, so the slashes dominate
/// Bin(w, 0.2); the test fails below m, the smallest count with P(Bin(w, 0.2) <= m - 1) <= 1e-6
/// (`Binomial.lowerThreshold`, exact sum rounded to over-estimate): w = 101 gives m = 4
/// (P(X <= 3) = 4.8e-7, while P(X <= 4) = 3.1e-6).
/// Measured (`forge test --match-path 'contracts/test/attacks/*' -vv`):
/// lying: v1 (130a947) 101 wrong votes over 28 sessions, 0 slashes (first session 4 wrong, 0 slashed);
/// v2 100 wrong votes over 31 sessions, 50 slashes (first session 4 wrong, 3 slashed; bound: >= 4).
/// Order: v1 27 wrong votes drew 15 slashes settled first, 11 after 4 good sessions; v2 31 wrong
/// votes drew 5 slashes in either order.
contract SlashCoinsUnknownAtCommit is AttackBase {
    uint256 internal constant SEGMENTS = 8;
    uint256 internal constant TARGET_LIES = 100;
    uint256 internal constant MAX_SESSIONS = 60;

    address internal attacker;

    function setUp() public {
        _deployProtocol();
        for (uint256 i = 0; i < 4; ++i) {
            _newAuditor(1, 1000e18);
        }
        attacker = _newAuditor(1, 3000e18);
    }

    function _ready() internal returns (uint256 sid) {
        sid = _openUniform(SEGMENTS, 1, 0);
        _drawAll(sid);
        assertTrue(_drawDone(sid), "setup: draw failed");
        _publishKeys(sid);
    }

    /// @dev At commit time the attacker simulates the rest of the session (everyone reveals, the
    /// session is decided and settled) lying on one seat at a time, and plans to lie exactly where
    /// the lie was not slashed.
    function _planLies(uint256 sid) internal returns (uint256 lies) {
        uint256 n = _seatsOf(sid, attacker).length;
        for (uint256 j = 0; j < n; ++j) {
            _simulate();
            _castVotes(sid, attacker, uint256(1) << j, false);
            _finalize(sid);
            _settleAll(sid);
            Result memory r = results[sid][attacker];
            bool safe = r.incorrect == 1 && r.slashes == 0;
            _endSimulation();
            if (safe) lies |= uint256(1) << j;
        }
    }

    /// @notice Lying only where the simulated coin says "no slash".
    function test_liesOnlyWhereTheCoinSaysNoSlash() public {
        uint256 wrong = 0;
        uint256 slashed = 0;
        uint256 n = 0;
        uint256[3] memory first; // seats, wrong votes, slashes of the first session
        for (; n < MAX_SESSIONS && wrong < TARGET_LIES; ++n) {
            uint256 sid = _ready();
            uint256 lies = _planLies(sid);
            _freshFuture(); // from here on the chain moves on blocks the attacker did not simulate
            _castVotes(sid, attacker, lies, false);
            _finalize(sid);
            _settleAll(sid);
            Result memory r = results[sid][attacker];
            wrong += r.incorrect;
            slashed += r.slashes;
            if (n == 0) first = [_seatsOf(sid, attacker).length, r.incorrect, r.slashes];
        }
        uint256 pMin = _config().pMin;
        uint256 atLeast = Binomial.lowerThreshold(wrong, pMin, ALPHA);
        emit log_named_uint("sessions", n);
        emit log_named_uint("first session: attacker seats", first[0]);
        emit log_named_uint("first session: wrong votes", first[1]);
        emit log_named_uint("first session: slashes", first[2]);
        emit log_named_uint("wrong votes", wrong);
        emit log_named_uint("slashes", slashed);
        emit log_named_uint("fewest slashes an honest coin gives with p >= 1e-6", atLeast);
        assertGe(
            slashed,
            atLeast,
            string.concat(
                "SlashCoinsUnknownAtCommit: knowing its coins at commit, the attacker lied only where they said ",
                "'no slash': first session ",
                _u(first[1]),
                " wrong votes, ",
                _u(first[2]),
                " slashes; over ",
                _u(n),
                " sessions ",
                _u(wrong),
                " wrong votes, ",
                _u(slashed),
                " slashes (p_slash >= ",
                _pct(pMin),
                ": an unpredictable coin slashes fewer than ",
                _u(atLeast),
                " with p <= 1e-6)"
            )
        );
    }

    /// @dev Settle `first` then `then`; the attacker's slashes in the bad sessions and its
    /// reputation just before the first bad session was settled.
    function _settleInOrder(uint256[] memory first, uint256[] memory then, bool badFirst)
        internal
        returns (uint256 badSlashes, uint256 badWrong, uint256 repAtBad)
    {
        _simulate();
        repAtBad = badFirst ? _reputation(attacker) : 0;
        for (uint256 i = 0; i < first.length; ++i) {
            _settleAll(first[i]);
        }
        if (!badFirst) repAtBad = _reputation(attacker);
        for (uint256 i = 0; i < then.length; ++i) {
            _settleAll(then[i]);
        }
        uint256[] memory bad = badFirst ? first : then;
        for (uint256 i = 0; i < bad.length; ++i) {
            badSlashes += results[bad[i]][attacker].slashes;
            badWrong += results[bad[i]][attacker].incorrect;
        }
        _endSimulation();
    }

    function _pSlash(uint256 rep) internal pure returns (uint256) {
        Config memory c = _config();
        return c.pMin + (c.pMax - c.pMin) * (1e18 - rep) / 1e18;
    }

    /// @notice Settling the sessions where the attacker voted well first lowers p_slash on the others.
    function test_slashesDoNotDependOnSettlementOrder() public {
        uint256[] memory good = new uint256[](4);
        uint256[] memory bad = new uint256[](4);
        for (uint256 i = 0; i < 4; ++i) {
            good[i] = _ready();
            _castVotes(good[i], attacker, 0, false);
            _finalize(good[i]);
            bad[i] = _ready();
            _castVotes(bad[i], attacker, type(uint256).max, false);
            _finalize(bad[i]);
        }
        (uint256 slashesA, uint256 wrong, uint256 repA) = _settleInOrder(bad, good, true);
        (uint256 slashesB,, uint256 repB) = _settleInOrder(good, bad, false);
        emit log_named_uint("wrong votes in the bad sessions", wrong);
        emit log_named_decimal_uint("reputation read when bad sessions settle first", repA, 18);
        emit log_named_decimal_uint("reputation read when good sessions settle first", repB, 18);
        emit log_named_uint("slashes, bad sessions settled first", slashesA);
        emit log_named_uint("slashes, good sessions settled first", slashesB);
        assertEq(
            slashesB,
            slashesA,
            string.concat(
                "SlashCoinsUnknownAtCommit: the same ",
                _u(wrong),
                " wrong votes draw ",
                _u(slashesA),
                " slashes if their sessions settle first (reputation read for the first: ",
                _dec(repA, 18, 3),
                ", p_slash ",
                _pct(_pSlash(repA)),
                ") but ",
                _u(slashesB),
                " if 4 good sessions settle before them (reputation read: ",
                _dec(repB, 18, 3),
                ", p_slash ",
                _pct(_pSlash(repB)),
                ")"
            )
        );
    }
}
