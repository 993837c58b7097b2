"""Coverage of the thinking by node spans (SPEC 2, step 5: completeness).

Every uncovered character of the thinking is reasoning no auditor sees, so validation
measures the covered share and, when repairing, covers every gap with rule-classified
nodes. `new_node` is also how the offline decomposer and the importers make nodes.
"""

from __future__ import annotations

from trustnode.hdag import rules
from trustnode.hdag.ids import IdAllocator
from trustnode.hdag.text import non_space_count, split_units
from trustnode.models.hdag import HDAGNode
from trustnode.models.trace import TextSpan, TraceDocument


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
    """Sorted union of half-open intervals (empty ones dropped)."""
    out: list[list[int]] = []
    for s, e in sorted(intervals):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def new_node(
    doc: TraceDocument, used: IdAllocator, start: int, end: int, *, step_index: int | None = None
) -> HDAGNode:
    """A rule-classified node for doc.text[start:end] (used by gap filling and the offline decomposer)."""
    content = doc.text[start:end]
    cls = rules.classify(content, high_stakes=doc.high_stakes)
    level = cls.level
    return HDAGNode(
        id=used.next(level),
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


def fill_gaps(doc: TraceDocument, nodes: list[HDAGNode], used: IdAllocator) -> list[str]:
    """Append a rule-classified node for every uncovered piece of thinking; returns their ids.

    On a pre-split trace no new node crosses a step boundary."""
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
