"""Agent simulations of TRUST: the economy over many sessions (paper Figure 7), failure
probability and trace accuracy as beta varies (Figure 4), and a vote-corruption sweep that
compares TRUST's aggregation with a single auditor and with plain majority (Table 1 style).

The economy settles every vote with `trustnode.consensus.rules`, the same reference the
chain consistency test holds the contracts to, so simulated balances are protocol balances.
All randomness comes from one seeded numpy generator per run: a seed reproduces a run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path

import numpy as np
from eth_utils import keccak, to_checksum_address
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from trustnode.audit.claims import has_decidable_claim
from trustnode.consensus.probability import (
    failure_curve,
    log_chernoff_bound,
    log_hoeffding_bound,
)
from trustnode.consensus.rules import (
    BPS,
    WAD,
    EconomicRules,
    Seat,
    fee_split,
    segment_outcome,
    settle_auditor,
    trace_verdict,
)
from trustnode.consensus.trace import ConsensusParams, TierSetting, TraceShape
from trustnode.models.enums import Tier

Progress = Callable[[int], None]


class Behaviour(StrEnum):
    HONEST = "honest"
    MALICIOUS = "malicious"
    RANDOM = "random"


def agent_address(index: int) -> str:
    """Deterministic distinct addresses for simulated auditors."""
    return to_checksum_address(keccak(b"trustnode-sim-auditor" + index.to_bytes(4, "big"))[12:])


# --- economy (Figure 7) --------------------------------------------------------------------------


class PopulationTier(BaseModel):
    """How many auditors of each behaviour a tier has."""

    honest: int = Field(default=12, ge=0)
    malicious: int = Field(default=2, ge=0)
    random: int = Field(default=2, ge=0)


class EconomyConfig(BaseModel):
    """One economy run: population, protocol parameters (token wei, WAD, bps) and workload."""

    sessions: int = Field(default=300, ge=1)
    shape: TraceShape = TraceShape()
    consensus: ConsensusParams = ConsensusParams(computer=TierSetting(k=3, weight=1, eps=0.0), beta_bps=9000)
    population: tuple[PopulationTier, PopulationTier, PopulationTier] = (
        PopulationTier(honest=8, malicious=1, random=1),
        PopulationTier(honest=10, malicious=2, random=2),
        PopulationTier(honest=12, malicious=2, random=2),
    )
    reward: int = Field(default=6 * 10**18, ge=0)
    penalty: int = Field(default=20 * 10**18, ge=0)
    p_min: int = Field(default=3 * WAD // 10, ge=0, le=WAD)
    p_max: int = Field(default=6 * WAD // 10, ge=0, le=WAD)
    gamma: int = Field(default=WAD // 20, ge=0, le=WAD)
    r0: int = Field(default=WAD // 2, ge=0, le=WAD, description="starting reputation")
    r_floor: int = Field(default=WAD // 10, ge=0, description="draw weight = stake * (r + r_floor) / 1e18")
    stake: int = Field(default=1000 * 10**18, ge=0)
    commission_bps: int = Field(default=1000, ge=0, le=BPS)
    seat_cap: int = Field(default=8, ge=1, description="max seats of one auditor per session")
    flaw_rate: float = Field(default=0.05, ge=0, le=1, description="share of segments that are wrong")
    seed: int = 7


class AgentRecord(BaseModel):
    address: str
    tier: Tier
    behaviour: Behaviour
    reputation: list[float] = Field(description="after each session, as a fraction")
    profit: list[float] = Field(description="cumulative tokens gained (pool assets + commission - start)")
    seats: int = 0
    slashes: int = 0
    final_assets: int = Field(default=0, description="staking pool assets at the end, token wei")
    commission_earned: int = Field(default=0, description="commission paid to the auditor, token wei")


class EconomyResult(BaseModel):
    config: EconomyConfig
    agents: list[AgentRecord]
    treasury: int
    trace_accuracy: float
    sessions_passed: int
    sessions_bad: int
    total_rewarded: int
    total_slashed: int
    total_fees: int

    def summary(self) -> dict[str, dict[str, float]]:
        """Mean final reputation and profit per behaviour (tokens)."""
        out: dict[str, dict[str, float]] = {}
        for b in Behaviour:
            group = [a for a in self.agents if a.behaviour == b]
            if not group:
                continue
            out[b.value] = {
                "agents": len(group),
                "final_reputation_mean": float(np.mean([a.reputation[-1] for a in group])),
                "final_profit_mean": float(np.mean([a.profit[-1] for a in group])),
                "seats_mean": float(np.mean([a.seats for a in group])),
            }
        return out


def _vote_fail(behaviour: Behaviour, flawed: bool, eps: float, rng: np.random.Generator) -> bool:
    if behaviour is Behaviour.MALICIOUS:
        return not flawed
    if behaviour is Behaviour.RANDOM:
        return bool(rng.random() < 0.5)
    wrong = bool(rng.random() < eps)
    return flawed != wrong


def simulate_economy(cfg: EconomyConfig, progress: Progress | None = None) -> EconomyResult:
    """Run `cfg.sessions` audit sessions and settle every auditor with the reference rules."""
    rng = np.random.default_rng(cfg.seed)
    rules = EconomicRules(
        reward=cfg.reward, penalty=cfg.penalty, p_min=cfg.p_min, p_max=cfg.p_max, gamma=cfg.gamma
    )
    addrs: list[str] = []
    tiers: list[Tier] = []
    kinds: list[Behaviour] = []
    for t in Tier:
        pop = cfg.population[int(t)]
        for b, n in (
            (Behaviour.HONEST, pop.honest),
            (Behaviour.MALICIOUS, pop.malicious),
            (Behaviour.RANDOM, pop.random),
        ):
            for _ in range(n):
                addrs.append(agent_address(len(addrs)))
                tiers.append(t)
                kinds.append(b)
    n = len(addrs)
    for t in Tier:
        need = cfg.consensus.tier(t).k
        have = sum(1 for x in tiers if x == t)
        if cfg.shape.count(t) and have < need:
            raise ValueError(f"tier {t.name} has {have} auditors, fewer than k={need}")
    assets = [cfg.stake] * n
    commission = [0] * n
    rep = [cfg.r0] * n
    rep_hist: list[list[float]] = [[] for _ in range(n)]
    profit_hist: list[list[float]] = [[] for _ in range(n)]
    seats_count = [0] * n
    slash_count = [0] * n
    treasury = 0
    rewarded_total = slashed_total = fees_total = 0
    correct_traces = passed_traces = bad_traces = 0
    seg_tiers = cfg.shape.tiers()
    weights = [cfg.consensus.tier(t).weight for t in seg_tiers]
    by_tier = {t: [i for i in range(n) if tiers[i] == t] for t in Tier}
    for s in range(cfg.sessions):
        flawed = rng.random(len(seg_tiers)) < cfg.flaw_rate
        seats_of: dict[int, list[Seat]] = {}
        load = [0] * n
        pass_fail = [[0, 0] for _ in seg_tiers]
        for j, t in enumerate(seg_tiers):
            cand = [i for i in by_tier[t] if load[i] < cfg.seat_cap]
            k = cfg.consensus.tier(t).k
            if len(cand) < k:
                raise ValueError(f"seat cap {cfg.seat_cap} leaves too few {t.name} auditors for k={k}")
            wts = np.array([assets[i] * (rep[i] + cfg.r_floor) // WAD for i in cand], dtype=np.float64)
            if wts.sum() <= 0:
                wts = np.ones(len(cand))
            chosen = rng.choice(len(cand), size=k, replace=False, p=wts / wts.sum())
            eps = cfg.consensus.tier(t).eps
            for c in sorted(int(x) for x in chosen):
                i = cand[c]
                load[i] += 1
                fail = _vote_fail(kinds[i], bool(flawed[j]), eps, rng)
                seats_of.setdefault(i, []).append(Seat(segment_index=j, vote_fail=fail))
                pass_fail[j][1 if fail else 0] += 1
        outcomes = [
            segment_outcome(pf[0], pf[1], cfg.consensus.tier(t).k, cfg.consensus.tau_bps)
            for pf, t in zip(pass_fail, seg_tiers, strict=True)
        ]
        verdict = trace_verdict(outcomes, weights, cfg.consensus.beta_bps)
        truth_ok = not bool(flawed.any())
        bad_traces += not truth_ok
        passed_traces += verdict.passed
        correct_traces += verdict.passed == truth_ok
        total_seats = sum(len(v) for v in seats_of.values())
        fee = -((-total_seats * cfg.reward * BPS) // 8000)
        fees_total += fee
        pool, to_treasury = fee_split(fee)
        treasury += to_treasury
        seed = rng.bytes(32)
        for i, seats in sorted(seats_of.items()):
            res = settle_auditor(
                auditor=addrs[i],
                seats=seats,
                outcomes=outcomes,
                reputation=rep[i],
                pool_assets=assets[i],
                commission_bps=cfg.commission_bps,
                slash_seed=seed,
                rules=rules,
            )
            pool -= res.gross_reward
            assets[i] = res.pool_assets_after
            commission[i] += res.commission
            rep[i] = res.reputation_after
            treasury += res.slashed
            rewarded_total += res.gross_reward
            slashed_total += res.slashed
            seats_count[i] += len(seats)
            slash_count[i] += sum(1 for x in res.seats if x.slashed > 0)
        if pool < 0:
            raise AssertionError("audit pool went negative: fee did not cover the rewards")
        treasury += pool
        for i in range(n):
            rep_hist[i].append(rep[i] / WAD)
            profit_hist[i].append((assets[i] + commission[i] - cfg.stake) / 10**18)
        if progress is not None:
            progress(s + 1)
    agents = [
        AgentRecord(
            address=addrs[i],
            tier=tiers[i],
            behaviour=kinds[i],
            reputation=rep_hist[i],
            profit=profit_hist[i],
            seats=seats_count[i],
            slashes=slash_count[i],
            final_assets=assets[i],
            commission_earned=commission[i],
        )
        for i in range(n)
    ]
    return EconomyResult(
        config=cfg,
        agents=agents,
        treasury=treasury,
        trace_accuracy=correct_traces / cfg.sessions,
        sessions_passed=passed_traces,
        sessions_bad=bad_traces,
        total_rewarded=rewarded_total,
        total_slashed=slashed_total,
        total_fees=fees_total,
    )


# --- failure probability and accuracy against beta (Figure 4) -------------------------------------


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


# --- corruption sweep (Table 1 style) -------------------------------------------------------------


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
    "Behaviour",
    "BetaSweepConfig",
    "BetaSweepResult",
    "CorruptionConfig",
    "CorruptionResult",
    "EconomyConfig",
    "EconomyResult",
    "PopulationTier",
    "SimTrace",
    "beta_sweep",
    "corruption_sweep",
    "processbench_traces",
    "simulate_economy",
    "synthetic_traces",
]
