"""Run an auditor over a labelled dataset and report how well it finds the earliest error.

Auditors (see `modes`): `computer`, `structural`, `llm` (the LLM judge on every step,
against whatever endpoint the settings name) and `pipeline` (the offline path).

Honest by construction:
- a malformed record is skipped and listed, never fatal (`skipped`);
- suspect labels come from stated rules (`datasets`, `suspect`), never record numbers;
  they stay in the rows and every figure is given with and without them;
- a trace that cannot be audited (the decomposer refuses it, or its LLM calls fail after
  the client's retries and repairs) is listed in `failed` and the run goes on; the
  figures cover the audited traces and say how many failed;
- with the LLM judge, the client's own accounting is summed over the run: calls, tokens,
  latency, parse failures, repairs (`llm`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from trustnode.audit.base import Auditor
from trustnode.audit.computer import ComputerAuditor
from trustnode.audit.evaluation.datasets import EvalFormat, EvalItem, load
from trustnode.audit.evaluation.findings import FindingPrecision, FindingTally
from trustnode.audit.evaluation.metrics import Metrics, TraceRow, compute
from trustnode.audit.evaluation.modes import (
    EvalError,
    decompose_offline,
    import_steps,
    llm_auditor,
    run_hdag,
    run_per_step,
    step_tasks,
)
from trustnode.audit.evaluation.suspect import flag_refuted_labels
from trustnode.llm.errors import LLMError
from trustnode.llm.usage import LLMUsage
from trustnode.models.enums import AuditorType


class AuditorKind(StrEnum):
    COMPUTER = "computer"
    STRUCTURAL = "structural"
    LLM = "llm"
    PIPELINE = "pipeline"


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
    skipped: list[Excluded] = Field(default_factory=list, description="Malformed records, not read.")
    suspect: list[Excluded] = Field(
        default_factory=list, description="Records whose label a stated rule distrusts (kept in the rows)."
    )
    failed: list[Excluded] = Field(
        default_factory=list, description="Traces that could not be audited (not decomposable, LLM failed)."
    )
    metrics: Metrics = Field(description="Over every audited trace, suspect labels included.")
    metrics_without_suspect: Metrics = Field(description="The same, suspect labels left out.")
    llm: LLMUsage | None = Field(default=None, description="The LLM client's accounting over the run.")
    structure: list[FindingPrecision] = Field(
        default_factory=list, description="Precision of each structural finding (structural runs)."
    )
    rows: list[TraceRow]
    elapsed_s: float


class _Run:
    """What one pass over the items collects besides the rows."""

    def __init__(self) -> None:
        self.failed: list[Excluded] = []
        self.llm: LLMUsage | None = None
        self.tally = FindingTally()


def _usage(auditor: Auditor | None) -> LLMUsage | None:
    client = getattr(auditor, "client", None)
    usage = getattr(client, "usage", None)
    return usage() if callable(usage) else None


def _one(
    item: EvalItem, auditor: AuditorKind, per_step: Auditor | None, computer: Auditor, run: _Run
) -> TraceRow:
    if per_step is not None:
        tier = AuditorType.T_LLM if auditor is AuditorKind.LLM else AuditorType.T_AUTO
        return run_per_step(item, per_step, tier)
    if auditor is AuditorKind.STRUCTURAL:
        hdag = import_steps(item)
        run.tally.add(item, hdag)
        return run_hdag(item, hdag, None)
    return run_hdag(item, decompose_offline(item), computer)


def evaluate_items(
    items: Sequence[EvalItem],
    auditor: AuditorKind,
    annotations: Literal["strip", "check"] = "strip",
    progress: Callable[[int, int], None] | None = None,
    run: _Run | None = None,
) -> list[TraceRow]:
    """Rows for the given items; traces that cannot be audited go to `run.failed`."""
    run = run or _Run()
    rows: list[TraceRow] = []
    computer = ComputerAuditor(annotations=annotations)
    per_step: Auditor | None = None
    if auditor is AuditorKind.COMPUTER:
        per_step = computer
    elif auditor is AuditorKind.LLM:
        per_step = llm_auditor()
    start = _usage(per_step)
    try:
        for k, item in enumerate(items):
            try:
                rows.append(_one(item, auditor, per_step, computer, run))
            except LLMError as exc:  # JudgeError included: this trace has no verdict, the run goes on
                run.failed.append(Excluded(id=item.id, reason=f"LLM calls failed: {exc}"))
            except ValueError as exc:
                if per_step is not None:
                    raise  # a per-step auditor decomposes nothing: this is a bug, not a trace
                run.failed.append(Excluded(id=item.id, reason=f"not decomposable: {exc}"))
            if progress is not None:
                progress(k + 1, len(items))
    finally:
        end = _usage(per_step)
        if start is not None and end is not None:
            run.llm = end.minus(start)
        close = getattr(getattr(per_step, "client", None), "close", None)
        if callable(close):
            close()
    return rows


def run(
    path: Path,
    fmt: EvalFormat,
    auditor: AuditorKind,
    limit: int | None = None,
    annotations: Literal["strip", "check"] = "strip",
    progress: Callable[[int, int], None] | None = None,
) -> EvalReport:
    """Load, flag suspect labels by rule, audit every record, and aggregate both ways."""
    if limit is not None and limit < 1:
        raise EvalError("--limit must be at least 1")
    loaded = load(path, fmt)
    items = loaded.items[:limit] if limit is not None else loaded.items
    items = flag_refuted_labels(items)
    t0 = time.perf_counter()
    state = _Run()
    rows = evaluate_items(items, auditor, annotations, progress, state)
    return EvalReport(
        file=str(path),
        format=fmt,
        auditor=auditor,
        limit=limit,
        annotations=annotations,
        skipped=[Excluded(id=s.where, reason=s.reason) for s in loaded.skipped],
        suspect=[Excluded(id=i.id, reason=i.suspect) for i in items if i.suspect],
        failed=state.failed,
        metrics=compute(rows),
        metrics_without_suspect=compute([r for r in rows if not r.suspect]),
        llm=state.llm,
        structure=state.tally.result() if auditor is AuditorKind.STRUCTURAL else [],
        rows=rows,
        elapsed_s=time.perf_counter() - t0,
    )


__all__ = [
    "AuditorKind",
    "EvalError",
    "EvalReport",
    "Excluded",
    "evaluate_items",
    "run",
    "run_hdag",
    "run_per_step",
    "step_tasks",
]
