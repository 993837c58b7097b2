"""Validation and repair of any HDAG, from any source (SPEC 2, step 5).

Checks: spans exact, edge endpoints exist, acyclic, connected (every node reachable
from a GOAL node), completeness (share of the thinking's non-space characters covered
by node spans), auditable (level and auditor on every node, id prefix matching the
level), and, for pre-split traces, step mapping (each node inside exactly one step);
then the segment checks: length, privacy share, and T_Auto seats holding a decided claim.

With `repair=True` it fixes what can be fixed and records every repair: re-anchor a
drifted span, drop a node whose text is nowhere in the trace, drop dangling edges, drop
each cycle's weakest edge, attach unreachable nodes, split nodes crossing step
boundaries, merge nodes with the same span, drop edges that would make a GOAL depend on
something, and cover every uncovered piece of thinking with rule-classified nodes (even
above the completeness threshold: uncovered reasoning would go unaudited).

This module runs the checks in order; the node checks live in `hdag.node_repairs`, the
edge and flow checks in `hdag.flow_repairs`, coverage in `hdag.coverage`.
"""

from __future__ import annotations

from collections import Counter

from trustnode.hdag import rules
from trustnode.hdag.coverage import completeness, fill_gaps
from trustnode.hdag.flow_repairs import break_cycles, check_edges, connect
from trustnode.hdag.graph import verification_flow
from trustnode.hdag.ids import IdAllocator
from trustnode.hdag.node_repairs import check_ids, check_spans, ensure_goal, map_steps, merge_duplicates
from trustnode.hdag.spans import (
    MAX_SEGMENT_SHARE,
    over_share,
    share_limit,
    split_long_nodes,
    split_over_share,
    too_long,
)
from trustnode.hdag.text import MAX_SEGMENT_CHARS
from trustnode.models.hdag import HDAG, CheckResult, HDAGEdge, HDAGNode, HDAGStats, ValidationReport
from trustnode.models.trace import TraceDocument

DEFAULT_MIN_COMPLETENESS = 0.9
CHECKS = (
    "spans_exact",
    "edge_endpoints",
    "acyclic",
    "connected",
    "completeness",
    "auditable",
    "step_mapping",
    "segment_length",
    "segment_share",
    "auto_checkable",
)


class HDAGValidationError(ValueError):
    """An HDAG failed validation where a valid one was required."""

    def __init__(self, message: str, report: ValidationReport) -> None:
        super().__init__(f"{message}: failed {', '.join(report.failed) or 'nothing'}")
        self.report = report


def validate_hdag(
    hdag: HDAG,
    *,
    repair: bool = True,
    min_completeness: float = DEFAULT_MIN_COMPLETENESS,
    max_share: float = MAX_SEGMENT_SHARE,
) -> tuple[HDAG, ValidationReport]:
    """Run every check; with `repair`, fix what can be fixed first. Returns (hdag, report).

    `max_share`: the privacy share (SPEC 3); no segment may hold more of the thinking."""
    doc = hdag.document
    repairs: list[str] = []
    nodes: list[HDAGNode] = [n.model_copy() for n in hdag.nodes]
    edges: list[HDAGEdge] = [e.model_copy() for e in hdag.edges]
    checks: dict[str, CheckResult] = {}
    original_ids = {n.id for n in hdag.nodes}  # never reuse an id, even a dropped one

    nodes, dropped, checks["spans_exact"] = check_spans(doc, nodes, repair=repair, repairs=repairs)
    nodes, edges, checks["step_mapping"] = map_steps(
        doc, nodes, edges, original_ids, dropped, repair=repair, repairs=repairs
    )
    nodes, edges, checks["segment_length"] = _segment_length(doc, nodes, edges, original_ids, repair, repairs)
    if repair:
        nodes, edges = merge_duplicates(nodes, edges, repairs)
    used = IdAllocator(original_ids | {n.id for n in nodes})
    edges, checks["auditable"] = check_ids(nodes, edges, used, repair=repair, repairs=repairs)
    if repair:
        ensure_goal(doc, nodes, used, repairs)
    edges, checks["edge_endpoints"] = check_edges(nodes, edges, dropped, repair=repair, repairs=repairs)

    comp = completeness(doc, [n.span for n in nodes])
    if repair and comp < 1.0:  # every uncovered character is unaudited reasoning: cover it all
        added = fill_gaps(doc, nodes, used)
        if added:
            repairs.append(
                f"covered uncovered thinking with {len(added)} rule-classified node(s): {', '.join(added)}"
            )
            comp = completeness(doc, [n.span for n in nodes])
    nodes, edges, checks["segment_share"] = _segment_share(
        doc, nodes, edges, used, max_share, repair, repairs
    )
    checks["auto_checkable"] = _route_auto(doc, nodes, repair, repairs)

    nodes.sort(key=lambda n: (n.span.start, n.abstraction_level.depth, n.span.end))
    work = HDAG.model_construct(
        document=doc, nodes=nodes, edges=edges, flow=hdag.flow, metadata=hdag.metadata.model_copy()
    )
    work, g, checks["acyclic"] = break_cycles(work, repair=repair, repairs=repairs)
    edges = work.edges
    is_dag = checks["acyclic"].passed
    checks["connected"] = connect(nodes, edges, g, acyclic=is_dag, repair=repair, repairs=repairs)
    checks["completeness"] = CheckResult(
        name="completeness",
        passed=comp >= min_completeness,
        detail=f"{comp:.4f} of the thinking's non-space characters covered (threshold {min_completeness})",
    )

    metadata = hdag.metadata.model_copy(update={"repairs": [*hdag.metadata.repairs, *repairs]})
    out = HDAG.model_construct(document=doc, nodes=nodes, edges=edges, flow=hdag.flow, metadata=metadata)
    if repair:
        out = HDAG.model_construct(
            document=doc,
            nodes=nodes,
            edges=edges,
            flow=verification_flow(out, g, acyclic=is_dag),
            metadata=metadata,
        )
    ordered = [checks[name] for name in CHECKS]
    report = ValidationReport(
        ok=all(c.passed for c in ordered),
        checks=ordered,
        completeness=round(comp, 6),
        min_completeness=min_completeness,
        repairs=repairs,
        stats=_stats(out),
    )
    return out, report


def _segment_length(
    doc: TraceDocument,
    nodes: list[HDAGNode],
    edges: list[HDAGEdge],
    taken: set[str],
    repair: bool,
    repairs: list[str],
) -> tuple[list[HDAGNode], list[HDAGEdge], CheckResult]:
    """Any decomposer: one enormous node is never one seat, so a repair cuts it."""
    long_bad = too_long(nodes)
    if repair and long_bad:
        fresh = IdAllocator(taken | {n.id for n in nodes})
        nodes, edges, notes = split_long_nodes(doc, nodes, edges, fresh.next)
        repairs.extend(notes)
        long_bad = too_long(nodes)
    check = CheckResult(
        name="segment_length",
        passed=not long_bad,
        detail=f"no segment outside the problem statement is longer than {MAX_SEGMENT_CHARS} characters",
        offenders=long_bad,
    )
    return nodes, edges, check


def _segment_share(
    doc: TraceDocument,
    nodes: list[HDAGNode],
    edges: list[HDAGEdge],
    used: IdAllocator,
    max_share: float,
    repair: bool,
    repairs: list[str],
) -> tuple[list[HDAGNode], list[HDAGEdge], CheckResult]:
    """Privacy: no seat alone sees more than `max_share` of the thinking; a repair cuts it."""
    if repair and over_share(doc, nodes, share_limit(doc, nodes, max_share)):
        nodes, edges, notes = split_over_share(doc, nodes, edges, used.next, max_share)
        repairs.extend(notes)
        nodes, edges = merge_duplicates(nodes, edges, repairs)  # a piece may equal a nested node
    limit = share_limit(doc, nodes, max_share)
    check = CheckResult(
        name="segment_share",
        passed=not over_share(doc, nodes, limit),
        detail=f"no segment holds more than {max_share:.0%} of the thinking ({limit} characters)"
        if limit is not None
        else f"the thinking is too short to cut for the {max_share:.0%} share: the node refuses to "
        "audit it (hdag.spans.privacy_problem)",
        offenders=over_share(doc, nodes, limit),
    )
    return nodes, edges, check


def _route_auto(doc: TraceDocument, nodes: list[HDAGNode], repair: bool, repairs: list[str]) -> CheckResult:
    """One notion of checkable: a T_Auto seat always holds a claim the checker decides, so a
    repair routes any other T_Auto node by the rules instead."""
    blind = _auto_without_claim(nodes)
    if repair and blind:
        for n in nodes:
            if n.id in blind:
                route = rules.classify(n.content, high_stakes=doc.high_stakes)
                n.primary_auditor, n.secondary_auditors = route.primary, list(route.secondary)
        repairs.append(f"routed {', '.join(blind)} away from T_Auto: the checker decides no claim in them")
        blind = _auto_without_claim(nodes)
    return CheckResult(
        name="auto_checkable",
        passed=not blind,
        detail="every T_Auto segment holds a claim the computer tier decides",
        offenders=blind,
    )


def _auto_without_claim(nodes: list[HDAGNode]) -> list[str]:
    """T_Auto nodes in which the checker decides nothing (a computer seat there checks nothing)."""
    auto = [n for n in nodes if n.primary_auditor is rules.AuditorType.T_AUTO]
    return [n.id for n in auto if not rules.is_checkable(n.content)]


def _stats(hdag: HDAG) -> HDAGStats:
    return HDAGStats(
        nodes=len(hdag.nodes),
        edges=len(hdag.edges),
        by_level=dict(Counter(n.abstraction_level.value for n in hdag.nodes)),
        by_auditor=dict(Counter(n.primary_auditor.value for n in hdag.nodes)),
    )
