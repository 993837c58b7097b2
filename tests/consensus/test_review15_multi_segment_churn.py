"""Outside review 15 of 7cd4068 (defender-side churn), under the admission-time rule that replaced the
draw-time re-judging: whether a round's refusals are charged no longer depends on how many segments
it names.

Property: `check_session_appeal` counts the tier's live members (weight in the round's snapshot, the
provider excluded), subtracts every earlier seat (k_0 + ... + k_{d-1}, live or departed: a lower
bound on who is free) and stores `refusals_charged = eligible >= 2k`; a round of several segments
within the seat cap gets the same admission and the same flag as each of its segments alone, so the
review-15 gap (a 2-segment round UNFILLABLE where each segment alone was REFUSED) and the node's
"appeal them one per round" advice are gone.

Attack (defender side, measured on review 15's tier): two wrong PASS segments at depth 1 (k_0 = 3,
k_1 = 7, earlier seats 3), the provider's 6 friends on their round-0 panels, 9 other live members of
which the defender holds 3.  Under 7cd4068 the 6 leaving before the snapshot made the 2-segment round
UNFILLABLE on the defender's 3 refusals and each segment alone REFUSED.  Now: live 9 -> eligible 6 <
7, every appeal of them is refused up front (NotEnoughEligibleAuditors, nothing paid); live 10..16 ->
admitted, refusals not charged (a failed draw ends UNFILLABLE, the PASS stands, R per drawn seat kept;
the node warns); live >= 17 -> eligible >= 14 = 2k, charged (REFUSED, the PASS voided).  The leaving
friends still lower the live count without lowering the earlier-seat bar: that is the price of a
count the appellant can read before paying.
Command: PYTHONPATH=src .venv/bin/pytest tests/consensus/test_review15_multi_segment_churn.py -q
"""

from __future__ import annotations

import itertools

from tests.consensus.test_appeal_rounds import R, panel, seg
from trustnode.consensus.appeal_admission import check_session_appeal, eligible_auditors, refusals_charged
from trustnode.consensus.appeals import AppealParams, AppealRefused, SegmentRecord, panel_seats
from trustnode.models.enums import SegmentOutcome as O
from trustnode.models.enums import Tier


def _segments(n: int, k0: int, depth: int) -> list[SegmentRecord]:
    """n segments of one tier whose last panel (depth - 1) decided PASS."""
    out = []
    for i in range(n):
        panels = [panel(0, "P" * k0, 100 * i, k0=k0)]
        panels += [
            panel(d, "P" * panel_seats(k0, d), 100 * i + 10 * d, O.FAIL, k0=k0, depth=d)
            for d in range(1, depth)
        ]
        out.append(seg(i, *panels, tier=Tier.LLM))
    return out


def _admit(live: int, n: int, k0: int = 3, depth: int = 1, cap: int = 4) -> str | bool:
    """The refusal's name, or whether the admitted round's refusals are charged."""
    segs = _segments(n, k0, depth)
    try:
        adm = check_session_appeal(
            segs, list(range(n)), seats=(k0, k0, k0), appeal=AppealParams(appeal_blocks=10, max_rounds=4),
            reward=R, block=100, opens_after=90, outcome_final=False, window_ends=[100] * n, rounds_opened=0,
            running=set(), canaries=set(), members=lambda tier: live, seat_cap=cap,
        )  # fmt: skip
    except AppealRefused as exc:
        return exc.name
    return adm.refusals_charged


def test_defender_churn_two_segments() -> None:
    figures = {live: (_admit(live, 2), _admit(live, 1)) for live in (9, 10, 16, 17)}
    assert figures == {
        9: ("NotEnoughEligibleAuditors", "NotEnoughEligibleAuditors"),
        10: (False, False),
        16: (False, False),
        17: (True, True),
    }


def test_within_the_seat_cap_a_round_is_admitted_and_charged_as_each_segment_alone() -> None:
    checked = 0
    for k0, depth, cap, n in itertools.product((1, 2, 3), (1, 2), (1, 2, 3, 4), (1, 2, 3)):
        if n > cap:
            continue
        k = panel_seats(k0, depth)
        for live in range(0, 3 * (k + k0) + 3):
            assert _admit(live, n, k0, depth, cap) == _admit(live, 1, k0, depth, cap)
            eligible = eligible_auditors(live, k0, depth)
            want = "NotEnoughEligibleAuditors" if eligible < k else refusals_charged(eligible, k)
            assert _admit(live, n, k0, depth, cap) == want
            checked += 1
    assert checked > 500
