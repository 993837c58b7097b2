"""Validation and repair of any HDAG, from any source (SPEC 2, step 5).

Checks: spans exact, edge endpoints exist, acyclic, connected (every node reachable
from a GOAL node), completeness (share of the thinking's non-space characters covered
by node spans), auditable (level and auditor on every node, id prefix matching the
level), and, for pre-split traces, step mapping (each node inside exactly one step).

With `repair=True` it fixes what can be fixed and records every repair: re-anchor a
drifted span, drop a node whose text is nowhere in the trace, drop dangling edges, drop
each cycle's weakest edge, attach unreachable nodes, split nodes crossing step
boundaries, merge nodes with the same span, drop edges that would make a GOAL depend on
something, and cover every uncovered piece of thinking with rule-classified nodes (even
above the completeness threshold: uncovered reasoning would go unaudited). A cycle loses its weakest edge: one running against
the text order (prerequisite after dependent) first, then the lowest strength and
confidence.
"""

from __future__ import annotations

import re
from collections import Counter

import networkx as nx

from trustnode.hdag import rules
from trustnode.hdag.graph import flow_graph, verification_flow
from trustnode.hdag.spans import (
    MAX_SEGMENT_SHARE,
    anchor,
    over_share,
    share_limit,
    split_long_nodes,
    split_over_share,
    too_long,
)
from trustnode.hdag.text import MAX_SEGMENT_CHARS, non_space_count, split_units
from trustnode.models.enums import Level, Relationship, Strength
from trustnode.models.hdag import HDAG, CheckResult, HDAGEdge, HDAGNode, HDAGStats, ValidationReport
from trustnode.models.trace import TextSpan, TraceDocument

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
_ID = re.compile(r"^(G|S|T|ST|O)(\d+)$")
_PLANNING = (Level.GOAL, Level.STRATEGY, Level.TACTIC)


class HDAGValidationError(ValueError):
    """An HDAG failed validation where a valid one was required."""

    def __init__(self, message: str, report: ValidationReport) -> None:
        super().__init__(f"{message}: failed {', '.join(report.failed) or 'nothing'}")
        self.report = report


# ----------------------------------------------------------------- helpers
def completeness(doc: TraceDocument, spans: list[TextSpan]) -> float:
    """Share of the thinking's non-space characters covered by the given spans."""
    t0, t1 = doc.thinking.start, doc.thinking.end
    text = doc.text
    total = non_space_count(text[t0:t1])
    if total == 0:
        return 1.0
    covered = 0
    for s, e in _merge(
        [(max(t0, sp.start), min(t1, sp.end)) for sp in spans if sp.end > t0 and sp.start < t1]
    ):
        covered += non_space_count(text[s:e])
    return covered / total


def _merge(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e in sorted(intervals):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


class IdAllocator:
    """Hands out fresh node ids per level prefix (G1, S1, T1, ST1, O1 ...)."""

    def __init__(self, ids: set[str] | None = None) -> None:
        self.used: set[str] = set()
        self._next: dict[str, int] = {}
        for i in ids or ():
            self.add(i)

    def add(self, nid: str) -> None:
        self.used.add(nid)
        m = _ID.match(nid)
        if m:
            self._next[m.group(1)] = max(self._next.get(m.group(1), 1), int(m.group(2)) + 1)

    def __contains__(self, nid: object) -> bool:
        return nid in self.used

    def peek(self, level: Level) -> str:
        """The id `next(level)` would hand out, without taking it."""
        return f"{level.id_prefix}{self._next.get(level.id_prefix, 1)}"

    def next(self, level: Level) -> str:
        prefix = level.id_prefix
        n = self._next.get(prefix, 1)
        nid = f"{prefix}{n}"
        self._next[prefix] = n + 1
        self.used.add(nid)
        return nid


def _next_id(used: IdAllocator, level: Level) -> str:
    return used.next(level)


def _stats(hdag: HDAG) -> HDAGStats:
    return HDAGStats(
        nodes=len(hdag.nodes),
        edges=len(hdag.edges),
        by_level=dict(Counter(n.abstraction_level.value for n in hdag.nodes)),
        by_auditor=dict(Counter(n.primary_auditor.value for n in hdag.nodes)),
    )


def _steps_overlapping(doc: TraceDocument, span: TextSpan) -> list[int]:
    return [i for i, s in enumerate(doc.steps) if span.start < s.end and s.start < span.end]


def _in_thinking(doc: TraceDocument, span: TextSpan) -> bool:
    return span.start < doc.thinking.end and doc.thinking.start < span.end


def new_node(
    doc: TraceDocument, used: IdAllocator, start: int, end: int, *, step_index: int | None = None
) -> HDAGNode:
    """A rule-classified node for doc.text[start:end] (used by gap filling and the offline decomposer)."""
    content = doc.text[start:end]
    cls = rules.classify(content, high_stakes=doc.high_stakes)
    level = cls.level
    return HDAGNode(
        id=_next_id(used, level),
        content=content,
        span=TextSpan(start=start, end=end),
        abstraction_level=level,
        type=cls.type,
        summary=rules.summarize(content, cls.type),
        primary_auditor=cls.primary,
        secondary_auditors=list(cls.secondary),
        complexity=cls.complexity,
        step_index=step_index,
    )


# ----------------------------------------------------------------- main entry
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
    text = doc.text
    repairs: list[str] = []
    nodes: list[HDAGNode] = [n.model_copy() for n in hdag.nodes]
    edges: list[HDAGEdge] = [e.model_copy() for e in hdag.edges]
    checks: dict[str, CheckResult] = {}
    original_ids = {n.id for n in hdag.nodes}  # never reuse an id, even a dropped one

    # --- spans exact ---------------------------------------------------------
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
    nodes = kept
    checks["spans_exact"] = CheckResult(
        name="spans_exact",
        passed=not bad_spans,
        detail="every node's content equals the text at its span"
        if not bad_spans
        else "content differs from text",
        offenders=bad_spans,
    )

    # --- step mapping (pre-split traces) -------------------------------------
    step_bad: list[str] = []
    if doc.steps:
        mapped: list[HDAGNode] = []
        used_ids = IdAllocator(original_ids | {n.id for n in nodes})
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
            parts: list[HDAGNode] = []
            for k, si in enumerate(over):
                st = doc.steps[si]
                s, e = max(st.start, n.span.start), min(st.end, n.span.end)
                seg = text[s:e]
                lead, trail = len(seg) - len(seg.lstrip()), len(seg.rstrip())
                if trail <= lead:
                    continue
                s, e = s + lead, s + trail
                nid = n.id if k == 0 else _next_id(used_ids, n.abstraction_level)
                parts.append(
                    n.model_copy(
                        update={
                            "id": nid,
                            "span": TextSpan(start=s, end=e),
                            "content": text[s:e],
                            "step_index": si,
                        }
                    )
                )
            if not parts:
                dropped.add(n.id)
                repairs.append(f"dropped {n.id}: it covers no step text")
                continue
            if parts[0].id != n.id:
                parts[0] = parts[0].model_copy(update={"id": n.id})
            renamed_parts[n.id] = [p.id for p in parts]
            repairs.append(f"split {n.id} at step boundaries into {', '.join(p.id for p in parts)}")
            mapped.extend(parts)
        nodes = mapped
        if assigned:
            repairs.append(f"set step_index on {assigned} node(s) from their spans")
        # parts inherit the original node's edges
        for nid, parts_ids in renamed_parts.items():
            extra: list[HDAGEdge] = []
            for ed in edges:
                for pid in parts_ids[1:]:
                    if ed.source == nid:
                        extra.append(ed.model_copy(update={"source": pid}))
                    if ed.target == nid:
                        extra.append(ed.model_copy(update={"target": pid}))
            edges.extend(extra)
    checks["step_mapping"] = CheckResult(
        name="step_mapping",
        passed=not step_bad,
        detail="each node lies inside exactly one pre-split step"
        if doc.steps
        else "trace has no pre-split steps",
        offenders=step_bad,
    )

    # --- segment length (any decomposer: one enormous node is never one seat) -----
    long_bad = too_long(nodes)
    if repair and long_bad:
        fresh = IdAllocator(original_ids | {n.id for n in nodes})
        nodes, edges, notes = split_long_nodes(doc, nodes, edges, fresh.next)
        repairs.extend(notes)
        long_bad = too_long(nodes)
    checks["segment_length"] = CheckResult(
        name="segment_length",
        passed=not long_bad,
        detail=f"no segment outside the problem statement is longer than {MAX_SEGMENT_CHARS} characters",
        offenders=long_bad,
    )

    # --- duplicate spans ---------------------------------------------------------
    if repair:
        nodes, edges = _merge_duplicates(nodes, edges, repairs)

    # --- auditable: id prefix matches level, primary auditor not repeated -----
    audit_bad: list[str] = []
    used = IdAllocator(original_ids | {n.id for n in nodes})
    renames: dict[str, str] = {}
    for n in nodes:
        m = _ID.match(n.id)
        if m and m.group(1) == n.abstraction_level.id_prefix:
            if n.primary_auditor in n.secondary_auditors:
                n.secondary_auditors = [a for a in n.secondary_auditors if a is not n.primary_auditor]
            continue
        if not repair:
            audit_bad.append(n.id)
            continue
        new = _next_id(used, n.abstraction_level)
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
    checks["auditable"] = CheckResult(
        name="auditable",
        passed=not audit_bad,
        detail="every node has a level, an auditor and an id matching its level",
        offenders=audit_bad,
    )

    # --- GOAL present ----------------------------------------------------------
    if repair and not any(n.abstraction_level is Level.GOAL for n in nodes):
        gid = _next_id(used, Level.GOAL)
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

    # --- edge endpoints --------------------------------------------------------
    ids = {n.id for n in nodes}
    edge_bad: list[str] = []
    clean: list[HDAGEdge] = []
    goal_ids = {n.id for n in nodes if n.abstraction_level is Level.GOAL}
    seen: dict[tuple[str, str, Relationship], int] = {}
    for ed in edges:
        label = f"{ed.source}->{ed.target}"
        if ed.source not in ids or ed.target not in ids or ed.source == ed.target:
            if ed.source in dropped or ed.target in dropped:
                continue  # consequence of a dropped node, already recorded
            if repair:
                why = "self-loop" if ed.source == ed.target else "unknown endpoint"
                repairs.append(f"dropped edge {label} ({why})")
            else:
                edge_bad.append(label)
                clean.append(ed)
            continue
        if repair and ed.dependent in goal_ids and ed.prerequisite not in goal_ids:
            repairs.append(f"dropped edge {label} ({ed.relationship.value}): a GOAL has no prerequisite")
            continue
        key = (ed.source, ed.target, ed.relationship)
        if key in seen and repair:
            j = seen[key]
            if ed.confidence > clean[j].confidence:
                clean[j] = ed
            continue
        seen[key] = len(clean)
        clean.append(ed)
    edges = clean
    checks["edge_endpoints"] = CheckResult(
        name="edge_endpoints",
        passed=not edge_bad,
        detail="every edge joins two existing, distinct nodes",
        offenders=edge_bad,
    )

    # --- completeness (gap filling) -------------------------------------------
    comp = completeness(doc, [n.span for n in nodes])
    if repair and comp < 1.0:  # every uncovered character is unaudited reasoning: cover it all
        added = _fill_gaps(doc, nodes, used)
        if added:
            repairs.append(
                f"covered uncovered thinking with {len(added)} rule-classified node(s): {', '.join(added)}"
            )
            comp = completeness(doc, [n.span for n in nodes])

    # --- segment share (privacy: no seat alone is more than the share of the thinking) ---
    if repair and over_share(doc, nodes, share_limit(doc, nodes, max_share)):
        nodes, edges, notes = split_over_share(doc, nodes, edges, used.next, max_share)
        repairs.extend(notes)
        nodes, edges = _merge_duplicates(nodes, edges, repairs)  # a piece may equal a nested node
    limit = share_limit(doc, nodes, max_share)
    checks["segment_share"] = CheckResult(
        name="segment_share",
        passed=not over_share(doc, nodes, limit),
        detail=f"no segment holds more than {max_share:.0%} of the thinking ({limit} characters)"
        if limit is not None
        else f"the thinking is too short to cut for the {max_share:.0%} share: the node refuses to "
        "audit it (hdag.spans.privacy_problem)",
        offenders=over_share(doc, nodes, limit),
    )

    # --- routing (one notion of checkable: a T_Auto seat always holds a decided claim) -----
    blind = _auto_without_claim(nodes)
    if repair and blind:
        for n in nodes:
            if n.id in blind:
                route = rules.classify(n.content, high_stakes=doc.high_stakes)
                n.primary_auditor, n.secondary_auditors = route.primary, list(route.secondary)
        repairs.append(f"routed {', '.join(blind)} away from T_Auto: the checker decides no claim in them")
        blind = _auto_without_claim(nodes)
    checks["auto_checkable"] = CheckResult(
        name="auto_checkable",
        passed=not blind,
        detail="every T_Auto segment holds a claim the computer tier decides",
        offenders=blind,
    )

    nodes.sort(key=lambda n: (n.span.start, n.abstraction_level.depth, n.span.end))
    work = HDAG.model_construct(
        document=doc, nodes=nodes, edges=edges, flow=hdag.flow, metadata=hdag.metadata.model_copy()
    )

    # --- acyclic ---------------------------------------------------------------
    g = flow_graph(work)
    order = {n.id: i for i, n in enumerate(nodes)}
    cyc_bad: list[str] = []
    if repair:
        removed: set[int] = set()
        for _ in range(len(edges) + 1):
            if nx.is_directed_acyclic_graph(g):
                break
            try:
                cycle = nx.find_cycle(g)
            except nx.NetworkXNoCycle:
                break
            pairs = [(u, v) for u, v, *_ in cycle]

            def weakness(pair: tuple[str, str]) -> tuple[bool, int, float]:
                group = [edges[i] for i in g.edges[pair]["indices"]]
                return (
                    order[pair[0]] < order[pair[1]],  # an edge against the text order goes first
                    max(e.strength.rank for e in group),
                    max(e.confidence for e in group),
                )

            u, v = min(pairs, key=weakness)
            group_idx = g.edges[u, v]["indices"]
            g.remove_edge(u, v)
            removed.update(group_idx)
            cyc_label = " -> ".join(p[0] for p in pairs)
            for i in group_idx:
                w = edges[i]
                repairs.append(
                    f"broke cycle {cyc_label} by dropping its weakest edge {w.source} {w.relationship.value} {w.target}"
                )
        if removed:
            edges = [e for i, e in enumerate(edges) if i not in removed]
            work = HDAG.model_construct(
                document=doc, nodes=nodes, edges=edges, flow=hdag.flow, metadata=hdag.metadata.model_copy()
            )
            g = flow_graph(work)
    is_dag = nx.is_directed_acyclic_graph(g)
    if not is_dag:
        cyc_bad = sorted({u for c in nx.simple_cycles(g) for u in c}, key=order.__getitem__)[:50]
    checks["acyclic"] = CheckResult(
        name="acyclic",
        passed=not cyc_bad,
        detail="no cycle in prerequisite -> dependent flow",
        offenders=cyc_bad,
    )

    # --- connected -------------------------------------------------------------
    goals = [n.id for n in nodes if n.abstraction_level is Level.GOAL]
    reach: set[str] = set(goals)
    for gid in goals:
        reach |= nx.descendants(g, gid)
    unreachable = [n for n in nodes if n.id not in reach]
    if repair and unreachable and goals and not cyc_bad:
        for n in unreachable:
            if n.id in reach:
                continue
            src = _attach_source(n, nodes, reach, g)
            if src is None:
                continue
            edges.append(
                HDAGEdge(
                    source=src,
                    target=n.id,
                    relationship=Relationship.DECOMPOSES_TO,
                    strength=Strength.WEAK,
                    confidence=0.5,
                )
            )
            if g.has_edge(src, n.id):
                g.edges[src, n.id]["indices"].append(len(edges) - 1)
            else:
                g.add_edge(src, n.id, indices=[len(edges) - 1])
            reach.add(n.id)
            reach |= nx.descendants(g, n.id)
            repairs.append(f"attached unreachable {n.id} under {src} (decomposes_to, weak)")
    not_reached = [n.id for n in nodes if n.id not in reach]
    checks["connected"] = CheckResult(
        name="connected",
        passed=bool(goals) and not not_reached,
        detail="every node is reachable from a GOAL node" if goals else "no GOAL node",
        offenders=not_reached,
    )

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


def _auto_without_claim(nodes: list[HDAGNode]) -> list[str]:
    """T_Auto nodes in which the checker decides nothing (a computer seat there checks nothing)."""
    auto = [n for n in nodes if n.primary_auditor is rules.AuditorType.T_AUTO]
    return [n.id for n in auto if not rules.is_checkable(n.content)]


def _merge_duplicates(
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


def _attach_source(node: HDAGNode, nodes: list[HDAGNode], reach: set[str], g: nx.DiGraph) -> str | None:
    """Nearest earlier reachable planning node (GOAL/STRATEGY/TACTIC) of a higher level, else a
    reachable GOAL; never closing a cycle. STEP -> OPERATION hierarchy edges are avoided on
    purpose: the structural auditor reads those as "the operation feeds the step"."""
    below = nx.descendants(g, node.id)
    candidates = [
        n
        for n in nodes
        if n.id in reach
        and n.id not in below
        and n.id != node.id
        and n.span.start <= node.span.start
        and n.abstraction_level.depth < node.abstraction_level.depth
        and n.abstraction_level in _PLANNING
    ]
    if candidates:
        return max(candidates, key=lambda n: (n.span.start, n.abstraction_level.depth)).id
    goals = [n.id for n in nodes if n.abstraction_level is Level.GOAL and n.id in reach and n.id not in below]
    return goals[0] if goals else None


def _fill_gaps(doc: TraceDocument, nodes: list[HDAGNode], used: IdAllocator) -> list[str]:
    t0, t1 = doc.thinking.start, doc.thinking.end
    covered = _merge([(n.span.start, n.span.end) for n in nodes])
    gaps: list[tuple[int, int]] = []
    pos = t0
    for s, e in covered:
        if e <= pos:
            continue
        if s > pos:
            gaps.append((pos, min(s, t1)))
        pos = max(pos, e)
        if pos >= t1:
            break
    if pos < t1:
        gaps.append((pos, t1))
    # pre-split traces: never let a new node cross a step boundary
    if doc.steps:
        cut: list[tuple[int, int]] = []
        for s, e in gaps:
            for st in doc.steps:
                a, b = max(s, st.start), min(e, st.end)
                if b > a:
                    cut.append((a, b))
        gaps = cut
    added: list[str] = []
    for s, e in gaps:
        if s >= e or not doc.text[s:e].strip():
            continue
        for us, ue in split_units(doc.text[s:e], s):
            node = new_node(doc, used, us, ue, step_index=doc.step_index_at(us) if doc.steps else None)
            nodes.append(node)
            added.append(node.id)
    return added
