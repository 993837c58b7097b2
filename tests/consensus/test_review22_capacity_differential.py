"""Outside review 22 of 0f4112d: `capped_capacity` against `AppealMath.cappedCapacity`, and its slack.

Property (docs/appeals-canaries.md "Round size"): the Python mirror agrees with the contract exactly, and
a capped round is refused iff floor(E/2) refusers can starve its last segment.
Differential: `test_grid_checksum_matches_solidity` hashes `capped_capacity` over E 0..160, k 1..63, seat cap
1..8 (h = h * 1_000_003 + cap + 1 mod 2**64, E outermost) and asserts the constant that the forge test
`Review22CapacityDifferential.test_GridChecksumMatchesPython` asserts for `AppealMath.cappedCapacity`.
Slack (LOW, `Review22CapacityFloorSlack`): the worst case fills iff floor((S - 1) k / c) <= free - k, i.e.
(S - 1) k <= c (free - k) + c - 1; the bound admits (S - 1) k <= c (free - k). Measured
(`PYTHONPATH=src /work/main/.venv/bin/pytest tests/consensus/test_review22_capacity_differential.py -v -s`):
over review 20's grid (E <= 80, k in the panel sizes of k_0 1..4, c 1..8) 1,288 capped rounds are refused
although their worst case fills, none with c = 1, none admitted that can fail; the smallest E is 11 (k 3,
c 4, S 6: 18 seats, capacity 15, worst case 11 - 5 - floor(15 / 4) = 3 = k). The proposed one-line bound
k + c (free - k + 1) - 1 is exact on the whole grid (admits a round iff its worst case fills).
Fixed: `capped_capacity` (and the contract) now use that exact form; the tests assert that no admitted
capped round fails and no refused one fills, against a brute-forced worst case (a wrap-around schedule
that caps as many auditors as the earlier segments' seats allow, checked seat by seat) on a smaller grid.
"""

from __future__ import annotations

from trustnode.consensus.appeal_admission import capped_capacity, check_capacity
from trustnode.consensus.appeals import AppealRefused

GRID_CHECKSUM = 0x7C0C556A18E05328  # Review22CapacityDifferential.GRID_CHECKSUM
PANELS = (3, 7, 15, 31, 63, 5, 11, 23, 47, 9, 19, 39)  # k_d = (k_0 + 1) 2^d - 1, k_0 in {1, 2, 3, 4}


def _worst_case_fills(eligible: int, k: int, cap: int, segments: int) -> bool:
    free = eligible - eligible // 2
    return free >= k and (segments - 1) * k // cap <= free - k


def _exact_capacity(eligible: int, k: int, cap: int) -> int:
    free = eligible - eligible // 2
    return 0 if free < k else k + cap * (free - k + 1) - 1


def _admitted(segments: int, k: int, eligible: int, cap: int) -> bool:
    try:
        check_capacity(segments, segments * k, eligible=eligible, seat_cap=cap)
    except AppealRefused:
        return False
    return True


def _rounds() -> list[tuple[int, int, int, int]]:
    return [
        (eligible, k, cap, segments)
        for cap in range(1, 9)
        for k in PANELS
        for eligible in range(k, 81)
        for segments in range(cap + 1, 2 * eligible + 2)
    ]


def test_grid_checksum_matches_solidity() -> None:
    h = 0
    for eligible in range(161):
        for k in range(1, 64):
            for cap in range(1, 9):
                h = (h * 1_000_003 + capped_capacity(eligible, k, cap) + 1) % 2**64
    assert h == GRID_CHECKSUM


def test_no_admitted_capped_round_fails_on_a_minority() -> None:
    bad = [r for r in _rounds() if _admitted(r[3], r[1], r[0], r[2]) and not _worst_case_fills(*r)]
    assert not bad, bad[:3]


def _old_capacity(eligible: int, k: int, cap: int) -> int:
    free = eligible - eligible // 2
    return 0 if free < k else k + cap * (free - k)


def _brute_worst_fills(eligible: int, k: int, cap: int, segments: int) -> bool:
    """Play the worst case seat by seat: floor(E/2) refuse every seat; the other `free` auditors fill
    segments 0..S-2 (k distinct per segment). The adversary caps m = min((S-1) k // cap, free) auditors
    by a wrap-around schedule (auditor a takes positions a cap .. a cap + cap - 1, position p on segment
    p mod (S - 1): distinct segments since cap <= S - 1), the other seats go to the least-seated open
    auditors; the schedule is checked seat by seat, and the last segment needs k open auditors."""
    free = eligible - eligible // 2
    if free < k:
        return False
    earlier = segments - 1
    m = min(earlier * k // cap, free)
    panels: list[set[int]] = [set() for _ in range(earlier)]
    counts = [0] * free
    for pos in range(m * cap):
        seg, auditor = pos % earlier, pos // cap
        assert auditor not in panels[seg] and len(panels[seg]) < k
        panels[seg].add(auditor)
        counts[auditor] += 1
    for seg in range(earlier):
        while len(panels[seg]) < k:
            open_ = [i for i in range(free) if counts[i] < cap and i not in panels[seg]]
            if not open_:
                return False  # an earlier segment cannot fill
            i = min(open_, key=lambda j: counts[j])
            panels[seg].add(i)
            counts[i] += 1
    assert all(c <= cap for c in counts)
    return sum(1 for c in counts if c < cap) >= k


def test_admission_matches_brute_forced_worst_case() -> None:
    """The new bound admits a capped round iff its brute-forced worst case fills (E <= 40, k <= 15)."""
    checked = 0
    for cap in range(1, 9):
        for k in (p for p in PANELS if p <= 15):
            for eligible in range(k, 41):
                for segments in range(cap + 1, 2 * eligible + 2):
                    fills = _brute_worst_fills(eligible, k, cap, segments)
                    assert _admitted(segments, k, eligible, cap) == fills, (eligible, k, cap, segments)
                    assert fills == _worst_case_fills(eligible, k, cap, segments)
                    checked += 1
    print(f"\nbrute-forced capped rounds: {checked}")


def test_slack_figures() -> None:
    """The rounds the old bound refused although their worst case fills (the LOW finding's figures);
    the new bound admits all of them."""
    slack = [r for r in _rounds() if _worst_case_fills(*r) and r[3] * r[1] > _old_capacity(r[0], r[1], r[2])]
    print(
        f"\nslack: {len(slack)} rounds, smallest E {min(slack)}, c = 1: {sum(1 for r in slack if r[2] == 1)}"
    )
    assert len(slack) == 1288
    assert all(cap >= 2 for _, _, cap, _ in slack)
    assert (33, 7, 2, 4) in slack  # the forge round: PanelTooLarge(28, 27) before the fix
    assert all(_admitted(r[3], r[1], r[0], r[2]) for r in slack)
    for eligible, k, cap, segments in _rounds():
        exact = segments * k <= _exact_capacity(eligible, k, cap)
        assert exact == _worst_case_fills(eligible, k, cap, segments), (eligible, k, cap, segments)
