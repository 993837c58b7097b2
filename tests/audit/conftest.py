"""Shared fixtures of the audit tests: hand-built HDAGs (no decomposer involved)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from trustnode.models.enums import AuditorType, Level, Relationship
from trustnode.models.hdag import HDAG, HDAGEdge, HDAGMetadata, HDAGNode
from trustnode.models.trace import TextSpan, TraceInput


def hdag_from_steps(
    problem: str,
    steps: list[str],
    levels: list[Level] | None = None,
    edges: list[tuple[str, str, Relationship]] | None = None,
    auditors: list[AuditorType] | None = None,
) -> HDAG:
    """One node per step (ids by level prefix), spans exact, edges as given."""
    doc = TraceInput(problem=problem, steps=steps).to_document()
    levels = levels or [Level.STEP] * len(steps)
    counters: dict[Level, int] = {}
    nodes: list[HDAGNode] = []
    for i, (step, span, level) in enumerate(zip(steps, doc.steps, levels, strict=True)):
        counters[level] = counters.get(level, 0) + 1
        nodes.append(
            HDAGNode(
                id=f"{level.id_prefix}{counters[level]}",
                content=step,
                span=TextSpan(start=span.start, end=span.end),
                abstraction_level=level,
                primary_auditor=(auditors[i] if auditors else AuditorType.T_AUTO),
                step_index=i,
            )
        )
    hedges = [HDAGEdge.model_validate({"from": a, "to": b, "relationship": r}) for a, b, r in (edges or [])]
    return HDAG(document=doc, nodes=nodes, edges=hedges, metadata=HDAGMetadata(decomposer="import-steps"))


@pytest.fixture
def make_hdag() -> Callable[..., HDAG]:
    return hdag_from_steps
