"""Can a session's seats be filled, and if a draw failed, why (issue 13, item 2).

Before paying for a session the provider counts the auditors a draw could pick in each tier
the trace needs: each segment of tier t needs k_t distinct auditors, and together they must
back k_t seats per segment (per-auditor seat cap, free stake for the slash amount of each
seat). The provider's own account is never drawn for its sessions, so it does not count.
Seats that sessions opened earlier still have to draw come off first (`undrawn_demand`): a trace
that fits alone but not behind them waits instead of paying for a draw that could only be refused.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence

from trustnode.chain.port import ChainPort, DrawFailure, EligibleAuditor, SessionInfo
from trustnode.chain.protocol import SessionParams
from trustnode.models.enums import Tier
from trustnode.models.verdict import SessionState, TierName

log = logging.getLogger(__name__)

_warned: set[tuple[str, str]] = set()


def _warn_provider_is_auditor(port: ChainPort, tier: Tier) -> None:
    key = (port.contract, port.address)
    if key in _warned:
        return
    _warned.add(key)
    log.warning(
        "the provider's account %s is also a registered %s auditor: it is never drawn for the sessions it "
        "opens, so it does not count as eligible, and it may audit other providers' traces with this "
        "node's keys. Give the provider (API node) and each auditor an account of its own.",
        port.address,
        tier.name.lower(),
    )


#: Most recent sessions `undrawn_demand` reads (older ones have drawn or lapsed in any deployment
#: that opens fewer sessions than this within a snapshot's readable span).
UNDRAWN_LOOKBACK = 64


def undrawn_demand(port: ChainPort, params: SessionParams) -> Counter[int]:
    """Seats per tier that sessions already opened (by anyone) still have to draw.

    They were opened first, and whoever draws first locks the free stake: a session opened now in
    a tier they already fill may meet only refusals and forfeit its fee (docs/protocol-v2.md 6.1).
    Segments are drawn in order, k_t seats each, so the undrawn seats are the last ones."""
    demand: Counter[int] = Counter()
    now = port.block_number()
    count = port.session_count()
    for sid in range(count, max(0, count - UNDRAWN_LOOKBACK), -1):
        info = port.session(sid)
        if info.state not in (SessionState.CREATED, SessionState.DRAWING) or info.draw_complete:
            continue
        if (info.draw_until and info.draw_until < now) or (info.draw_deadline and info.draw_deadline < now):
            continue  # it can no longer draw: it only waits for someone to end it
        drawn = info.drawn_seats
        for seg in port.segments(sid):
            k = params.seats_per_tier[seg.tier]
            demand[seg.tier] += max(0, k - drawn)
            drawn = max(0, drawn - k)
    return demand


def shortfall(
    port: ChainPort,
    tiers: Sequence[int],
    *,
    params: SessionParams | None = None,
    eligible_by_tier: dict[int, list[EligibleAuditor]] | None = None,
    pending: Counter[int] | None = None,
) -> DrawFailure | None:
    """The first tier whose eligible auditors cannot fill the seats of `tiers`, or None.

    `params` and `eligible_by_tier` (filled as tiers are read) let one batch of opens read the
    chain once. `pending` seats per tier (`undrawn_demand`) come off the free seats first."""
    params = port.params() if params is None else params
    cache: dict[int, list[EligibleAuditor]] = {} if eligible_by_tier is None else eligible_by_tier
    for t, segments in sorted(Counter(tiers).items()):
        tier = Tier(t)
        k = params.seats_per_tier[t]
        if t not in cache:
            cache[t] = port.eligible_auditors(tier)
        eligible = cache[t]
        if any(e.address == port.address for e in eligible):
            _warn_provider_is_auditor(port, tier)
        eligible = [e for e in eligible if e.address != port.address]
        taken = pending[t] if pending is not None else 0
        capacity = sum(min(e.free_seats, params.seat_cap) for e in eligible) - taken
        if len(eligible) < k or capacity < k * segments:
            return DrawFailure(
                tier=TierName.of(t), seats_needed=k * segments, eligible=len(eligible), per_segment=k
            )
    return None


#: Protocol v2's recorded reasons for a session that expired (IAuditSessions.Termination).
_TERMINATIONS = {
    "randomness_missed": "nobody fixed the draw's randomness within the 256-block window (the fee is forfeited)",
    "randomness_failed": "the draw's randomness came too late to draw in time, or never (the audit pool is refunded "
    "but R per drawn seat)",
    "snapshot_unavailable": "the draw started after its staking snapshot stopped being readable",
    "draw_abandoned": "the draw did not complete before its deadline",
    "keys_withheld": "the provider did not publish the keys before the key deadline (the fee is forfeited)",
    "draw_refused": "sampled auditors refused their stake locks and the draw could not fill a segment "
    "(the fee is forfeited)",
}


def cancel_reason(port: ChainPort, info: SessionInfo, tiers: Sequence[int]) -> str:
    """Why a session ended without a verdict, in words (on-chain reason when there is one)."""
    sid = info.session_id
    if info.state == SessionState.CANCELLED:
        failure = port.draw_failure(sid)
        if failure is not None:
            return failure.reason
        counted = shortfall(port, tiers)
        if counted is not None:
            return f"{counted.reason} (counted now; the draw does not record why)"
        return (
            "the draw was cancelled: it rejected too many picks in a row (auditors at the seat cap, "
            "on the segment already, or without free stake); the draw does not record which tier"
        )
    if info.state == SessionState.EXPIRED:
        why = _TERMINATIONS.get(info.termination or "")
        if why is not None:
            return why
        if info.drawn_seats < info.total_seats:
            if info.drawn_seats == 0 and info.draw_deadline == 0:
                return "the draw's randomness expired before anyone drew"
            return f"the draw did not complete before block {info.draw_deadline}"
        if info.commit_deadline == 0:
            return f"the provider did not publish the keys before block {info.key_deadline}"
        return "the session expired"
    return f"session {sid} is {info.state.value}"
