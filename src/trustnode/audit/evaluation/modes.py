"""How each auditor reads one labelled trace and predicts its earliest wrong step.

- per step (`computer`, `llm`): each original step is audited on its own, with the
  problem and the previous steps as context; the first step with a decided FAIL is the
  prediction.
- `structural`: the steps imported as an HDAG, judged by structure alone.
- `pipeline`: the offline path: decompose (no LLM), route each segment to the auditor of
  its type (computer for T_Auto), add structural FAILs, map the earliest FAIL to a step.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from typing import Any

from trustnode.audit.base import Auditor
from trustnode.audit.context import build_tasks
from trustnode.audit.evaluation.datasets import EvalItem
from trustnode.audit.evaluation.metrics import TraceRow
from trustnode.audit.mapping import map_to_steps
from trustnode.audit.structural import StructuralAuditor
from trustnode.llm.errors import LLMError
from trustnode.models.audit import AuditResult, AuditTask, ContextSegment, SegmentContext
from trustnode.models.enums import AuditorType, Level, Relationship
from trustnode.models.hdag import HDAG
from trustnode.models.trace import TraceInput


class EvalError(RuntimeError):
    """The run cannot be done as asked (missing backend, bad option)."""


def first_claim(result: AuditResult) -> str:
    for c in result.evidence.claims:
        if c.status.value == "wrong":
            return f"{c.text} (correct: {c.correct})" if c.correct else c.text
    defects = result.evidence.details.get("defects")
    if isinstance(defects, list) and defects:
        return "; ".join(str(d) for d in defects)
    return ""


def claims_of(result: AuditResult) -> int:
    n = result.evidence.details.get("claims_checked")
    return n if isinstance(n, int) else len(result.evidence.claims)


def step_tasks(item: EvalItem, tier: AuditorType = AuditorType.T_AUTO) -> list[AuditTask]:
    """One task per original step; its parents are all previous steps (reading order)."""
    tasks: list[AuditTask] = []
    for i, step in enumerate(item.steps):
        parents = [
            ContextSegment(
                node_id=f"ST{j + 1}",
                level=Level.STEP,
                content=prev,
                relation=Relationship.DEPENDS_ON,
                step_index=j,
            )
            for j, prev in enumerate(item.steps[:i])
        ]
        tasks.append(
            AuditTask(
                segment_index=i,
                node_id=f"ST{i + 1}",
                level=Level.STEP,
                auditor_type=tier,
                content=step,
                context=SegmentContext(problem=item.problem, parents=parents),
                step_index=i,
            )
        )
    return tasks


def run_per_step(item: EvalItem, auditor: Auditor, tier: AuditorType = AuditorType.T_AUTO) -> TraceRow:
    """Audit steps in order; stop at the first decided FAIL."""
    decided = claims = 0
    for task in step_tasks(item, tier):
        res = auditor.audit(task)
        claims += claims_of(res)
        if res.decided:
            decided += 1
        if res.failed:
            return TraceRow(
                id=item.id,
                label=item.label,
                predicted=task.segment_index,
                decided=True,
                segments=len(item.steps),
                decided_segments=decided,
                claims_checked=claims,
                reason=first_claim(res),
                suspect=item.suspect is not None,
            )
    return TraceRow(
        id=item.id,
        label=item.label,
        predicted=-1,
        decided=decided > 0,
        segments=len(item.steps),
        decided_segments=decided,
        claims_checked=claims,
        suspect=item.suspect is not None,
    )


def _trace(item: EvalItem) -> TraceInput:
    return TraceInput(problem=item.problem, steps=item.steps)


def _hdag_function(module: str, attr: str) -> Callable[..., Any]:
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise EvalError(f"{module}.{attr} is not available in this install ({exc})") from exc
    fn = getattr(mod, attr, None)
    if fn is None:
        raise EvalError(f"{module}.{attr} is not available in this install")
    return fn  # type: ignore[no-any-return]


def import_steps(item: EvalItem) -> HDAG:
    """The steps as an HDAG through the HDAG package's importer (one node per step)."""
    from_steps = _hdag_function("trustnode.hdag.importers", "from_steps")
    return from_steps(_trace(item))  # type: ignore[no-any-return]


def decompose_offline(item: EvalItem) -> HDAG:
    """The deterministic (no LLM) decomposition of the trace, validated."""
    decompose = _hdag_function("trustnode.hdag", "decompose")
    hdag, _report = decompose(_trace(item), mode="offline")
    return hdag  # type: ignore[no-any-return]


def run_hdag(item: EvalItem, hdag: HDAG, computer: Auditor | None) -> TraceRow:
    """Route every segment, collect results, map the earliest FAIL back to a step.

    Without a computer auditor, structure alone is the auditor; with one, structure only
    adds its FAIL votes (it never clears a computer FAIL).
    """
    structural = StructuralAuditor(hdag)
    results: dict[str, AuditResult] = {}
    reasons: dict[str, str] = {}
    claims = 0
    for task in build_tasks(hdag):
        res: AuditResult | None = None
        if computer is not None and task.auditor_type is AuditorType.T_AUTO:
            res = computer.audit(task)
            claims += claims_of(res)
        if task.level in (Level.STEP, Level.OPERATION):
            s = structural.audit(task)
            if res is None or (s.failed and not res.failed):
                res = s
        if res is not None:
            results[task.node_id] = res
            if res.failed:
                reasons[task.node_id] = f"{task.node_id}: {first_claim(res)}"
    mapping = map_to_steps(hdag, results)
    return TraceRow(
        id=item.id,
        label=item.label,
        predicted=mapping.first_error_step,
        decided=mapping.decided_segments > 0,
        segments=len(hdag.nodes),
        decided_segments=mapping.decided_segments,
        claims_checked=claims,
        reason=reasons.get(mapping.first_error_node or "", ""),
        suspect=item.suspect is not None,
    )


def llm_auditor() -> Auditor:
    """The LLM judge, configured from settings; a clear error when it cannot start."""
    if importlib.util.find_spec("trustnode.audit.llm_judge") is None:
        raise EvalError("the LLM judge (trustnode.audit.llm_judge) is not installed; use another --auditor")
    mod = importlib.import_module("trustnode.audit.llm_judge")
    factory = getattr(mod, "judge_from_settings", None)
    if factory is None:
        raise EvalError("trustnode.audit.llm_judge has no judge_from_settings(); cannot build the judge")
    try:
        return factory()  # type: ignore[no-any-return]
    except LLMError as exc:
        raise EvalError(f"cannot start the LLM judge: {exc}") from exc
