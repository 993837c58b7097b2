"""Trace-level setting: per-tier seats, weights and auditor error model, and trace shapes.

A `ConsensusParams` holds what the protocol fixes (k_t, w_t, tau, beta) together with the
auditor population model the analysis assumes (eps_t, rho_t).  Defaults are the paper's
Figure 4 error model (eps_C = 0, eps_L = 0.05, eps_H = 0.30, rho_H = 0.1); the segment mix
of the default `TraceShape` is the paper's HDAG example (8 computer, 4 LLM, 2 human).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from trustnode.consensus.probability import (
    exact_failure_from_pmf,
    segment_pass_probability,
    weighted_bernoulli_pmf,
)
from trustnode.consensus.rules import BPS, quorum
from trustnode.models.enums import Tier


class TierSetting(BaseModel):
    """Seats, weight and the error model of one auditor tier."""

    model_config = ConfigDict(frozen=True)

    k: int = Field(ge=1, le=255, description="seats per segment of this tier")
    weight: int = Field(ge=1, le=0xFFFF, description="segment weight w_t (uint16 on chain)")
    eps: float = Field(ge=0, le=1, description="honest error rate")
    rho: float = Field(default=0.0, ge=0, le=1, description="probability a seat is malicious")


class ConsensusParams(BaseModel):
    """Vote parameters (k_t, w_t, tau, beta) and the error model, one `TierSetting` per tier."""

    model_config = ConfigDict(frozen=True)

    computer: TierSetting = TierSetting(k=1, weight=1, eps=0.0)
    llm: TierSetting = TierSetting(k=3, weight=2, eps=0.05)
    human: TierSetting = TierSetting(k=5, weight=3, eps=0.30, rho=0.10)
    tau_bps: int = Field(default=6000, gt=5000, le=BPS, description="segment quorum ratio; > 0.5")
    beta_bps: int = Field(default=6000, ge=0, le=BPS, description="trace threshold ratio")

    def tier(self, t: Tier) -> TierSetting:
        return (self.computer, self.llm, self.human)[int(t)]

    def with_tier(self, t: Tier, setting: TierSetting) -> ConsensusParams:
        name = ("computer", "llm", "human")[int(t)]
        return self.model_copy(update={name: setting})

    def quorum(self, t: Tier) -> int:
        return quorum(self.tier(t).k, self.tau_bps)

    def pass_probability(self, t: Tier, *, flawed: bool = False) -> float:
        """Lemma D.1 for tier t (or the false-accept probability of a flawed segment)."""
        s = self.tier(t)
        return float(segment_pass_probability(s.k, self.quorum(t), s.eps, s.rho, flawed=flawed))

    def segment_arrays(self, shape: TraceShape) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
        """(p_s, w_s) for every segment of a correct trace of this shape."""
        p: list[float] = []
        w: list[int] = []
        for t in Tier:
            n = shape.count(t)
            p += [self.pass_probability(t)] * n
            w += [self.tier(t).weight] * n
        return np.asarray(p, dtype=np.float64), np.asarray(w, dtype=np.int64)

    def seats(self, shape: TraceShape) -> int:
        """Seats per trace, sum_t n_t k_t (what the fee must cover)."""
        return sum(shape.count(t) * self.tier(t).k for t in Tier)

    def good_pmf(self, shape: TraceShape) -> NDArray[np.float64]:
        """Exact pmf of W for a trace whose segments are all correct."""
        p, w = self.segment_arrays(shape)
        return weighted_bernoulli_pmf(p, w)

    def flawed_pmf(self, shape: TraceShape, n_flawed: int) -> NDArray[np.float64]:
        """Exact pmf of W for a trace with n_flawed wrong segments placed uniformly at random.

        The mixture runs over how many flawed segments fall in each tier (multivariate
        hypergeometric weights); a flawed segment counts in W only when it is falsely PASSed.
        """
        total = shape.total
        if not 0 <= n_flawed <= total:
            raise ValueError("n_flawed must be between 0 and the number of segments")
        counts = [shape.count(t) for t in Tier]
        size = sum(self.tier(t).weight * counts[int(t)] for t in Tier) + 1
        mix = np.zeros(size, dtype=np.float64)
        norm = math.comb(total, n_flawed)
        for alloc in itertools.product(*(range(min(c, n_flawed) + 1) for c in counts)):
            if sum(alloc) != n_flawed:
                continue
            weight = math.prod(math.comb(c, f) for c, f in zip(counts, alloc, strict=True)) / norm
            p: list[float] = []
            w: list[int] = []
            for t in Tier:
                good, bad = counts[int(t)] - alloc[int(t)], alloc[int(t)]
                p += [self.pass_probability(t)] * good + [self.pass_probability(t, flawed=True)] * bad
                w += [self.tier(t).weight] * (good + bad)
            mix += weight * weighted_bernoulli_pmf(p, w)
        return mix

    def failure_probability(self, shape: TraceShape) -> float:
        """Exact Pr[W < W_beta] for a correct trace (the 'trace failure' of the paper)."""
        return exact_failure_from_pmf(self.good_pmf(shape), self.beta_bps)

    def false_accept_probability(self, shape: TraceShape, n_flawed: int = 1) -> float:
        """Exact Pr[W >= W_beta] for a trace with n_flawed wrong segments."""
        return 1.0 - exact_failure_from_pmf(self.flawed_pmf(shape, n_flawed), self.beta_bps)


class TraceShape(BaseModel):
    """How many segments of each tier a trace has."""

    model_config = ConfigDict(frozen=True)

    computer: int = Field(default=8, ge=0)
    llm: int = Field(default=4, ge=0)
    human: int = Field(default=2, ge=0)

    def count(self, t: Tier) -> int:
        return (self.computer, self.llm, self.human)[int(t)]

    @property
    def total(self) -> int:
        return self.computer + self.llm + self.human

    def tiers(self) -> list[Tier]:
        """Segment tiers in a fixed order (computer, then LLM, then human)."""
        return [t for t in Tier for _ in range(self.count(t))]
