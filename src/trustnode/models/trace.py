"""Reasoning-trace input: what a provider submits.

A trace is either (problem, thinking, output) or (problem, steps[, output]). Both are
normalised into one `TraceDocument` whose text is what HDAG spans index into, so every
segment can be checked against the exact characters the provider sent.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

SECTION_SEPARATOR = "\n\n"
STEP_SEPARATOR = "\n\n"


class TextSpan(BaseModel):
    """Half-open character range [start, end) into a document's text."""

    model_config = ConfigDict(frozen=True)

    start: int = Field(ge=0)
    end: int = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> TextSpan:
        if self.end < self.start:
            raise ValueError(f"span end {self.end} is before start {self.start}")
        return self

    def __len__(self) -> int:
        return self.end - self.start


class TraceInput(BaseModel):
    """A provider's trace. Give `thinking` or `steps`, not both."""

    model_config = ConfigDict(extra="forbid")

    problem: str = Field(min_length=1, description="The task or question the model was asked.")
    thinking: str | None = Field(default=None, description="The model's reasoning as free text.")
    steps: list[str] | None = Field(default=None, description="The reasoning pre-split into steps.")
    output: str = Field(default="", description="The model's final answer.")
    domain: str = Field(default="general", description="Expertise domain, e.g. math, medicine.")
    high_stakes: bool = Field(default=False, description="Route ambiguous segments to human auditors.")

    @model_validator(mode="after")
    def _one_body(self) -> TraceInput:
        if (self.thinking is None) == (self.steps is None):
            raise ValueError("give exactly one of 'thinking' or 'steps'")
        if self.thinking is not None and not self.thinking.strip():
            raise ValueError("'thinking' is empty")
        if self.steps is not None:
            if not self.steps:
                raise ValueError("'steps' is empty")
            for i, step in enumerate(self.steps):
                if not step.strip():
                    raise ValueError(f"'steps[{i}]' is empty")
        return self

    def to_document(self) -> TraceDocument:
        """Lay problem, thinking and output out in one text with known offsets."""
        step_spans: list[TextSpan] = []
        if self.steps is not None:
            parts: list[str] = []
            pos = 0
            for i, step in enumerate(self.steps):
                if i:
                    pos += len(STEP_SEPARATOR)
                step_spans.append(TextSpan(start=pos, end=pos + len(step)))
                parts.append(step)
                pos += len(step)
            thinking = STEP_SEPARATOR.join(parts)
        else:
            thinking = self.thinking or ""
        problem_span = TextSpan(start=0, end=len(self.problem))
        t0 = problem_span.end + len(SECTION_SEPARATOR)
        thinking_span = TextSpan(start=t0, end=t0 + len(thinking))
        text = self.problem + SECTION_SEPARATOR + thinking
        output_span: TextSpan | None = None
        if self.output:
            o0 = len(text) + len(SECTION_SEPARATOR)
            text += SECTION_SEPARATOR + self.output
            output_span = TextSpan(start=o0, end=o0 + len(self.output))
        return TraceDocument(
            text=text,
            problem=problem_span,
            thinking=thinking_span,
            output=output_span,
            steps=[TextSpan(start=s.start + t0, end=s.end + t0) for s in step_spans],
            domain=self.domain,
            high_stakes=self.high_stakes,
        )


class TraceDocument(BaseModel):
    """The canonical text of a trace and where its parts lie in it."""

    text: str
    problem: TextSpan
    thinking: TextSpan
    output: TextSpan | None = None
    steps: list[TextSpan] = Field(default_factory=list, description="Spans of pre-split steps, if any.")
    domain: str = "general"
    high_stakes: bool = False

    def slice(self, span: TextSpan) -> str:
        return self.text[span.start : span.end]

    @property
    def problem_text(self) -> str:
        return self.slice(self.problem)

    @property
    def thinking_text(self) -> str:
        return self.slice(self.thinking)

    def step_index_at(self, offset: int) -> int | None:
        """Index of the pre-split step containing `offset`, if the trace came as steps."""
        for i, s in enumerate(self.steps):
            if s.start <= offset < s.end:
                return i
        return None
