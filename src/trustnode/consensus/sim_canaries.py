"""Sessions until a lazy auditor (always PASS) and a random guesser fall below a reputation threshold,
as a function of the canary rate (issue 15), with the honest auditors' false-drop rate beside them.

Model, per session, for `replicas` independent copies of each behaviour: the tracked auditor holds
`seats` seats of one tier; each seat is a canary with probability rate (the chance level c/n),
a canary is FAIL with probability `fail_share`, a real segment is wrong with probability
`flaw_rate`.  On a real segment the auditor sits with k - 1 honest peers (error eps) and is
scored against the panel's quorum outcome with step `gamma` (INCONCLUSIVE moves nothing); on a
canary it is scored against the truth with step `canary_gamma`.  Reputation follows the
protocol rule r <- (1 - g) r + g 1[correct] per vote in seat order, in floating point here (the
integer rule is `consensus.rules.reputation_update`; the rounding is below 1e-15 per step).  A
replica "drops" at the first session after which r < threshold; replicas still above at the
horizon are censored and reported as such.  One seeded generator per run.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, Field

from trustnode.consensus.rules import BPS, quorum

Progress = Callable[[int], None]


class Kind(StrEnum):
    LAZY = "lazy"  # always PASS
    RANDOM = "random"  # PASS or FAIL with probability 1/2
    HONEST = "honest"  # the right verdict except with probability eps


class CanarySimConfig(BaseModel):
    """Parameters of the canaries figure (all recorded in its JSON)."""

    rates_bps: list[int] = Field(default_factory=lambda: [0, 250, 500, 750, 1000, 1500, 2000, 2500, 3000])
    sessions: int = Field(default=500, ge=1, description="horizon")
    replicas: int = Field(default=400, ge=1, description="independent auditors per behaviour")
    seats: int = Field(default=4, ge=1, description="seats the auditor holds per session")
    k: int = Field(default=3, ge=1, description="panel size of a real segment")
    tau_bps: int = Field(default=6000, gt=5000, le=BPS)
    eps: float = Field(default=0.05, ge=0, le=1, description="honest error rate (peers and honest replicas)")
    flaw_rate: float = Field(default=0.05, ge=0, le=1, description="share of real segments that are wrong")
    fail_share: float = Field(default=0.5, ge=0, le=1, description="share of canaries whose truth is FAIL")
    gamma: float = Field(default=0.05, gt=0, le=1, description="reputation step of a real vote")
    canary_gamma: float = Field(default=0.1, gt=0, le=1, description="canaryGamma")
    r0: float = Field(default=0.9, ge=0, le=1, description="reputation at the start (an established auditor)")
    threshold: float = Field(default=0.75, ge=0, le=1)
    seed: int = 7


class Curve(BaseModel):
    """One behaviour across the canary rates."""

    kind: Kind
    median_sessions: list[float | None] = Field(
        description="None when fewer than half dropped by the horizon"
    )
    q25_sessions: list[float | None]
    q75_sessions: list[float | None]
    dropped_share: list[float] = Field(description="share of replicas below the threshold by the horizon")
    final_reputation_mean: list[float]


class CanarySimResult(BaseModel):
    config: CanarySimConfig
    rates: list[float]
    curves: list[Curve]


def _votes_fail(
    kind: Kind, truth_fail: NDArray[np.bool_], eps: float, rng: np.random.Generator
) -> NDArray[np.bool_]:
    if kind is Kind.LAZY:
        return np.zeros_like(truth_fail)
    if kind is Kind.RANDOM:
        return rng.random(truth_fail.shape) < 0.5
    return truth_fail ^ (rng.random(truth_fail.shape) < eps)


def run_behaviour(
    kind: Kind, rate_bps: int, cfg: CanarySimConfig, rng: np.random.Generator
) -> NDArray[np.int64]:
    """Session (1-based) at which each replica first ends below the threshold; 0 = never by the horizon."""
    n = cfg.replicas
    q = quorum(cfg.k, cfg.tau_bps)
    r = np.full(n, cfg.r0)
    dropped = np.zeros(n, dtype=np.int64)
    rate = rate_bps / BPS
    for s in range(1, cfg.sessions + 1):
        for _ in range(cfg.seats):
            canary = rng.random(n) < rate
            truth_fail = np.where(canary, rng.random(n) < cfg.fail_share, rng.random(n) < cfg.flaw_rate)
            mine = _votes_fail(kind, truth_fail, cfg.eps, rng)
            peers_fail = rng.binomial(cfg.k - 1, np.where(truth_fail, 1.0 - cfg.eps, cfg.eps))
            fails = peers_fail + mine
            passes = cfg.k - fails
            outcome_fail = np.where(passes >= q, False, fails >= q)
            decided = (passes >= q) | (fails >= q)
            correct = np.where(canary, mine == truth_fail, mine == outcome_fail)
            g = np.where(canary, cfg.canary_gamma, np.where(decided, cfg.gamma, 0.0))
            r = (1.0 - g) * r + g * correct
        newly = (dropped == 0) & (r < cfg.threshold)
        dropped[newly] = s
    return dropped


def _quantile(drops: NDArray[np.int64], p: float) -> float | None:
    """The p-quantile of drop sessions, censored replicas counted as never (None if beyond the horizon)."""
    never = np.iinfo(np.int64).max
    vals = np.sort(np.where(drops > 0, drops, never))
    v = vals[min(len(vals) - 1, int(np.floor(p * (len(vals) - 1) + 0.5)))]
    return None if v == never else float(v)


def simulate_canaries(cfg: CanarySimConfig, progress: Progress | None = None) -> CanarySimResult:
    """Drop times of lazy, random and honest auditors for every canary rate."""
    rng = np.random.default_rng(cfg.seed)
    curves = {k: Curve(kind=k, median_sessions=[], q25_sessions=[], q75_sessions=[], dropped_share=[],
                       final_reputation_mean=[]) for k in Kind}  # fmt: skip
    step = 0
    for rate in cfg.rates_bps:
        for kind in Kind:
            drops = run_behaviour(kind, rate, cfg, rng)
            c = curves[kind]
            c.median_sessions.append(_quantile(drops, 0.5))
            c.q25_sessions.append(_quantile(drops, 0.25))
            c.q75_sessions.append(_quantile(drops, 0.75))
            c.dropped_share.append(float(np.mean(drops > 0)))
            step += 1
            if progress is not None:
                progress(step)
        for kind in Kind:
            curves[kind].final_reputation_mean.append(_stationary(kind, rate, cfg))
    return CanarySimResult(config=cfg, rates=[r / BPS for r in cfg.rates_bps], curves=list(curves.values()))


def _stationary(kind: Kind, rate_bps: int, cfg: CanarySimConfig) -> float:
    """Long-run mean reputation: sum of g * P(correct) over sum of g (ignores INCONCLUSIVE panels)."""
    rate = rate_bps / BPS
    if kind is Kind.LAZY:
        a_real, a_can = 1.0 - cfg.flaw_rate, 1.0 - cfg.fail_share
    elif kind is Kind.RANDOM:
        a_real = a_can = 0.5
    else:
        a_real = a_can = 1.0 - cfg.eps
    w_real, w_can = (1.0 - rate) * cfg.gamma, rate * cfg.canary_gamma
    return (w_real * a_real + w_can * a_can) / (w_real + w_can)


def total_steps(cfg: CanarySimConfig) -> int:
    """Progress ticks `simulate_canaries` reports (one per rate and behaviour)."""
    return len(cfg.rates_bps) * len(Kind)


__all__ = [
    "CanarySimConfig",
    "CanarySimResult",
    "Curve",
    "Kind",
    "run_behaviour",
    "simulate_canaries",
    "total_steps",
]
