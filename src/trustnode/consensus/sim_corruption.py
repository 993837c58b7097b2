"""Vote-corruption sweep (paper Table 1 style): trace accuracy of TRUST's aggregation
against a single centralised auditor and a plain-majority ensemble as a growing share of
votes is flipped, on synthetic traces or ProcessBench ground truth. One seeded numpy
generator per run: a seed reproduces a run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from trustnode.audit.claims import has_decidable_claim
from trustnode.consensus.rules import BPS, segment_outcome, trace_verdict
from trustnode.consensus.simulation import Progress
from trustnode.consensus.trace import ConsensusParams, TierSetting, TraceShape
from trustnode.models.enums import Tier


class SimTrace(BaseModel):
    """Ground truth of one trace: per segment its tier and whether it is wrong."""

    model_config = ConfigDict(frozen=True)

    tiers: list[Tier]
    flawed: list[bool]

    @property
    def correct(self) -> bool:
        return not any(self.flawed)


class CorruptionConfig(BaseModel):
    consensus: ConsensusParams = ConsensusParams(computer=TierSetting(k=3, weight=1, eps=0.0), beta_bps=BPS)
    rates: list[float] = Field(default_factory=lambda: [0.0, 0.05, 0.10, 0.15, 0.20])
    repeats: int = Field(default=10, ge=1)
    generalist_eps: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="error rate of the centralised auditors; None: the tier's eps on each segment",
    )
    ensemble_size: int = Field(default=3, ge=1, description="auditors in the plain-majority ensemble")
    seed: int = 7


class MethodScore(BaseModel):
    method: str
    mean: list[float] = Field(description="trace accuracy (%) per corruption rate")
    std: list[float]


class CorruptionResult(BaseModel):
    config: CorruptionConfig
    dataset: str
    traces: int
    bad_traces: int
    rates: list[float]
    methods: list[MethodScore]


def synthetic_traces(
    n: int, shape: TraceShape, bad_share: float = 0.5, n_flawed: int = 1, seed: int = 7
) -> list[SimTrace]:
    """n traces of one shape; a `bad_share` of them get n_flawed wrong segments at random places."""
    rng = np.random.default_rng(seed)
    tiers = shape.tiers()
    out = []
    for _ in range(n):
        flawed = [False] * len(tiers)
        if rng.random() < bad_share:
            for j in rng.choice(len(tiers), size=min(n_flawed, len(tiers)), replace=False):
                flawed[int(j)] = True
        out.append(SimTrace(tiers=tiers, flawed=flawed))
    return out


def processbench_traces(path: Path) -> list[SimTrace]:
    """ProcessBench records as ground truth: steps before `label` are correct, step `label` is wrong.

    ProcessBench labels only the earliest wrong step, so later steps count as correct (the
    trace is still wrong through its labelled step).  A step holding a claim the computer tier
    decides (`audit.claims.has_decidable_claim`, the router's own rule) goes to that tier, any
    other step to the LLM tier.
    """
    records = json.loads(Path(path).read_text(encoding="utf-8"))
    out = []
    for rec in records:
        steps = rec["steps"]
        label = int(rec["label"])
        tiers = [Tier.COMPUTER if has_decidable_claim(s) else Tier.LLM for s in steps]
        out.append(SimTrace(tiers=tiers, flawed=[i == label for i in range(len(steps))]))
    return out


def _flip(votes: NDArray[np.bool_], rate: float, rng: np.random.Generator) -> NDArray[np.bool_]:
    return np.asarray(votes ^ (rng.random(votes.shape) < rate))


def _trust_verdict(tr: SimTrace, cons: ConsensusParams, rate: float, rng: np.random.Generator) -> bool:
    outcomes = []
    weights = []
    for t, bad in zip(tr.tiers, tr.flawed, strict=True):
        s = cons.tier(t)
        malicious = rng.random(s.k) < s.rho
        wrong = malicious | (rng.random(s.k) < s.eps)
        fail_votes = _flip(np.where(wrong, not bad, bad), rate, rng)
        nf = int(fail_votes.sum())
        outcomes.append(segment_outcome(s.k - nf, nf, s.k, cons.tau_bps))
        weights.append(s.weight)
    return trace_verdict(outcomes, weights, cons.beta_bps).passed


def _generalist_verdict(
    tr: SimTrace, eps: NDArray[np.float64], rate: float, rng: np.random.Generator
) -> bool:
    """One centralised auditor reads every step: the trace passes iff it flags none."""
    bad = np.asarray(tr.flawed)
    wrong = rng.random(bad.shape) < eps
    fail_votes = _flip(np.where(wrong, ~bad, bad), rate, rng)
    return not bool(fail_votes.any())


def corruption_sweep(
    traces: Sequence[SimTrace], dataset: str, cfg: CorruptionConfig, progress: Progress | None = None
) -> CorruptionResult:
    """Trace accuracy of TRUST vs a single auditor vs plain majority as votes are flipped."""
    if not traces:
        raise ValueError("no traces")
    rng = np.random.default_rng(cfg.seed)
    truth = np.array([tr.correct for tr in traces])
    eps_of = [
        np.array(
            [
                cfg.consensus.tier(t).eps if cfg.generalist_eps is None else cfg.generalist_eps
                for t in tr.tiers
            ]
        )
        for tr in traces
    ]
    names = ["TRUST", "Single auditor", f"Majority of {cfg.ensemble_size}"]
    scores: dict[str, list[list[float]]] = {m: [] for m in names}
    step = 0
    for rate in cfg.rates:
        per: dict[str, list[float]] = {m: [] for m in names}
        for _ in range(cfg.repeats):
            trust = np.array([_trust_verdict(tr, cfg.consensus, rate, rng) for tr in traces])
            single = np.array(
                [_generalist_verdict(tr, e, rate, rng) for tr, e in zip(traces, eps_of, strict=True)]
            )
            ens = np.array(
                [
                    sum(_generalist_verdict(tr, e, rate, rng) for _ in range(cfg.ensemble_size)) * 2
                    > cfg.ensemble_size
                    for tr, e in zip(traces, eps_of, strict=True)
                ]
            )
            for m, pred in zip(names, (trust, single, ens), strict=True):
                per[m].append(100.0 * float(np.mean(pred == truth)))
            step += 1
            if progress is not None:
                progress(step)
        for m in names:
            scores[m].append(per[m])
    return CorruptionResult(
        config=cfg,
        dataset=dataset,
        traces=len(traces),
        bad_traces=int((~truth).sum()),
        rates=cfg.rates,
        methods=[
            MethodScore(
                method=m,
                mean=[float(np.mean(x)) for x in scores[m]],
                std=[float(np.std(x)) for x in scores[m]],
            )
            for m in names
        ],
    )


__all__ = [
    "CorruptionConfig",
    "CorruptionResult",
    "MethodScore",
    "SimTrace",
    "corruption_sweep",
    "processbench_traces",
    "synthetic_traces",
]
