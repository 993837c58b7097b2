"""Shared builders for HDAG tests."""

from __future__ import annotations

from trustnode.models.enums import AuditorType, Level, Relationship, Strength
from trustnode.models.hdag import HDAG, HDAGEdge, HDAGMetadata, HDAGNode
from trustnode.models.trace import TextSpan, TraceDocument, TraceInput

PROBLEM = "Ann has 12 apples and buys 30 more. How many apples does she have?"
THINKING = (
    "We add the apples she buys to those she has.\n\nShe has 12 + 30 = 42 apples.\n\nSo the answer is 42."
)


def doc_of(problem: str = PROBLEM, thinking: str = THINKING, **kw: object) -> TraceDocument:
    return TraceInput(problem=problem, thinking=thinking, **kw).to_document()  # type: ignore[arg-type]


def node_at(
    doc: TraceDocument, nid: str, quote: str, level: Level, auditor: AuditorType = AuditorType.T_LLM
) -> HDAGNode:
    """A node whose span is the first occurrence of `quote` in the document."""
    start = doc.text.index(quote)
    return HDAGNode(
        id=nid,
        content=quote,
        span=TextSpan(start=start, end=start + len(quote)),
        abstraction_level=level,
        primary_auditor=auditor,
    )


def edge(
    src: str,
    dst: str,
    rel: Relationship = Relationship.DECOMPOSES_TO,
    strength: Strength = Strength.STRONG,
    confidence: float = 0.9,
) -> HDAGEdge:
    return HDAGEdge(source=src, target=dst, relationship=rel, strength=strength, confidence=confidence)


def good_hdag() -> HDAG:
    """A hand-built valid HDAG over the default trace."""
    doc = doc_of()
    nodes = [
        node_at(doc, "G1", PROBLEM, Level.GOAL),
        node_at(doc, "S1", "We add the apples she buys to those she has.", Level.STRATEGY),
        node_at(doc, "O1", "She has 12 + 30 = 42 apples.", Level.OPERATION, AuditorType.T_AUTO),
        node_at(doc, "ST1", "So the answer is 42.", Level.STEP),
    ]
    edges = [
        edge("G1", "S1"),
        edge("S1", "O1"),
        edge("S1", "ST1"),
        edge("ST1", "O1", Relationship.DEPENDS_ON),
    ]
    return HDAG(document=doc, nodes=nodes, edges=edges, metadata=HDAGMetadata(decomposer="test"))
