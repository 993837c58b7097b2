"""Property test: whatever an LLM does to a good HDAG, repair yields one that validates."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trustnode.hdag import decompose
from trustnode.hdag.validate import validate_hdag
from trustnode.models.enums import Level, Relationship, Strength
from trustnode.models.hdag import HDAG, HDAGEdge
from trustnode.models.trace import TextSpan, TraceInput

TRACES = [
    TraceInput(
        problem="Ann has 12 apples and buys 30. How many?",
        thinking="Let's add. She has 12 + 30 = 42 apples.\n\nSo the answer is 42. Let x be 42.",
        output="42",
    ),
    TraceInput(
        problem="Add then double.", steps=["First 2 + 3 = 5. Then we double.", "5 * 2 = 10.", "Answer: 10."]
    ),
]
BASE = [decompose(t, mode="offline")[0] for t in TRACES]

mutation = st.one_of(
    st.tuples(
        st.just("edge"),
        st.integers(0, 40),
        st.integers(0, 40),
        st.sampled_from(list(Relationship)),
        st.sampled_from(list(Strength)),
    ),
    st.tuples(st.just("dangling"), st.integers(0, 40)),
    st.tuples(st.just("shift"), st.integers(0, 40), st.integers(-30, 30)),
    st.tuples(st.just("content"), st.integers(0, 40), st.text(max_size=20)),
    st.tuples(st.just("level"), st.integers(0, 40), st.sampled_from(list(Level))),
    st.tuples(st.just("drop"), st.integers(0, 40)),
    st.tuples(st.just("widen"), st.integers(0, 40), st.integers(0, 200)),
)


def _apply(h: HDAG, muts: list[tuple]) -> HDAG:  # type: ignore[type-arg]
    nodes = [n.model_copy() for n in h.nodes]
    edges = list(h.edges)
    text_len = len(h.document.text)
    for m in muts:
        if not nodes:
            break
        kind = m[0]
        n = nodes[m[1] % len(nodes)]
        if kind == "edge":
            other = nodes[m[2] % len(nodes)]
            edges.append(HDAGEdge(source=n.id, target=other.id, relationship=m[3], strength=m[4]))
        elif kind == "dangling":
            edges.append(HDAGEdge(source=n.id, target="ST999", relationship=Relationship.DEPENDS_ON))
        elif kind == "shift":
            s = min(max(0, n.span.start + m[2]), text_len)
            e = min(max(s, n.span.end + m[2]), text_len)
            n.span = TextSpan(start=s, end=e)
        elif kind == "content":
            n.content = m[2]
        elif kind == "level":
            n.abstraction_level = m[2]
        elif kind == "drop":
            nodes.remove(n)
        elif kind == "widen":
            e = min(text_len, n.span.end + m[2])
            n.span = TextSpan(start=n.span.start, end=e)
            n.content = h.document.text[n.span.start : e]
    ids = [n.id for n in nodes]
    if len(set(ids)) != len(ids):
        return h
    return HDAG.model_construct(
        document=h.document, nodes=nodes, edges=edges, flow=h.flow, metadata=h.metadata
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(which=st.integers(0, len(BASE) - 1), muts=st.lists(mutation, max_size=12))
def test_repair_always_yields_a_valid_hdag(which: int, muts: list[tuple]) -> None:  # type: ignore[type-arg]
    broken = _apply(BASE[which], muts)
    fixed, report = validate_hdag(broken, repair=True)
    assert report.ok, (report.failed, report.repairs)
    text = fixed.document.text
    assert all(text[n.span.start : n.span.end] == n.content for n in fixed.nodes)
    ids = {n.id for n in fixed.nodes}
    assert len(ids) == len(fixed.nodes)
    assert all(e.source in ids and e.target in ids for e in fixed.edges)
    HDAG.model_validate(fixed.model_dump(mode="json", by_alias=True))  # the result round-trips
    again, second = validate_hdag(fixed, repair=False)
    assert second.ok
