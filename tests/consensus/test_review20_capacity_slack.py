"""Outside review 20 of da1f8bf: `check_capacity` (and AppealAdmission's PanelTooLarge) left a slack
of up to k (1 - 1/seat_cap) below half for seat caps >= 2; fixed (`capped_capacity`).

Property (docs/appeals-canaries.md "Round size"): a capped round (more segments than the seat cap)
admitted by `check_capacity` fails its draw only if more than half of the auditors who can sit refuse.
Attack (arithmetic of the in-order draw, DrawModule: segments in order, an auditor at the cap excluded
for the rest of the round): before the last of S segments up to floor((S - 1) k / c) auditors may be at
the cap, so the last segment runs dry once R > E - k - floor((S - 1) k / c) refuse; under the old
capacity E c // 2 admitted rounds existed where that R is at most floor(E / 2). The forge test
Review20SeatCapMarginIgnoresCapSlack realises the smallest such case on the contracts (E 21, k 7, c 2,
S 3: 8 of 21 refusing failed it).
Measured (`PYTHONPATH=src /work/main/.venv/bin/pytest tests/consensus/test_review20_capacity_slack.py -v`):
before (1583240, capacity E c // 2, with RUN_KNOWN=1): over E <= 80, k in the panel sizes of k_0 1..4,
c 1..8, 8,542 admitted (E, k, c, S) rounds could fail with at most half refusing, all with c >= 2, none
with c = 1 (control); smallest E = 7 (k 3, c 6, S 7: 2 of 7 refusing suffice); worst share E 70, k 31,
c 8, S 9: 9 of 70 refusing (12.9%) failed it. After (capacity k + c (E - E // 2 - k), 0 when
E - E // 2 < k, in `check_capacity` and AppealAdmission alike): none; the forge test's round is refused
(PanelTooLarge, capacity 7 + 2 x (11 - 7) = 15 < 21 seats).
"""

from __future__ import annotations

import pytest

from trustnode.consensus.appeal_admission import capped_capacity, check_capacity
from trustnode.consensus.appeals import AppealRefused

PANELS = (3, 7, 15, 31, 63, 5, 11, 23, 47, 9, 19, 39)  # k_d = (k_0 + 1) 2^d - 1, k_0 in {1, 2, 3, 4}


def _admitted(segments: int, k: int, eligible: int, cap: int) -> bool:
    try:
        check_capacity(segments, segments * k, eligible=eligible, seat_cap=cap)
    except AppealRefused:
        return False
    return eligible >= k  # check_appeal's per-segment count


def _minority_fails(segments: int, k: int, eligible: int, cap: int) -> bool:
    """Whether floor(E/2) refusers can starve the last segment: the other segments' seats held by as
    few auditors as the cap allows (realisable: S - 1 >= cap, so each sits on cap distinct segments)."""
    at_cap = (segments - 1) * k // cap
    return eligible - eligible // 2 - at_cap < k


def fixed_capacity(k: int, eligible: int, cap: int) -> int:
    """The proposed bound: the last segment keeps k seatable auditors after floor(E/2) refuse."""
    return k + cap * (eligible - eligible // 2 - k)


def _cases(caps: range) -> list[tuple[int, int, int, int]]:
    out = []
    for cap in caps:
        for k in PANELS:
            for eligible in range(k, 81):
                for segments in range(cap + 1, 2 * eligible + 2):
                    if not _admitted(segments, k, eligible, cap):
                        break
                    if _minority_fails(segments, k, eligible, cap):
                        out.append((eligible, k, cap, segments))
    return out


def test_capped_rounds_fail_only_on_a_majority_of_refusals() -> None:
    bad = _cases(range(1, 9))
    assert not bad, f"{len(bad)} admitted rounds fail with at most half refusing, e.g. {bad[:3]}"


def test_the_forge_round_is_refused_at_capacity_15() -> None:
    assert capped_capacity(21, 7, 2) == 16  # review 20's 15, exact since review 22 (+ cap - 1)
    with pytest.raises(AppealRefused, match="PanelTooLarge.*at most 16"):
        check_capacity(3, 21, eligible=21, seat_cap=2)
    check_capacity(2, 14, eligible=21, seat_cap=2)  # within the cap: only the count binds


def test_check_capacity_is_the_proposed_bound() -> None:
    for cap in range(1, 9):
        for k in PANELS:
            for eligible in range(k, 81):
                # review 20's bound, made exact by review 22 (Review22CapacityFloorSlack): + cap - 1
                bound = fixed_capacity(k, eligible, cap) + cap - 1 if eligible - eligible // 2 >= k else 0
                assert capped_capacity(eligible, k, cap) == bound
                for segments in (cap + 1, cap + 2, 2 * cap + 3):
                    admitted = _admitted(segments, k, eligible, cap)
                    assert admitted == (segments * k <= bound), (eligible, k, cap, segments)


def test_control_seat_cap_one_has_no_slack() -> None:
    assert _cases(range(1, 2)) == []


def test_the_proposed_bound_has_no_slack() -> None:
    for cap in range(2, 9):
        for k in PANELS:
            for eligible in range(2 * k + 1, 81):
                segments = fixed_capacity(k, eligible, cap) // k
                if segments > cap:
                    assert not _minority_fails(segments, k, eligible, cap), (eligible, k, cap, segments)
