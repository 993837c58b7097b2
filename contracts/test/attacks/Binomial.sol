// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title Binomial
/// @notice Exact binomial tail thresholds for the statistical property tests.
/// @dev X ~ Bin(n, p). Probabilities are computed in 1e36 fixed point from the recursion
/// pmf(0) = (1-p)^n, pmf(j+1) = pmf(j) * (n-j)/(j+1) * p/(1-p), with every rounding chosen so that
/// the tail probability we compare with alpha is an OVER-estimate of the true one. The thresholds
/// are therefore conservative: an honest protocol fails a test built on them with probability at
/// most alpha (the tests use alpha = 1e-6). Accumulated rounding is below n * 1e-36, far under alpha.
/// Stochastic dominance makes the bounds usable with a bound on p: a count of independent trials
/// whose success probabilities are all <= p (>= p) is dominated by (dominates) Bin(n, p).
library Binomial {
    uint256 internal constant ONE = 1e36;
    uint256 private constant WAD_TO_ONE = 1e18;

    /// @notice Smallest k with P(X >= k) <= alpha: observing k or more successes rejects "p or less".
    /// @param n Trials (at most 1000).
    /// @param pWad Upper bound on the success probability per trial (WAD).
    /// @param alphaWad False-failure probability the caller accepts (WAD).
    function upperThreshold(uint256 n, uint256 pWad, uint256 alphaWad) internal pure returns (uint256 k) {
        require(n <= 1000 && pWad < 1e18, "Binomial: bad n or p");
        uint256 p = pWad * WAD_TO_ONE;
        uint256 q = ONE - p;
        uint256 alpha = alphaWad * WAD_TO_ONE;
        uint256 pmf = _powDown(q, n);
        uint256 below = 0; // sum of pmf(j), j < k, rounded down: 1 - below >= P(X >= k)
        for (k = 0; k <= n; ++k) {
            if (ONE - below <= alpha) return k;
            below += pmf;
            if (below > ONE) below = ONE;
            if (k < n) pmf = pmf * ((n - k) * p) / ((k + 1) * q);
        }
        return n + 1;
    }

    /// @notice Smallest m such that observing fewer than m successes has probability <= alpha, i.e.
    /// P(X <= m - 1) <= alpha: observing fewer than m successes rejects "p or more". 0 if even
    /// P(X = 0) > alpha (then n is too small to reject anything).
    /// @param n Trials (at most 1000).
    /// @param pWad Lower bound on the success probability per trial (WAD).
    /// @param alphaWad False-failure probability the caller accepts (WAD).
    function lowerThreshold(uint256 n, uint256 pWad, uint256 alphaWad) internal pure returns (uint256 m) {
        require(n <= 1000 && pWad > 0 && pWad < 1e18, "Binomial: bad n or p");
        uint256 p = pWad * WAD_TO_ONE;
        uint256 q = ONE - p;
        uint256 alpha = alphaWad * WAD_TO_ONE;
        uint256 pmf = _powUp(q, n);
        uint256 atMost = 0; // sum of pmf(j), j <= k, rounded up: >= P(X <= k)
        for (uint256 k = 0; k <= n; ++k) {
            atMost += pmf;
            if (atMost > alpha) return k;
            if (k < n) pmf = _divUp(pmf * ((n - k) * p), (k + 1) * q);
        }
        return n + 1;
    }

    function _powDown(uint256 x, uint256 n) private pure returns (uint256 r) {
        r = ONE;
        for (uint256 i = 0; i < n; ++i) {
            r = r * x / ONE;
        }
    }

    function _powUp(uint256 x, uint256 n) private pure returns (uint256 r) {
        r = ONE;
        for (uint256 i = 0; i < n; ++i) {
            r = _divUp(r * x, ONE);
        }
    }

    function _divUp(uint256 a, uint256 b) private pure returns (uint256) {
        return a == 0 ? 0 : (a - 1) / b + 1;
    }
}
