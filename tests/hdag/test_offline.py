"""The offline decomposer: routing, step mapping, determinism, dependency direction."""

from __future__ import annotations

import pytest

from trustnode.hdag import decompose, decompose_offline
from trustnode.hdag.graph import flow_graph
from trustnode.models.enums import AuditorType, Level, Relationship
from trustnode.models.trace import TraceInput

STEPS = [
    "To find the difference, we break the problem down. First, on Friday there are 18 pink flamingos.",
    "On Saturday they take back one third: \\(1/3 \\times 18 = 6\\). So \\(18 - 6 = 12\\) pink remain.",
    "On Sunday they add 18 more, so \\(12 + 18 = 30\\) pink and 6 white. The difference is \\(30 - 6 = 24\\).",
]


def test_steps_map_back_and_arithmetic_goes_to_computers() -> None:
    trace = TraceInput(problem="How many more pink than white flamingos?", steps=STEPS)
    h, report = decompose(trace, mode="offline")
    assert report.ok and report.completeness == 1.0
    doc = h.document
    for n in h.nodes:
        if n.abstraction_level is Level.GOAL:
            assert n.step_index is None and n.content == trace.problem
            continue
        st = doc.steps[n.step_index]  # type: ignore[index]
        assert st.start <= n.span.start and n.span.end <= st.end
        assert doc.text[n.span.start : n.span.end] == n.content
    ops = [n for n in h.nodes if n.abstraction_level is Level.OPERATION]
    assert {n.content for n in ops} >= {
        "So \\(18 - 6 = 12\\) pink remain.",
        "The difference is \\(30 - 6 = 24\\).",
    }
    assert all(n.primary_auditor is AuditorType.T_AUTO for n in ops)
    assert [n.step_index for n in ops] == [1, 1, 2, 2]
    assert h.metadata.decomposer == "offline"


def test_prerequisites_always_precede_dependents() -> None:
    trace = TraceInput(problem="How many more pink than white flamingos?", steps=STEPS)
    h = decompose_offline(trace)
    pos = {n.id: n.span.start for n in h.nodes}
    for e in h.edges:
        assert pos[e.prerequisite] <= pos[e.dependent], e
    # the step that uses 12 depends on the one that computed it
    twelve = next(n for n in h.nodes if "12 + 18 = 30" in n.content)
    made = next(n for n in h.nodes if "18 - 6 = 12" in n.content)
    assert made.id in h.parents(twelve.id)
    assert any(
        e.relationship is Relationship.DEPENDS_ON and e.source == twelve.id and e.target == made.id
        for e in h.edges
    )
    g = flow_graph(h)
    assert g.number_of_edges() == len(h.edges)


def test_deterministic() -> None:
    trace = TraceInput(
        problem="What is 2 + 3?", thinking="We add. 2 + 3 = 5. So the answer is 5.", output="5"
    )
    a, b = decompose_offline(trace), decompose_offline(trace)
    assert a.model_dump_json() == b.model_dump_json()
    assert any(n.content == "5" and n.span.start == a.document.output.start for n in a.nodes)  # type: ignore[union-attr]


def test_high_stakes_trace_sends_ambiguous_segments_to_humans() -> None:
    trace = TraceInput(
        problem="Should the patient get the drug?",
        thinking="The weight is 70 kg, so 5 * 70 = 350 mg. The patient might be allergic, so this may be unsafe.",
        high_stakes=True,
        domain="medicine",
    )
    h = decompose_offline(trace)
    by = {n.content: n for n in h.nodes}
    assert by["The patient might be allergic, so this may be unsafe."].primary_auditor is AuditorType.T_HUMAN
    assert by["The weight is 70 kg, so 5 * 70 = 350 mg."].primary_auditor is AuditorType.T_AUTO
    assert by[trace.problem].primary_auditor is AuditorType.T_HUMAN
    low = decompose_offline(trace.model_copy(update={"high_stakes": False}))
    assert not any(n.primary_auditor is AuditorType.T_HUMAN for n in low.nodes)


def test_long_trace_is_fully_covered() -> None:
    para = "We compute 3 + 4 = 7 apples. Then we move on to the next basket of fruit."
    trace = TraceInput(problem="Count.", thinking="\n\n".join([para] * 400))
    h, report = decompose(trace, mode="offline")
    assert report.ok and report.completeness == 1.0 and len(h.nodes) == 801


def test_unknown_mode_and_missing_client() -> None:
    trace = TraceInput(problem="p", thinking="t")
    with pytest.raises(ValueError, match="unknown decomposition mode"):
        decompose(trace, mode="magic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs an LLMClient"):
        decompose(trace, mode="llm-single")
