"""Agent simulation of TRUST's economy over many sessions (paper Figure 7): honest,
malicious and random auditors drawn by stake and reputation, every vote settled.

The economy settles every vote with `trustnode.consensus.rules`, the same reference the
chain consistency test holds the contracts to, so simulated balances are protocol balances.
All randomness comes from one seeded numpy generator per run: a seed reproduces a run.
`Progress` is the progress callback of this simulation and of `sim_beta` and `sim_corruption`.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

import numpy as np
from eth_utils import keccak, to_checksum_address
from pydantic import BaseModel, Field

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


__all__ = [
    "AgentRecord",
    "Behaviour",
    "EconomyConfig",
    "EconomyResult",
    "PopulationTier",
    "Progress",
    "agent_address",
    "simulate_economy",
]
