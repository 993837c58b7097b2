"""Conservation of a whole session's final settlement with appeals and canaries (property test)."""

from __future__ import annotations

from eth_utils import to_checksum_address
from hypothesis import given, settings
from hypothesis import strategies as st

from trustnode.consensus.appeal_resolution import tally
from trustnode.consensus.appeals import (
    Appeal,
    AppealParams,
    AppealResult,
    Panel,
    PanelSeat,
    PanelStatus,
    SegmentRecord,
    Vote,
    min_bond,
    panel_seats,
)
from trustnode.consensus.canaries import CanaryParams, canary_count
from trustnode.consensus.final_settlement import RevealedCanary, SessionRecord, settle_session
from trustnode.consensus.rules import WAD, EconomicRules, segment_outcome
from trustnode.models.enums import SegmentOutcome as O
from trustnode.models.enums import Tier

T = 10**18
TAU = 6000
VOTES = [Vote.PASS, Vote.PASS, Vote.FAIL, Vote.FAIL, Vote.ABSTAIN, Vote.UNREVEALED]


def _session_rounds(draw: st.DrawFn, segments: list[SegmentRecord]) -> list[SegmentRecord]:
    """Number the appeal panels as the session does: one appeal (one round) names one or more
    segments of one depth, rounds counted per session, so a segment's rounds increase by steps
    of any size (the panels were generated with round = depth)."""
    numbers: dict[tuple[int, int], int] = {}
    next_round = 1
    for depth in range(1, max(len(s.panels) for s in segments)):
        named = [s.index for s in segments if len(s.panels) > depth]
        named = draw(st.permutations(named))
        while named:
            size = draw(st.integers(1, len(named)))
            for i in named[:size]:
                numbers[(i, depth)] = next_round
            named, next_round = named[size:], next_round + 1
    return [
        s.model_copy(update={"panels": [
            p if d == 0 else p.model_copy(update={"round": numbers[(s.index, d)]}) for d, p in enumerate(s.panels)
        ]})
        for s in segments
    ]  # fmt: skip


@st.composite
def sessions(draw: st.DrawFn) -> tuple[SessionRecord, AppealParams, CanaryParams, EconomicRules, int, int]:
    R = draw(st.integers(1, 10)) * T + draw(st.integers(0, 999))  # odd amounts exercise the rounding
    econ = EconomicRules(
        reward=R, penalty=draw(st.integers(0, 30)) * T, p_min=WAD // 5, p_max=WAD // 2, gamma=WAD // 10
    )
    appeal = AppealParams(
        max_rounds=draw(st.integers(0, 3)),
        bond_multiplier_bps=draw(st.integers(10_000, 30_000)),
        reward_bps=draw(st.integers(0, 10_000)),
    )
    canary = CanaryParams(rate_bps=draw(st.sampled_from([0, 1000, 2000, 3000])))
    seats = draw(st.tuples(st.integers(1, 5), st.integers(1, 5), st.integers(1, 5)))
    n = draw(st.integers(1, 10))
    committed = canary_count(n, canary.rate_bps)
    revealed = draw(st.lists(st.integers(0, n - 1), unique=True, max_size=committed))
    next_id = 1
    segments: list[SegmentRecord] = []
    for i in range(n):
        tier = Tier(draw(st.integers(0, 2)))
        k0 = seats[int(tier)]
        panels: list[Panel] = []
        outcome = O.NONE
        rounds = 0 if i in revealed else draw(st.integers(0, appeal.max_rounds))
        for r in range(rounds + 1):
            k = panel_seats(k0, r)
            status = PanelStatus.DECIDED
            if r:
                status = draw(
                    st.sampled_from(
                        [PanelStatus.DECIDED] * 3 + [PanelStatus.KEYS_WITHHELD, PanelStatus.UNFILLABLE]
                    )
                )
            if status is PanelStatus.DECIDED:
                votes = draw(st.lists(st.sampled_from(VOTES), min_size=k, max_size=k))
            elif status is PanelStatus.KEYS_WITHHELD:
                votes = [Vote.UNREVEALED] * k
            else:
                votes = [Vote.UNREVEALED] * draw(st.integers(0, k - 1))
            seats_ = [
                PanelSeat(auditor=to_checksum_address((next_id + j).to_bytes(20, "big")), vote=v,
                          reputation=draw(st.integers(0, WAD)))
                for j, v in enumerate(votes)
            ]  # fmt: skip
            next_id += len(votes)
            ap = None
            if r:
                bond = min_bond(k0, r, R, appeal.bond_multiplier_bps)
                ap = Appeal(appellant=to_checksum_address(b"\xaa" * 20), bond=bond, appealed=outcome)
            panel = Panel(round=r, seats=seats_, status=status, appeal=ap)
            panels.append(panel)
            if status is PanelStatus.DECIDED:
                outcome = segment_outcome(*tally(panel), k, TAU)
            elif status is PanelStatus.KEYS_WITHHELD:
                outcome = O.INCONCLUSIVE
            if status is not PanelStatus.DECIDED:
                break
        segments.append(SegmentRecord(index=i, tier=tier, weight=draw(st.integers(1, 3)), panels=panels))
    segments = _session_rounds(draw, segments)
    reserved = sum(seats[int(s.tier)] for s in segments) * R
    fee = -(-reserved * 10_000 // 8000) + draw(st.integers(0, 10 * T))
    rec = SessionRecord(
        fee=fee,
        seats=seats,
        tau_bps=TAU,
        beta_bps=draw(st.integers(0, 10_000)),
        segments=segments,
        canaries_committed=committed,
        canaries_revealed=[
            RevealedCanary(index=i, verdict=draw(st.sampled_from([O.PASS, O.FAIL]))) for i in revealed
        ],
    )
    return rec, appeal, canary, econ, draw(st.integers(0, 100 * T)), draw(st.integers(0, 50 * T))


@settings(max_examples=300, deadline=None)
@given(sessions(), st.binary(min_size=32, max_size=32))
def test_every_token_is_accounted_for(case: tuple, seed: bytes) -> None:  # type: ignore[type-arg]
    rec, appeal, canary, econ, appeal_budget, canary_budget = case
    s = settle_session(
        rec, appeal=appeal, canary=canary, econ=econ, slash_seed=seed,
        appeal_budget=appeal_budget, canary_budget=canary_budget,
    )  # fmt: skip
    assert s.inflow == s.outflow
    assert 0 <= s.appeal_budget_used <= appeal_budget and 0 <= s.canary_refund_paid <= canary_budget
    assert s.fee_to_treasury + s.pool_slack + sum(x.reserved for x in [*s.segments, *s.canaries]) == rec.fee
    for seg in s.segments:
        assert seg.reserved + seg.bonds + seg.budget_used == (
            seg.rewards + sum(p.refund + p.reward_paid for p in seg.payouts) + seg.to_treasury
        )
        assert seg.to_treasury >= 0 and seg.shortfall >= 0
        assert all(0 <= v.rewarded <= econ.reward for v in seg.votes)
        for p in seg.payouts:
            assert 0 <= p.refund <= p.bond and 0 <= p.reward_paid <= p.reward_due
            if p.result is AppealResult.UPHELD:
                assert p.refund == 0
            elif p.result is AppealResult.KEYS_WITHHELD:
                # withheld over a decided FAIL: the FAIL stands and the bond pays the seats
                assert p.refund == (0 if seg.final is O.FAIL else p.bond)
            elif p.result is not AppealResult.UNFILLABLE:
                assert p.refund == p.bond
            if p.result is not AppealResult.OVERTURNED:
                assert p.reward_due == 0
    for c in s.canaries:
        assert c.to_treasury >= 0
        assert all(v.gamma == canary.gamma for v in c.votes)
    rounds = s.auditor_rounds()
    panel_rounds = {p.round for seg in rec.segments for p in seg.panels}
    assert {a.round for a in rounds} <= panel_rounds  # ledger keys are the session's round numbers
    assert sum(a.reward for a in rounds) == s.rewards
    assert sum(a.slash for a in rounds) == s.slashed
    # canaries never count in the trace verdict
    assert s.verdict.total_weight == sum(x.weight for x in rec.segments) - sum(
        rec.segments[c.index].weight for c in rec.canaries_revealed
    )
