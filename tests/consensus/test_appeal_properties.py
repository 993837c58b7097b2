"""Properties of the appeal rules (issue 15): monotone panels and bonds, bounded rounds, no round
without eligible auditors, and conservation of every segment history the contract allows."""

from __future__ import annotations

import pytest
from eth_utils import to_checksum_address
from hypothesis import given, settings
from hypothesis import strategies as st

from trustnode.consensus.appeal_admission import check_appeal
from trustnode.consensus.appeal_resolution import resolve, tally
from trustnode.consensus.appeal_settlement import settle_segment
from trustnode.consensus.appeals import (
    MAX_PANEL_SEATS,
    MAX_ROUNDS,
    Appeal,
    AppealParams,
    AppealRefused,
    AppealResult,
    Panel,
    PanelSeat,
    PanelStatus,
    SegmentRecord,
    Vote,
    check_appeal_params,
    min_bond,
    panel_seats,
)
from trustnode.consensus.rules import WAD, EconomicRules, segment_outcome
from trustnode.models.enums import SegmentOutcome as O
from trustnode.models.enums import Tier

T = 10**18
TAU = 6000
VOTES = [Vote.PASS, Vote.FAIL, Vote.ABSTAIN, Vote.UNREVEALED]


def addr(i: int) -> str:
    return to_checksum_address(i.to_bytes(20, "big"))


@given(st.integers(1, 31), st.integers(1, 10 * T), st.integers(10_000, 100_000))
def test_panels_and_bonds_grow_strictly_every_round(k0: int, reward: int, mult: int) -> None:
    sizes = [panel_seats(k0, r) for r in range(MAX_ROUNDS + 1)]
    assert sizes[0] == k0
    assert all(b == 2 * a + 1 for a, b in zip(sizes, sizes[1:], strict=False))
    bonds = [min_bond(k0, r, reward, mult) for r in range(1, MAX_ROUNDS + 1)]
    assert all(a < b for a, b in zip(bonds, bonds[1:], strict=False))
    assert all(b >= panel_seats(k0, r + 1) * reward for r, b in enumerate(bonds))  # covers the panel


@given(st.integers(1, 40), st.integers(0, MAX_ROUNDS))
def test_params_never_allow_a_panel_beyond_the_tally_width(k0: int, rounds: int) -> None:
    econ = EconomicRules(reward=6 * T, penalty=8 * T, p_min=WAD // 5, p_max=WAD // 2, gamma=WAD // 10)
    params = AppealParams(max_rounds=rounds, reward_bps=0)
    try:
        check_appeal_params(params, [k0], TAU, econ)
    except ValueError:
        assert rounds and panel_seats(k0, rounds) > MAX_PANEL_SEATS
    else:
        assert panel_seats(k0, rounds) <= MAX_PANEL_SEATS


def _history(draw: st.DrawFn, k0: int, params: AppealParams, reward: int) -> SegmentRecord:
    panels: list[Panel] = []
    outcome = O.NONE
    nid = 1
    for r in range(draw(st.integers(0, params.max_rounds)) + 1):
        k = panel_seats(k0, r)
        status = PanelStatus.DECIDED
        if r:
            status = draw(st.sampled_from([PanelStatus.DECIDED] * 2 + list(PanelStatus)))
        n = k if status is not PanelStatus.UNFILLABLE else draw(st.integers(0, k - 1))
        votes = draw(st.lists(st.sampled_from(VOTES), min_size=n, max_size=n))
        if status is not PanelStatus.DECIDED:
            votes = [Vote.UNREVEALED] * n
        seats = [PanelSeat(auditor=addr(nid + j), vote=v, reputation=WAD // 2) for j, v in enumerate(votes)]
        nid += n
        ap = None
        if r:
            ap = Appeal(appellant=addr(10**6), bond=min_bond(k0, r, reward, params.bond_multiplier_bps),
                        appealed=outcome)  # fmt: skip
        panel = Panel(round=r, seats=seats, status=status, appeal=ap)
        panels.append(panel)
        if status is PanelStatus.KEYS_WITHHELD:
            outcome = O.INCONCLUSIVE
        elif status is PanelStatus.DECIDED:
            outcome = segment_outcome(*tally(panel), k, TAU)
        if status is not PanelStatus.DECIDED:
            break
    return SegmentRecord(index=0, tier=Tier.LLM, weight=1, panels=panels)


@st.composite
def histories(draw: st.DrawFn) -> tuple[SegmentRecord, int, AppealParams, EconomicRules, int]:
    k0 = draw(st.integers(1, 5))
    reward = draw(st.integers(1, 10)) * T + draw(st.integers(0, 99))
    econ = EconomicRules(reward=reward, penalty=draw(st.integers(0, 20)) * T, p_min=WAD // 5, p_max=WAD // 2,
                         gamma=WAD // 10)  # fmt: skip
    params = AppealParams(max_rounds=draw(st.integers(0, 3)), bond_multiplier_bps=draw(st.integers(10_000, 30_000)),
                          reward_bps=draw(st.integers(0, 10_000)))  # fmt: skip
    return _history(draw, k0, params, reward), k0, params, econ, draw(st.integers(0, 200 * T))


@settings(max_examples=400, deadline=None)
@given(histories(), st.binary(min_size=32, max_size=32))
def test_every_allowed_history_conserves_tokens_and_is_bounded(case: tuple, seed: bytes) -> None:  # type: ignore[type-arg]
    seg, k0, params, econ, budget = case
    assert len(seg.panels) <= params.max_rounds + 1
    st_ = settle_segment(seg, k0=k0, tau_bps=TAU, appeal=params, econ=econ, slash_seed=seed, budget=budget)
    paid_out = st_.rewards + sum(p.refund + p.reward_paid for p in st_.payouts) + st_.to_treasury
    assert st_.reserved + st_.bonds + st_.budget_used == paid_out
    assert 0 <= st_.budget_used <= budget and st_.to_treasury >= 0
    # every vote of every decided round is scored against the scoring outcome (the final one unless the
    # last panel did not decide: then the contested one, or FAIL over a withheld PASS)
    for v in st_.votes:
        if v.agreed is not None:
            assert v.agreed == ((v.vote is Vote.FAIL) == (st_.resolution.scoring == O.FAIL))
    # a failed appeal's bond pays its panel, the rest never returns to the appellant
    for p in st_.payouts:
        if p.result is AppealResult.UPHELD:
            assert p.refund == 0 and p.reward_paid == 0
        if p.result is AppealResult.OVERTURNED:
            assert p.refund == p.bond
    # the segment is final now: no further appeal is admissible
    last = seg.panels[-1]
    if last.status is not PanelStatus.DECIDED or len(seg.panels) > params.max_rounds:
        with pytest.raises(AppealRefused):
            check_appeal(
                seg, k0=k0, appeal=params, reward=econ.reward, block=1, window_end=10, eligible=10**6
            )


@given(histories(), st.integers(0, 200))
def test_no_round_opens_without_enough_eligible_auditors(case: tuple, eligible: int) -> None:  # type: ignore[type-arg]
    seg, k0, params, econ, _ = case
    last = seg.panels[-1]
    if last.status is not PanelStatus.DECIDED or len(seg.panels) > params.max_rounds:
        return
    k = panel_seats(k0, len(seg.panels))
    kw = {"k0": k0, "appeal": params, "reward": econ.reward, "block": 5, "window_end": 10}
    if eligible < k:
        with pytest.raises(AppealRefused, match="NotEnoughEligibleAuditors"):
            check_appeal(seg, eligible=eligible, **kw)  # type: ignore[arg-type]
    else:
        r, bond = check_appeal(seg, eligible=eligible, **kw)  # type: ignore[arg-type]
        assert r == len(seg.panels) and bond == min_bond(k0, r, econ.reward, params.bond_multiplier_bps)


def test_appeal_refusals_by_name() -> None:
    params = AppealParams(max_rounds=1)
    seg = SegmentRecord(
        index=0, tier=Tier.LLM, weight=1,
        panels=[Panel(round=0, seats=[PanelSeat(auditor=addr(i + 1), vote=Vote.PASS, reputation=WAD)
                                      for i in range(3)])],
    )  # fmt: skip
    kw = {"k0": 3, "appeal": params, "reward": 6 * T, "eligible": 7}
    assert check_appeal(seg, block=10, window_end=10, **kw) == (1, 42 * T)  # type: ignore[arg-type]
    for extra, name in [
        ({"block": 11, "window_end": 10}, "AppealWindowClosed"),
        ({"block": 1, "window_end": 10, "max_bond": 41 * T}, "BondAboveLimit"),
    ]:
        with pytest.raises(AppealRefused, match=name):
            check_appeal(seg, **kw, **extra)  # type: ignore[arg-type]
    with pytest.raises(AppealRefused, match="AppealsDisabled"):
        check_appeal(
            seg, k0=3, appeal=AppealParams(max_rounds=0), reward=6 * T, eligible=7, block=1, window_end=9
        )
    # the unfillable draw-time case: bond back minus R per drawn seat, the outcome stands and is final
    ap = Appeal(appellant=addr(99), bond=42 * T, appealed=O.PASS)
    short = seg.model_copy(update={"panels": [*seg.panels, Panel(
        round=1, status=PanelStatus.UNFILLABLE, appeal=ap,
        seats=[PanelSeat(auditor=addr(50), vote=Vote.UNREVEALED, reputation=WAD)])]})  # fmt: skip
    res = resolve(short, 3, TAU, params, 6 * T)
    assert res.final == O.PASS and res.results[1] is AppealResult.UNFILLABLE
    econ = EconomicRules(reward=6 * T, penalty=8 * T, p_min=WAD // 5, p_max=WAD // 2, gamma=WAD // 10)
    s = settle_segment(short, k0=3, tau_bps=TAU, appeal=params, econ=econ, slash_seed=bytes(32), budget=0)
    assert s.payouts[0].refund == 36 * T and s.votes[-1].rewarded == 6 * T
