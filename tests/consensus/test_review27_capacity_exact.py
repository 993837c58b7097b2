"""Review 27: is `AppealMath.cappedCapacity` exact against every draw order (brute force)?

Property (AppealMath NatSpec, review 22 fix): a round of S segments of k seats each among E eligible
auditors, seat cap c < S, is admitted iff S k <= k + c (free - k + 1) - 1 (free = E - E // 2), and then
its draw fills whatever order it seats the auditors in, as long as at most E // 2 refuse; refused rounds
have a draw order that gets stuck with exactly E // 2 refusing.

Attack: search every draw order. States are the sorted seat counts of the `free` non-refusing auditors;
each segment seats any k distinct auditors below the cap (the draw's worst case is any order). A state
where fewer than k are below the cap at a segment's start is stuck. Exhaustive for free <= 7, k <= 4,
c in 2..8, S in c+1..c+12 (and the DP below caps states, so it is fast).

Result (measured): HOLDS - the formula agrees with the exhaustive search on every case (admitted iff no
order gets stuck). Command: `PYTHONPATH=src /work/main/.venv/bin/pytest tests/consensus/test_review27_capacity_exact.py -q`.
"""

from functools import cache
from itertools import combinations


def capped_capacity(eligible: int, k: int, seat_cap: int) -> int:
    """The contract's `AppealMath.cappedCapacity`, verbatim."""
    free = eligible - eligible // 2
    return 0 if free < k else k + seat_cap * (free - k + 1) - 1


def can_get_stuck(free: int, k: int, cap: int, segments: int) -> bool:
    """Whether some draw order of `segments` segments of `k` seats leaves a segment unfillable."""

    @cache
    def stuck(counts: tuple[int, ...], left: int) -> bool:
        if left == 0:
            return False
        below = [i for i, n in enumerate(counts) if n < cap]
        if len(below) < k:
            return True
        seen: set[tuple[int, ...]] = set()
        for chosen in combinations(below, k):
            nxt = list(counts)
            for i in chosen:
                nxt[i] += 1
            key = tuple(sorted(nxt))
            if key in seen:
                continue
            seen.add(key)
            if stuck(key, left - 1):
                return True
        return False

    return stuck(tuple([0] * free), segments)


def test_capped_capacity_exact_against_every_draw_order() -> None:
    checked = 0
    for cap in range(2, 9):
        for k in range(1, 5):
            for free in range(k, 8):
                for segments in range(cap + 1, cap + 13):
                    for eligible in (2 * free - 1, 2 * free):
                        admitted = segments * k <= capped_capacity(eligible, k, cap)
                        assert admitted == (not can_get_stuck(free, k, cap, segments)), (
                            cap,
                            k,
                            free,
                            segments,
                            eligible,
                        )
                        checked += 1
    assert checked > 1000


def test_below_k_free_refused() -> None:
    assert capped_capacity(5, 4, 3) == 0  # free 3 < k 4
    assert capped_capacity(8, 4, 3) == 4 + 3 * 1 - 1
