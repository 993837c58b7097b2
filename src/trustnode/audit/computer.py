"""The computer (T_Auto) auditor: exact checking of arithmetic and algebra with sympy.

It votes FAIL only on a definite error, with the claim and the correct value in the
evidence; PASS only when at least one claim was checked and all hold. When it checked
nothing it answers `decided=False` and says so in the evidence (`claims_checked: 0`):
an undecided machine result is never a PASS vote, and the router (`hdag.rules`) sends
a segment here only when `claims.has_decidable_claim` finds a claim in it, so that
answer means the segment was misrouted. Names, functions and equations defined by the
parent segments ("A = (-9 - 5 - 0)", "f(x) = x^3") are available to the segment's
claims; when the context yields no claim, the segment is read alone, as the router
read it.
"""

from __future__ import annotations

from typing import Literal

from trustnode.audit.base import undecided
from trustnode.audit.claims import context_from, extract_claims
from trustnode.models.audit import AuditResult, AuditTask, Evidence
from trustnode.models.enums import Verdict

#: Evidence keeps at most this many claims (the wrong ones always come first).
MAX_EVIDENCE_CLAIMS = 64
NOTHING_CHECKED = "nothing was checked: no decidable claim in this segment"


class ComputerAuditor:
    """Checks every arithmetic and symbolic claim of a segment exactly."""

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
        ctx = context_from(p.content for p in task.context.parents) if self.use_context else None
        ext = extract_claims(
            task.content,
            ctx.bindings if ctx else None,
            annotations=self.annotations,
            facts=ctx.facts if ctx else None,
        )
        if ctx is not None and not ext.claims:
            ext = extract_claims(task.content, annotations=self.annotations)  # as the router read it
        wrong, held = ext.wrong, ext.held
        details: dict[str, object] = {
            "claims_checked": len(wrong) + len(held),
            "claims_wrong": len(wrong),
            "names_from_context": sorted(ctx.bindings) if ctx else [],
            "text_truncated": ext.truncated,
        }
        if not wrong and (not held or ext.truncated):
            reason = NOTHING_CHECKED if not held else "the segment is too long to check whole"
            return undecided(self.name, reason, claims_checked=len(held), text_truncated=ext.truncated)
        claims = (wrong + held)[:MAX_EVIDENCE_CLAIMS]
        verdict = Verdict.FAIL if wrong else Verdict.PASS
        if wrong:
            details["first_error"] = {
                "claim": wrong[0].text,
                "found": wrong[0].found,
                "correct": wrong[0].correct,
                "kind": wrong[0].tolerance,
            }
        evidence = Evidence.model_validate(
            {"auditor": self.name, "checkable": True, "claims": claims, "details": details}
        )
        return AuditResult(verdict=verdict, decided=True, evidence=evidence)
