"""How an appeal round whose draw ran dry ends: REFUSED (the segments end as if the keys were withheld,
a contested PASS voided, the bond back whole) or UNFILLABLE (the outcomes stand and are final, R per
drawn seat kept).  Two rules, the same in the contracts (`DrawModule`, `AppealModule`) and the ports.

Rule R (outside review 17): the protocol's honesty assumption is stake-weighted, so "the majority
refused" is measured in weight, not in accounts.  Counting accounts let an appellant buy the refusal
margin with minimum-stake accounts (8 accounts of 100 TRUST against 9,000 honest TRUST voided a PASS).

Rule S' (outside reviews 19 and 11): a stake-short refusal is the session's own doing, and so not
counted, only when the locks THIS session holds on that auditor - every round of it, round 0 included,
and the current round's seats drawn so far, less those already released - alone leave it less than one
lock.  Before (reason 5), any seat in another appeal round of the session made the refusal uncounted,
so a defender's account seated there by sortition could empty its remaining free stake elsewhere and
refuse for free (review 19).  Counting only the *other* appeal rounds' locks (rule S, never shipped)
fixed that but charged honest auditors exhausted by round 0 and the round's own earlier segments, so an
appellant's own concurrent rounds could again void the last round (review 11's large tier).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


def refusal_counted(stake: int, locked_by_session: int, lock_amount: int) -> bool:
    """Whether a candidate's stake-short lock refusal counts toward REFUSED (rule S').

    Uncounted (the contracts' exclusion reason 5) only if `stake - locked_by_session < lock_amount`:
    what this session's own locks leave of its stake (round 0's seats, every appeal round's, the
    current round's drawn so far; released ones excluded) cannot back the seat, so the session itself
    exhausted it (`Review11ConcurrentRoundsExhaustStake`) and nobody is charged for it.  If what they
    leave could back the seat, the shortfall comes from outside the session (another session's locks,
    a withdrawal): counted.  `stake`: what its locks are checked against, free stake plus every lock it
    holds, taken so that a withdrawal or deregistration after the session's seed cannot shrink it (the
    port adds such withdrawals back; see `memory_rounds`).  Note the edge: a stake below `lock_amount`
    with no session lock at all is uncounted too (the formula as the contracts apply it)."""
    return stake - locked_by_session >= lock_amount


def refusals_decisive(refused_weight: int, eligible_weight: int) -> bool:
    """Whether the candidates that refused with a counted refusal hold more than half of the failing
    segment's eligible weight (rule R): then an honest weight majority refused, and the round may end
    REFUSED; otherwise the failure is a minority's (possibly the appellant's own light accounts) and it
    ends UNFILLABLE.  Strictly more than half: a tie is no majority."""
    return 2 * refused_weight > eligible_weight


@dataclass(frozen=True)
class DrawCandidate:
    """One auditor eligible for the failing segment: live in its tier (weight > 0), not the provider,
    on none of the segment's earlier panels.  `refused`: it refused a lock on that segment (stake
    short); `stake` and `locked_by_session` (`refusal_counted`) decide whether the refusal counts."""

    weight: int
    refused: bool = False
    stake: int = 0
    locked_by_session: int = 0


def counted_refused_weight(candidates: Iterable[DrawCandidate], lock_amount: int) -> int:
    """W_R: the weight of the candidates that refused with a counted refusal (rule S')."""
    return sum(
        c.weight
        for c in candidates
        if c.refused and refusal_counted(c.stake, c.locked_by_session, lock_amount)
    )


def failed_draw_refused(
    candidates: Iterable[DrawCandidate], *, lock_amount: int, refusals_charged: bool
) -> bool:
    """Whether a round whose draw failed on a segment ends REFUSED (else UNFILLABLE): admission charged
    its refusals (`appeal_admission.refusals_charged`, eligible accounts >= 2k, the precondition) and
    the counted refusers hold more than half of the segment's eligible weight (`refusals_decisive`)."""
    if not refusals_charged:
        return False
    pool = list(candidates)
    eligible_weight = sum(c.weight for c in pool)
    return refusals_decisive(counted_refused_weight(pool, lock_amount), eligible_weight)


__all__ = [
    "DrawCandidate",
    "counted_refused_weight",
    "failed_draw_refused",
    "refusal_counted",
    "refusals_decisive",
]
