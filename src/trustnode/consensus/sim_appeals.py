"""Trace error rate with and without appeals under a corruption sweep (issue 15, paper Table 1 range).

Population: each tier has `population` auditors of equal stake; a share `rate` of them is
corrupted and always votes against the truth; honest ones err with the tier's eps.  Every
panel is drawn uniformly without replacement, excluding the segment's earlier panels (the v2
draw with equal weights).  Appellant model (stated in docs/appeals-canaries.md): an honest
watchdog judges every segment itself with error `watchdog_eps` and appeals any segment whose
current outcome differs from its own judgement (INCONCLUSIVE always differs), while rounds
remain.  Optionally the corrupted coalition appeals too: every outcome that is currently right,
while rounds remain.  Outcomes are resolved and every appeal is settled with the reference rules
(`consensus.appeals`), so the appellant's profit and the treasury budget drawn are protocol
numbers.  One seeded numpy generator per run: a seed reproduces the run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from enum import StrEnum

import numpy as np
from eth_utils import keccak, to_checksum_address
from pydantic import BaseModel, Field
from scipy import stats

from trustnode.consensus.appeal_admission import check_appeal
from trustnode.consensus.appeal_settlement import settle_segment
from trustnode.consensus.appeals import (
    Appeal,
    AppealParams,
    AppealRefused,
    AppealResult,
    Panel,
    PanelSeat,
    PanelStatus,
    SegmentRecord,
    Vote,
    panel_seats,
)
from trustnode.consensus.rules import WAD, EconomicRules, quorum, segment_outcome, trace_verdict
from trustnode.consensus.trace import ConsensusParams, TierSetting, TraceShape
from trustnode.models.enums import SegmentOutcome, Tier

Progress = Callable[[int], None]
TOKEN = 10**18
WATCHDOG = to_checksum_address(keccak(b"trustnode-sim-watchdog")[12:])
COALITION = to_checksum_address(keccak(b"trustnode-sim-coalition")[12:])


class Appellant(StrEnum):
    NONE = "none"  # nobody appeals: the protocol without appeals
    WATCHDOG = "watchdog"  # appeals whenever its own judgement differs from the outcome
    RATIONAL = "rational"  # the same judgement, but only when the expected profit is positive


class Scenario(BaseModel):
    label: str
    max_rounds: int = Field(ge=0, le=4)
    appellant: Appellant
    coalition: bool = Field(default=False, description="the corrupted coalition appeals right outcomes too")


def default_scenarios() -> list[Scenario]:
    return [
        Scenario(label="without appeals", max_rounds=0, appellant=Appellant.NONE),
        Scenario(label="rational appellant, 3 rounds", max_rounds=3, appellant=Appellant.RATIONAL),
        Scenario(label="watchdog, 3 rounds", max_rounds=3, appellant=Appellant.WATCHDOG),
        Scenario(
            label="watchdog + coalition, 3 rounds", max_rounds=3, appellant=Appellant.WATCHDOG, coalition=True
        ),
    ]


class AppealSimConfig(BaseModel):
    """Parameters of the appeals figure (all recorded in its JSON)."""

    consensus: ConsensusParams = ConsensusParams(
        computer=TierSetting(k=3, weight=1, eps=0.0),
        llm=TierSetting(k=3, weight=2, eps=0.05),
        human=TierSetting(k=5, weight=3, eps=0.30),
        tau_bps=6000,
        beta_bps=10_000,
    )
    shape: TraceShape = TraceShape()
    traces: int = Field(default=100, ge=1, description="traces per repeat and scenario")
    bad_share: float = Field(default=0.5, ge=0, le=1, description="share of traces with a wrong segment")
    n_flawed: int = Field(default=1, ge=1)
    rates: list[float] = Field(default_factory=lambda: [0.05, 0.10, 0.15, 0.20, 0.25, 0.30])
    scenarios: list[Scenario] = Field(default_factory=default_scenarios)
    population: int = Field(default=200, ge=1, description="auditors per tier")
    watchdog_eps: float = Field(default=0.02, ge=0, le=1, description="the appellant's own error rate")
    repeats: int = Field(default=4, ge=1)
    reward: int = 6 * TOKEN
    penalty: int = 8 * TOKEN
    p_min: int = WAD // 5
    p_max: int = WAD // 2
    appeal: AppealParams = AppealParams()
    seed: int = 7


class Series(BaseModel):
    """One scenario across the corruption rates: means (and the trace error's std) over repeats."""

    scenario: Scenario
    trace_error: list[float]
    trace_error_std: list[float]
    segment_error: list[float]
    appeals_per_trace: list[float]
    overturned_share: list[float] = Field(
        description="share of the honest appellant's appeals that overturned"
    )
    appellant_profit_per_appeal: list[float] = Field(description="tokens: refund + reward - bond, mean")
    budget_per_trace: list[float] = Field(description="treasury appeal budget drawn per trace, tokens")
    slashed_per_trace: list[float] = Field(description="slashes on appealed segments per trace, tokens")


class AppealSimResult(BaseModel):
    config: AppealSimConfig
    rates: list[float]
    fee_share_per_trace: float = Field(description="the treasury's 20% of a trace's minimum fee, tokens")
    series: list[Series]


@functools.cache
def _auditors(tier: int, n: int) -> tuple[str, ...]:
    """Deterministic checksummed addresses of a tier's simulated auditors."""
    return tuple(
        to_checksum_address(keccak(b"trustnode-sim-appeals" + bytes([tier]) + i.to_bytes(4, "big"))[12:])
        for i in range(n)
    )


class _Segment:
    """One segment's run: panels as reference models, the current outcome, who sat already."""

    def __init__(self, index: int, tier: Tier, weight: int, flawed: bool) -> None:
        self.index, self.tier, self.weight, self.flawed = index, tier, weight, flawed
        self.panels: list[Panel] = []
        self.used: set[int] = set()
        self.outcome = SegmentOutcome.NONE


def _run_panel(
    seg: _Segment,
    r: int,
    cfg: AppealSimConfig,
    corrupt: np.ndarray,
    rng: np.random.Generator,
    appeal: Appeal | None,
) -> None:
    """Draw and vote round r of a segment (uniform, without replacement, excluding earlier panels)."""
    s = cfg.consensus.tier(seg.tier)
    k = panel_seats(s.k, r)
    mask = np.ones(cfg.population, dtype=bool)
    mask[list(seg.used)] = False
    free = np.flatnonzero(mask)
    chosen = rng.choice(free, size=k, replace=False)
    seg.used.update(int(x) for x in chosen)
    wrong = corrupt[chosen] | (rng.random(k) < s.eps)
    fails = np.where(wrong, not seg.flawed, seg.flawed)
    names = _auditors(int(seg.tier), cfg.population)
    # model_construct: the addresses are checksummed already and settle_segment validates the history
    seats = [
        PanelSeat.model_construct(auditor=names[a], vote=Vote.FAIL if f else Vote.PASS, reputation=WAD // 2)
        for a, f in zip(chosen.tolist(), fails.tolist(), strict=True)
    ]
    seg.panels.append(Panel.model_construct(round=r, seats=seats, status=PanelStatus.DECIDED, appeal=appeal))
    nf = int(fails.sum())
    seg.outcome = segment_outcome(k - nf, nf, k, cfg.consensus.tau_bps)


def _truth(seg: _Segment) -> SegmentOutcome:
    return SegmentOutcome.FAIL if seg.flawed else SegmentOutcome.PASS


def _flip(o: SegmentOutcome) -> SegmentOutcome:
    return SegmentOutcome.PASS if o == SegmentOutcome.FAIL else SegmentOutcome.FAIL


@functools.lru_cache(maxsize=4096)
def panel_distribution(k: int, tau_bps: int, wrong: float) -> tuple[float, float, float]:
    """(right, INCONCLUSIVE, wrong) outcome probabilities of k independent seats each wrong w.p. `wrong`."""
    q = quorum(k, tau_bps)
    right_votes = stats.binom(k, 1.0 - wrong)
    p_right = float(right_votes.sf(q - 1))
    p_wrong = float(right_votes.cdf(k - q))
    return p_right, max(0.0, 1.0 - p_right - p_wrong), p_wrong


def expected_profit(
    current: SegmentOutcome,
    belief: SegmentOutcome,
    confidence: float,
    k: int,
    tau_bps: int,
    wrong: float,
    reward_bps: int,
) -> float:
    """The appellant's expected profit, in bonds, of appealing `current` to a k-seat panel (one round ahead).

    With probability `confidence` the truth is its belief; the panel is right, INCONCLUSIVE or wrong
    with `panel_distribution`.  OVERTURNED pays reward_bps, UPHELD loses the bond, VOIDED is 0.
    """  # fmt: skip
    right, inconc, wrong_p = panel_distribution(k, tau_bps, wrong)
    gain = reward_bps / 10_000
    ev = 0.0
    for truth, p_truth in ((belief, confidence), (_flip(belief), 1.0 - confidence)):
        for final, p in ((truth, right), (SegmentOutcome.INCONCLUSIVE, inconc), (_flip(truth), wrong_p)):
            if final == current:
                ev -= p_truth * p
            elif not (current != SegmentOutcome.INCONCLUSIVE and final == SegmentOutcome.INCONCLUSIVE):
                ev += p_truth * p * gain
    return ev


def _appellant(
    seg: _Segment, sc: Scenario, cfg: AppealSimConfig, rate: float, r: int, rng: np.random.Generator
) -> str | None:
    """Who appeals this segment into round r: the honest appellant, the coalition, or nobody."""  # fmt: skip
    if sc.appellant is not Appellant.NONE:
        belief = _truth(seg)
        if rng.random() < cfg.watchdog_eps:
            belief = _flip(belief)
        if seg.outcome != belief:
            if sc.appellant is Appellant.WATCHDOG:
                return WATCHDOG
            s = cfg.consensus.tier(seg.tier)
            wrong = rate + (1.0 - rate) * s.eps
            e = cfg.watchdog_eps
            confidence = 1.0 - e
            if seg.outcome != SegmentOutcome.INCONCLUSIVE:
                # Bayes: a disagreement is the outcome's error or the appellant's own.
                right, _, wrong_p = panel_distribution(panel_seats(s.k, r - 1), cfg.consensus.tau_bps, wrong)
                confidence = (1 - e) * wrong_p / ((1 - e) * wrong_p + e * right) if wrong_p + e > 0 else 0.0
            ev = expected_profit(seg.outcome, belief, confidence, panel_seats(s.k, r),
                                 cfg.consensus.tau_bps, wrong, cfg.appeal.reward_bps)  # fmt: skip
            if ev > 0:
                return WATCHDOG
    if sc.coalition and seg.outcome == _truth(seg):
        return COALITION
    return None


_KEYS = ("te", "se", "apt", "ov", "pr", "bud", "sl")


def _run_trace(
    cfg: AppealSimConfig,
    sc: Scenario,
    rate: float,
    corrupt: np.ndarray,
    econ: EconomicRules,
    rng: np.random.Generator,
    tally: dict[str, float],
) -> None:
    """One trace under one scenario; adds its counts to `tally`."""  # fmt: skip
    tiers = cfg.shape.tiers()
    weights = [cfg.consensus.tier(t).weight for t in tiers]
    params = cfg.appeal.model_copy(update={"max_rounds": sc.max_rounds})
    flawed = np.zeros(len(tiers), dtype=bool)
    if rng.random() < cfg.bad_share:
        flawed[rng.choice(len(tiers), size=min(cfg.n_flawed, len(tiers)), replace=False)] = True
    segs = [
        _Segment(j, t, w, bool(f)) for j, (t, w, f) in enumerate(zip(tiers, weights, flawed, strict=True))
    ]
    for seg in segs:
        k0 = cfg.consensus.tier(seg.tier).k
        _run_panel(seg, 0, cfg, corrupt, rng, None)
        for r in range(1, sc.max_rounds + 1):
            who = _appellant(seg, sc, cfg, rate, r, rng)
            if who is None:
                break
            record = SegmentRecord.model_construct(index=seg.index, tier=seg.tier, weight=seg.weight,
                                                   panels=seg.panels)  # fmt: skip
            try:  # the contract's admission check: window, rounds left, enough eligible auditors
                _, bond = check_appeal(record, k0=k0, appeal=params, reward=cfg.reward, block=0, window_end=0,
                                       eligible=cfg.population - len(seg.used))  # fmt: skip
            except AppealRefused:
                break  # refused up front, nothing taken: the last outcome stands
            _run_panel(seg, r, cfg, corrupt, rng, Appeal(appellant=who, bond=bond, appealed=seg.outcome))
            tally["apt"] += 1
        if len(seg.panels) > 1:
            st = settle_segment(
                SegmentRecord(index=seg.index, tier=seg.tier, weight=seg.weight, panels=seg.panels),
                k0=k0, tau_bps=cfg.consensus.tau_bps, appeal=params, econ=econ, slash_seed=rng.bytes(32),
                budget=10**30,
            )  # fmt: skip
            tally["bud"] += st.budget_used / TOKEN
            tally["sl"] += st.slashed / TOKEN
            for p in st.payouts:
                if p.appellant == WATCHDOG:
                    tally["n"] += 1
                    tally["ov"] += p.result is AppealResult.OVERTURNED
                    tally["pr"] += (p.refund + p.reward_paid - p.bond) / TOKEN
        tally["se"] += seg.outcome != _truth(seg)
    verdict = trace_verdict([s.outcome for s in segs], weights, cfg.consensus.beta_bps)
    tally["te"] += verdict.passed != (not flawed.any())


def simulate_appeals(cfg: AppealSimConfig, progress: Progress | None = None) -> AppealSimResult:
    """Trace and segment error, appeal counts and appeal money per scenario and corruption rate."""
    rng = np.random.default_rng(cfg.seed)
    econ = EconomicRules(
        reward=cfg.reward, penalty=cfg.penalty, p_min=cfg.p_min, p_max=cfg.p_max, gamma=WAD // 20
    )
    n_seg = cfg.shape.total
    acc: list[dict[str, list[list[float]]]] = [
        {key: [[] for _ in cfg.rates] for key in _KEYS} for _ in cfg.scenarios
    ]
    step = 0
    for i, rate in enumerate(cfg.rates):
        for _ in range(cfg.repeats):
            corrupt = np.zeros(cfg.population, dtype=bool)
            corrupt[rng.choice(cfg.population, size=round(rate * cfg.population), replace=False)] = True
            for j, sc in enumerate(cfg.scenarios):
                tally = dict.fromkeys((*_KEYS, "n"), 0.0)
                for _t in range(cfg.traces):
                    _run_trace(cfg, sc, rate, corrupt, econ, rng, tally)
                n = tally["n"]
                row = {
                    "te": tally["te"] / cfg.traces,
                    "se": tally["se"] / (cfg.traces * n_seg),
                    "apt": tally["apt"] / cfg.traces,
                    "ov": tally["ov"] / n if n else float("nan"),
                    "pr": tally["pr"] / n if n else float("nan"),
                    "bud": tally["bud"] / cfg.traces,
                    "sl": tally["sl"] / cfg.traces,
                }
                for key in _KEYS:
                    acc[j][key][i].append(row[key])
            step += 1
            if progress is not None:
                progress(step)
    series = [
        Series(
            scenario=sc,
            trace_error=[float(np.mean(x)) for x in a["te"]],
            trace_error_std=[float(np.std(x)) for x in a["te"]],
            segment_error=[float(np.mean(x)) for x in a["se"]],
            appeals_per_trace=[float(np.mean(x)) for x in a["apt"]],
            overturned_share=[_nanmean(x) for x in a["ov"]],
            appellant_profit_per_appeal=[_nanmean(x) for x in a["pr"]],
            budget_per_trace=[float(np.mean(x)) for x in a["bud"]],
            slashed_per_trace=[float(np.mean(x)) for x in a["sl"]],
        )
        for sc, a in zip(cfg.scenarios, acc, strict=True)
    ]
    fee_share = cfg.consensus.seats(cfg.shape) * cfg.reward * 2_000 // 8_000 / TOKEN
    return AppealSimResult(config=cfg, rates=cfg.rates, fee_share_per_trace=fee_share, series=series)


def _nanmean(x: list[float]) -> float:
    a = np.asarray(x, dtype=np.float64)
    return float(np.nanmean(a)) if np.isfinite(a).any() else 0.0


def total_steps(cfg: AppealSimConfig) -> int:
    """Progress ticks `simulate_appeals` reports (one per rate and repeat)."""
    return len(cfg.rates) * cfg.repeats


__all__ = [
    "AppealSimConfig",
    "AppealSimResult",
    "Appellant",
    "Scenario",
    "Series",
    "default_scenarios",
    "expected_profit",
    "panel_distribution",
    "simulate_appeals",
    "total_steps",
]
