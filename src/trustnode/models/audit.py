"""What an auditor is given and what it returns (SPEC 6).

An auditor sees one segment plus the context the protocol allows (problem statement,
the segments it depends on, the segments it implies) and answers PASS/FAIL with an
evidence record. The node hashes that record into its vote, so the record has one
canonical JSON form and a keccak256 digest.
"""

from __future__ import annotations

import json
from enum import StrEnum

from eth_utils import keccak
from pydantic import BaseModel, ConfigDict, Field, JsonValue

from trustnode.models.enums import AuditorType, Level, Relationship, Verdict


class ContextSegment(BaseModel):
    """A neighbouring segment shown to the auditor for context (never audited by it)."""

    model_config = ConfigDict(frozen=True)

    node_id: str
    level: Level
    content: str = Field(description="The segment's text; empty when `withheld`.")
    relation: Relationship | None = Field(
        default=None, description="The HDAG relationship that links it to the audited segment."
    )
    step_index: int | None = None
    withheld: bool = Field(
        default=False,
        description="The text is withheld: this auditor's privacy share (SPEC 3) is used up by its "
        "seats and nearer context, so only `summary` is given.",
    )
    summary: str = Field(default="", description="The HDAG node's 3-5 word summary.")


class SegmentContext(BaseModel):
    """Everything an auditor may see besides the segment itself (SPEC 3)."""

    problem: str = Field(description="The problem statement of the trace.")
    parents: list[ContextSegment] = Field(
        default_factory=list, description="Segments the audited one depends on, in document order."
    )
    children: list[ContextSegment] = Field(
        default_factory=list, description="Segments the audited one implies or enables, in document order."
    )


class AuditTask(BaseModel):
    """One seat's work: audit this segment with this context."""

    segment_index: int = Field(ge=0, description="Position of the segment in the session's segment list.")
    node_id: str
    level: Level
    auditor_type: AuditorType
    content: str
    context: SegmentContext
    step_index: int | None = Field(default=None, description="Original pre-split step, if known.")


class ClaimStatus(StrEnum):
    """Outcome of checking one extracted claim."""

    HOLDS = "holds"
    WRONG = "wrong"
    UNCHECKABLE = "uncheckable"


class CheckedClaim(BaseModel):
    """One arithmetic claim: what was written, what was found, what is correct."""

    text: str = Field(description="The claim as it appears in the segment (normalised whitespace).")
    expression: str = Field(description="The left side as parsed (sympy string form).")
    found: str = Field(description="The value the segment states.")
    correct: str = Field(default="", description="The exact value of the expression.")
    status: ClaimStatus
    tolerance: str = Field(
        default="exact", description="exact | rounded:<d> | truncated | approximate | annotation"
    )
    note: str = ""


class ViolationType(StrEnum):
    """Logical violation kinds the LLM judge may report (SPEC 6)."""

    MISSING_ASSUMPTION = "Missing_Assumption"
    INVALID_PRECONDITION = "Invalid_Precondition"
    UNJUSTIFIED_INFERENCE = "Unjustified_Inference"
    CIRCULAR_REASONING = "Circular_Reasoning"
    CONTRADICTION = "Contradiction"
    OVERGENERALIZATION = "Overgeneralization"


class Violation(BaseModel):
    """One violation found by the LLM judge; the judge FAILs iff one survives."""

    step: str
    failing_slice: str
    probe: str
    type: ViolationType
    acceptance_criterion: str
    explanation: str


class Evidence(BaseModel):
    """Why an auditor voted as it did; kept by the node, hashed into the vote."""

    auditor: str = Field(description="Auditor kind, e.g. computer, structural, llm, human.")
    checkable: bool = Field(description="False when the auditor could not decide this segment.")
    claims: list[CheckedClaim] = Field(default_factory=list)
    violations: list[Violation] = Field(default_factory=list)
    details: dict[str, JsonValue] = Field(default_factory=dict, description="Auditor-specific facts.")


class AuditResult(BaseModel):
    """An auditor's answer for one segment.

    `decided=False` means "not checkable": the verdict field then holds the auditor's
    default and the daemon's vote policy decides what to submit.
    """

    verdict: Verdict
    decided: bool
    evidence: Evidence

    def canonical_json(self) -> bytes:
        """Sorted keys, no spaces, UTF-8: the same bytes on every node."""
        payload = self.model_dump(mode="json")
        return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

    def evidence_hash(self) -> bytes:
        """keccak256 of the canonical JSON of the whole record (verdict, decided, evidence)."""
        return bytes(keccak(self.canonical_json()))

    @property
    def failed(self) -> bool:
        """A decided FAIL: the only result that marks a segment as wrong in the metrics."""
        return self.decided and self.verdict is Verdict.FAIL
