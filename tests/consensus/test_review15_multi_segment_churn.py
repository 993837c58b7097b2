"""Outside review 15 of 7cd4068: the multi-segment clause of `refusals_decide` and the node's warning.

Property: a failed appeal draw naming several segments is charged with its refusals (REFUSED, a
contested PASS voided) only if `live >= earlier_seats + k` (`DrawModule._decisiveRefusals`); the
node (`live_shortfall`, `AppealQuote.unseatable`, `LiveTierTooSmall` unless --force) warns before
paying in exactly the cases where a refusal on some named segment would not be charged, and
appealing the segments one per round then keeps every refusal charged.

Attack (defender side, measured): the clause counts every earlier-panel seat, live or gone, so an
earlier auditor who LEAVES before the appeal's snapshot lowers `live` without lowering the bar.  Two
wrong PASS segments at depth 1 (k_0 = 3, k_1 = 7, earlier seats 3), both round-0 panels the
provider's friends (6 accounts), 9 other live members of which the defender holds 3.  The 6 leave
before the snapshot: live 9 < 3 + 7, so the 2-segment round's draw, failed by the defender's 3
refusals (9 - 3 < 7), ends UNFILLABLE (both PASS final, the appellant pays R per drawn seat); before
7cd4068 it ended REFUSED.  Each segment appealed alone ends REFUSED (9 - 0 >= 7).  The node warns the
2-segment round (live 9 < 10: "appeal them one per round") and not the single rounds, so an honest
appellant using it is not exposed.  The gap is the departed earlier seats: live in
[max_i live_earlier_i + k, earlier_seats + k).
Left (INFO): the warning names the FIRST failing segment only, so "appeal them one per round" can be
shown for a round where another segment is unseatable even alone (its own quote then warns again).
Mutation (tried, reverted): `live_shortfall` not passing `earlier_seats` to `refusals_decide` fails all
four tests here (measured: 4 failed; 4 passed unmutated).
Command: PYTHONPATH=src .venv/bin/pytest tests/consensus/test_review15_multi_segment_churn.py -q
"""

from __future__ import annotations

import itertools

from trustnode.consensus.appeal_admission import earlier_seats, live_shortfall, refusals_decide
from trustnode.consensus.appeals import panel_seats


def _charged(live: int, sat: list[int], k: int, seat_cap: int, before: int) -> list[bool]:
    """Per named segment: a failed draw failing on it, with a refusal, ends REFUSED."""
    total = k * len(sat)
    return [
        refusals_decide(
            1,
            live_members=live,
            earlier=s,
            seats=k,
            segments=len(sat),
            total_seats=total,
            seat_cap=seat_cap,
            earlier_seats=before,
        )  # fmt: skip
        for s in sat
    ]


def test_defender_churn_two_segments() -> None:
    k0, depth, seat_cap = 3, 1, 4
    k = panel_seats(k0, depth)
    before = earlier_seats(k0, depth)
    assert (k, before) == (7, 3)
    friends_a = {f"a{i}" for i in range(3)}
    friends_b = {f"b{i}" for i in range(3)}
    others = {f"o{i}" for i in range(9)}  # o0..o2 the defender's
    live = others  # the 6 round-0 friends left before the appeal's snapshot
    defender_refusers = 3
    assert len(live) - defender_refusers < k, "3 refusals fail the draw"
    # Two segments in one round: not charged, UNFILLABLE, the PASS stands.
    assert _charged(len(live), [0, 0], k, seat_cap, before) == [False, False]
    # Each alone: charged, REFUSED, the PASS voided.
    assert _charged(len(live), [0], k, seat_cap, before) == [True]
    # Before 7cd4068 (no earlier-seats clause) the round was charged.
    assert _charged(len(live), [0, 0], k, seat_cap, 0) == [True, True]
    # The node warns the round and not the single ones.
    msg = live_shortfall([k, k], [friends_a, friends_b], live=live, seat_cap=seat_cap, earlier_seats=before)
    assert msg is not None and "one per round" in msg
    for group in (friends_a, friends_b):
        assert live_shortfall([k], [group], live=live, seat_cap=seat_cap, earlier_seats=before) is None


def _cases():  # type: ignore[no-untyped-def]
    for k0, depth, seat_cap, n in itertools.product((1, 2, 3), (1, 2), (1, 2, 3), (1, 2, 3)):
        k = panel_seats(k0, depth)
        before = earlier_seats(k0, depth)
        for live in range(0, before + k + 3):
            for sat in itertools.product(range(0, min(before, live) + 1), repeat=n):
                yield k, before, seat_cap, live, list(sat)


def _sets(live: int, sat: list[int]) -> tuple[set[str], list[set[str]]]:
    members = {f"m{i}" for i in range(live)}
    ordered = sorted(members)
    return members, [set(ordered[:s]) | {f"gone{j}" for j in range(3)} for s in sat]


def test_node_warns_exactly_when_a_refusal_would_not_be_charged() -> None:
    checked = 0
    for k, before, seat_cap, live, sat in _cases():
        members, earlier = _sets(live, sat)
        msg = live_shortfall([k] * len(sat), earlier, live=members, seat_cap=seat_cap, earlier_seats=before)
        assert (msg is None) == all(_charged(live, sat, k, seat_cap, before)), (
            k,
            before,
            seat_cap,
            live,
            sat,
        )
        checked += 1
    assert checked > 1000


def test_one_per_round_advice_keeps_the_failing_segment_charged() -> None:
    """Whenever the node advises one per round for segment i, segment i alone is charged (and warns not)."""
    advised = 0
    for k, before, seat_cap, live, sat in _cases():
        members, earlier = _sets(live, sat)
        msg = live_shortfall([k] * len(sat), earlier, live=members, seat_cap=seat_cap, earlier_seats=before)
        if msg is None or "one per round" not in msg:
            continue
        advised += 1
        i = next(j for j, ok in enumerate(_charged(live, sat, k, seat_cap, before)) if not ok)
        assert _charged(live, [sat[i]], k, seat_cap, before) == [True]
        assert (
            live_shortfall([k], [earlier[i]], live=members, seat_cap=seat_cap, earlier_seats=before) is None
        )
    assert advised > 0


def test_advice_can_hide_an_unseatable_neighbour() -> None:
    """INFO: segment 1 fails only the multi-segment clause, segment 2 is unseatable even alone; the
    message advises one per round (segment 2's own quote then warns again)."""
    k, before, seat_cap = 7, 3, 4
    members, earlier = _sets(9, [0, 3])
    msg = live_shortfall([k, k], earlier, live=members, seat_cap=seat_cap, earlier_seats=before)
    assert msg is not None and "one per round" in msg
    alone = live_shortfall([k], [earlier[1]], live=members, seat_cap=seat_cap, earlier_seats=before)
    assert alone is not None and "none of its panels" in alone
