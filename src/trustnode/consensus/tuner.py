"""Cheapest parameter setting meeting a failure target and both dials of Theorem D.1.

Cost is what a provider pays auditors per trace, seats x R.  The statistical side (k_t, tau,
beta) decides the seats and the economic side (R, P, p_min, p_max) decides R, and the
constraints of one side never involve the other's variables, so the joint minimum is the
product of the two minima: each side is searched exhaustively on its own grid.

Statistical constraints: the exact horizon failure lambda T Pr[W < W_beta] <= eps_target,
the paper's dial S1, beta >= min_beta, and optionally an exact false-accept ceiling for a
trace with one flawed segment.  Economic constraints: E1 (both parts), mu_min > 0, a
guaranteed malicious loss P p_min >= min_malicious_loss per segment and the two tail bounds
below their targets.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np
from pydantic import BaseModel, Field

from trustnode.consensus.dials import EconomicParams, economic_report
from trustnode.consensus.probability import failure_curve, segment_pass_probability, weighted_bernoulli_pmf
from trustnode.consensus.rules import BPS, quorum
from trustnode.consensus.trace import ConsensusParams, TierSetting, TraceShape
from trustnode.models.enums import Tier


class TuneRequest(BaseModel):
    """What the tuner must meet, and the grids it searches."""

    shape: TraceShape = TraceShape()
    eps: tuple[float, float, float] = Field(default=(0.0, 0.05, 0.30), description="eps per tier C, L, H")
    rho_h: float = Field(default=0.10, ge=0, le=1)
    weights: tuple[int, int, int] = (1, 2, 3)
    eps_target: float = Field(default=1e-6, gt=0, lt=1)
    lam: float = Field(default=60.0, gt=0)
    T: float = Field(default=24.0, gt=0)
    delta: float = Field(default=0.2, gt=0, lt=1)
    min_beta_bps: int = Field(default=5000, ge=0, le=BPS)
    max_false_accept: float | None = Field(default=None, gt=0, le=1)
    min_malicious_loss: float = Field(default=1.6, gt=0, description="required P * p_min per segment")
    max_honest_tail: float = Field(default=1e-6, gt=0, le=1)
    max_malicious_tail: float = Field(default=1e-6, gt=0, le=1)
    k_max: int = Field(default=15, ge=1, le=255)
    tau_grid: list[int] = Field(default_factory=lambda: [5100, 6000, 6700, 7500, 8000, 9000, BPS])
    beta_step_bps: int = Field(default=100, ge=1, le=BPS)
    r_grid: list[float] = Field(default_factory=lambda: [x / 2 for x in range(1, 41)])
    p_grid: list[float] = Field(default_factory=lambda: [float(x) for x in range(1, 21)])
    p_slash_grid: list[float] = Field(default_factory=lambda: [x / 20 for x in range(1, 21)])


class StatisticalChoice(BaseModel):
    consensus: ConsensusParams
    seats: int
    trace_failure: float
    horizon_failure: float
    false_accept: float
    s1_margin: float


class EconomicChoice(BaseModel):
    economic: EconomicParams
    honest_tail_log10: float
    malicious_tail_log10: float


class TuneResult(BaseModel):
    statistical: StatisticalChoice
    economic: EconomicChoice
    seats: int
    reward: float
    cost_per_trace: float = Field(description="seats x R")
    candidates_checked: int


class TuneError(ValueError):
    """No setting on the grid meets the request (the message says which side failed)."""


def _k_grid(eps: float, rho: float, k_max: int) -> Sequence[int]:
    # a noiseless, honest tier is decided by a single seat; more seats cannot help it
    return [1] if eps == 0 and rho == 0 else range(1, k_max + 1)


def tune_statistical(
    req: TuneRequest, progress: Callable[[int, int], None] | None = None
) -> tuple[StatisticalChoice, int]:
    """Fewest seats per trace meeting the statistical constraints (ties: lower failure)."""
    rhos = (0.0, 0.0, req.rho_h)
    tiers = list(Tier)
    counts = [req.shape.count(t) for t in tiers]
    betas = np.arange(req.min_beta_bps, BPS + 1, req.beta_step_bps, dtype=np.int64)
    log_term = math.log(req.lam * req.T / req.eps_target)
    grids = [_k_grid(req.eps[i], rhos[i], req.k_max) if counts[i] else [1] for i in range(len(tiers))]
    combos = sorted(
        itertools.product(*grids), key=lambda ks: sum(k * c for k, c in zip(ks, counts, strict=True))
    )
    total = len(combos) * len(req.tau_grid)
    checked = 0
    best: StatisticalChoice | None = None
    for ks in combos:
        seats = sum(k * c for k, c in zip(ks, counts, strict=True))
        if best is not None and seats > best.seats:
            break
        for tau in req.tau_grid:
            checked += 1
            if progress is not None:
                progress(checked, total)
            p_good = [
                float(segment_pass_probability(ks[i], quorum(ks[i], tau), req.eps[i], rhos[i]))
                for i in range(3)
            ]
            p_arr = np.repeat(p_good, counts)
            w_arr = np.repeat(req.weights, counts)
            pmf = weighted_bernoulli_pmf(p_arr, w_arr)
            fail = failure_curve(pmf, betas)
            total_w = int(w_arr.sum())
            mu = float(np.sum(w_arr * p_arr))
            var = float(np.sum(w_arr**2 * p_arr * (1 - p_arr)))
            margin = mu - betas * total_w / BPS
            s1 = margin >= math.sqrt(0.5 * var * log_term)
            ok = (req.lam * req.T * fail <= req.eps_target) & s1
            if not ok.any():
                continue
            for j in np.flatnonzero(ok)[::-1]:  # highest beta first: the strictest acceptable trace test
                cons = ConsensusParams(
                    computer=TierSetting(k=ks[0], weight=req.weights[0], eps=req.eps[0]),
                    llm=TierSetting(k=ks[1], weight=req.weights[1], eps=req.eps[1]),
                    human=TierSetting(k=ks[2], weight=req.weights[2], eps=req.eps[2], rho=req.rho_h),
                    tau_bps=tau,
                    beta_bps=int(betas[j]),
                )
                fa = cons.false_accept_probability(req.shape, 1) if req.shape.total else 0.0
                if req.max_false_accept is not None and fa > req.max_false_accept:
                    continue
                cand = StatisticalChoice(
                    consensus=cons,
                    seats=seats,
                    trace_failure=float(fail[j]),
                    horizon_failure=float(req.lam * req.T * fail[j]),
                    false_accept=fa,
                    s1_margin=float(margin[j]),
                )
                if best is None or (seats, cand.false_accept, cand.trace_failure) < (
                    best.seats,
                    best.false_accept,
                    best.trace_failure,
                ):
                    best = cand
                break
    if best is None:
        raise TuneError(
            "no (k_t, tau, beta) on the grid meets the failure target, S1 and the false-accept cap"
        )
    return best, checked


def tune_economic(req: TuneRequest) -> tuple[EconomicChoice, int]:
    """Smallest R (ties: smaller P, then lower p_max) meeting E1 and the tail targets."""
    checked = 0
    best: EconomicChoice | None = None
    log_h = math.log(req.max_honest_tail)
    log_m = math.log(req.max_malicious_tail)
    for r in sorted(req.r_grid):
        if best is not None:
            break
        for pen in sorted(req.p_grid):
            for p_min, p_max in itertools.combinations(sorted(req.p_slash_grid), 2):
                checked += 1
                if pen * p_min < req.min_malicious_loss:
                    continue
                params = EconomicParams(
                    R=r,
                    P=pen,
                    p_min=p_min,
                    p_max=p_max,
                    delta=req.delta,
                    lam=req.lam,
                    T=req.T,
                    eps_h=req.eps[2],
                )
                rep = economic_report(params)
                if not rep.economic_dial_ok:
                    continue
                if rep.honest_tail_exponent > log_h or rep.malicious_tail_exponent > log_m:
                    continue
                best = EconomicChoice(
                    economic=params,
                    honest_tail_log10=rep.honest_tail_log10,
                    malicious_tail_log10=rep.malicious_tail_log10,
                )
                break
            if best is not None:
                break
    if best is None:
        raise TuneError("no (R, P, p_min, p_max) on the grid meets E1, the loss floor and the tail targets")
    return best, checked


def tune(req: TuneRequest, progress: Callable[[int, int], None] | None = None) -> TuneResult:
    """Cheapest setting (seats x R per trace) meeting every constraint of `TuneRequest`."""
    stat, n1 = tune_statistical(req, progress)
    econ, n2 = tune_economic(req)
    return TuneResult(
        statistical=stat,
        economic=econ,
        seats=stat.seats,
        reward=econ.economic.R,
        cost_per_trace=stat.seats * econ.economic.R,
        candidates_checked=n1 + n2,
    )
