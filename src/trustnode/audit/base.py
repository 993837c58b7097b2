"""The one interface every auditor backend implements.

The daemon only needs `audit(task) -> AuditResult`; how a backend decides (sympy, graph
facts, an LLM, a person) stays behind it, so seats of any tier are handled alike.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from trustnode.models.audit import AuditResult, AuditTask, Evidence
from trustnode.models.enums import Verdict


@runtime_checkable
class Auditor(Protocol):
    """A backend that judges one segment in its context."""

    name: str

    def audit(self, task: AuditTask) -> AuditResult:
        """Judge `task.content`; return decided=False when it cannot tell."""
        ...


def undecided(auditor: str, reason: str, **details: object) -> AuditResult:
    """A "not checkable" answer (`decided=False`, `evidence.checkable=False`, the reason in
    `evidence.details["reason"]`). Its `verdict` field is only a placeholder the model
    requires: an undecided machine result must never be submitted as a PASS vote."""
    info: dict[str, object] = {"reason": reason, **details}
    return AuditResult(
        verdict=Verdict.PASS,
        decided=False,
        evidence=Evidence.model_validate({"auditor": auditor, "checkable": False, "details": info}),
    )
