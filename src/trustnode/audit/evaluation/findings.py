"""How precise each structural finding is, against step labels.

A step's status is known when the label says it: every step of an error-free trace and
every step before the first error is correct, the labelled step is wrong, later steps are
unknown (ProcessBench labels only the earliest error) and are not counted. A finding's
precision is the share of its known-status steps that are wrong; a FAIL vote is worth a
slash only for findings at 90% or more.
"""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, Field

from trustnode.audit.evaluation.datasets import EvalItem
from trustnode.audit.structural import EVIDENCE_FINDINGS, VOTING_FINDINGS, analyze
from trustnode.models.enums import Level
from trustnode.models.hdag import HDAG

SLASH_PRECISION = 0.9


class FindingPrecision(BaseModel):
    """One structural finding kind over a run."""

    kind: str
    votes: bool = Field(description="Whether the structural auditor votes FAIL on it.")
    on_wrong_steps: int
    on_correct_steps: int
    precision: float | None = Field(description="on_wrong / (on_wrong + on_correct); None when never found.")


class FindingTally:
    """Counts findings on steps of known status across traces."""

    def __init__(self) -> None:
        self.wrong: Counter[str] = Counter()
        self.correct: Counter[str] = Counter()

    def add(self, item: EvalItem, hdag: HDAG) -> None:
        report = analyze(hdag)
        for n in hdag.nodes:
            if n.abstraction_level not in (Level.STEP, Level.OPERATION) or n.step_index is None:
                continue
            i = n.step_index
            if item.label < 0 or i < item.label:
                tally = self.correct
            elif i == item.label:
                tally = self.wrong
            else:
                continue
            for kind in {f.kind for f in report.findings(n.id)}:
                tally[kind] += 1

    def result(self) -> list[FindingPrecision]:
        out = []
        for kind in sorted(VOTING_FINDINGS | EVIDENCE_FINDINGS):
            w, c = self.wrong[kind], self.correct[kind]
            out.append(
                FindingPrecision(
                    kind=kind,
                    votes=kind in VOTING_FINDINGS,
                    on_wrong_steps=w,
                    on_correct_steps=c,
                    precision=w / (w + c) if w + c else None,
                )
            )
        return out
