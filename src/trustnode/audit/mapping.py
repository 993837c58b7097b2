"""Map segment verdicts back to the original trace.

Metrics such as ProcessBench F1 are stated per original step: the earliest segment that
failed decides the predicted first-error step. Segments are ordered by where they start
in the trace document, so a FAIL in an early step wins over a FAIL found in a later one.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from trustnode.models.audit import AuditResult
from trustnode.models.hdag import HDAG


class SegmentVerdict(BaseModel):
    """One audited segment, located in the original trace."""

    node_id: str
    step_index: int | None
    start: int
    result: AuditResult


class TraceMapping(BaseModel):
    """The trace-level reading of a set of segment results."""

    first_error_step: int = -1  # -1: no decided FAIL
    first_error_node: str | None = None
    decided_segments: int = 0
    failed_segments: list[str] = []


def locate(hdag: HDAG, results: dict[str, AuditResult]) -> list[SegmentVerdict]:
    """Attach each node's result to its step index and start offset, in document order."""
    out: list[SegmentVerdict] = []
    for n in hdag.nodes:
        r = results.get(n.id)
        if r is None:
            continue
        step = n.step_index
        if step is None:
            step = hdag.document.step_index_at(n.span.start)
        out.append(SegmentVerdict(node_id=n.id, step_index=step, start=n.span.start, result=r))
    out.sort(key=lambda v: (v.step_index if v.step_index is not None else 1 << 30, v.start, v.node_id))
    return out


def earliest_failure(verdicts: Sequence[SegmentVerdict]) -> TraceMapping:
    """The first decided FAIL in trace order; segments with no known step cannot be mapped."""
    failed = [v for v in verdicts if v.result.failed]
    mapped = [v for v in failed if v.step_index is not None]
    first = min(mapped, key=lambda v: (v.step_index, v.start), default=None)
    return TraceMapping(
        first_error_step=first.step_index if first is not None and first.step_index is not None else -1,
        first_error_node=first.node_id if first is not None else None,
        decided_segments=sum(1 for v in verdicts if v.result.decided),
        failed_segments=[v.node_id for v in failed],
    )


def map_to_steps(hdag: HDAG, results: dict[str, AuditResult]) -> TraceMapping:
    """Earliest FAIL segment -> step index of the original trace (-1 when none failed)."""
    return earliest_failure(locate(hdag, results))
