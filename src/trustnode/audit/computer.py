"""The computer (T_Auto) auditor: exact arithmetic checking with sympy.

It votes FAIL only on a definite arithmetic error, with the claim and the correct value
in the evidence; PASS when at least one claim was checked and all hold; otherwise it
reports "not checkable" and leaves the vote policy to the daemon. Names defined by the
parent segments ("A = (-9 - 5 - 0)") are available to the segment's own claims.
"""

from __future__ import annotations

from typing import Literal

from trustnode.audit.claims import bind_from, extract_claims
from trustnode.audit.base import undecided
from trustnode.models.audit import AuditResult, AuditTask, Evidence
from trustnode.models.enums import Verdict

#: Evidence keeps at most this many claims (the wrong ones always come first).
MAX_EVIDENCE_CLAIMS = 64


class ComputerAuditor:
    """Checks every arithmetic claim of a segment exactly."""

    name = "computer"

    def __init__(self, annotations: Literal["strip", "check"] = "strip", use_context: bool = True) -> None:
        """`annotations`: strip `<<expr=result>>` calculator notes, or check them as claims too.

        `use_context`: let the segment use names its parent segments defined.
        """
        if annotations not in ("strip", "check"):
            raise ValueError(f"annotations must be 'strip' or 'check', not {annotations!r}")
        self.annotations: Literal["strip", "check"] = annotations
        self.use_context = use_context

    def audit(self, task: AuditTask) -> AuditResult:
        variables = bind_from(p.content for p in task.context.parents) if self.use_context else {}
        ext = extract_claims(task.content, variables, annotations=self.annotations)
        wrong, held = ext.wrong, ext.held
        details: dict[str, object] = {
            "claims_checked": len(wrong) + len(held),
            "claims_wrong": len(wrong),
            "names_from_context": sorted(variables),
            "text_truncated": ext.truncated,
        }
        if not wrong and not held:
            return undecided(self.name, "no checkable arithmetic claim", claims_checked=0)
        claims = (wrong + held)[:MAX_EVIDENCE_CLAIMS]
        verdict = Verdict.FAIL if wrong else Verdict.PASS
        if wrong:
            details["first_error"] = {
                "claim": wrong[0].text,
                "found": wrong[0].found,
                "correct": wrong[0].correct,
            }
        evidence = Evidence.model_validate(
            {"auditor": self.name, "checkable": True, "claims": claims, "details": details}
        )
        return AuditResult(verdict=verdict, decided=True, evidence=evidence)
