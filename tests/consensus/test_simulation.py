"""Agent simulations: the qualitative facts the paper claims, on small sizes with fixed seeds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from trustnode.consensus.rules import WAD
from trustnode.consensus.sim_beta import BetaSweepConfig, beta_sweep
from trustnode.consensus.sim_corruption import (
    CorruptionConfig,
    SimTrace,
    corruption_sweep,
    processbench_traces,
    synthetic_traces,
)
from trustnode.consensus.simulation import Behaviour, EconomyConfig, PopulationTier, simulate_economy
from trustnode.consensus.trace import TraceShape
from trustnode.models.enums import Tier


def _mean(res, behaviour: Behaviour, field: str) -> float:  # type: ignore[no-untyped-def]
    return float(np.mean([getattr(a, field)[-1] for a in res.agents if a.behaviour == behaviour]))


def test_economy_separates_honest_from_malicious() -> None:
    res = simulate_economy(EconomyConfig(sessions=120, seed=3))
    assert _mean(res, Behaviour.HONEST, "profit") > 0
    assert _mean(res, Behaviour.MALICIOUS, "profit") < 0
    assert _mean(res, Behaviour.HONEST, "reputation") > _mean(res, Behaviour.RANDOM, "reputation")
    assert _mean(res, Behaviour.RANDOM, "reputation") > _mean(res, Behaviour.MALICIOUS, "reputation")
    assert _mean(res, Behaviour.HONEST, "reputation") > 0.8
    # honest profit grows over time, malicious profit falls
    honest = np.mean([a.profit for a in res.agents if a.behaviour == Behaviour.HONEST], axis=0)
    malicious = np.mean([a.profit for a in res.agents if a.behaviour == Behaviour.MALICIOUS], axis=0)
    assert honest[-1] > honest[len(honest) // 2] > 0
    assert malicious[-1] < malicious[len(malicious) // 2] < 0
    assert len(res.agents[0].reputation) == 120


def test_economy_conserves_tokens() -> None:
    """Every wei is accounted for: stakes + fees = pool assets + commissions + treasury."""
    cfg = EconomyConfig(sessions=40, seed=5)
    res = simulate_economy(cfg)
    n = len(res.agents)
    held = sum(a.final_assets + a.commission_earned for a in res.agents)
    assert held + res.treasury == n * cfg.stake + res.total_fees
    assert res.total_rewarded > 0 and res.total_slashed > 0
    assert sum(
        a.final_assets for a in res.agents
    ) == n * cfg.stake + res.total_rewarded - res.total_slashed - sum(a.commission_earned for a in res.agents)
    for a in res.agents:
        assert a.profit[-1] == pytest.approx((a.final_assets + a.commission_earned - cfg.stake) / 10**18)


def test_economy_is_reproducible_and_validates() -> None:
    a = simulate_economy(EconomyConfig(sessions=10, seed=11))
    b = simulate_economy(EconomyConfig(sessions=10, seed=11))
    assert a.model_dump() == b.model_dump()
    with pytest.raises(ValueError, match="fewer than k"):
        simulate_economy(
            EconomyConfig(sessions=1, population=(PopulationTier(honest=1, malicious=0, random=0),) * 3)
        )


def test_noiseless_honest_economy_never_slashes() -> None:
    cfg = EconomyConfig(
        sessions=20,
        population=(PopulationTier(honest=6, malicious=0, random=0),) * 3,
        shape=TraceShape(computer=4, llm=0, human=0),
        r0=WAD // 2,
    )
    res = simulate_economy(cfg)
    assert res.total_slashed == 0
    assert res.trace_accuracy == 1.0
    for a in res.agents:
        if a.tier == Tier.COMPUTER and a.seats:
            assert a.reputation[-1] > 0.5 and a.profit[-1] > 0


def test_beta_sweep_monte_carlo_agrees_with_exact() -> None:
    res = beta_sweep(BetaSweepConfig(mc_trials=100_000, seed=1, beta_bps=list(range(0, 10001, 500))))
    n = res.config.mc_trials
    for exact, mc in zip(res.exact, res.monte_carlo, strict=True):
        assert abs(mc - exact) <= 5 * np.sqrt(max(exact * (1 - exact), 1e-9) / n) + 1e-5
    for exact, h, c in zip(res.exact, res.hoeffding, res.chernoff, strict=True):
        assert h >= exact * (1 - 1e-9) and c >= exact * (1 - 1e-9)
    for fpr, mc_bad in zip(res.fpr, res.monte_carlo_bad_pass, strict=True):
        assert abs(fpr - mc_bad) <= 5 * np.sqrt(max(fpr * (1 - fpr), 1e-9) / n) + 1e-5
    # failure rises with beta; the paper's Figure 4 shape has a window of accuracy > 99.99%
    assert all(np.diff(res.exact) >= -1e-15)
    assert res.high_accuracy_window is not None
    lo, hi = res.high_accuracy_window
    assert 0 < lo < hi < 1


def test_corruption_sweep_trust_degrades_more_gracefully() -> None:
    traces = synthetic_traces(150, TraceShape(computer=6, llm=4, human=0), seed=2)
    res = corruption_sweep(traces, "synthetic", CorruptionConfig(repeats=3, rates=[0.0, 0.1, 0.2], seed=2))
    by = {m.method: m for m in res.methods}
    trust, single = by["TRUST"], by["Single auditor"]
    assert trust.mean[0] >= single.mean[0]
    assert trust.mean[-1] > single.mean[-1] + 5  # at 20% flipped votes
    assert single.mean[0] > single.mean[-1]  # corruption hurts
    assert res.bad_traces == sum(1 for t in traces if not t.correct)


def test_processbench_ground_truth(eval_dir: Path) -> None:
    traces = processbench_traces(eval_dir / "processbench" / "gsm8k.json")
    assert len(traces) == 400
    labels = [int(r["label"]) for r in json.loads((eval_dir / "processbench" / "gsm8k.json").read_text())]
    assert sum(1 for t in traces if t.correct) == labels.count(-1)
    assert [t.flawed.index(True) if not t.correct else -1 for t in traces] == labels
    assert all(sum(t.flawed) <= 1 for t in traces)
    assert {Tier.COMPUTER, Tier.LLM} <= {x for t in traces for x in t.tiers}
    res = corruption_sweep(traces[:120], "ProcessBench gsm8k", CorruptionConfig(repeats=2, rates=[0.0, 0.2]))
    by = {m.method: m for m in res.methods}
    assert by["TRUST"].mean[-1] > by["Single auditor"].mean[-1]


def test_sim_trace_correctness() -> None:
    assert SimTrace(tiers=[Tier.LLM, Tier.LLM], flawed=[False, False]).correct
    assert not SimTrace(tiers=[Tier.LLM, Tier.LLM], flawed=[False, True]).correct
    with pytest.raises(ValueError):
        corruption_sweep([], "none", CorruptionConfig())
