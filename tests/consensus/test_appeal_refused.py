"""Refused appeal panels (outside review 3, `AppealModule.drawPanel`): a panel draw that failed after
sampled auditors refused their stake locks ends REFUSED, as if its keys were withheld.

The same figures as the forge test `Review3AppealPanelRefusalsVetoNothing` (R = 6 TRUST, k_0 = 3,
a 7-seat panel of which 6 seats were drawn before the draw failed): before the rule the round was
UNFILLABLE, the wrong PASS stood final and the honest appellant paid 6 R = 36 TRUST.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.consensus.test_appeals import PROVIDER, R, appeal, conserved, panel, settle
from trustnode.consensus.appeal_resolution import appeal_result, refused_ends_as_withheld
from trustnode.consensus.appeals import AppealResult, Effect, Panel, PanelStatus
from trustnode.models.enums import SegmentOutcome as O


def _refused(contested: O, drawn: int, who: str | None = None) -> list[Panel]:
    """Round 0 decided `contested` unanimously; its depth-1 appeal's draw failed after `drawn` seats."""
    votes = "PPP" if contested is O.PASS else "FFF"
    kw = {} if who is None else {"who": who}
    return [
        panel(0, votes, 1),
        panel(1, "U" * drawn, 10, appeal=appeal(1, contested, **kw), status=PanelStatus.REFUSED),
    ]


@pytest.mark.parametrize(
    ("depth", "contested", "after"),
    [(1, O.PASS, O.INCONCLUSIVE), (2, O.PASS, O.INCONCLUSIVE), (1, O.FAIL, O.FAIL), (2, O.FAIL, O.FAIL),
     (2, O.INCONCLUSIVE, O.INCONCLUSIVE)],
)  # fmt: skip
def test_refused_ends_as_withheld(depth: int, contested: O, after: O) -> None:
    assert refused_ends_as_withheld(depth, contested) == after


def test_refusals_never_keep_a_contested_pass_and_the_appellant_pays_nothing() -> None:
    """The review's scenario: the provider's accounts refuse, 6 of 7 seats are drawn."""
    unfillable = settle(
        [panel(0, "PPP", 1), panel(1, "U" * 6, 10, appeal=appeal(1, O.PASS), status=PanelStatus.UNFILLABLE)]
    )
    assert unfillable.final == O.PASS and unfillable.payouts[0].refund == 7 * R - 6 * R  # the old rule
    st_ = settle(_refused(O.PASS, 6))
    assert st_.resolution.outcomes == [O.PASS, O.INCONCLUSIVE] and st_.final == O.INCONCLUSIVE
    # scored against the contested PASS (neutral: nobody gains by making a panel fail, outside review 6)
    assert st_.resolution.scoring == O.PASS
    assert [(v.agreed, v.rewarded) for v in st_.votes if v.round == 0] == [(True, R)] * 3
    (p,) = st_.payouts
    assert p.result is AppealResult.REFUSED and p.refund == p.bond == 7 * R and p.reward_due == 0
    # the drawn seats are owed by the pot only, empty here (every round-0 vote agreed): a shortfall
    drawn = [v for v in st_.votes if v.round == 1]
    assert [v.rewarded for v in drawn] == [0] * 6
    assert all(v.effect is Effect.NONE for v in drawn)
    assert st_.budget_used == 0 and st_.shortfall == 6 * R
    conserved(st_)


def test_a_provider_refusing_on_its_own_appeal_of_a_fail_gains_nothing() -> None:
    """Contested FAIL, appealed by the provider whose accounts refuse: the FAIL stands, round 0's
    FAIL votes are still scored right, the bond comes back and nothing more."""
    st_ = settle(_refused(O.FAIL, 4, PROVIDER))
    assert st_.final == O.FAIL
    zero = [v for v in st_.votes if v.round == 0]
    assert all(v.agreed and v.rewarded == R for v in zero)
    (p,) = st_.payouts
    assert p.result is AppealResult.REFUSED and p.refund == p.bond and p.reward_paid == 0
    # the pot is empty (every round-0 vote agreed): the drawn seats get 0, a reported shortfall
    assert [v.rewarded for v in st_.votes if v.round == 1] == [0] * 4 and st_.shortfall == 4 * R
    conserved(st_)


def test_a_refused_draw_with_no_seat_on_the_segment_owes_nothing() -> None:
    st_ = settle(_refused(O.PASS, 0))
    assert st_.final == O.INCONCLUSIVE and st_.payouts[0].refund == 7 * R and st_.shortfall == 0
    conserved(st_)


def test_appeal_result_names_the_refused_round() -> None:
    for final in O:
        assert appeal_result(O.PASS, final, PanelStatus.REFUSED) is AppealResult.REFUSED


@settings(max_examples=200, deadline=None)
@given(contested=st.sampled_from([O.PASS, O.FAIL]), drawn=st.integers(0, 7), budget=st.integers(0, 100 * R))
def test_refused_rounds_conserve_and_never_charge_the_appellant(
    contested: O, drawn: int, budget: int
) -> None:
    st_ = settle(_refused(contested, drawn), budget=budget)
    assert st_.final != O.PASS
    assert st_.payouts[0].refund == st_.payouts[0].bond and st_.budget_used == 0
    assert all(v.rewarded <= R for v in st_.votes if v.round == 1)
    conserved(st_)


@pytest.mark.parametrize("contested", [O.PASS, O.FAIL])
def test_an_abandoned_panel_keeps_the_contested_outcome_and_forfeits_the_bond(contested: O) -> None:
    """Outside review 6 (`AppealModule._sync`, `Review6AppealSeenSeedBuysNoFreeAbort`): the panel's seed
    was obtainable while its snapshot was readable and nobody drew.  The contested outcome stands and
    scores every earlier round (neutral), the whole bond joins the pot (no seat was drawn), no reward."""
    votes = "PPP" if contested == O.PASS else "FFF"
    st_ = settle(
        [panel(0, votes, 1), panel(1, "", 10, appeal=appeal(1, contested), status=PanelStatus.ABANDONED)]
    )
    assert st_.final == contested and st_.resolution.scoring == contested
    (p,) = st_.payouts
    assert p.result is AppealResult.ABANDONED and p.refund == 0 and p.reward_due == 0
    assert [(v.agreed, v.rewarded) for v in st_.votes if v.round == 0] == [(True, R)] * 3
    assert st_.to_treasury == p.bond == 7 * R and st_.budget_used == 0
    conserved(st_)
