"""Lemma D.1, the exact W distribution and the tail bounds, each against an independent check."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustnode.consensus.probability import (
    binom_pmf,
    exact_failure_from_pmf,
    failure_curve,
    failure_report,
    failure_threshold_count,
    log_chernoff_bound,
    log_hoeffding_bound,
    segment_pass_probability,
    weighted_bernoulli_pmf,
)
from trustnode.consensus.rules import quorum
from trustnode.consensus.trace import ConsensusParams, TierSetting, TraceShape


def brute_force_pass(k: int, q: int, eps: float, rho: float, flawed: bool) -> float:
    """Enumerate every seat's type (malicious or honest) and every honest seat's error."""
    total = 0.0
    for kinds in itertools.product((0, 1), repeat=k):  # 1 = malicious
        p_kind = math.prod(rho if m else 1 - rho for m in kinds)
        for errs in itertools.product((0, 1), repeat=k):  # 1 = honest seat errs
            if any(m and e for m, e in zip(kinds, errs, strict=True)):
                continue  # a malicious seat has no error draw
            p_err = math.prod((eps if e else 1 - eps) for m, e in zip(kinds, errs, strict=True) if not m)
            # a malicious seat and an erring honest seat vote against the truth
            wrong = sum(1 for m, e in zip(kinds, errs, strict=True) if m or e)
            pass_votes = wrong if flawed else k - wrong
            if pass_votes >= q:
                total += p_kind * p_err
    return total


@pytest.mark.parametrize("flawed", [False, True])
@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_lemma_d1_matches_enumeration(k: int, flawed: bool) -> None:
    for q in range(1, k + 1):
        for eps, rho in [(0.0, 0.0), (0.05, 0.0), (0.3, 0.1), (0.5, 0.5), (0.2, 1.0), (1.0, 0.0)]:
            got = float(segment_pass_probability(k, q, eps, rho, flawed=flawed))
            assert got == pytest.approx(brute_force_pass(k, q, eps, rho, flawed), abs=1e-12), (k, q, eps, rho)


def test_lemma_d1_vectorised_equals_scalar() -> None:
    ks = np.array([1, 3, 5, 7, 9])
    qs = np.array([1, 2, 3, 5, 6])
    eps = np.array([0.0, 0.05, 0.3, 0.2, 0.4])
    rho = np.array([0.0, 0.0, 0.1, 0.2, 0.05])
    vec = segment_pass_probability(ks, qs, eps, rho)
    for i in range(len(ks)):
        assert vec[i] == pytest.approx(
            float(segment_pass_probability(ks[i], qs[i], eps[i], rho[i])), abs=1e-15
        )


def test_lemma_d1_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        segment_pass_probability(0, 1, 0.1, 0.0)
    with pytest.raises(ValueError):
        segment_pass_probability(3, 2, 1.5, 0.0)


def brute_force_pmf(p: list[float], w: list[int]) -> np.ndarray:
    out = np.zeros(sum(w) + 1)
    for bits in itertools.product((0, 1), repeat=len(p)):
        prob = math.prod(pi if b else 1 - pi for pi, b in zip(p, bits, strict=True))
        out[sum(wi for wi, b in zip(w, bits, strict=True) if b)] += prob
    return out


def test_w_distribution_matches_enumeration() -> None:
    p = [0.9, 0.9, 0.73, 0.5, 0.99, 0.73, 1.0, 0.0]
    w = [1, 1, 3, 2, 2, 3, 1, 4]
    np.testing.assert_allclose(weighted_bernoulli_pmf(p, w), brute_force_pmf(p, w), atol=1e-14)


def test_w_distribution_matches_monte_carlo() -> None:
    """Sampling every seat's vote: each Pr[W = i] within 5 standard errors (seed 7, 400k traces)."""
    cons = ConsensusParams()
    shape = TraceShape(computer=3, llm=4, human=3)
    p, w = cons.segment_arrays(shape)
    exact = cons.good_pmf(shape)
    rng = np.random.default_rng(7)
    n = 400_000
    total = np.zeros(n, dtype=np.int64)
    for t in shape.tiers():
        s = cons.tier(t)
        malicious = rng.binomial(s.k, s.rho, size=n)
        correct = rng.binomial(s.k - malicious, 1 - s.eps)
        total += np.where(correct >= quorum(s.k, cons.tau_bps), s.weight, 0)
    freq = np.bincount(total, minlength=len(exact)) / n
    se = np.sqrt(np.maximum(exact * (1 - exact), 1e-12) / n)
    assert np.all(np.abs(freq - exact) <= 5 * se + 1e-6), np.max(np.abs(freq - exact) / se)
    assert float(np.dot(np.arange(len(exact)), exact)) == pytest.approx(float(np.dot(p, w)), rel=1e-12)


def test_threshold_is_the_contract_integer_test() -> None:
    # beta = 0.7 of 10: W = 7 passes (7 * 10000 >= 7000 * 10) although 0.7 * 10 = 7.000000000000001
    assert failure_threshold_count(10, 7000) == 7
    assert failure_threshold_count(22, 6000) == 14  # 13.2 -> 14
    pmf = np.zeros(11)
    pmf[7] = 1.0
    assert exact_failure_from_pmf(pmf, 7000) == 0.0
    assert exact_failure_from_pmf(pmf, 7001) == 1.0
    np.testing.assert_allclose(failure_curve(pmf, [0, 7000, 7001, 10000]), [0.0, 0.0, 1.0, 1.0])


def test_moments_and_report() -> None:
    rep = failure_report([0.5, 0.5], [1, 1], 10000)
    assert rep.exact == pytest.approx(0.75)
    assert rep.moments.mu_vote == pytest.approx(1.0)
    assert rep.moments.sigma_vote_sq == pytest.approx(0.5)
    assert rep.moments.sigma_max_sq == pytest.approx(2.0)
    # Chernoff at beta = 1: min over lambda of e^{2 lambda} (0.5 e^{-lambda} + 0.5)^2 -> 1 (lambda -> 0)
    assert rep.chernoff == pytest.approx(1.0)


def test_chernoff_is_minimised() -> None:
    """The returned Chernoff value is no larger than the objective on a fine lambda grid."""
    p = np.array([0.99, 0.9, 0.73, 0.73])
    w = np.array([1, 2, 3, 3])
    beta = 5000
    got = log_chernoff_bound(p, w, beta)
    thr = beta * int(w.sum()) / 10000
    grid = np.linspace(1e-4, 20, 20001)
    obj = [lam * thr + np.sum(np.log(p * np.exp(-lam * w) + 1 - p)) for lam in grid]
    assert got <= min(obj) + 1e-9
    assert got >= min(obj) - 1e-3


def test_sure_segments_make_failure_impossible() -> None:
    assert log_chernoff_bound([1.0, 1.0, 0.5], [2, 2, 1], 6000) == -math.inf  # W >= 4 > 3
    assert failure_report([1.0, 1.0, 0.5], [2, 2, 1], 6000).exact == 0.0


@settings(max_examples=150, deadline=None)
@given(
    segs=st.lists(
        st.tuples(st.floats(0.0, 1.0), st.integers(1, 5)),
        min_size=1,
        max_size=12,
    ),
    beta_bps=st.integers(0, 10000),
)
def test_bounds_never_below_exact(segs: list[tuple[float, int]], beta_bps: int) -> None:
    p = [s[0] for s in segs]
    w = [s[1] for s in segs]
    exact = exact_failure_from_pmf(weighted_bernoulli_pmf(p, w), beta_bps)
    tol = 1e-9 * max(exact, 1e-300) + 1e-300
    assert math.exp(log_hoeffding_bound(p, w, beta_bps)) + tol >= exact
    assert math.exp(log_chernoff_bound(p, w, beta_bps)) + tol >= exact


@settings(max_examples=60, deadline=None)
@given(
    k=st.tuples(st.integers(1, 7), st.integers(1, 7), st.integers(1, 9)),
    eps=st.tuples(st.floats(0.0, 0.4), st.floats(0.0, 0.4), st.floats(0.0, 0.45)),
    rho=st.floats(0.0, 0.3),
    tau=st.integers(5001, 10000),
    beta=st.integers(0, 10000),
    shape=st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(1, 4)),
)
def test_bounds_above_exact_for_protocol_settings(
    k: tuple[int, int, int],
    eps: tuple[float, float, float],
    rho: float,
    tau: int,
    beta: int,
    shape: tuple[int, int, int],
) -> None:
    cons = ConsensusParams(
        computer=TierSetting(k=k[0], weight=1, eps=eps[0]),
        llm=TierSetting(k=k[1], weight=2, eps=eps[1]),
        human=TierSetting(k=k[2], weight=3, eps=eps[2], rho=rho),
        tau_bps=tau,
        beta_bps=beta,
    )
    ts = TraceShape(computer=shape[0], llm=shape[1], human=shape[2])
    p, w = cons.segment_arrays(ts)
    rep = failure_report(p, w, beta)
    assert rep.exact == pytest.approx(cons.failure_probability(ts), abs=1e-15)
    assert rep.hoeffding >= rep.exact * (1 - 1e-9)
    assert rep.chernoff >= rep.exact * (1 - 1e-9)


def test_binomial_pmf_is_exact_at_the_edges() -> None:
    for n in (0, 1, 5, 40):
        for p in (0.0, 1e-320, 1.1125369292536007e-308, 0.3, 1.0 - 1e-12, 1.0):
            got = binom_pmf(np.arange(-1, n + 2), n, p)
            want = [0.0] + [math.comb(n, x) * p**x * (1 - p) ** (n - x) for x in range(n + 1)] + [0.0]
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)
    # subnormal success probabilities (scipy's pmf overflows on these) give a proper distribution
    pmf = weighted_bernoulli_pmf([1.1125369292536007e-308] * 2, [1, 1])
    assert pmf.sum() == pytest.approx(1.0) and pmf[0] == pytest.approx(1.0)
