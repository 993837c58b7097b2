"""`refusals_charged`: a round's failed draw is charged with its lock refusals (REFUSED: a contested PASS
voided, bond back) iff its eligible auditors number at least 2k, decided at admission from the tier's live
members (`eligible_auditors`, AppealModule._eligible); otherwise it ends UNFILLABLE (the PASS stands)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trustnode.consensus.appeal_admission import earlier_seats, eligible_auditors, refusals_charged
from trustnode.consensus.appeals import panel_seats


@pytest.mark.parametrize(
    ("eligible", "k", "charged"),
    [
        (3, 3, False),
        (5, 3, False),
        (6, 3, True),
        (7, 7, False),
        (13, 7, False),
        (14, 7, True),
        (99, 15, True),
    ],
)
def test_refusals_are_charged_from_twice_the_seats(eligible: int, k: int, charged: bool) -> None:
    assert refusals_charged(eligible, k) is charged


def test_earlier_seats_are_every_seat_of_the_earlier_panels() -> None:
    # k_0 = 3: panels of 3, 7, 15, 31 seats
    assert [earlier_seats(3, d) for d in range(5)] == [0, 3, 10, 25, 56]
    assert [earlier_seats(1, d) for d in range(4)] == [0, 1, 4, 11]


@given(k0=st.integers(1, 63), depth=st.integers(0, 5))
def test_earlier_seats_closed_form(k0: int, depth: int) -> None:
    """k_j = 2^j (k_0 + 1) - 1, so k_0 + ... + k_{d-1} = (2^d - 1)(k_0 + 1) - d."""
    assert earlier_seats(k0, depth) == (2**depth - 1) * (k0 + 1) - depth


def test_eligible_subtracts_every_earlier_seat_from_the_live_members() -> None:
    # 20 live members but the provider, a first appeal panel (k_1 = 7) over round 0's 3 seats
    assert eligible_auditors(20, 3, 1) == 17
    assert eligible_auditors(2, 3, 1) == 0  # never negative
    assert eligible_auditors(20, 3, 2) == 10  # depth 2: 3 + 7 earlier seats


@given(
    live=st.integers(0, 60),
    k0=st.sampled_from([1, 2, 3, 7]),
    depth=st.integers(1, 3),
    departed=st.integers(0, 40),
    data=st.data(),
)
def test_eligible_is_a_lower_bound_on_the_live_members_free_for_the_panel(
    live: int, k0: int, depth: int, departed: int, data: st.DataObject
) -> None:
    """However the earlier panels were filled (live members or members since departed, one seat each per
    panel, a member on several panels), at least `eligible_auditors` live members sat on none of them: an
    admitted round is seatable from its snapshot unless auditors refuse."""
    members = [f"m{i}" for i in range(live)] + [f"gone{i}" for i in range(departed)]
    sat: set[str] = set()
    for j in range(depth):
        k = panel_seats(k0, j)
        if k > len(members):
            return
        sat |= set(data.draw(st.lists(st.sampled_from(members), min_size=k, max_size=k, unique=True)))
    free = sum(1 for m in members[:live] if m not in sat)
    assert free >= eligible_auditors(live, k0, depth)
