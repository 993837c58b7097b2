"""Outside review 13 of 47db2d1: in `refusals_decide` (and `DrawModule._decisiveRefusals`) the
earlier-panel count only matters for rounds of at most `seat_cap` segments, where no earlier-panel
member can be at the seat cap when the failing segment is drawn; past the cap the capacity rule
implies the per-segment rule. So the draw module's check of capped (permanent) exclusions for an
earlier seat (`_satBefore` in the loop over `list.permanent`) can never change an ending: removing
it (mutation tried on 47db2d1) fails no test, and none can fail. Only the provider's decrement in
that loop matters (Review13ProviderLeafSeatsNothing). Within the cap a member at the cap has sat on
every named segment, the failing one included, so it is on no earlier panel of it.
Mutation (tried locally, reverted): `refusals_decide` without its capacity clause fails the first
test (`assert 2 == 1`). Run: `PYTHONPATH=src .venv/bin/pytest -q tests/consensus/test_review13_*`."""

from __future__ import annotations

from trustnode.consensus.appeal_admission import refusals_decide
from trustnode.consensus.appeals import panel_seats


def _earlier_max(k0: int, depth: int) -> int:
    """Seats of the segment's earlier panels (round 0 and appeal depths below `depth`)."""
    return sum(panel_seats(k0, j) for j in range(depth))


def test_past_the_seat_cap_the_earlier_count_decides_nothing() -> None:
    for k0 in (1, 2, 3, 7):
        for depth in (1, 2, 3):
            k = panel_seats(k0, depth)
            if k > 63:
                continue
            top = _earlier_max(k0, depth)
            assert top < k  # every earlier-panel member is fewer than the panel's seats
            for cap in range(1, 12):
                for segments in range(cap + 1, cap + 6):
                    total = segments * k
                    for live in range(0, 2 * total + 2):
                        ends = {
                            refusals_decide(
                                1,
                                live_members=live,
                                earlier=e,
                                seats=k,
                                segments=segments,
                                total_seats=total,
                                seat_cap=cap,
                            )
                            for e in range(top + 1)
                        }
                        assert len(ends) == 1, (k0, depth, cap, segments, live)


def test_within_the_seat_cap_the_earlier_count_decides() -> None:
    # 10 live, k_1 = 7: 3 earlier-panel members leave 7 (REFUSED), 4 leave 6 (UNFILLABLE)
    common = {"live_members": 10, "seats": 7, "segments": 2, "total_seats": 14, "seat_cap": 8}
    assert refusals_decide(1, earlier=3, **common)
    assert not refusals_decide(1, earlier=4, **common)
