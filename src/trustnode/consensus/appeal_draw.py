"""How an appeal round whose draw ran dry ends: REFUSED (the segments end as if the keys were withheld,
a contested PASS voided, the bond back whole) or UNFILLABLE (the outcomes stand and are final, R per
drawn seat kept).  Two rules, the same in the contracts (`DrawModule`, `AppealModule`) and the ports.

Rule R (outside review 17): the protocol's honesty assumption is stake-weighted, so "the majority
refused" is measured in weight, not in accounts.  Counting accounts let an appellant buy the refusal
margin with minimum-stake accounts (8 accounts of 100 TRUST against 9,000 honest TRUST voided a PASS).

Rule S (outside review 19): a stake-short refusal is the session's own doing, and so not counted, only
when the locks the session's *other* appeal rounds hold on that auditor alone explain it.  Before, any
seat in another round of the session made the refusal uncounted, so a defender's account seated there
by sortition could empty its remaining free stake elsewhere and refuse for free.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


def refusal_counted(stake: int, locked_by_session_other_rounds: int, lock_amount: int) -> bool:
    """Whether a candidate's stake-short lock refusal counts toward REFUSED (rule S).

    Uncounted (the contracts' exclusion reason 5) only if `stake - locked_by_session_other_rounds <
    lock_amount`: what the session's other appeal rounds leave of its stake cannot back the seat, so
    the session's own concurrent rounds may have exhausted it (`Review11ConcurrentRoundsExhaustStake`)
    and nobody is charged for it.  If what they leave could back the seat, the shortfall comes from
    elsewhere (a draw of another session it ran first, a withdrawal): its own doing, counted.
    Round-0 locks are not "other rounds": they stand for every appeal of the session, and admission's
    eligible count already sees the same pool.  `stake`: what its locks are checked against (free
    stake plus every lock it holds).  Note the edge: a stake below `lock_amount` with no other-round
    lock at all is uncounted too (the formula as the contracts apply it)."""
    return stake - locked_by_session_other_rounds >= lock_amount


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
    short); `stake` and `locked_by_session_other_rounds` decide whether the refusal counts."""

    weight: int
    refused: bool = False
    stake: int = 0
    locked_by_session_other_rounds: int = 0


def counted_refused_weight(candidates: Iterable[DrawCandidate], lock_amount: int) -> int:
    """W_R: the weight of the candidates that refused with a counted refusal (rule S)."""
    return sum(
        c.weight
        for c in candidates
        if c.refused and refusal_counted(c.stake, c.locked_by_session_other_rounds, lock_amount)
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
