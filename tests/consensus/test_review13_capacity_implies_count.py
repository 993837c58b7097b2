"""Outside review 13 of 47db2d1, after the draw-time re-judging was deleted: past the seat cap the capacity
rule (PanelTooLarge, half of the live members' seat slots) implies the per-segment count
(NotEnoughEligibleAuditors), so only the count binds within the cap and only the capacity past it.

Review 13 found the draw module's check of capped exclusions for an earlier seat dead code, since past
the cap the capacity clause of the draw-time `refusals_decide` implied its count. Both rules now run
once, at admission (`appeal_admission.check_capacity`, `eligible_auditors`); since outside review 17
the capacity counts the eligible auditors only: eligible >= 2 (cap + 1) k / cap > 2k, so eligible > k.
Run: `PYTHONPATH=src .venv/bin/pytest -q tests/consensus/test_review13_*`."""

from __future__ import annotations

from trustnode.consensus.appeal_admission import check_capacity, earlier_seats, eligible_auditors
from trustnode.consensus.appeals import AppealRefused, panel_seats


def _fits(segments: int, k0: int, depth: int, live: int, cap: int) -> bool:
    """`check_capacity` on the eligible auditors of `live` members (outside review 17)."""
    k = panel_seats(k0, depth)
    try:
        check_capacity(segments, segments * k, eligible=eligible_auditors(live, k0, depth), seat_cap=cap)
    except AppealRefused:
        return False
    return True


def test_past_the_seat_cap_capacity_implies_the_count() -> None:
    for k0 in (1, 2, 3, 7):
        for depth in (1, 2, 3):
            k = panel_seats(k0, depth)
            if k > 63:
                continue
            assert earlier_seats(k0, depth) < k  # the earlier panels hold fewer seats than the new one
            for cap in range(1, 12):
                for segments in range(cap + 1, cap + 6):
                    for live in range(0, 2 * segments * k + 2):
                        if _fits(segments, k0, depth, live, cap):
                            assert eligible_auditors(live, k0, depth) >= k, (k0, depth, cap, segments, live)


def test_within_the_seat_cap_only_the_count_binds() -> None:
    # k_0 = 3, k_1 = 7, cap 8, 2 segments: capacity never refuses; 10 live leave 7 eligible, 9 leave 6
    assert _fits(2, 3, 1, 0, 8)
    assert eligible_auditors(10, 3, 1) == 7 and eligible_auditors(9, 3, 1) == 6
