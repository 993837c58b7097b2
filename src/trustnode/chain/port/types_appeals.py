"""What the chain port returns for issue 15: gold canaries and appeal rounds.

The shape (`docs/appeals-canaries.md`, `consensus.appeals`): a session's panels are numbered
by **round**; round 0 is the session's own panel, round `a >= 1` is the session's `a`-th appeal.
One appeal names one or more segments, all at the same **depth** (the number of panels the
segment already had, so depth 0 = only round 0); the round's panel gives each named segment
`k_{d+1} = 2 k_d + 1` seats of its tier, excluding the provider and every earlier auditor of
that segment. A round runs like round 0 (draw, keys, commit, reveal, finalize); its outcomes
replace the named segments' outcomes and the trace verdict is recomputed. Every vote of every
round is settled against the **final** outcome, so no round settles before the session's
outcome is final (the appeal window closed and no round running).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from trustnode.chain.port.types import TxRef
from trustnode.consensus.appeals import AppealResult, PanelStatus
from trustnode.consensus.canaries import CanaryReveal
from trustnode.models.enums import SegmentOutcome


class RevealedCanary(BaseModel):
    """A canary whose (index, verdict, salt) matched its commitment within the reveal window."""

    model_config = ConfigDict(frozen=True)

    slot: int = Field(ge=0, description="position of its commitment in the committed list")
    index: int = Field(ge=0, description="the segment that is a canary")
    verdict: SegmentOutcome = Field(description="its committed truth, PASS or FAIL")


class CanaryState(BaseModel):
    """A session's canaries: what was committed, what was revealed, and when each is allowed."""

    session_id: int
    required: int = Field(
        ge=0, description="canary_count(segment_count, canaryRateBps): the count a commitment must have"
    )
    commitments: list[str] = Field(description="committed hashes, hex, in slot order (empty: none yet)")
    commit_until: int = Field(
        description="last block a commitment is accepted: the draw's randomness target, open + "
        "max(delay, canaryCommitBlocks) for a session owing canaries (canaries.canary_commit_window)"
    )
    reveal_from: int | None = Field(
        default=None, description="first block of the reveal window (round-0 reveal end + 1), once known"
    )
    reveal_until: int | None = Field(
        default=None, description="last block of the reveal window (reveal end + canaryRevealBlocks)"
    )
    revealed: list[RevealedCanary] = Field(default_factory=list)
    operator: str | None = Field(
        default=None, description="the canary operator that committed (None until committed); only it reveals"
    )

    @property
    def committed(self) -> bool:
        return bool(self.commitments)


class AppealQuote(BaseModel):
    """What `appeal(session_id, segments, max_bond)` would do now, without sending anything.

    `refusal` is the named revert the appeal would hit (IAppealModule's errors, in the order of
    `consensus.appeal_admission.check_session_appeal`: AppealsDisabled, EmptyAppeal, InvalidSegment,
    SegmentsNotAscending, AppealWindowNotOpen, TooManyRounds, SegmentIsCanary, AppealPending,
    MixedDepths, MixedTiers, AppealWindowClosed, SegmentFinal, NoRoundsLeft, NotEnoughEligibleAuditors,
    PanelTooLarge; the caller's `max_bond` decides BondAboveLimit), None when it would be admitted. `segments` are
    sorted ascending (the contract wants them so).
    """

    session_id: int
    segments: list[int]
    round: int = Field(description="the round the appeal would open (the session's next appeal number)")
    depth: int = Field(ge=1, description="depth of the new panels (1 = a segment's first appeal panel)")
    seats: list[int] = Field(description="k_{depth+1} per named segment, in `segments` order")
    bonds: list[int] = Field(description="min_bond per named segment, token wei")
    bond: int = Field(description="sum of `bonds`: exactly what the appeal takes")
    appealable_until: int | None = Field(description="last block of the window now open, if any")
    refusal: str | None = None
    reason: str | None = Field(default=None, description="the refusal in words")
    eligible: int | None = Field(
        default=None,
        description="auditors who can sit on each new panel (`appeal_admission.eligible_auditors`: the "
        "tier's members with weight in the round's snapshot, the provider and earlier seats excluded)",
    )
    refusals_charged: bool = Field(
        default=False,
        description="eligible >= 2k, the precondition: a failed draw then ends REFUSED (a contested PASS voided, "
        "bond back) only if its counted lock refusers (short by more than this session's own locks) hold "
        "more than half of the failing segment's eligible weight (`consensus.appeal_draw`, rules R and S'); "
        "otherwise it ends UNFILLABLE (the PASS stands, R per drawn seat kept)",
    )

    @property
    def admissible(self) -> bool:
        return self.refusal is None


class AppealOpened(BaseModel):
    """An appeal admitted: its bond is held and round `round`'s panel is to be drawn."""

    session_id: int
    round: int
    segments: list[int]
    depth: int = Field(ge=1, description="depth of the round's panels (1 = first appeal panel)")
    appellant: str
    bond: int
    tx: TxRef


class AppealStatus(BaseModel):
    """Where a session stands with appeals ("appealable until block N").

    `final` means the outcome can no longer change: the window has closed with no round running
    (or appeals are disabled) and every round has ended, so settlement of every round may start
    (once the slash randomness is fixed).
    """

    session_id: int
    enabled: bool = Field(description="appealBlocks > 0 and maxRounds > 0 in the session's params")
    opens_at: int | None = Field(
        default=None, description="first block of the first window (after the canary reveal window)"
    )
    appealable_until: int | None = Field(
        default=None, description="last block an appeal is accepted now; None when none is open"
    )
    rounds: int = Field(default=0, description="appeal rounds opened so far (the last round number)")
    running: list[int] = Field(default_factory=list, description="rounds not yet finalized")
    appealable: list[int] = Field(
        default_factory=list, description="segments an appeal could name now (depth below maxRounds)"
    )
    depths: list[int] = Field(default_factory=list, description="per segment: its panels after round 0")
    window_ends: list[int] = Field(
        default_factory=list, description="per segment: last block it may be appealed (0: never again)"
    )
    final: bool = False


class RoundState(StrEnum):
    """Lifecycle of one appeal round, like a session's (`SessionState`) plus its two dead ends."""

    CREATED = "created"  # admitted; the panel's randomness is not fixed yet
    DRAWING = "drawing"
    KEYS_PUBLISHED = "keys_published"
    COMMIT = "commit"
    REVEAL = "reveal"
    FINALIZED = "finalized"  # the panel decided: its outcomes replaced the segments' outcomes
    KEYS_WITHHELD = "keys_withheld"  # no keys by the key deadline: outcome_after_withheld, final
    UNFILLABLE = "unfillable"  # the draw ran out of eligible weight: the outcomes stand, final
    REFUSED = "refused"  # the draw failed after lock refusals: outcome_after_withheld, final
    ABANDONED = "abandoned"  # a timely seed nobody drew: the outcomes stand, bond forfeited, final

    @property
    def ended(self) -> bool:
        return self in (
            RoundState.FINALIZED,
            RoundState.KEYS_WITHHELD,
            RoundState.UNFILLABLE,
            RoundState.REFUSED,
            RoundState.ABANDONED,
        )


class RoundSegment(BaseModel):
    """One named segment of an appeal round."""

    index: int
    tier: int
    depth: int = Field(ge=1, description="this panel's depth on the segment (1 = first appeal panel)")
    seats: int = Field(description="k_depth seats of this panel")
    drawn: int = Field(default=0, description="seats drawn so far")
    bond: int
    appealed: SegmentOutcome = Field(description="the outcome contested (the segment's at appeal time)")
    pass_votes: int = 0
    fail_votes: int = 0
    outcome: SegmentOutcome = Field(
        default=SegmentOutcome.NONE, description="this panel's outcome once the round ended"
    )
    status: PanelStatus | None = Field(default=None, description="how the panel ended (None while running)")
    result: AppealResult | None = Field(
        default=None, description="judged against the final outcome: known once the session is final"
    )


class RoundInfo(BaseModel):
    """One appeal round: who appealed what, its phase deadlines and each segment's result."""

    session_id: int
    round: int = Field(ge=1)
    appellant: str
    bond: int
    depth: int = Field(ge=1, description="depth of the round's panels on its segments")
    state: RoundState
    segments: list[RoundSegment]
    total_seats: int
    drawn_seats: int
    committed_count: int = 0
    revealed_count: int = 0
    opened_block: int
    draw_deadline: int = 0
    key_deadline: int = 0
    commit_deadline: int = 0
    reveal_deadline: int = 0
    manifest_cid: str | None = Field(default=None, description="the round's key manifest, once published")
    refusals_charged: bool = Field(
        default=False,
        description="decided at admission (eligible >= 2k): only then can a failed draw end REFUSED, and only "
        "if its counted refusers hold more than half of the failing segment's eligible weight (rules R and "
        "S', `consensus.appeal_draw`); else UNFILLABLE",
    )


__all__ = [
    "AppealOpened",
    "AppealQuote",
    "AppealResult",
    "AppealStatus",
    "CanaryReveal",
    "CanaryState",
    "PanelStatus",
    "RevealedCanary",
    "RoundInfo",
    "RoundSegment",
    "RoundState",
]
