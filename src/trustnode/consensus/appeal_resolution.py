"""Resolving one segment's history of panels (issue 15): each panel's outcome, the final one, and
how each appeal ended, after checking the history is one the contract would have allowed.

Panels are in depth order (`appeals` explains depth versus round); the outcome after a DECIDED
panel is its quorum outcome, after KEYS_WITHHELD or REFUSED `outcome_after_withheld` (INCONCLUSIVE,
except that a contested FAIL stands), after UNFILLABLE the previous outcome stands.
The verdict uses the FINAL outcome; votes and appeal results are judged against the SCORING
outcome (`scoring_outcome`), which differs only when the last panel did not decide.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from trustnode.consensus.appeals import (
    DECIDED,
    AppealParams,
    AppealResult,
    Panel,
    PanelStatus,
    SegmentRecord,
    Vote,
    min_bond,
    panel_seats,
)
from trustnode.consensus.rules import segment_outcome
from trustnode.models.enums import SegmentOutcome


class Resolution(BaseModel):
    """The outcome after each panel (index = depth), the final (verdict) outcome, the scoring outcome
    and each appeal's result (against the scoring outcome)."""

    model_config = ConfigDict(frozen=True)

    outcomes: list[SegmentOutcome]
    final: SegmentOutcome
    scoring: SegmentOutcome = Field(description="what every vote and appeal of the segment is scored against")
    results: list[AppealResult | None] = Field(description="per depth; None for round 0")


def tally(panel: Panel) -> tuple[int, int]:
    """(PASS, FAIL) revealed votes; abstentions and missing reveals count in neither."""
    return (
        sum(1 for s in panel.seats if s.vote is Vote.PASS),
        sum(1 for s in panel.seats if s.vote is Vote.FAIL),
    )


def withheld_keeps(depth: int, contested: SegmentOutcome) -> bool:
    """Whether a panel of depth `depth` whose keys were withheld leaves its segment at `contested`
    (the outcome it appealed: the last decided one) instead of INCONCLUSIVE (`AppealMath.withheldKeeps`).

    Second review: withholding the next depth's keys erased a decided overturn (INCONCLUSIVE voided
    the depth-1 appeal, its panel's pay and the round-0 slashes).  Only the provider can withhold, so
    withholding must never help its segment: a decided FAIL (round 0's or a panel's) stands and the
    withheld appeal's bond is forfeited to its seats; a contested PASS still becomes INCONCLUSIVE
    (keeping it would give the provider a free veto on every appeal of a PASS).  Depth 1 too: outside
    review 3 withheld an appeal of round 0's FAIL, which became INCONCLUSIVE for free.
    """
    del depth  # every depth alike (outside review 3: depth 1 too), kept for AppealMath's signature
    return contested == SegmentOutcome.FAIL


def outcome_after_withheld(depth: int, contested: SegmentOutcome) -> SegmentOutcome:
    """The segment's outcome (final: it closes) after its depth-`depth` panel's keys were withheld."""
    return contested if withheld_keeps(depth, contested) else SegmentOutcome.INCONCLUSIVE


def refused_ends_as_withheld(depth: int, contested: SegmentOutcome) -> SegmentOutcome:
    """The segment's outcome (final) after its depth-`depth` panel's draw failed after lock refusals
    (REFUSED, `AppealModule.drawPanel`; outside review 3: UNFILLABLE kept a contested PASS, so the
    PASS's defender could veto any appeal by having its accounts refuse their locks).

    Refusals are nobody's provable fault: the defender of the contested outcome or the appellant may
    hold the refusing accounts.  So the segment ends as if the keys were withheld: a contested PASS
    never survives (INCONCLUSIVE), a contested FAIL stands (INCONCLUSIVE would unscore a provider's
    wrong round-0 PASS votes), and the segment is final (no re-roll of the panel).  The bond comes
    back whole; the drawn seats are owed by the segment's pot only (`appeal_settlement`)."""
    return outcome_after_withheld(depth, contested)


def scoring_outcome(
    final: SegmentOutcome, last_contested: SegmentOutcome, last: PanelStatus
) -> SegmentOutcome:
    """What round 0 and every appeal of a segment are scored against (`AppealMath.scoringOutcome`),
    given its final (verdict) outcome, the outcome its last panel contested and that panel's status.

    Decided last panel: its outcome.  KEYS_WITHHELD over a contested PASS: FAIL (only the provider
    can withhold, so the inference is adverse; the verdict stays INCONCLUSIVE).  Any other undecided
    end (REFUSED, UNFILLABLE, ABANDONED): the contested outcome, the last decided one, so that nobody gains by
    making a panel fail (outside reviews 5 and 6: scoring every earlier round against INCONCLUSIVE
    refunded lost appeals, unpaid correct panels and unscored wrong PASS votes).
    """
    if last is PanelStatus.DECIDED:
        return final
    if last is PanelStatus.KEYS_WITHHELD and last_contested == SegmentOutcome.PASS:
        return SegmentOutcome.FAIL
    return last_contested


def appeal_result(appealed: SegmentOutcome, final: SegmentOutcome, status: PanelStatus) -> AppealResult:
    """How an appeal ended, judged against the FINAL outcome of its segment."""
    if status is PanelStatus.KEYS_WITHHELD:
        return AppealResult.KEYS_WITHHELD
    if status is PanelStatus.UNFILLABLE:
        return AppealResult.UNFILLABLE
    if status is PanelStatus.REFUSED:
        return AppealResult.REFUSED
    if status is PanelStatus.ABANDONED:
        return AppealResult.ABANDONED
    if final == appealed:
        return AppealResult.UPHELD
    if appealed in DECIDED and final == SegmentOutcome.INCONCLUSIVE:
        return AppealResult.VOIDED
    return AppealResult.OVERTURNED


def resolve(seg: SegmentRecord, k0: int, tau_bps: int, appeal: AppealParams, reward: int) -> Resolution:
    """Validate a segment's history as the contract would have let it happen, and resolve it."""
    outcomes: list[SegmentOutcome] = []
    seen: set[str] = set()
    for d, panel in enumerate(seg.panels):
        if d == 0 and panel.round != 0:
            raise ValueError(f"segment {seg.index}: its first panel is round 0, not {panel.round}")
        if d and panel.round <= seg.panels[d - 1].round:
            raise ValueError(f"segment {seg.index}: panel {d} (round {panel.round}) follows a later round")
        k = panel_seats(k0, d)
        names = [s.auditor for s in panel.seats]
        if len(set(names)) != len(names) or seen & set(names):
            raise ValueError(f"segment {seg.index} depth {d}: an auditor sits twice (exclusion violated)")
        seen |= set(names)
        if d == 0:
            if panel.appeal is not None or panel.status is not PanelStatus.DECIDED:
                raise ValueError("round 0 is the session's own decided panel")
        else:
            prev = outcomes[-1]
            if d > appeal.max_rounds or seg.panels[d - 1].status is not PanelStatus.DECIDED:
                raise ValueError(f"segment {seg.index}: depth {d} is not allowed")
            if panel.appeal is None or panel.appeal.appealed != prev:
                raise ValueError(f"segment {seg.index} depth {d}: the appeal must contest {prev.name}")
            if panel.appeal.bond != min_bond(k0, d, reward, appeal.bond_multiplier_bps):
                raise ValueError(f"segment {seg.index} depth {d}: the bond is exactly the minimum bond")
        if panel.status in (PanelStatus.UNFILLABLE, PanelStatus.REFUSED, PanelStatus.ABANDONED):
            if len(panel.seats) > k:
                raise ValueError("a failed draw has at most k_d seats (those drawn before it failed)")
            if any(s.vote is not Vote.UNREVEALED for s in panel.seats):
                raise ValueError("a panel whose draw failed never votes")
            refused = panel.status is PanelStatus.REFUSED
            outcomes.append(refused_ends_as_withheld(d, outcomes[-1]) if refused else outcomes[-1])
            continue
        if len(panel.seats) != k:
            raise ValueError(f"segment {seg.index} depth {d}: {len(panel.seats)} seats, k_d = {k}")
        if panel.status is PanelStatus.KEYS_WITHHELD:
            if any(s.vote is not Vote.UNREVEALED for s in panel.seats):
                raise ValueError("nobody can vote without keys")
            outcomes.append(outcome_after_withheld(d, outcomes[-1]))
            continue
        p, f = tally(panel)
        outcomes.append(segment_outcome(p, f, k, tau_bps))
    final = outcomes[-1]
    last = seg.panels[-1]
    scoring = scoring_outcome(final, last.appeal.appealed, last.status) if last.appeal is not None else final
    results: list[AppealResult | None] = [None]
    for panel in seg.panels[1:]:
        assert panel.appeal is not None
        results.append(appeal_result(panel.appeal.appealed, scoring, panel.status))
    return Resolution(outcomes=outcomes, final=final, scoring=scoring, results=results)


__all__ = [
    "Resolution",
    "appeal_result",
    "outcome_after_withheld",
    "refused_ends_as_withheld",
    "resolve",
    "scoring_outcome",
    "tally",
    "withheld_keeps",
]
