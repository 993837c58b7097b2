"""The judge's answer schemas (sent to the model as the response format) and their limits."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from trustnode.models.audit import Violation, ViolationType

MAX_VIOLATIONS = 3
"""Most violations one answer may list: a segment is one move, and the bound keeps a small
model from repeating items until it runs out of tokens."""
MAX_FIELD_CHARS = 160
"""Longest text field: a short quotation or one sentence. The server's grammar keeps these
bounds, so the longest schema-valid answer (`max_answer_chars`) stays well inside the judge's
`max_tokens`: a model that writes every field to its limit is still cut by its own grammar,
never by the token bound in the middle of a string (which would be an invalid answer)."""
MAX_STEP_ID_CHARS = 40


def _non_blank(value: str) -> str:
    text = value.strip()
    if not text:
        raise ValueError("must not be blank")
    return text


class ReportedViolation(BaseModel):
    """One violation as the model reports it (the response schema's item)."""

    step: str = Field(min_length=1, max_length=MAX_STEP_ID_CHARS, description="Id of the audited segment.")
    failing_slice: str = Field(
        min_length=1,
        max_length=MAX_FIELD_CHARS,
        description="Shortest exact quotation of the segment that carries the defect.",
    )
    probe: str = Field(
        min_length=1, max_length=MAX_FIELD_CHARS, description="Question deciding whether the step is sound."
    )
    type: ViolationType
    acceptance_criterion: str = Field(
        min_length=1,
        max_length=MAX_FIELD_CHARS,
        description="Checkable condition the step would meet if sound.",
    )
    explanation: str = Field(min_length=1, max_length=MAX_FIELD_CHARS, description="Why the probe fails.")

    @field_validator("step", "failing_slice", "probe", "acceptance_criterion", "explanation")
    @classmethod
    def _filled(cls, value: str) -> str:
        return _non_blank(value)

    def to_violation(self) -> Violation:
        return Violation.model_validate(self.model_dump())


class JudgeFindings(BaseModel):
    """The judge's whole answer: the violations of the segment (empty: none)."""

    violations: list[ReportedViolation] = Field(max_length=MAX_VIOLATIONS)


class ViolationCheck(BaseModel):
    """The verifier's decision on one numbered violation."""

    index: int = Field(ge=1, description="Number of the flagged item.")
    criterion_met: bool = Field(description="The segment already meets the acceptance criterion.")
    substantive: bool = Field(description="The defect matters at the problem's level of rigour.")
    reason: str = Field(min_length=1, max_length=MAX_FIELD_CHARS)

    @field_validator("reason")
    @classmethod
    def _filled(cls, value: str) -> str:
        return _non_blank(value)

    @property
    def withdraws(self) -> bool:
        return self.criterion_met or not self.substantive


class VerificationAnswer(BaseModel):
    """The verifier's answer: one check per flagged item."""

    checks: list[ViolationCheck] = Field(max_length=MAX_VIOLATIONS * 2)


def max_answer_chars() -> int:
    """Characters of the longest answer the findings schema allows (JSON punctuation and
    keys included, every string at its limit): what `max_tokens` must leave room for."""
    keys = sum(len(k) + 6 for k in ReportedViolation.model_fields)  # "key": "...",
    longest_type = max(len(t.value) for t in ViolationType)
    strings = MAX_STEP_ID_CHARS + 4 * MAX_FIELD_CHARS + longest_type
    return len('{"violations": []}') + MAX_VIOLATIONS * (keys + strings + 4)
