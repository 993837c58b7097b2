"""Graph views of an HDAG (networkx) and the verification flow derived from them."""

from __future__ import annotations

import networkx as nx

from trustnode.models.enums import Level
from trustnode.models.hdag import HDAG, VerificationFlow

_LOWER = (Level.TACTIC, Level.STEP, Level.OPERATION)


def flow_graph(hdag: HDAG) -> nx.DiGraph:
    """Nodes in document order; an edge prerequisite -> dependent for every HDAG edge.

    Several HDAG edges can share one flow edge (e.g. `A decomposes_to B` and `B depends_on
    A`); the flow edge's `indices` lists them all."""
    g = nx.DiGraph()
    ids = set()
    for n in hdag.nodes:
        g.add_node(n.id)
        ids.add(n.id)
    for i, e in enumerate(hdag.edges):
        pre, dep = e.prerequisite, e.dependent
        if pre in ids and dep in ids and pre != dep:
            if g.has_edge(pre, dep):
                g.edges[pre, dep]["indices"].append(i)
            else:
                g.add_edge(pre, dep, indices=[i])
    return g


def verification_flow(
    hdag: HDAG, g: nx.DiGraph | None = None, *, acyclic: bool | None = None
) -> VerificationFlow:
    """Entry points (no prerequisite), exit points (nothing builds on them), the longest
    prerequisite chain (critical path) and parallel tracks: groups of TACTIC/STEP/OPERATION
    segments with no dependency between groups, which can be audited independently."""
    g = flow_graph(hdag) if g is None else g
    order = {n.id: i for i, n in enumerate(hdag.nodes)}
    entry = [n for n in g.nodes if g.in_degree(n) == 0]
    exits = [n for n in g.nodes if g.out_degree(n) == 0]
    if acyclic is None:
        acyclic = nx.is_directed_acyclic_graph(g)
    critical: list[str] = list(nx.dag_longest_path(g)) if acyclic else []
    lower = [n.id for n in hdag.nodes if n.abstraction_level in _LOWER]
    sub = g.subgraph(lower)
    tracks = [sorted(c, key=order.__getitem__) for c in nx.weakly_connected_components(sub)]
    tracks.sort(key=lambda t: order[t[0]])
    return VerificationFlow(
        entry_points=entry, critical_path=critical, parallel_tracks=tracks, exit_points=exits
    )
