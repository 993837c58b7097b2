"""Statistical layer of TRUST (SPEC 5, paper 3 and D.1): seat -> segment -> trace.

Everything here is exact where the paper is exact: the segment pass probability of
Lemma D.1, and the distribution of the weighted trace total W = sum_s w_s B_s obtained
by convolving the per-segment Bernoulli variables (weights are integers, as on chain).
The Hoeffding and Chernoff tail bounds of Proposition D.1 are provided next to the exact
value so callers can see how loose they are.

Thresholds are integers in basis points (tau_bps, beta_bps), like the contracts, so that
"W >= W_beta" is decided with integer arithmetic and never by a float rounding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special, stats

from trustnode.consensus.rules import BPS, quorum

FloatArray = NDArray[np.float64]


def binom_pmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> FloatArray:
    """Binomial pmf that stays finite for every p in [0, 1], subnormal values included.

    scipy's pmf overflows internally for subnormal p; the log form with xlogy/xlog1py has
    0 * log 0 = 0 built in, so p = 0 and p = 1 come out exactly.  Outside 0 <= x <= n it is 0.
    """
    x_a, n_a, p_a = np.broadcast_arrays(
        np.asarray(x, dtype=np.float64), np.asarray(n, dtype=np.float64), np.asarray(p, dtype=np.float64)
    )
    valid = (x_a >= 0) & (x_a <= n_a)
    xs = np.where(valid, x_a, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_pmf = (
            special.gammaln(n_a + 1)
            - special.gammaln(xs + 1)
            - special.gammaln(n_a - xs + 1)
            + special.xlogy(xs, p_a)
            + special.xlog1py(n_a - xs, -p_a)
        )
    return np.asarray(np.where(valid, np.exp(log_pmf), 0.0), dtype=np.float64)


def segment_pass_probability(
    k: ArrayLike, q: ArrayLike, eps: ArrayLike, rho: ArrayLike, *, flawed: bool = False
) -> FloatArray:
    """Probability that a segment's outcome is PASS (Lemma D.1), vectorised over parameters.

    For a correct segment (``flawed=False``) this is Lemma D.1: m ~ Bin(k, rho) malicious seats
    vote wrong (FAIL), the k - m honest seats vote correctly (PASS) with probability 1 - eps
    each, and the segment passes when at least q seats vote PASS.  For a flawed segment the
    PASS votes are the wrong ones: every malicious seat and each honest seat with probability
    eps, so PASS (a false accept) needs m + Bin(k - m, eps) >= q.
    All arguments broadcast against each other; k and q are integers with 1 <= q.
    """
    k_a, q_a, eps_a, rho_a = np.broadcast_arrays(
        np.asarray(k, dtype=np.int64),
        np.asarray(q, dtype=np.int64),
        np.asarray(eps, dtype=np.float64),
        np.asarray(rho, dtype=np.float64),
    )
    if np.any(k_a < 1) or np.any(q_a < 1):
        raise ValueError("k and q must be >= 1")
    if np.any((eps_a < 0) | (eps_a > 1)) or np.any((rho_a < 0) | (rho_a > 1)):
        raise ValueError("eps and rho must lie in [0, 1]")
    k_max = int(k_a.max()) if k_a.size else 0
    m = np.arange(k_max + 1).reshape((k_max + 1,) + (1,) * k_a.ndim)
    valid = m <= k_a
    honest = np.where(valid, k_a - m, 0)
    p_malicious = binom_pmf(m, k_a, rho_a)
    if flawed:
        # PASS votes = m + Bin(honest, eps) >= q  <=>  Bin(honest, eps) >= q - m
        need = q_a - m
        p_honest = np.where(need <= 0, 1.0, stats.binom.sf(need - 1, honest, eps_a))
    else:
        # PASS votes = Bin(honest, 1 - eps) >= q
        p_honest = stats.binom.sf(q_a - 1, honest, 1.0 - eps_a)
    terms = np.where(valid, p_malicious * p_honest, 0.0)
    return np.asarray(np.clip(terms.sum(axis=0), 0.0, 1.0), dtype=np.float64)


def weighted_bernoulli_pmf(p: ArrayLike, w: ArrayLike) -> FloatArray:
    """Exact pmf of W = sum_s w_s B_s with independent B_s ~ Bernoulli(p_s), integer w_s >= 0.

    Segments sharing (p, w) are grouped into one binomial, then groups are convolved, so the
    cost is O(groups * sum(w)) rather than O(segments * sum(w)).  Index i holds Pr[W = i].
    """
    p_a = np.atleast_1d(np.asarray(p, dtype=np.float64))
    w_a = np.atleast_1d(np.asarray(w))
    if p_a.shape != w_a.shape:
        raise ValueError("p and w must have the same length")
    if not np.all(np.equal(np.mod(w_a, 1), 0)) or np.any(w_a < 0):
        raise ValueError("weights must be non-negative integers")
    if np.any((p_a < 0) | (p_a > 1)):
        raise ValueError("probabilities must lie in [0, 1]")
    w_i = w_a.astype(np.int64)
    pmf = np.ones(1, dtype=np.float64)
    groups: dict[tuple[float, int], int] = {}
    for ps, ws in zip(p_a.tolist(), w_i.tolist(), strict=True):
        groups[(ps, ws)] = groups.get((ps, ws), 0) + 1
    for (ps, ws), n in groups.items():
        if ws == 0:
            continue
        part = np.zeros(n * ws + 1, dtype=np.float64)
        part[::ws] = binom_pmf(np.arange(n + 1), n, ps)
        pmf = np.convolve(pmf, part)
    return pmf


def failure_threshold_count(total_weight: int, beta_bps: int) -> int:
    """Smallest W that passes: W * 10000 >= beta_bps * total (the contract's integer test)."""
    if not 0 <= beta_bps <= BPS:
        raise ValueError("beta_bps must be in [0, 10000]")
    return -((-beta_bps * total_weight) // BPS)


def exact_failure_from_pmf(pmf: FloatArray, beta_bps: int) -> float:
    """Pr[W < W_beta] read off an exact pmf of W (index = value of W)."""
    total = len(pmf) - 1
    w_min_pass = failure_threshold_count(total, beta_bps)
    return float(min(1.0, pmf[:w_min_pass].sum()))


def failure_curve(pmf: FloatArray, beta_bps: ArrayLike) -> FloatArray:
    """Pr[W < W_beta] for many beta values at once (cumulative sum of the pmf)."""
    total = len(pmf) - 1
    betas = np.atleast_1d(np.asarray(beta_bps, dtype=np.int64))
    cdf = np.concatenate([[0.0], np.cumsum(pmf)])  # cdf[i] = Pr[W < i]
    thresholds = -((-betas * total) // BPS)
    return np.asarray(np.clip(cdf[thresholds], 0.0, 1.0), dtype=np.float64)


@dataclass(frozen=True)
class TraceMoments:
    """mu_vote, sigma_vote^2 and sigma_max^2 of one trace (D.4, D.5)."""

    mu_vote: float
    sigma_vote_sq: float
    sigma_max_sq: float
    total_weight: int


def trace_moments(p: ArrayLike, w: ArrayLike) -> TraceMoments:
    """First two moments of W and the Hoeffding range term sum w^2."""
    p_a = np.asarray(p, dtype=np.float64)
    w_a = np.asarray(w, dtype=np.float64)
    return TraceMoments(
        mu_vote=float(np.sum(w_a * p_a)),
        sigma_vote_sq=float(np.sum(w_a**2 * p_a * (1.0 - p_a))),
        sigma_max_sq=float(np.sum(w_a**2)),
        total_weight=int(np.sum(w_a)),
    )


def w_beta(total_weight: int, beta_bps: int) -> float:
    """W_beta = beta * sum w as a real number (the bounds use the real threshold)."""
    return beta_bps * total_weight / BPS


def log_hoeffding_bound(p: ArrayLike, w: ArrayLike, beta_bps: int) -> float:
    """ln of exp(-2 (mu_vote - W_beta)^2 / sigma_max^2); 0 (bound 1) when mu_vote <= W_beta."""
    mom = trace_moments(p, w)
    gap = mom.mu_vote - w_beta(mom.total_weight, beta_bps)
    if gap <= 0 or mom.sigma_max_sq == 0:
        return 0.0
    return -2.0 * gap * gap / mom.sigma_max_sq


def _log_chernoff_objective(lam: float, p: FloatArray, w: FloatArray, threshold: float) -> float:
    with np.errstate(divide="ignore"):
        log_p = np.log(p)
        log_q = np.log1p(-p)
    return float(lam * threshold + np.sum(np.logaddexp(log_p - lam * w, log_q)))


def log_chernoff_bound(p: ArrayLike, w: ArrayLike, beta_bps: int) -> float:
    """ln of min_{lambda>0} exp(lambda W_beta + sum_s ln(p_s e^{-lambda w_s} + 1 - p_s)).

    The objective is convex in lambda (a log-MGF plus a linear term), so a bounded scalar
    minimisation on a bracket that is widened until the minimiser is interior finds the
    infimum; any lambda gives a valid bound, so the result is never below the exact value.
    Returns -inf when W_beta is below the weight of segments that pass surely (exact 0).
    """
    p_a = np.asarray(p, dtype=np.float64)
    w_a = np.asarray(w, dtype=np.float64)
    total = int(np.sum(w_a))
    threshold = w_beta(total, beta_bps)
    sure = float(np.sum(w_a[p_a >= 1.0]))
    if threshold < sure:
        return -math.inf  # W >= sure > W_beta always
    mu = float(np.sum(w_a * p_a))
    if mu <= threshold:
        return 0.0  # the infimum over lambda > 0 is approached at lambda -> 0
    upper = 1.0
    best = 0.0
    for _ in range(60):
        res = optimize.minimize_scalar(
            _log_chernoff_objective,
            bounds=(0.0, upper),
            args=(p_a, w_a, threshold),
            method="bounded",
            options={"xatol": 1e-12 * max(1.0, upper)},
        )
        best = min(best, float(res.fun))
        if res.x < 0.9 * upper:
            break
        upper *= 4.0
    return min(best, 0.0)


@dataclass(frozen=True)
class FailureReport:
    """Exact failure probability of a trace and its two bounds (all as probabilities and logs)."""

    exact: float
    log_exact: float
    hoeffding: float
    log_hoeffding: float
    chernoff: float
    log_chernoff: float
    moments: TraceMoments


def failure_report(
    p: Sequence[float] | FloatArray, w: Sequence[int] | NDArray[np.int64], beta_bps: int
) -> FailureReport:
    """Exact Pr[W < W_beta] with the Hoeffding and Chernoff bounds (Proposition D.1)."""
    pmf = weighted_bernoulli_pmf(p, w)
    exact = exact_failure_from_pmf(pmf, beta_bps)
    lh = log_hoeffding_bound(p, w, beta_bps)
    lc = log_chernoff_bound(p, w, beta_bps)
    return FailureReport(
        exact=exact,
        log_exact=math.log(exact) if exact > 0 else -math.inf,
        hoeffding=math.exp(lh),
        log_hoeffding=lh,
        chernoff=math.exp(lc),
        log_chernoff=lc,
        moments=trace_moments(p, w),
    )


def tier_pass_probability(k: int, tau_bps: int, eps: float, rho: float, *, flawed: bool = False) -> float:
    """Scalar convenience: Lemma D.1 with the protocol quorum q = ceil(tau * k)."""
    return float(segment_pass_probability(k, quorum(k, tau_bps), eps, rho, flawed=flawed))
