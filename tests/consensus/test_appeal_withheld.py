"""Keys withheld on a deeper appeal (second review): a decided FAIL stands, the bond pays the seats.

The same figures as the forge test `OperatorReviewWithheldPot.test_WithheldNextDepthKeepsTheDecidedOverturn`
(R = 6 TRUST, k_0 = 3, reward 20%, budget 200 TRUST): without the fix the depth-1 panel was paid 0
(42 TRUST without the withholding), the depth-1 appellant's reward was 0 (8.4 TRUST), the round-0
votes escaped being scored wrong and the provider's 15 R bond came back whole.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.consensus.test_appeals import PROVIDER, R, T, appeal, conserved, panel, settle
from trustnode.consensus.appeal_resolution import outcome_after_withheld, withheld_keeps
from trustnode.consensus.appeals import AppealResult, Effect, Panel, PanelStatus, panel_seats
from trustnode.models.enums import SegmentOutcome as O

BUDGET = 200 * T
HONEST = "0x" + "cc" * 20


@pytest.mark.parametrize(
    ("depth", "contested", "after"),
    [
        (1, O.PASS, O.INCONCLUSIVE),  # finding 2: a contested PASS never stands
        (1, O.FAIL, O.FAIL),  # outside review 3: round 0's FAIL stands too
        (2, O.FAIL, O.FAIL),  # the decided overturn stands
        (3, O.FAIL, O.FAIL),
        (2, O.PASS, O.INCONCLUSIVE),  # never a free veto on appealing a PASS
        (3, O.PASS, O.INCONCLUSIVE),
        (2, O.INCONCLUSIVE, O.INCONCLUSIVE),
    ],
)
def test_outcome_after_withheld_keys(depth: int, contested: O, after: O) -> None:
    assert outcome_after_withheld(depth, contested) == after
    assert withheld_keeps(depth, contested) == (after == contested != O.INCONCLUSIVE)


def _attack(withhold: bool) -> list[Panel]:
    panels = [panel(0, "PPP", 1), panel(1, "F" * 7, 10, appeal=appeal(1, O.PASS))]
    if withhold:
        panels.append(
            panel(2, "U" * 15, 20, appeal=appeal(2, O.FAIL, PROVIDER), status=PanelStatus.KEYS_WITHHELD)
        )
    return panels


def test_withheld_next_depth_keeps_the_decided_overturn() -> None:
    clean = settle(_attack(False), budget=BUDGET)
    st_ = settle(_attack(True), budget=BUDGET)
    assert st_.resolution.outcomes == [O.PASS, O.FAIL, O.FAIL] and st_.final == O.FAIL
    # the depth-1 panel: 7 seats at R = 42 TRUST, as without the withholding
    assert sum(v.rewarded for v in st_.votes if v.round == 1) == 7 * R == 42 * T
    # the depth-1 appellant: bond back and 20% of it = 8.4 TRUST
    over, withheld = st_.payouts
    assert over.result is AppealResult.OVERTURNED and over.refund == 7 * R
    assert over.reward_paid == 7 * R * 2000 // 10_000 == 8_400 * 10**15
    # round 0's three PASS votes are scored wrong (and slashed by their coins) exactly as without it
    zero = [v for v in st_.votes if v.round == 0]
    assert [(v.agreed, v.effect) for v in zero] == [(False, Effect.INCORRECT)] * 3
    assert zero == [v for v in clean.votes if v.round == 0]
    assert [v for v in st_.votes if v.round == 1] == [v for v in clean.votes if v.round == 1]
    assert st_.payouts[0] == clean.payouts[0]
    # the withheld bond (15 R) is not refunded: it pays the 15 locked seats R each
    assert withheld.result is AppealResult.KEYS_WITHHELD and withheld.bond == 15 * R
    assert withheld.refund == 0 and withheld.reward_paid == 0
    assert [v.rewarded for v in st_.votes if v.round == 2] == [R] * 15
    assert all(v.effect is Effect.NONE for v in st_.votes if v.round == 2)
    # the budget pays the overturn only: 4 R of its panel and the 1.4 R reward
    assert st_.budget_used == clean.budget_used == 4 * R + 7 * R * 2000 // 10_000
    assert st_.shortfall == 0 and st_.to_treasury == 0
    conserved(st_)


def test_withheld_against_a_decided_pass_is_inconclusive_but_scored_as_fail() -> None:
    """The forge `test_WithheldAgainstAPassDoesNotKeepIt`: round 0 FAILs, depth 1 PASSes, an honest
    party appeals the PASS at depth 2 and the provider withholds the keys.  The verdict is
    INCONCLUSIVE, but every earlier round is scored against FAIL (adverse inference, outside review 5):
    the depth-1 appeal that produced the PASS is UPHELD against FAIL and its bond is forfeited (it was
    refunded whole, VOIDED, before), round 0's FAIL votes are paid, the depth-1 PASS votes are wrong."""
    st_ = settle(
        [
            panel(0, "FFF", 1),
            panel(1, "P" * 7, 10, appeal=appeal(1, O.FAIL)),
            panel(2, "U" * 15, 20, appeal=appeal(2, O.PASS, HONEST), status=PanelStatus.KEYS_WITHHELD),
        ],
        budget=BUDGET,
    )
    assert st_.final == O.INCONCLUSIVE and st_.resolution.scoring == O.FAIL
    lost, withheld = st_.payouts
    assert lost.result is AppealResult.UPHELD and lost.refund == 0 and lost.reward_paid == 0
    assert [(v.agreed, v.rewarded) for v in st_.votes if v.round == 0] == [(True, R)] * 3
    assert [v.effect for v in st_.votes if v.round == 1] == [Effect.INCORRECT] * 7
    # the withheld appellant: bond back, no reward; its 15 seats share the pot (the forfeited 7 R)
    assert withheld.result is AppealResult.KEYS_WITHHELD and withheld.refund == 15 * R
    assert withheld.reward_due == 0
    assert [v.rewarded for v in st_.votes if v.round == 2] == [7 * R // 15] * 15
    assert st_.budget_used == 0
    conserved(st_)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from("PF"), min_size=3, max_size=3),
    st.lists(st.sampled_from(["P" * 7, "F" * 7, "PPPFFFF", "FFFPPPP", "PPPFFFU"]), min_size=1, max_size=2),
    st.integers(0, 60).map(lambda b: b * T),
)
def test_a_withheld_round_settles_the_earlier_ones_as_if_it_never_happened(
    zero: list[str], decided: list[str], budget: int
) -> None:
    """Any decided depths, then one withheld: every earlier vote is scored as without the withheld
    round; a forfeited bond only adds to the pot, so no earlier seat or appellant gets less."""
    panels = [panel(0, "".join(zero), 1)]
    outcome = settle(panels).final
    k = 7
    for d, votes in enumerate(decided, start=1):
        panels.append(panel(d, votes[:k] + votes[-1] * (k - len(votes)), 100 * d, appeal=appeal(d, outcome)))
        outcome = settle(panels).final
        k = 2 * k + 1
    depth = len(panels)
    clean = settle(panels, budget=budget)
    k = panel_seats(3, depth)
    panels.append(
        panel(depth, "U" * k, 1000, appeal=appeal(depth, outcome, HONEST), status=PanelStatus.KEYS_WITHHELD)
    )
    st_ = settle(panels, budget=budget)
    conserved(st_)
    assert st_.final == outcome_after_withheld(depth, outcome)
    last = st_.payouts[-1]
    if withheld_keeps(depth, outcome):
        assert last.refund == 0 and [v.rewarded for v in st_.votes if v.round == depth] == [R] * k
        assert [(v.agreed, v.slashed, v.effect) for v in st_.votes if v.round < depth] == [
            (v.agreed, v.slashed, v.effect) for v in clean.votes
        ]
        for v, c in zip([v for v in st_.votes if v.round < depth], clean.votes, strict=True):
            assert v.rewarded >= c.rewarded
        for p, c in zip(st_.payouts[:-1], clean.payouts, strict=True):
            assert (p.result, p.refund) == (c.result, c.refund) and p.reward_paid >= c.reward_paid
    else:
        assert last.refund == last.bond and st_.final == O.INCONCLUSIVE and last.reward_due == 0
    # earlier rounds are scored against the contested outcome, or FAIL over a withheld PASS
    assert st_.resolution.scoring == (O.FAIL if outcome == O.PASS else outcome)


def _self_appeal(depth1_votes: str) -> list[Panel]:
    """The provider's alias appeals its own correct PASS (depth 1), then appeals again and withholds."""
    return [
        panel(0, "PPP", 1),
        panel(1, depth1_votes, 10, appeal=appeal(1, O.PASS, "0x" + "a1" * 20)),
        panel(2, "U" * 15, 20, appeal=appeal(2, O.PASS, PROVIDER), status=PanelStatus.KEYS_WITHHELD),
    ]


def test_an_overturn_inferred_from_a_later_withholding_earns_no_reward() -> None:
    """Review5SelfAppealThenWithholdDeeper: scored FAIL only by the adverse inference of its own later
    withholding, the depth-1 alias's lost appeal read OVERTURNED and netted it 20% of its bond (8.4
    TRUST) from the Treasury's appeal budget. Now its bond comes back without a reward."""
    st_ = settle(_self_appeal("P" * 7), budget=BUDGET)
    assert st_.final == O.INCONCLUSIVE and st_.resolution.scoring == O.FAIL
    over, withheld = st_.payouts
    assert over.result is AppealResult.OVERTURNED and over.refund == 7 * R
    assert over.reward_due == over.reward_paid == 0  # was 7 R * 20% = 8.4 TRUST
    assert withheld.result is AppealResult.KEYS_WITHHELD and withheld.refund == 15 * R
    # the adverse inference still scores the correct PASS votes wrong (the price of withholding)
    assert all(v.agreed is False for v in st_.votes if v.round in (0, 1))
    assert st_.budget_used == 0
    conserved(st_)
