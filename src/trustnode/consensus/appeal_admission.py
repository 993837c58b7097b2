"""Who may appeal what, and when: the admission checks of `IAppealModule.appeal` / `quote`, in the
contract's order of refusals (`AppealModule._check`, `_checkOne`), and the size of a round."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from pydantic import BaseModel, ConfigDict, Field

from trustnode.consensus.appeals import (
    AppealParams,
    AppealRefused,
    PanelStatus,
    SegmentRecord,
    min_bond,
    panel_seats,
)
from trustnode.consensus.encoding import MAX_ROUND
from trustnode.consensus.session_stake import required_min_stake


def check_appeal(
    seg: SegmentRecord,
    *,
    k0: int,
    appeal: AppealParams,
    reward: int,
    block: int,
    window_end: int,
    eligible: int,
    max_bond: int | None = None,
) -> tuple[int, int]:
    """The per-segment checks of an appeal (AppealModule._checkOne's order: a segment that can never
    be appealed again says why before its window is looked at); returns (depth, bond) of the panel
    it would add.

    `window_end`: last block of the window open now (`first_window`, `window_after_round`).
    `eligible`: auditors of the segment's tier who can sit on its new panel (`eligible_auditors`)
    - fewer than k_d and the appeal is refused up front, so no round starts that its snapshot's
    live members cannot seat.  The bond is exactly `min_bond`; `max_bond` is the appellant's own limit.
    """
    d = len(seg.panels)
    last = seg.panels[-1]
    if appeal.appeal_blocks == 0 or appeal.max_rounds == 0:
        raise AppealRefused("AppealsDisabled")
    if last.status is not PanelStatus.DECIDED:
        raise AppealRefused("SegmentFinal", f"segment {seg.index}: its last panel did not decide")
    if d > appeal.max_rounds:
        raise AppealRefused("NoRoundsLeft", f"segment {seg.index} had {appeal.max_rounds} appeal panels")
    if block > window_end:
        raise AppealRefused(
            "AppealWindowClosed", f"segment {seg.index}: its window ended at block {window_end}"
        )
    k = panel_seats(k0, d)
    if eligible < k:
        raise AppealRefused("NotEnoughEligibleAuditors", f"segment {seg.index}: {eligible} < k_{d} = {k}")
    bond = min_bond(k0, d, reward, appeal.bond_multiplier_bps)
    if max_bond is not None and bond > max_bond:
        raise AppealRefused("BondAboveLimit", f"the bond of depth {d} is {bond}")
    return d, bond


def capped_capacity(eligible: int, k: int, seat_cap: int) -> int:
    """The most seats of a round naming more segments than the seat cap, each segment `k` seats among
    the same `eligible` auditors (`AppealMath.cappedCapacity`, outside reviews 20, 22):
    k + seat_cap (free - k + 1) - 1 with free = eligible - eligible // 2, 0 if free < k.  The draw fills
    segments in order and an auditor at the cap leaves it for the rest of the round, so before the last
    of S segments up to (S - 1) k // seat_cap auditors may be at the cap; with at most eligible // 2
    refusing the last segment still finds free - (S - 1) k // seat_cap >= k auditors iff S k is within
    this bound (exact, `Review22CapacityFloorSlack`; premise: every eligible account can take seat_cap
    seats, the stake premise rule).  (eligible * seat_cap // 2 ignored the auditors at the cap: 8 of 21
    refusing failed a round of 3 x 7 seats with seat cap 2.)"""
    free = eligible - eligible // 2
    return 0 if free < k else k + seat_cap * (free - k + 1) - 1


def check_capacity(segments: int, seats: int, *, eligible: int, seat_cap: int) -> None:
    """A round naming more segments than the seat cap may have at most `capped_capacity` seats, so
    that the cap fails its draw only if more than half of the auditors who can sit on its segments
    refuse (outside reviews 9, 20).  Those are `eligible_auditors` of the round's tier and depth (the
    live members but the provider, minus the segments' earlier-panel seats), not every live member: an
    earlier-panel auditor cannot sit on its segment (outside review 17).  Every segment of a round has
    the same depth and tier, so k = seats // segments.  With no more segments than the cap, an auditor
    can sit on every one of them, so only the per-segment count (`check_appeal`) binds."""
    if segments <= seat_cap:
        return
    capacity = capped_capacity(eligible, seats // segments, seat_cap)
    if seats > capacity:
        raise AppealRefused(
            "PanelTooLarge",
            f"{seats} seats over {segments} segments; at most {capacity} per round in this tier",
        )


def earlier_seats(k0: int, depth: int) -> int:
    """k_0 + ... + k_{depth-1}: the seats of a segment's panels before its panel of `depth`
    (`AppealMath.earlierSeats`)."""
    return sum(panel_seats(k0, j) for j in range(depth))


def eligible_auditors(members: int, k0: int, depth: int, proven: int = 0) -> int:
    """Who can sit on a segment's new panel of `depth` (AppealAdmission._checkOne): the tier's `members`
    with weight in the round's snapshot (the provider excluded) minus every seat of the segment's
    earlier panels but its `proven` leavers (`proven_leavers`).  A lower bound on the live members who
    sat on none of them (an earlier auditor may have left unnamed), so an admitted round is seatable by
    the snapshot unless auditors refuse."""
    return max(0, members - max(0, earlier_seats(k0, depth) - proven))


MAX_LEAVERS = 128  # AppealMath.MAX_LEAVERS


def check_leavers(leavers: Sequence[str]) -> None:
    """The proven-leavers list's form (AppealAdmission._gone): at most MAX_LEAVERS, strictly ascending
    as 160-bit numbers (TooManyLeavers, LeaversNotAscending)."""
    if len(leavers) > MAX_LEAVERS:
        raise AppealRefused("TooManyLeavers", f"{len(leavers)} > {MAX_LEAVERS}")
    for a, b in zip(leavers, leavers[1:], strict=False):
        if int(b, 16) <= int(a, 16):
            raise AppealRefused("LeaversNotAscending", f"at {b}")


def proven_leavers(
    leavers: Sequence[str],
    segment: int,
    *,
    live: Callable[[str], bool],
    sat_before: Callable[[str, int], bool],
) -> int:
    """How many named leavers count for `segment` (outside review 22): those that sat on one of its
    earlier panels (`sat_before(a, segment)`: round 0 or an earlier appeal panel) and have no weight in
    the round's snapshot (`live(a)` false).  Anything else named is ignored, so the count never exceeds
    the earlier seats missing from the live members."""
    return sum(1 for a in leavers if not live(a) and sat_before(a, segment))


def refusals_charged(eligible: int, k: int) -> bool:
    """Whether a round's failed draw is charged with its lock refusals (REFUSED: bond back, a
    contested PASS voided) rather than ending UNFILLABLE (the PASS stands, R per drawn seat kept);
    decided at admission and stored with the round (`Round.refusalsCharged`).

    With `k <= eligible < 2k` a few busy honest auditors (or members leaving) would void a PASS, so
    refusals are not charged.  With `eligible >= 2k` this is only the precondition: the failed draw
    ends REFUSED iff its counted refusers also hold more than half of the failing segment's eligible
    weight (`appeal_draw.failed_draw_refused`, rules R and S': a majority in stake, not in accounts)."""
    return eligible >= 2 * k


class Admission(BaseModel):
    """An admitted appeal: the round it opens, the panels' depth, seats and bonds per named segment,
    and whether its failed draw would be charged with lock refusals (stored with the round)."""

    model_config = ConfigDict(frozen=True)

    round: int
    depth: int = Field(ge=1, description="the depth of the new panels")
    segments: list[int]
    seats: list[int]
    bonds: list[int]
    eligible: int = Field(ge=0, description="`eligible_auditors` of the named segments (one tier, one depth)")
    refusals_charged: bool = Field(
        description="`refusals_charged(eligible, k)`: a failed draw may end REFUSED (if its counted "
        "refusers hold more than half of the failing segment's eligible weight, `appeal_draw`)"
    )

    @property
    def bond(self) -> int:
        return sum(self.bonds)


def check_session_appeal(
    segments: Sequence[SegmentRecord],
    named: Sequence[int],
    *,
    seats: Sequence[int],
    appeal: AppealParams,
    reward: int,
    block: int,
    opens_after: int | None,
    outcome_final: bool,
    window_ends: Sequence[int],
    rounds_opened: int,
    running: Collection[int],
    canaries: Collection[int],
    members: Callable[[int], int],
    seat_cap: int,
    max_bond: int | None = None,
    wired: bool = True,
    min_stake: Sequence[int] | None = None,
    slash_amount: int = 0,
    require_charged: bool = False,
    leavers: Sequence[str] = (),
    live: Callable[[str], bool] | None = None,
    sat_before: Callable[[str, int], bool] | None = None,
) -> Admission:
    """What `appeal(sessionId, segments, maxBond)` checks, in AppealModule's order; the round it opens.

    `segments`: the session's segment histories of ended panels (index order); `named`: the appealed
    indices, strictly ascending; `seats`: k_0 per tier; `opens_after`: the canary window's end (None:
    round 0 has not finalized); `window_ends[i]`: the last block of segment i's window;
    `rounds_opened`: appeals so far (the new round is that + 1); `running`: segments with a panel
    still running (it counts in their depth); `canaries`: revealed canaries; `members(tier)`: the tier's members with weight in
    the round's snapshot, the provider excluded (`ISortition.liveCountAt`); `seat_cap`: the session's seats per auditor per panel.  Refusals, first match: AppealsDisabled,
    AppealWindowNotOpen (not finalized), EmptyAppeal, AppealWindowClosed (the outcome is final),
    AppealWindowNotOpen (canary window running), TooManyRounds (round above min(maxRounds * n, 255)),
    then segment by segment InvalidSegment, SegmentsNotAscending, SegmentIsCanary, MixedDepths,
    MixedTiers, AppealPending and `check_appeal`'s SegmentFinal, NoRoundsLeft, AppealWindowClosed,
    NotEnoughEligibleAuditors; then MinStakeBelowSessionLocks; `check_capacity`'s PanelTooLarge;
    BondAboveLimit on the sum of the bonds; last RefusalsNotCharged if `require_charged`.

    `wired`: the session opened after the modules were wired (`canariesFromSession`), else its opening
    never checked the stake premise and it is not appealable (AppealsDisabled, outside review 26).
    `min_stake`: Staking's CURRENT minimum per tier (None: not checked): the opening's stake premise
    (`session_stake`) is rechecked for the round's tier with `slash_amount`, so a minimum lowered after
    the opening refuses the round instead of admitting one its draw cannot fill (outside review 26).
    `leavers`: proven leavers (checked after TooManyRounds, `check_leavers`), counted per segment by
    `proven_leavers` with `live` / `sat_before` (required when `leavers` is not empty); the round's
    eligible is the least of its segments' (outside review 22).
    """
    if appeal.appeal_blocks == 0 or appeal.max_rounds == 0 or not wired:
        raise AppealRefused("AppealsDisabled")
    if opens_after is None:
        raise AppealRefused("AppealWindowNotOpen", "round 0 has not finalized")
    if not named:
        raise AppealRefused("EmptyAppeal")
    if outcome_final:
        raise AppealRefused("AppealWindowClosed", "the outcome is final")
    if block <= opens_after:
        raise AppealRefused("AppealWindowNotOpen", f"appeals open after block {opens_after}")
    if rounds_opened + 1 > min(appeal.max_rounds * len(segments), MAX_ROUND):
        raise AppealRefused("TooManyRounds", "the session has no round left")
    check_leavers(leavers)
    if leavers and (live is None or sat_before is None):
        raise ValueError("leavers need live and sat_before")
    depth, tier, eligible = 0, None, -1
    out_seats: list[int] = []
    bonds: list[int] = []
    for j, i in enumerate(named):
        if not 0 <= i < len(segments):
            raise AppealRefused("InvalidSegment", f"the session has no segment {i}")
        if j and i <= named[j - 1]:
            raise AppealRefused("SegmentsNotAscending", "name segments in strictly ascending order")
        if i in canaries:
            raise AppealRefused("SegmentIsCanary", f"segment {i} is a revealed canary")
        seg = segments[i]
        d = len(seg.panels) + (1 if i in running else 0)  # the new panel's depth
        if j == 0:
            depth, tier = d, seg.tier
        elif d != depth:
            raise AppealRefused("MixedDepths", "one appeal names segments of one depth")
        elif seg.tier != tier:
            raise AppealRefused("MixedTiers", "one appeal names segments of one tier")
        if i in running:
            raise AppealRefused("AppealPending", f"segment {i} has a panel running")
        k0 = seats[int(seg.tier)]
        proven = proven_leavers(leavers, i, live=live, sat_before=sat_before) if live and sat_before else 0
        seg_eligible = eligible_auditors(members(int(seg.tier)), k0, d, proven)
        _, bond = check_appeal(seg, k0=k0, appeal=appeal, reward=reward, block=block, window_end=window_ends[i],
                               eligible=seg_eligible)  # fmt: skip
        eligible = seg_eligible if eligible < 0 else min(eligible, seg_eligible)
        out_seats.append(panel_seats(k0, d))
        bonds.append(bond)
    if tier is not None and min_stake is not None:  # AppealAdmission._checkStakeBacksLocks
        n, t = len(segments), int(tier)
        required = required_min_stake(sum(1 for g in segments if int(g.tier) == t), n, seat_cap=seat_cap,
                                      max_rounds=appeal.max_rounds, slash_amount=slash_amount)  # fmt: skip
        if min_stake[t] < required:
            raise AppealRefused(
                "MinStakeBelowSessionLocks", f"tier {t}: minimum stake {min_stake[t]} < required {required}"
            )
    if tier is not None:  # every named segment has this tier and depth; the least segment's `eligible`
        check_capacity(len(named), sum(out_seats), eligible=eligible, seat_cap=seat_cap)
    total = sum(bonds)
    if max_bond is not None and total > max_bond:
        raise AppealRefused("BondAboveLimit", f"the bond is {total}")
    charged = refusals_charged(eligible, out_seats[0])
    if require_charged and not charged:  # AppealAdmission._open, after BondAboveLimit
        raise AppealRefused("RefusalsNotCharged", f"eligible {eligible} < 2 k = {2 * out_seats[0]}")
    return Admission(round=rounds_opened + 1, depth=depth, segments=list(named), seats=out_seats, bonds=bonds,
                     eligible=eligible, refusals_charged=charged)  # fmt: skip


__all__ = [
    "Admission",
    "capped_capacity",
    "check_appeal",
    "check_capacity",
    "check_leavers",
    "check_session_appeal",
    "earlier_seats",
    "eligible_auditors",
    "MAX_LEAVERS",
    "proven_leavers",
    "refusals_charged",
]
