"""The verdict of an audit session, in one shape for the provider, REST, the CLI and the pages.

Everything is named (tiers, states, outcomes), amounts are decimal TRUST strings, and a
session that ended without a verdict says why. `trustnode.node.verdict.build_outcome` is the
one function that builds it.

How the chain's result reads as a verdict:
- PASS: the contract's trace verdict passed (the PASS weight reached beta).
- FAIL: it did not pass and at least one segment FAILED (a quorum found an error).
- INCONCLUSIVE: it did not pass and no segment failed: the shortfall comes from segments
  without a quorum (nobody voted, or the votes split). The contract stores "not passed,
  score 0", but nobody found an error, so it is shown as "no quorum", never as a red FAIL.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from trustnode.models.enums import SegmentOutcome, Tier


class SessionState(StrEnum):
    """Where a session is in its lifecycle (the contract's status, by name)."""

    CREATED = "created"
    DRAWING = "drawing"
    KEYS_PUBLISHED = "keys_published"
    COMMIT = "commit"
    REVEAL = "reveal"
    FINALIZED = "finalized"
    CANCELLED = "cancelled"
    EXPIRED = "expired"

    @property
    def ended_without_verdict(self) -> bool:
        return self in (SessionState.CANCELLED, SessionState.EXPIRED)


class TraceVerdict(StrEnum):
    """The trace-level verdict (see the module docstring)."""

    PASS = "PASS"
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"


class SegmentVerdict(StrEnum):
    """One segment's result: the contract's outcome, or PENDING before finalization."""

    PASS = "PASS"
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"
    PENDING = "PENDING"

    @classmethod
    def of(cls, outcome: SegmentOutcome, finalized: bool) -> SegmentVerdict:
        if not finalized or outcome == SegmentOutcome.NONE:
            return cls.PENDING
        return cls(outcome.name)


class TierName(StrEnum):
    """Auditor tiers by name (the chain stores Tier's integers)."""

    COMPUTER = "computer"
    LLM = "llm"
    HUMAN = "human"

    @classmethod
    def of(cls, tier: int) -> TierName:
        return cls(Tier(tier).name.lower())


class SegmentResult(BaseModel):
    """One segment of a session: who audits it, the revealed tally and its result."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(ge=0)
    node_id: str | None = Field(default=None, description="HDAG node id, when the shape is known.")
    step_index: int | None = Field(default=None, description="Original pre-split step (provider only).")
    tier: TierName
    weight: int = Field(ge=0)
    pass_votes: int = Field(ge=0)
    fail_votes: int = Field(ge=0)
    outcome: SegmentVerdict
    cid: str | None = Field(default=None, description="CID of the encrypted segment, once published.")


class CanaryResult(BaseModel):
    """A gold canary of the session (issue 15): never part of the trace verdict or score.

    The public sees one only once the provider revealed it; the provider's own report lists
    its canaries from the start (it wrote them)."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(ge=0)
    node_id: str | None = None
    tier: TierName
    truth: SegmentVerdict = Field(description="The committed verdict (PASS or FAIL).")
    revealed: bool = Field(
        description="Revealed on chain (only then are its votes scored against the truth)."
    )
    pass_votes: int = Field(ge=0)
    fail_votes: int = Field(ge=0)
    outcome: SegmentVerdict = Field(description="What its panel's majority said.")


class SessionOutcome(BaseModel):
    """A session's verdict and everything needed to read it."""

    session_id: int = Field(ge=1)
    state: SessionState
    verdict: TraceVerdict | None = Field(
        default=None, description="None while the session runs, or when it ended without a verdict."
    )
    summary: str = Field(description="One line for people, e.g. 'FAIL: 1 of 8 segments failed (...)'.")
    reason: str | None = Field(
        default=None, description="Why the session ended without a verdict (cancelled or expired)."
    )
    passed: bool | None = Field(default=None, description="The contract's trace flag, once finalized.")
    score_bps: int | None = Field(default=None, description="PASS weight / total weight, basis points.")
    beta_bps: int = Field(description="A PASS needs this share of the segment weight (basis points).")
    pass_weight: int | None = None
    total_weight: int = Field(ge=0)
    fee: str = Field(description="The fee the provider paid, decimal TRUST.")
    segments: list[SegmentResult]
    failing_segments: list[SegmentResult] = Field(
        default_factory=list, description="FAIL segments, in document order when the HDAG is known."
    )
    canaries: list[CanaryResult] = Field(
        default_factory=list, description="Gold canaries known to the reader; not in `segments`."
    )
