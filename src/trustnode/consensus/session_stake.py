"""The stake premise of appeal admission (outside review 22): a session that enables appeals opens only
if each tier's minimum stake backs every seat lock the session can ask of one auditor of the tier
(`SessionOps._checkStakeBacksLocks`, `AppealMath.sessionLockSeats`).

Why: admission counts a tier's live accounts and the capped bound assumes each can take `seat_cap`
seats of a round, but a seat needs a lock of `slash_amount`, and locks the session already holds on an
account are excluded uncounted at the draw (rule S', reason 5).  An auditor the draw can lock has at
least the minimum stake behind it, so a minimum that backs all of the session's locks makes reason 5
impossible and the premise true."""

from __future__ import annotations

from collections.abc import Sequence

from trustnode.consensus.encoding import MAX_ROUND


class StakeBelowSessionLocks(ValueError):
    """`MinStakeBelowSessionLocks(tier, minStake, required)`: the session cannot open with appeals."""

    def __init__(self, tier: int, min_stake: int, required: int) -> None:
        super().__init__(
            f"tier {tier}: minimum stake {min_stake} wei backs fewer seat locks than the session can ask "
            f"of one auditor ({required} wei); raise the tier's minimum stake, lower the slash amount, or "
            "open fewer segments of the tier per session"
        )
        self.tier = tier
        self.min_stake = min_stake
        self.required = required


def session_lock_seats(tier_segments: int, segment_count: int, seat_cap: int, max_rounds: int) -> int:
    """The most seat locks one auditor holds at once for one session (`AppealMath.sessionLockSeats`):
    one per segment of its tier over the whole session (a segment's later panels exclude its earlier
    auditors) and at most `seat_cap` per round, in round 0 and up to min(max_rounds x segment_count, 255)
    appeal rounds, every lock held until the session settles.  Not (max_rounds + 1) x seat_cap:
    max_rounds bounds a segment's depth, not the rounds."""
    rounds = min(max_rounds * segment_count, MAX_ROUND)
    return min(tier_segments, seat_cap * (rounds + 1))


def required_min_stake(
    tier_segments: int, segment_count: int, *, seat_cap: int, max_rounds: int, slash_amount: int
) -> int:
    """The least minimum stake of a tier with `tier_segments` of a session's `segment_count` segments."""
    return slash_amount * session_lock_seats(tier_segments, segment_count, seat_cap, max_rounds)


def check_session_stake(
    tiers: Sequence[int],
    min_stake: Sequence[int],
    *,
    seat_cap: int,
    max_rounds: int,
    appeal_blocks: int,
    slash_amount: int,
) -> None:
    """Raise StakeBelowSessionLocks, first tier first, if a session of segments `tiers` enables
    appeals and a tier's `min_stake` cannot back its locks; nothing when appeals are off."""
    if appeal_blocks == 0 or max_rounds == 0:
        return
    n = len(tiers)
    for t in range(3):
        count = sum(1 for x in tiers if x == t)
        if count == 0:
            continue
        need = required_min_stake(
            count, n, seat_cap=seat_cap, max_rounds=max_rounds, slash_amount=slash_amount
        )
        if min_stake[t] < need:
            raise StakeBelowSessionLocks(t, min_stake[t], need)


def max_session_segments(min_stake: int, slash_amount: int) -> int:
    """The most segments of one tier a session with appeals can have under `min_stake` (whenever
    seat_cap x 256 exceeds them, i.e. in every practical case): floor(min_stake / slash_amount)."""
    return min_stake // slash_amount if slash_amount else 1 << 16
