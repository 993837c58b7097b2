"""`refusals_decide`: when a failed appeal draw's lock refusals decide its ending (REFUSED) and when
the tier's live members could not have seated it anyway (UNFILLABLE; outside review 11)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from trustnode.consensus.appeal_admission import check_capacity, live_shortfall, refusals_decide
from trustnode.consensus.appeals import AppealRefused


def test_no_refusal_never_decides() -> None:
    assert not refusals_decide(0, live_members=50, earlier=3, seats=7, segments=1, total_seats=7, seat_cap=8)


def test_a_segment_its_live_members_could_seat_is_refused() -> None:
    # 10 live, 3 on round 0, k_1 = 7: a refusal among the 7 who could sit decided the failure
    assert refusals_decide(1, live_members=10, earlier=3, seats=7, segments=1, total_seats=7, seat_cap=8)


def test_a_segment_short_of_live_members_is_unfillable() -> None:
    # review 11's dead leaf: 9 live, 3 on round 0, 6 < 7 whatever anyone refused
    assert not refusals_decide(1, live_members=9, earlier=3, seats=7, segments=1, total_seats=7, seat_cap=8)


def test_a_large_round_past_half_the_live_capacity_is_unfillable() -> None:
    # review 11's churned leaves: 14 segments x 7 = 98 seats, 12 live x cap 8 = 96 < 196
    assert not refusals_decide(
        1, live_members=12, earlier=3, seats=7, segments=14, total_seats=98, seat_cap=8
    )
    # the same round in a tier of 25 live members fits twice over: refusals decide
    assert refusals_decide(1, live_members=25, earlier=3, seats=7, segments=14, total_seats=98, seat_cap=8)


@given(
    live=st.integers(0, 80),
    earlier=st.integers(0, 40),
    k0=st.sampled_from([1, 3, 7, 15]),
    segments=st.integers(1, 20),
    seat_cap=st.integers(1, 16),
)
def test_live_counts_decide_exactly_as_admission_would(
    live: int, earlier: int, k0: int, segments: int, seat_cap: int
) -> None:
    """A refusal decides exactly when the round would pass admission counted with live members: the
    per-segment count and `check_capacity`'s PanelTooLarge."""
    seats = 2 * k0 + 1
    total = segments * seats
    try:
        check_capacity(segments, total, members=live, seat_cap=seat_cap)
        fits = True
    except AppealRefused:
        fits = False
    admissible = live - earlier >= seats and fits
    assert refusals_decide(1, live_members=live, earlier=earlier, seats=seats, segments=segments,
                           total_seats=total, seat_cap=seat_cap) == admissible  # fmt: skip


def test_live_shortfall_names_the_segment_or_the_capacity() -> None:
    live = {f"a{i}" for i in range(9)}
    # review 11's dead leaf seen from the node: 9 live, 3 of them on round 0's panel, k_1 = 7
    short = live_shortfall([7], [{"a0", "a1", "a2"}], live=live, seat_cap=8)
    assert short is not None and "6 live auditors" in short and "needs 7" in short
    # a departed round-0 auditor is not live: it takes no place among the 7
    assert live_shortfall([7], [{"a0", "a1", "gone"}], live=live | {"a9"}, seat_cap=8) is None
    # 14 segments x 7 seats in a tier of 12 live auditors with seat cap 8
    twelve = {f"b{i}" for i in range(12)}
    short = live_shortfall([7] * 14, [set()] * 14, live=twelve, seat_cap=8)
    assert short is not None and "196 seat slots" in short and "96" in short
