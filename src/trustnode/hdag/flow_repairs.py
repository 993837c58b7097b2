"""Checks and repairs of an HDAG's edges and flow: endpoints, acyclic, connected (SPEC 2, step 5).

Every edge must join two existing, distinct nodes, the prerequisite -> dependent flow must
have no cycle, and every node must be reachable from a GOAL. With `repair=True` dangling
edges and edges into a GOAL go, each cycle loses its weakest edge (one running against the
text order first, then the lowest strength and confidence), and an unreachable node is
attached under the nearest earlier planning node.
"""

from __future__ import annotations

import networkx as nx

from trustnode.hdag.graph import flow_graph
from trustnode.models.enums import Level, Relationship, Strength
from trustnode.models.hdag import HDAG, CheckResult, HDAGEdge, HDAGNode

_PLANNING = (Level.GOAL, Level.STRATEGY, Level.TACTIC)


def check_edges(
    nodes: list[HDAGNode], edges: list[HDAGEdge], dropped: set[str], *, repair: bool, repairs: list[str]
) -> tuple[list[HDAGEdge], CheckResult]:
    """Every edge joins two existing, distinct nodes; a repair drops the others, edges that
    would make a GOAL depend on something, and duplicates (keeping the most confident).
    Edges of `dropped` nodes go without a note of their own."""
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
    check = CheckResult(
        name="edge_endpoints",
        passed=not edge_bad,
        detail="every edge joins two existing, distinct nodes",
        offenders=edge_bad,
    )
    return clean, check


def break_cycles(work: HDAG, *, repair: bool, repairs: list[str]) -> tuple[HDAG, nx.DiGraph, CheckResult]:
    """No cycle in the prerequisite -> dependent flow; a repair drops each cycle's weakest
    edge. Returns (the HDAG without those edges, its flow graph, check)."""
    nodes, edges = work.nodes, work.edges
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
                document=work.document,
                nodes=nodes,
                edges=edges,
                flow=work.flow,
                metadata=work.metadata.model_copy(),
            )
            g = flow_graph(work)
    if not nx.is_directed_acyclic_graph(g):
        cyc_bad = sorted({u for c in nx.simple_cycles(g) for u in c}, key=order.__getitem__)[:50]
    check = CheckResult(
        name="acyclic",
        passed=not cyc_bad,
        detail="no cycle in prerequisite -> dependent flow",
        offenders=cyc_bad,
    )
    return work, g, check


def connect(
    nodes: list[HDAGNode],
    edges: list[HDAGEdge],
    g: nx.DiGraph,
    *,
    acyclic: bool,
    repair: bool,
    repairs: list[str],
) -> CheckResult:
    """Every node is reachable from a GOAL; a repair (of an acyclic flow) attaches each
    unreachable node with a weak `decomposes_to` edge, appended to `edges` and `g`."""
    goals = [n.id for n in nodes if n.abstraction_level is Level.GOAL]
    reach: set[str] = set(goals)
    for gid in goals:
        reach |= nx.descendants(g, gid)
    unreachable = [n for n in nodes if n.id not in reach]
    if repair and unreachable and goals and acyclic:
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
    return CheckResult(
        name="connected",
        passed=bool(goals) and not not_reached,
        detail="every node is reachable from a GOAL node" if goals else "no GOAL node",
        offenders=not_reached,
    )


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
