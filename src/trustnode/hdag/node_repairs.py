"""Checks and repairs of an HDAG's nodes: exact spans, step mapping, one node per span,
ids matching levels, and a GOAL node (SPEC 2, step 5).

Each function runs one check over plain lists of nodes and edges, returns its
`CheckResult`, and with `repair=True` fixes what it can first, noting every repair in
`repairs`. The nodes are validation's own copies, so they are changed in place.
"""

from __future__ import annotations

from trustnode.hdag import rules
from trustnode.hdag.ids import IdAllocator, id_prefix
from trustnode.hdag.spans import anchor
from trustnode.models.enums import Level
from trustnode.models.hdag import CheckResult, HDAGEdge, HDAGNode
from trustnode.models.trace import TextSpan, TraceDocument


def check_spans(
    doc: TraceDocument, nodes: list[HDAGNode], *, repair: bool, repairs: list[str]
) -> tuple[list[HDAGNode], set[str], CheckResult]:
    """Every node's content must equal the text at its span; a repair re-anchors a drifted
    span or drops a node whose text is nowhere in the trace. Returns (nodes, dropped ids, check)."""
    text = doc.text
    bad_spans: list[str] = []
    kept: list[HDAGNode] = []
    dropped: set[str] = set()
    for n in nodes:
        sp = n.span
        if sp.end <= len(text) and sp.end > sp.start and text[sp.start : sp.end] == n.content:
            kept.append(n)
            continue
        if not repair:
            bad_spans.append(n.id)
            kept.append(n)
            continue
        found = anchor(text, n.content, sp.start)
        if found is None and n.abstraction_level is Level.GOAL:
            found = (doc.problem.start, doc.problem.end)
        if found is None:
            dropped.add(n.id)
            repairs.append(f"dropped {n.id}: its content is not in the trace text")
            continue
        s, e = found
        repairs.append(f"re-anchored {n.id}: span [{sp.start},{sp.end}) -> [{s},{e})")
        n.span = TextSpan(start=s, end=e)
        n.content = text[s:e]
        kept.append(n)
    check = CheckResult(
        name="spans_exact",
        passed=not bad_spans,
        detail="every node's content equals the text at its span"
        if not bad_spans
        else "content differs from text",
        offenders=bad_spans,
    )
    return kept, dropped, check


def _steps_overlapping(doc: TraceDocument, span: TextSpan) -> list[int]:
    return [i for i, s in enumerate(doc.steps) if span.start < s.end and s.start < span.end]


def _in_thinking(doc: TraceDocument, span: TextSpan) -> bool:
    return span.start < doc.thinking.end and doc.thinking.start < span.end


def _split_at_steps(doc: TraceDocument, n: HDAGNode, over: list[int], fresh: IdAllocator) -> list[HDAGNode]:
    """The parts of `n` inside each overlapped step, stripped; the first keeps `n`'s id."""
    text = doc.text
    parts: list[HDAGNode] = []
    for k, si in enumerate(over):
        st = doc.steps[si]
        s, e = max(st.start, n.span.start), min(st.end, n.span.end)
        seg = text[s:e]
        lead, trail = len(seg) - len(seg.lstrip()), len(seg.rstrip())
        if trail <= lead:
            continue
        s, e = s + lead, s + trail
        nid = n.id if k == 0 else fresh.next(n.abstraction_level)
        parts.append(
            n.model_copy(
                update={"id": nid, "span": TextSpan(start=s, end=e), "content": text[s:e], "step_index": si}
            )
        )
    if parts and parts[0].id != n.id:
        parts[0] = parts[0].model_copy(update={"id": n.id})
    return parts


def map_steps(
    doc: TraceDocument,
    nodes: list[HDAGNode],
    edges: list[HDAGEdge],
    taken: set[str],
    dropped: set[str],
    *,
    repair: bool,
    repairs: list[str],
) -> tuple[list[HDAGNode], list[HDAGEdge], CheckResult]:
    """On a pre-split trace each node must lie inside exactly one step; a repair sets
    `step_index` from the span and splits a node crossing step boundaries (the parts
    inherit its edges). `taken`: ids never to hand out again; `dropped` gains removed nodes."""
    step_bad: list[str] = []
    if doc.steps:
        mapped: list[HDAGNode] = []
        fresh = IdAllocator(taken | {n.id for n in nodes})
        renamed_parts: dict[str, list[str]] = {}
        assigned = 0
        for n in nodes:
            if not _in_thinking(doc, n.span):
                if n.step_index is not None:
                    if repair:
                        n.step_index = None
                        assigned += 1
                    else:
                        step_bad.append(n.id)
                mapped.append(n)
                continue
            over = _steps_overlapping(doc, n.span)
            if len(over) == 1:
                if n.step_index != over[0]:
                    if repair:
                        n.step_index = over[0]
                        assigned += 1
                    else:
                        step_bad.append(n.id)
                mapped.append(n)
                continue
            if not repair or not over:
                step_bad.append(n.id)
                mapped.append(n)
                continue
            parts = _split_at_steps(doc, n, over, fresh)
            if not parts:
                dropped.add(n.id)
                repairs.append(f"dropped {n.id}: it covers no step text")
                continue
            renamed_parts[n.id] = [p.id for p in parts]
            repairs.append(f"split {n.id} at step boundaries into {', '.join(p.id for p in parts)}")
            mapped.extend(parts)
        nodes = mapped
        if assigned:
            repairs.append(f"set step_index on {assigned} node(s) from their spans")
        for nid, parts_ids in renamed_parts.items():
            extra: list[HDAGEdge] = []
            for ed in edges:
                for pid in parts_ids[1:]:
                    if ed.source == nid:
                        extra.append(ed.model_copy(update={"source": pid}))
                    if ed.target == nid:
                        extra.append(ed.model_copy(update={"target": pid}))
            edges.extend(extra)
    check = CheckResult(
        name="step_mapping",
        passed=not step_bad,
        detail="each node lies inside exactly one pre-split step"
        if doc.steps
        else "trace has no pre-split steps",
        offenders=step_bad,
    )
    return nodes, edges, check


def merge_duplicates(
    nodes: list[HDAGNode], edges: list[HDAGEdge], repairs: list[str]
) -> tuple[list[HDAGNode], list[HDAGEdge]]:
    """Keep the first node of each span; edges of the others move to it (one repair note)."""
    first_at: dict[tuple[int, int], str] = {}
    merged: dict[str, str] = {}
    unique: list[HDAGNode] = []
    for n in nodes:
        where = (n.span.start, n.span.end)
        if where in first_at:
            merged[n.id] = first_at[where]
            continue
        first_at[where] = n.id
        unique.append(n)
    if not merged:
        return nodes, edges
    moved = [
        ed.model_copy(
            update={"source": merged.get(ed.source, ed.source), "target": merged.get(ed.target, ed.target)}
        )
        for ed in edges
    ]
    edges = [ed for ed in moved if ed.source != ed.target]  # two merged ends: no self-loop
    repairs.append(
        "merged node(s) with the same span: " + ", ".join(f"{a} into {b}" for a, b in merged.items())
    )
    return unique, edges


def check_ids(
    nodes: list[HDAGNode], edges: list[HDAGEdge], used: IdAllocator, *, repair: bool, repairs: list[str]
) -> tuple[list[HDAGEdge], CheckResult]:
    """Auditable: every id's prefix matches its node's level (a repair renames the node and
    its edges) and the primary auditor is not repeated among the secondary ones."""
    audit_bad: list[str] = []
    renames: dict[str, str] = {}
    for n in nodes:
        if id_prefix(n.id) == n.abstraction_level.id_prefix:
            if n.primary_auditor in n.secondary_auditors:
                n.secondary_auditors = [a for a in n.secondary_auditors if a is not n.primary_auditor]
            continue
        if not repair:
            audit_bad.append(n.id)
            continue
        new = used.next(n.abstraction_level)
        renames[n.id] = new
        repairs.append(f"renamed {n.id} to {new} to match its level {n.abstraction_level.value}")
        n.id = new
    if renames:
        edges = [
            e.model_copy(
                update={"source": renames.get(e.source, e.source), "target": renames.get(e.target, e.target)}
            )
            for e in edges
        ]
    check = CheckResult(
        name="auditable",
        passed=not audit_bad,
        detail="every node has a level, an auditor and an id matching its level",
        offenders=audit_bad,
    )
    return edges, check


def ensure_goal(doc: TraceDocument, nodes: list[HDAGNode], used: IdAllocator, repairs: list[str]) -> None:
    """Insert a GOAL node for the problem statement when there is none (every HDAG has one)."""
    if any(n.abstraction_level is Level.GOAL for n in nodes):
        return
    gid = used.next(Level.GOAL)
    nodes.insert(
        0,
        HDAGNode(
            id=gid,
            content=doc.problem_text,
            span=doc.problem,
            abstraction_level=Level.GOAL,
            type="objective_statement",
            summary=rules.summarize(doc.problem_text, "objective_statement"),
            primary_auditor=rules.classify(doc.problem_text, high_stakes=doc.high_stakes).primary
            if doc.high_stakes
            else rules.AuditorType.T_LLM,
            complexity=rules.Complexity.HIGH,
        ),
    )
    repairs.append(f"added {gid} for the problem statement (no GOAL node)")
