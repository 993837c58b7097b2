"""Run an auditor over a labelled dataset and predict each trace's earliest wrong step.

Auditors:
- `computer`: each original step is audited on its own, with the problem and the
  previous steps as context; the first step with a decided FAIL is the prediction.
- `structural`: the steps are imported as an HDAG and judged by structure alone
  (strict: unclosed or unsupported steps fail too), earliest failing step.
- `pipeline`: the full offline path: decompose the trace (no LLM), route each segment
  to the auditor of its type (computer for T_Auto), add definite structural defects,
  and map the earliest failing segment back to its step.
- `llm`: the LLM judge on every step, when that backend is installed.
"""

from __future__ import annotations

import importlib
import importlib.util
import time
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from trustnode.audit.base import Auditor
from trustnode.audit.computer import ComputerAuditor
from trustnode.audit.context import build_tasks
from trustnode.audit.evaluation.datasets import EvalFormat, EvalItem, load
from trustnode.audit.evaluation.metrics import Metrics, TraceRow, compute
from trustnode.audit.mapping import map_to_steps
from trustnode.audit.structural import StructuralAuditor
from trustnode.llm.errors import LLMError
from trustnode.models.audit import AuditResult, AuditTask, ContextSegment, SegmentContext
from trustnode.models.enums import AuditorType, Level, Relationship
from trustnode.models.hdag import HDAG
from trustnode.models.trace import TraceInput


class AuditorKind(StrEnum):
    COMPUTER = "computer"
    STRUCTURAL = "structural"
    LLM = "llm"
    PIPELINE = "pipeline"


class EvalError(RuntimeError):
    """The run cannot be done as asked (missing backend, bad option)."""


class Excluded(BaseModel):
    id: str
    reason: str


class EvalReport(BaseModel):
    """One run: what was run, the figures, and every trace's row."""

    file: str
    format: EvalFormat
    auditor: AuditorKind
    limit: int | None = None
    annotations: str = "strip"
    excluded: list[Excluded] = Field(default_factory=list)
    failed: list[Excluded] = Field(
        default_factory=list, description="Traces that could not be audited (e.g. not decomposable)."
    )
    metrics: Metrics
    rows: list[TraceRow]
    elapsed_s: float


def _first_claim(result: AuditResult) -> str:
    for c in result.evidence.claims:
        if c.status.value == "wrong":
            return f"{c.text} (correct: {c.correct})"
    defects = result.evidence.details.get("defects")
    if isinstance(defects, list) and defects:
        return "; ".join(str(d) for d in defects)
    return ""


def _claims(result: AuditResult) -> int:
    n = result.evidence.details.get("claims_checked")
    return n if isinstance(n, int) else len(result.evidence.claims)


def step_tasks(item: EvalItem) -> list[AuditTask]:
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
                auditor_type=AuditorType.T_AUTO,
                content=step,
                context=SegmentContext(problem=item.problem, parents=parents),
                step_index=i,
            )
        )
    return tasks


def run_per_step(item: EvalItem, auditor: Auditor) -> TraceRow:
    """Audit steps in order; stop at the first decided FAIL."""
    decided = claims = 0
    for task in step_tasks(item):
        res = auditor.audit(task)
        claims += _claims(res)
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
                reason=_first_claim(res),
            )
    return TraceRow(
        id=item.id,
        label=item.label,
        predicted=-1,
        decided=decided > 0,
        segments=len(item.steps),
        decided_segments=decided,
        claims_checked=claims,
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


def run_hdag(item: EvalItem, hdag: HDAG, computer: Auditor | None, strict_structure: bool) -> TraceRow:
    """Route every segment, collect results, map the earliest FAIL back to a step."""
    structural = StructuralAuditor(hdag, strict=strict_structure)
    results: dict[str, AuditResult] = {}
    reasons: dict[str, str] = {}
    claims = 0
    for task in build_tasks(hdag):
        res: AuditResult | None = None
        if computer is not None and task.auditor_type is AuditorType.T_AUTO:
            res = computer.audit(task)
            claims += _claims(res)
        if task.level in (Level.STEP, Level.OPERATION):
            s = structural.audit(task)
            if computer is None:
                res = s  # structure alone is the auditor
            elif s.failed and (res is None or not res.failed):
                res = s  # in the pipeline it only adds definite FAILs, and never clears one
        if res is not None:
            results[task.node_id] = res
            if res.failed:
                reasons[task.node_id] = f"{task.node_id}: {_first_claim(res)}"
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
    )


def llm_auditor() -> Auditor:
    """The LLM judge, configured from settings; a clear error while it is not installed."""
    if importlib.util.find_spec("trustnode.audit.llm_judge") is None:
        raise EvalError(
            "the LLM judge (trustnode.audit.llm_judge) is not installed yet; use another --auditor"
        )
    mod = importlib.import_module("trustnode.audit.llm_judge")
    factory = getattr(mod, "judge_from_settings", None)
    if factory is None:
        raise EvalError("trustnode.audit.llm_judge has no judge_from_settings(); cannot build the judge")
    try:
        return factory()  # type: ignore[no-any-return]
    except LLMError as exc:
        raise EvalError(f"cannot start the LLM judge: {exc}") from exc


def evaluate_items(
    items: Sequence[EvalItem],
    auditor: AuditorKind,
    annotations: Literal["strip", "check"] = "strip",
    progress: Callable[[int, int], None] | None = None,
    failed: list[Excluded] | None = None,
) -> list[TraceRow]:
    """Rows for the given items (no exclusion here).

    A trace the HDAG package refuses (validation or format error) gets no row: it is
    appended to `failed` with the reason, so the figures are over audited traces only.
    """
    rows: list[TraceRow] = []
    computer = ComputerAuditor(annotations=annotations)
    per_step: Auditor | None = None
    if auditor is AuditorKind.COMPUTER:
        per_step = computer
    elif auditor is AuditorKind.LLM:
        per_step = llm_auditor()
    try:
        for k, item in enumerate(items):
            try:
                if per_step is not None:
                    rows.append(run_per_step(item, per_step))
                elif auditor is AuditorKind.STRUCTURAL:
                    rows.append(run_hdag(item, import_steps(item), None, strict_structure=True))
                else:
                    rows.append(run_hdag(item, decompose_offline(item), computer, strict_structure=False))
            except LLMError as exc:
                # a run with holes would report wrong figures: stop and say where
                raise EvalError(f"trace {item.id}: the LLM judge failed: {exc}") from exc
            except ValueError as exc:
                if per_step is not None or failed is None:
                    raise
                failed.append(Excluded(id=item.id, reason=f"not decomposable: {exc}"))
            if progress is not None:
                progress(k + 1, len(items))
    finally:
        client = getattr(per_step, "client", None)
        close = getattr(client, "close", None)
        if callable(close):
            close()
    return rows


def run(
    path: Path,
    fmt: EvalFormat,
    auditor: AuditorKind,
    limit: int | None = None,
    annotations: Literal["strip", "check"] = "strip",
    keep_suspect: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> EvalReport:
    """Load, exclude suspect labels (unless kept), audit, and aggregate."""
    if limit is not None and limit < 1:
        raise EvalError("--limit must be at least 1")
    items = load(path, fmt)
    if limit is not None:
        items = items[:limit]
    excluded = [] if keep_suspect else [Excluded(id=i.id, reason=i.suspect) for i in items if i.suspect]
    kept = items if keep_suspect else [i for i in items if not i.suspect]
    t0 = time.perf_counter()
    failed: list[Excluded] = []
    rows = evaluate_items(kept, auditor, annotations, progress, failed)
    return EvalReport(
        file=str(path),
        format=fmt,
        auditor=auditor,
        limit=limit,
        annotations=annotations,
        excluded=excluded,
        failed=failed,
        metrics=compute(rows),
        rows=rows,
        elapsed_s=time.perf_counter() - t0,
    )
