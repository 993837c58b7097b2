"""`appeal_draw`: how a round whose draw ran dry ends.  Rule R (outside review 17): REFUSED needs the
counted refusers to hold more than half of the failing segment's eligible weight (stake-weighted
honesty), so light accounts cannot buy the margin.  Rule S' (outside reviews 19 and 11): a stake-short
refusal is uncounted only when the locks this session holds on the auditor (round 0, every appeal round,
the drawing round's seats so far) alone leave it less than one lock."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trustnode.consensus.appeal_draw import (
    DrawCandidate,
    counted_refused_weight,
    failed_draw_refused,
    refusal_counted,
    refusals_decisive,
)

TOKEN = 10**18
LOCK = 8 * TOKEN


@pytest.mark.parametrize(
    ("refused", "eligible", "decisive"),
    [(0, 0, False), (0, 10, False), (5, 10, False), (6, 10, True), (10, 10, True), (800, 9_800, False)],
)
def test_refusals_decide_on_a_strict_weight_majority(refused: int, eligible: int, decisive: bool) -> None:
    assert refusals_decisive(refused, eligible) is decisive


@pytest.mark.parametrize(
    ("stake", "held", "counted"),
    [
        (100, 0, True),  # no lock of the session: short for reasons of its own
        (100, 60, True),  # 40 left would back a lock of 8: emptied elsewhere (review 19's defender)
        (16, 8, True),  # exactly one lock left
        (15, 8, False),  # the session's seat alone leaves it short: the session's own doing
        (8, 8, False),
        (100, 96, False),  # review 11's large tier: round 0 + the rounds + this round's seats, 96 of 100
    ],
)
def test_a_refusal_is_uncounted_only_when_the_sessions_locks_explain_it(
    stake: int, held: int, counted: bool
) -> None:
    assert refusal_counted(stake * TOKEN, held * TOKEN, LOCK) is counted


def test_review17_light_accounts_cannot_buy_the_refusal_margin() -> None:
    """8 accounts of 100 TRUST refuse, 9,000 honest TRUST sit: 8 of 10 accounts but 800 of 9,800 weight."""
    honest = [DrawCandidate(weight=4_500 * TOKEN) for _ in range(2)]
    sybils = [DrawCandidate(weight=100 * TOKEN, refused=True, stake=100 * TOKEN) for _ in range(8)]
    assert not failed_draw_refused(honest + sybils, lock_amount=LOCK, refusals_charged=True)
    # the same refusers holding the weight majority end it REFUSED
    heavy = [DrawCandidate(weight=4_500 * TOKEN, refused=True, stake=4_500 * TOKEN) for _ in range(2)]
    light = [DrawCandidate(weight=100 * TOKEN) for _ in range(8)]
    assert failed_draw_refused(heavy + light, lock_amount=LOCK, refusals_charged=True)


def test_review19_defender_accounts_seated_elsewhere_are_charged() -> None:
    """Seated in another round (one lock of 8) with 100 staked, then emptied by another session's draw:
    counted now (was uncounted as reason 5 whatever emptied it)."""
    defenders = [DrawCandidate(weight=100, refused=True, stake=100 * TOKEN, locked_by_session=LOCK)] * 9
    honest = [DrawCandidate(weight=100)] * 8
    assert counted_refused_weight(defenders + honest, LOCK) == 900
    assert failed_draw_refused(defenders + honest, lock_amount=LOCK, refusals_charged=True)
    # exhausted by the session's own locks alone: uncounted, the round ends UNFILLABLE
    own = [DrawCandidate(weight=100, refused=True, stake=12 * TOKEN, locked_by_session=LOCK)] * 9
    assert counted_refused_weight(own, LOCK) == 0
    assert not failed_draw_refused(own + honest, lock_amount=LOCK, refusals_charged=True)


def test_admission_stays_the_precondition() -> None:
    everyone = [DrawCandidate(weight=1, refused=True, stake=100 * TOKEN)] * 5
    assert not failed_draw_refused(everyone, lock_amount=LOCK, refusals_charged=False)
    assert failed_draw_refused(everyone, lock_amount=LOCK, refusals_charged=True)


_candidate = st.builds(
    DrawCandidate,
    weight=st.integers(1, 10**6),
    refused=st.booleans(),
    stake=st.integers(0, 200),
    locked_by_session=st.integers(0, 200),
)


@given(cands=st.lists(_candidate, max_size=30), extra=_candidate, lock=st.integers(1, 50))
def test_more_counted_refusing_weight_never_turns_refused_into_unfillable(
    cands: list[DrawCandidate], extra: DrawCandidate, lock: int
) -> None:
    """Monotone: a candidate that refuses with a counted refusal, added or turned from seated to refusing,
    never saves the round from REFUSED."""
    refusing = DrawCandidate(weight=extra.weight, refused=True, stake=lock + extra.locked_by_session,
                             locked_by_session=extra.locked_by_session)  # fmt: skip
    before = failed_draw_refused(cands, lock_amount=lock, refusals_charged=True)
    assert not before or failed_draw_refused([*cands, refusing], lock_amount=lock, refusals_charged=True)
    if cands and not cands[0].refused:
        turned = [replace(refusing, weight=cands[0].weight), *cands[1:]]
        assert not before or failed_draw_refused(turned, lock_amount=lock, refusals_charged=True)


@given(
    honest=st.lists(st.integers(1, 10**6), min_size=1, max_size=20),
    light=st.integers(1, 10**4),
    n=st.integers(0, 200),
)
def test_any_number_of_refusing_accounts_under_half_the_weight_ends_unfillable(
    honest: list[int], light: int, n: int
) -> None:
    """Rule R against sybils: whatever the account count, refusers lighter than the rest never make it
    REFUSED."""
    sybils = [DrawCandidate(weight=light, refused=True, stake=100)] * n
    cands = [DrawCandidate(weight=w) for w in honest] + sybils
    assert failed_draw_refused(cands, lock_amount=8, refusals_charged=True) is (n * light > sum(honest))


@given(
    stake=st.integers(0, 10**4),
    held=st.integers(0, 10**4),
    more=st.integers(0, 10**4),
    lock=st.integers(1, 500),
)
def test_refusal_counted_is_monotone(stake: int, held: int, more: int, lock: int) -> None:
    """More own stake never uncounts a refusal; more locks of the session never count one; with no
    session lock a refusal counts whenever the stake could back a lock at all."""
    if refusal_counted(stake, held, lock):
        assert refusal_counted(stake + more, held, lock)
    else:
        assert not refusal_counted(stake, held + more, lock)
    assert refusal_counted(stake, 0, lock) is (stake >= lock)
