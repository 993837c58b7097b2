"""Failure probability and trace accuracy as beta varies (paper Figure 4).

For each pass threshold beta: the exact failure probability of a correct trace, its
Hoeffding and Chernoff bounds, a Monte Carlo estimate that draws every seat's vote, and
the TPR/FPR/accuracy against traces with wrong segments. One seeded numpy generator per
run: a seed reproduces a run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, Field

from trustnode.consensus.probability import (
    failure_curve,
    log_chernoff_bound,
    log_hoeffding_bound,
)
from trustnode.consensus.rules import BPS
from trustnode.consensus.simulation import Progress
from trustnode.consensus.trace import ConsensusParams, TraceShape
from trustnode.models.enums import Tier


class BetaSweepConfig(BaseModel):
    consensus: ConsensusParams = ConsensusParams()
    shape: TraceShape = TraceShape()
    beta_bps: list[int] = Field(default_factory=lambda: list(range(0, BPS + 1, 100)))
    n_flawed: int | None = Field(
        default=None, ge=1, description="wrong segments in a bad trace; None: every segment is wrong"
    )
    prior_bad: float = Field(default=0.5, gt=0, lt=1, description="share of bad traces for accuracy")
    mc_trials: int = Field(default=200_000, ge=1)
    seed: int = 7


class BetaSweepResult(BaseModel):
    config: BetaSweepConfig
    beta: list[float]
    exact: list[float]
    hoeffding: list[float]
    chernoff: list[float]
    monte_carlo: list[float]
    monte_carlo_bad_pass: list[float]
    tpr: list[float] = Field(description="Pr[PASS | correct trace]")
    fpr: list[float] = Field(description="Pr[PASS | trace with n_flawed wrong segments]")
    accuracy: list[float]
    high_accuracy_window: list[float] | None = Field(
        description="[lowest, highest] beta with accuracy > 99.99%, or None"
    )


def _mc_pass_counts(
    consensus: ConsensusParams,
    tiers: Sequence[Tier],
    flawed: NDArray[np.bool_],
    rng: np.random.Generator,
) -> NDArray[np.int64]:
    """Monte Carlo W per trial: draw every seat's vote, apply the segment quorum, sum weights."""
    trials = flawed.shape[0]
    total = np.zeros(trials, dtype=np.int64)
    for j, t in enumerate(tiers):
        s = consensus.tier(t)
        q = consensus.quorum(t)
        malicious = rng.binomial(s.k, s.rho, size=trials)
        honest = s.k - malicious
        bad = flawed[:, j]
        # PASS votes: on a correct segment honest seats are right w.p. 1 - eps and malicious vote FAIL;
        # on a flawed one honest seats wrongly PASS w.p. eps and malicious seats PASS.
        honest_pass = rng.binomial(honest, np.where(bad, s.eps, 1.0 - s.eps))
        pass_votes = honest_pass + np.where(bad, malicious, 0)
        total += np.where(pass_votes >= q, s.weight, 0)
    return total


def beta_sweep(cfg: BetaSweepConfig, progress: Progress | None = None) -> BetaSweepResult:
    """Exact, Hoeffding, Chernoff and Monte Carlo failure probability, and TPR/FPR/accuracy, per beta."""
    cons, shape = cfg.consensus, cfg.shape
    p, w = cons.segment_arrays(shape)
    betas = np.asarray(cfg.beta_bps, dtype=np.int64)
    good = cons.good_pmf(shape)
    n_flawed = shape.total if cfg.n_flawed is None else cfg.n_flawed
    bad = cons.flawed_pmf(shape, n_flawed)
    exact = failure_curve(good, betas)
    bad_fail = failure_curve(bad, betas)
    hoeff, chern = [], []
    for i, b in enumerate(cfg.beta_bps):
        hoeff.append(math.exp(log_hoeffding_bound(p, w, b)))
        chern.append(math.exp(log_chernoff_bound(p, w, b)))
        if progress is not None:
            progress(i + 1)
    rng = np.random.default_rng(cfg.seed)
    tiers = shape.tiers()
    total_w = int(w.sum())
    w_good = _mc_pass_counts(cons, tiers, np.zeros((cfg.mc_trials, len(tiers)), dtype=bool), rng)
    # a uniformly random n_flawed-subset per trial: the positions of the n smallest of iid uniforms
    ranks = np.argsort(np.argsort(rng.random((cfg.mc_trials, len(tiers))), axis=1), axis=1)
    flaw_mask = ranks < n_flawed
    w_bad = _mc_pass_counts(cons, tiers, flaw_mask, rng)
    mc, mc_bad = [], []
    for b in cfg.beta_bps:
        mc.append(float(np.mean(w_good * BPS < b * total_w)))
        mc_bad.append(float(np.mean(w_bad * BPS >= b * total_w)))
    tpr = 1.0 - exact
    fpr = 1.0 - bad_fail
    acc = (1.0 - cfg.prior_bad) * tpr + cfg.prior_bad * (1.0 - fpr)
    good_idx = np.flatnonzero(acc > 0.9999)
    window = [betas[good_idx[0]] / BPS, betas[good_idx[-1]] / BPS] if good_idx.size else None
    return BetaSweepResult(
        config=cfg,
        beta=[b / BPS for b in cfg.beta_bps],
        exact=exact.tolist(),
        hoeffding=hoeff,
        chernoff=chern,
        monte_carlo=mc,
        monte_carlo_bad_pass=mc_bad,
        tpr=tpr.tolist(),
        fpr=fpr.tolist(),
        accuracy=acc.tolist(),
        high_accuracy_window=window,
    )


__all__ = ["BetaSweepConfig", "BetaSweepResult", "beta_sweep"]
