"""Turn an HDAG into audit tasks: each segment with the context an auditor may see.

Edge direction follows the TRUST paper: `A depends_on B` means B is a prerequisite of A,
and so do `validates`, `exemplifies`, `refines` and `contradicts` (A is about B, B comes
first); `decomposes_to` and `enables` point from the prerequisite to what it leads to.
"""

from __future__ import annotations

from trustnode.models.audit import AuditTask, ContextSegment, SegmentContext
from trustnode.models.enums import Relationship
from trustnode.models.hdag import HDAG, HDAGNode

#: Relationships whose edge runs from the prerequisite to the dependent segment.
FORWARD_RELATIONS = frozenset({Relationship.DECOMPOSES_TO, Relationship.ENABLES})


def prerequisite_edges(hdag: HDAG) -> list[tuple[str, str, Relationship]]:
    """(prerequisite, dependent, relationship) for every edge, direction normalised."""
    out: list[tuple[str, str, Relationship]] = []
    for e in hdag.edges:
        if e.relationship in FORWARD_RELATIONS:
            out.append((e.source, e.target, e.relationship))
        else:
            out.append((e.target, e.source, e.relationship))
    return out


def _segment(node: HDAGNode, relation: Relationship) -> ContextSegment:
    return ContextSegment(
        node_id=node.id,
        level=node.abstraction_level,
        content=node.content,
        relation=relation,
        step_index=node.step_index,
    )


def build_context(hdag: HDAG, node_id: str) -> SegmentContext:
    """Problem statement, parents (what the segment depends on) and children (what it implies)."""
    by_id = {n.id: n for n in hdag.nodes}
    if node_id not in by_id:
        raise KeyError(f"node {node_id} is not in the HDAG")
    parents: dict[str, Relationship] = {}
    children: dict[str, Relationship] = {}
    for pre, dep, rel in prerequisite_edges(hdag):
        if pre not in by_id or dep not in by_id or pre == dep:
            continue
        if dep == node_id:
            parents.setdefault(pre, rel)
        elif pre == node_id:
            children.setdefault(dep, rel)

    def ordered(ids: dict[str, Relationship]) -> list[ContextSegment]:
        nodes = sorted((by_id[i] for i in ids), key=lambda n: (n.span.start, n.span.end, n.id))
        return [_segment(n, ids[n.id]) for n in nodes]

    return SegmentContext(
        problem=hdag.document.problem_text, parents=ordered(parents), children=ordered(children)
    )


def build_tasks(hdag: HDAG) -> list[AuditTask]:
    """One task per HDAG node, in `hdag.nodes` order (the session's segment order)."""
    return [
        AuditTask(
            segment_index=i,
            node_id=n.id,
            level=n.abstraction_level,
            auditor_type=n.primary_auditor,
            content=n.content,
            context=build_context(hdag, n.id),
            step_index=n.step_index,
        )
        for i, n in enumerate(hdag.nodes)
    ]
