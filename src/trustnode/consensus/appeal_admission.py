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
    `eligible`: auditors of the segment's tier who sat on none of its panels (the provider
    excluded) - fewer than k_d and the appeal is refused up front, so no round ever starts that
    cannot be seated.  The bond is exactly `min_bond`; `max_bond` is the appellant's own limit.
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


def check_capacity(segments: int, seats: int, *, members: int, seat_cap: int) -> None:
    """A round naming more segments than the seat cap may use at most half of what the tier's
    members (the provider excluded) can seat under it, so that the cap fails its draw only if more
    than half of them refuse: a failed draw with any refusal ends REFUSED (bonds back, a contested
    PASS voided), and a round sized at the tier's edge would let one busy honest auditor's refusal
    void every PASS it names (outside review 9).  With no more segments than the cap, an auditor
    can sit on every one of them, so only the per-segment count (`check_appeal`) binds."""
    capacity = members * seat_cap // 2
    if segments > seat_cap and seats > capacity:
        raise AppealRefused(
            "PanelTooLarge",
            f"{seats} seats over {segments} segments; at most {capacity} per round in this tier",
        )


def earlier_seats(k0: int, depth: int) -> int:
    """k_0 + ... + k_{depth-1}: the seats of a segment's panels before its panel of `depth`."""
    return sum(panel_seats(k0, j) for j in range(depth))


def refusals_decide(
    refusals: int,
    *,
    live_members: int,
    earlier: int,
    seats: int,
    segments: int,
    total_seats: int,
    seat_cap: int,
    earlier_seats: int = 0,
) -> bool:
    """Whether a failed appeal draw is charged with its lock refusals (REFUSED: bond back, a
    contested PASS voided) rather than ending UNFILLABLE (the outcome stands, R per drawn seat).

    Admission counts leaves, which stay after their member left, so a round can be admitted that
    the tier's live members cannot seat (outside review 11); a refusal must not turn that shortage
    into REFUSED.  A failed draw has excluded every member with snapshot weight, so the draw module
    knows them all and redoes the admission checks with them (`DrawModule._decisiveRefusals`):
    `live_members` (the provider excluded) minus the `earlier` live members who sat on an earlier
    panel of the failing segment must cover its `seats`; a round naming more `segments` than the
    seat cap must fit `total_seats` in half of what the live members can seat; and, since REFUSED
    ends every named segment but only the failing one was counted, a round of several segments
    needs `live_members >= earlier_seats + seats`, `earlier_seats` being k_0 + ... + k_{d-1}: every
    segment seatable even with all its earlier panels' auditors still live (outside review 13)."""
    if refusals == 0 or live_members < earlier + seats:
        return False
    if segments > seat_cap and 2 * total_seats > live_members * seat_cap:
        return False
    return not (segments > 1 and live_members < earlier_seats + seats)


def live_shortfall(
    seats: Sequence[int],
    earlier: Sequence[Collection[str]],
    *,
    live: Collection[str],
    seat_cap: int,
    earlier_seats: int = 0,
) -> str | None:
    """Why the round's draw, should it fail, would end UNFILLABLE whatever anyone refuses, or None:
    the tier's live members (weight in the round's snapshot, the provider excluded) cannot seat it,
    or, for several segments, could not seat them all were every earlier panel's auditor still live
    (`earlier_seats` = k_0 + ... + k_{d-1}), so a refusal would not be charged.  Admission counts
    leaves, an upper bound, so it admits such a round; the node checks before paying, with the same
    test `refusals_decide` applies to a failed draw, per named segment (`seats[i]` its panel,
    `earlier[i]` who sat on its earlier panels)."""
    live = set(live)
    total = sum(seats)
    for i, (k, before) in enumerate(zip(seats, earlier, strict=True)):
        sat = len(live & set(before))
        if refusals_decide(1, live_members=len(live), earlier=sat, seats=k, segments=len(seats),
                           total_seats=total, seat_cap=seat_cap, earlier_seats=earlier_seats):  # fmt: skip
            continue
        if len(live) - sat < k:
            return (
                f"named segment {i + 1} of {len(seats)}: {len(live) - sat} live auditors of its tier sat on "
                f"none of its panels, its new panel needs {k}"
            )
        if len(seats) > seat_cap and 2 * total > len(live) * seat_cap:
            return (
                f"{total} seats over {len(seats)} segments need {2 * total} seat slots; the tier's "
                f"{len(live)} live auditors have {len(live) * seat_cap} (seat cap {seat_cap})"
            )
        return (
            f"the tier's {len(live)} live auditors are fewer than {earlier_seats + k} (the earlier panels' "
            f"{earlier_seats} seats plus {k}): a refusal could not be charged to a round of several "
            "segments; appeal them one per round"
        )
    return None


class Admission(BaseModel):
    """An admitted appeal: the round it opens, the panels' depth, seats and bonds per named segment."""

    model_config = ConfigDict(frozen=True)

    round: int
    depth: int = Field(ge=1, description="the depth of the new panels")
    segments: list[int]
    seats: list[int]
    bonds: list[int]

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
    eligible: Callable[[int], int],
    members: Callable[[int], int],
    seat_cap: int,
    max_bond: int | None = None,
) -> Admission:
    """What `appeal(sessionId, segments, maxBond)` checks, in AppealModule's order; the round it opens.

    `segments`: the session's segment histories of ended panels (index order); `named`: the appealed
    indices, strictly ascending; `seats`: k_0 per tier; `opens_after`: the canary window's end (None:
    round 0 has not finalized); `window_ends[i]`: the last block of segment i's window;
    `rounds_opened`: appeals so far (the new round is that + 1); `running`: segments with a panel
    still running (it counts in their depth); `canaries`: revealed canaries; `eligible(i)`: auditors
    who could sit on segment i's new panel; `members(tier)`: the tier's members but the provider;
    `seat_cap`: the session's seats per auditor per panel.  Refusals, first match: AppealsDisabled,
    AppealWindowNotOpen (not finalized), EmptyAppeal, AppealWindowClosed (the outcome is final),
    AppealWindowNotOpen (canary window running), TooManyRounds (round above min(maxRounds * n, 255)),
    then segment by segment InvalidSegment, SegmentsNotAscending, SegmentIsCanary, MixedDepths,
    MixedTiers, AppealPending and `check_appeal`'s SegmentFinal, NoRoundsLeft, AppealWindowClosed,
    NotEnoughEligibleAuditors; then `check_capacity`'s PanelTooLarge; last BondAboveLimit on the sum
    of the bonds.
    """
    if appeal.appeal_blocks == 0 or appeal.max_rounds == 0:
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
    depth, tier = 0, None
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
        _, bond = check_appeal(seg, k0=k0, appeal=appeal, reward=reward, block=block, window_end=window_ends[i],
                               eligible=eligible(i))  # fmt: skip
        out_seats.append(panel_seats(k0, d))
        bonds.append(bond)
    if tier is not None:
        check_capacity(len(named), sum(out_seats), members=members(int(tier)), seat_cap=seat_cap)
    total = sum(bonds)
    if max_bond is not None and total > max_bond:
        raise AppealRefused("BondAboveLimit", f"the bond is {total}")
    return Admission(round=rounds_opened + 1, depth=depth, segments=list(named), seats=out_seats, bonds=bonds)


__all__ = [
    "Admission",
    "check_appeal",
    "check_capacity",
    "check_session_appeal",
    "live_shortfall",
    "refusals_decide",
]
