"""validate_hdag: every named check, and every repair recorded."""

from __future__ import annotations

from trustnode.hdag.coverage import completeness
from trustnode.hdag.spans import anchor
from trustnode.hdag.text import MAX_SEGMENT_CHARS
from trustnode.hdag.validate import validate_hdag
from trustnode.models.enums import AuditorType, Level, Relationship, Strength
from trustnode.models.hdag import HDAG, HDAGMetadata, HDAGNode
from trustnode.models.trace import TextSpan, TraceInput

from .conftest import PROBLEM, doc_of, edge, good_hdag, node_at


def _with(h: HDAG, **update: object) -> HDAG:
    return h.model_copy(update=update)


def test_good_hdag_passes_everything_without_repairs() -> None:
    h, report = validate_hdag(good_hdag())
    assert report.ok and report.failed == []
    assert report.repairs == []
    assert report.completeness == 1.0
    assert [c.name for c in report.checks] == [
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
    ]
    assert h.flow.entry_points == ["G1"]
    assert h.flow.critical_path == ["G1", "S1", "O1", "ST1"]
    assert set(h.flow.exit_points) == {"ST1"}
    assert report.stats.by_level == {"GOAL": 1, "STRATEGY": 1, "OPERATION": 1, "STEP": 1}


def test_drifted_span_is_reanchored() -> None:
    h = good_hdag()
    nodes = [n.model_copy() for n in h.nodes]
    nodes[2].span = TextSpan(start=nodes[2].span.start + 3, end=nodes[2].span.end + 3)
    bad = _with(h, nodes=nodes)
    _, plain = validate_hdag(bad, repair=False)
    assert plain.failed == ["spans_exact"] and plain.check("spans_exact").offenders == ["O1"]
    fixed, report = validate_hdag(bad)
    assert report.ok
    o1 = fixed.node("O1")
    assert fixed.document.text[o1.span.start : o1.span.end] == "She has 12 + 30 = 42 apples."
    assert any(r.startswith("re-anchored O1") for r in report.repairs)
    assert report.repairs == fixed.metadata.repairs


def test_whitespace_drift_is_reanchored_to_exact_text() -> None:
    doc = doc_of(thinking="We add.\n\nShe has 12 +\n30 = 42 apples.")
    node = HDAGNode(
        id="O1",
        content="She has 12 + 30 = 42 apples.",
        span=TextSpan(start=0, end=5),
        abstraction_level=Level.OPERATION,
        primary_auditor=AuditorType.T_AUTO,
    )
    h = HDAG(
        document=doc,
        nodes=[node_at(doc, "G1", PROBLEM, Level.GOAL), node],
        edges=[edge("G1", "O1")],
        metadata=good_hdag().metadata,
    )
    fixed, report = validate_hdag(h, min_completeness=0.5)
    assert fixed.node("O1").content == "She has 12 +\n30 = 42 apples."
    assert report.check("spans_exact").passed


def test_content_not_in_text_is_dropped_and_gap_covered() -> None:
    h = good_hdag()
    nodes = [n.model_copy() for n in h.nodes]
    nodes[3] = nodes[3].model_copy(update={"content": "So the answer is 43, clearly."})
    fixed, report = validate_hdag(_with(h, nodes=nodes))
    assert report.ok
    assert "dropped ST1: its content is not in the trace text" in report.repairs
    assert any(r.startswith("covered uncovered thinking") for r in report.repairs)
    assert any(n.content == "So the answer is 42." for n in fixed.nodes)
    assert all(
        e.source in {n.id for n in fixed.nodes} and e.target in {n.id for n in fixed.nodes}
        for e in fixed.edges
    )


def test_dangling_and_self_loop_edges() -> None:
    h = good_hdag()
    bad = _with(h, edges=[*h.edges, edge("ST1", "X9"), edge("O1", "O1", Relationship.REFINES)])
    _, plain = validate_hdag(bad, repair=False)
    assert "edge_endpoints" in plain.failed
    assert set(plain.check("edge_endpoints").offenders) == {"ST1->X9", "O1->O1"}
    fixed, report = validate_hdag(bad)
    assert report.ok and len(fixed.edges) == len(h.edges)
    assert "dropped edge ST1->X9 (unknown endpoint)" in report.repairs
    assert "dropped edge O1->O1 (self-loop)" in report.repairs


def test_cycle_is_broken_at_its_weakest_edge() -> None:
    h = good_hdag()
    # ST1 depends_on O1 (O1 -> ST1) plus "O1 depends_on ST1" (ST1 -> O1): a cycle; the weak one goes.
    weak = edge("O1", "ST1", Relationship.DEPENDS_ON, Strength.WEAK, 0.3)
    bad = _with(h, edges=[*h.edges, weak])
    _, plain = validate_hdag(bad, repair=False)
    assert plain.failed == ["acyclic"] and set(plain.check("acyclic").offenders) == {"O1", "ST1"}
    fixed, report = validate_hdag(bad)
    assert report.ok
    assert not any(e.source == "O1" and e.target == "ST1" for e in fixed.edges)
    assert any(e.source == "ST1" and e.target == "O1" for e in fixed.edges)
    assert any("broke cycle" in r and "O1 depends_on ST1" in r for r in report.repairs)


def test_unreachable_node_is_attached() -> None:
    h = good_hdag()
    bad = _with(h, edges=[e for e in h.edges if not (e.source == "S1" and e.target == "ST1")])
    bad = _with(bad, edges=[e for e in bad.edges if e.relationship is not Relationship.DEPENDS_ON])
    _, plain = validate_hdag(bad, repair=False)
    assert plain.failed == ["connected"] and plain.check("connected").offenders == ["ST1"]
    fixed, report = validate_hdag(bad)
    assert report.ok
    assert "attached unreachable ST1 under S1 (decomposes_to, weak)" in report.repairs


def test_missing_goal_is_added() -> None:
    h = good_hdag()
    bad = _with(h, nodes=h.nodes[1:], edges=[e for e in h.edges if e.source != "G1"])
    _, plain = validate_hdag(bad, repair=False)
    assert "connected" in plain.failed and plain.check("connected").detail == "no GOAL node"
    fixed, report = validate_hdag(bad)
    assert report.ok
    g = [n for n in fixed.nodes if n.abstraction_level is Level.GOAL]
    assert len(g) == 1 and g[0].content == PROBLEM


def test_id_prefix_must_match_level() -> None:
    h = good_hdag()
    nodes = [n.model_copy() for n in h.nodes]
    nodes[3] = nodes[3].model_copy(update={"id": "O7"})  # a STEP named like an operation
    edges = [e.model_copy(update={"target": "O7"}) if e.target == "ST1" else e for e in h.edges]
    edges = [e.model_copy(update={"source": "O7"}) if e.source == "ST1" else e for e in edges]
    bad = _with(h, nodes=nodes, edges=edges)
    _, plain = validate_hdag(bad, repair=False)
    assert plain.failed == ["auditable"] and plain.check("auditable").offenders == ["O7"]
    fixed, report = validate_hdag(bad)
    assert report.ok and "renamed O7 to ST1 to match its level STEP" in report.repairs
    assert any(e.source == "ST1" and e.target == "O1" for e in fixed.edges)


def test_completeness_threshold_and_gap_filling() -> None:
    h = good_hdag()
    partial = _with(h, nodes=h.nodes[:2], edges=h.edges[:1])
    _, plain = validate_hdag(partial, repair=False)
    assert plain.failed == ["completeness"]
    assert 0.3 < plain.completeness < 0.6
    _, lenient = validate_hdag(partial, repair=False, min_completeness=0.3)
    assert lenient.ok
    fixed, report = validate_hdag(partial)
    assert report.ok and report.completeness == 1.0
    assert {n.content for n in fixed.nodes} >= {"She has 12 + 30 = 42 apples.", "So the answer is 42."}
    added = next(n for n in fixed.nodes if n.content.startswith("She has"))
    assert added.abstraction_level is Level.OPERATION and added.primary_auditor is AuditorType.T_AUTO


def test_node_crossing_step_boundaries_is_split() -> None:
    doc = TraceInput(problem="Add 2 and 3, then double.", steps=["2 + 3 = 5.", "5 * 2 = 10."]).to_document()
    start, end = doc.steps[0].start, doc.steps[1].end
    big = HDAGNode(
        id="O1",
        content=doc.text[start:end],
        span=TextSpan(start=start, end=end),
        abstraction_level=Level.OPERATION,
        primary_auditor=AuditorType.T_AUTO,
    )
    h = HDAG(
        document=doc,
        nodes=[node_at(doc, "G1", doc.problem_text, Level.GOAL), big],
        edges=[edge("G1", "O1")],
        metadata=good_hdag().metadata,
    )
    _, plain = validate_hdag(h, repair=False)
    assert plain.failed == ["step_mapping"]
    fixed, report = validate_hdag(h)
    assert report.ok
    ops = [n for n in fixed.nodes if n.abstraction_level is Level.OPERATION]
    assert [(n.content, n.step_index) for n in ops] == [("2 + 3 = 5.", 0), ("5 * 2 = 10.", 1)]
    assert any(r.startswith("split O1 at step boundaries") for r in report.repairs)


def test_anchor_and_completeness_helpers() -> None:
    assert anchor("abc abc", "abc", hint=4) == (4, 7)
    assert anchor("x  =\n 1", "x = 1") == (0, 7)
    assert anchor("abc", "zzz") is None and anchor("abc", "   ") is None
    doc = doc_of(thinking="aa bb")
    t0 = doc.thinking.start
    assert completeness(doc, [TextSpan(start=t0, end=t0 + 2)]) == 0.5
    assert completeness(doc, [TextSpan(start=0, end=len(doc.text))]) == 1.0


def test_gaps_are_covered_even_above_the_threshold() -> None:
    h = good_hdag()
    without_last = _with(h, nodes=h.nodes[:3], edges=h.edges[:2])
    _, plain = validate_hdag(without_last, repair=False, min_completeness=0.5)
    assert plain.ok and plain.completeness < 1.0
    fixed, report = validate_hdag(without_last, min_completeness=0.5)
    assert report.ok and report.completeness == 1.0
    assert any(n.content == "So the answer is 42." for n in fixed.nodes)


def test_nodes_with_the_same_span_are_merged() -> None:
    h = good_hdag()
    dup = h.node("O1").model_copy(update={"id": "O2"})
    bad = _with(
        h,
        nodes=[*h.nodes, dup],
        edges=[*h.edges, edge("S1", "O2"), edge("ST1", "O2", Relationship.DEPENDS_ON)],
    )
    fixed, report = validate_hdag(bad)
    assert report.ok
    assert "merged node(s) with the same span: O2 into O1" in report.repairs
    assert [n.id for n in fixed.nodes if n.content.startswith("She has")] == ["O1"]
    assert all("O2" not in (e.source, e.target) for e in fixed.edges)


def test_a_node_longer_than_the_segment_cap_is_cut_whatever_made_it() -> None:
    # as an LLM decomposer might return it: one STEP node holding a 20,000-character step
    sentence = "The running total grows by one more apple in this long and careful step. "
    step = (sentence * 300)[:20_000].strip()
    doc = TraceInput(problem=PROBLEM, steps=["We add the apples.", step]).to_document()
    nodes = [
        node_at(doc, "G1", PROBLEM, Level.GOAL),
        node_at(doc, "S1", "We add the apples.", Level.STRATEGY).model_copy(update={"step_index": 0}),
        node_at(doc, "ST1", step, Level.STEP).model_copy(update={"step_index": 1}),
    ]
    edges = [edge("G1", "S1"), edge("S1", "ST1"), edge("ST1", "S1", Relationship.DEPENDS_ON)]
    h = HDAG(document=doc, nodes=nodes, edges=edges, metadata=HDAGMetadata(decomposer="llm-single"))
    _, plain = validate_hdag(h, repair=False)
    assert plain.failed == ["segment_length", "segment_share"]
    assert plain.check("segment_length").offenders == ["ST1"] == plain.check("segment_share").offenders
    fixed, report = validate_hdag(h)
    assert report.ok, report.failed
    parts = [n for n in fixed.nodes if n.abstraction_level is Level.STEP]
    assert len(parts) >= 20_000 // MAX_SEGMENT_CHARS
    assert all(len(n.content) <= MAX_SEGMENT_CHARS for n in parts)
    assert all(fixed.document.text[n.span.start : n.span.end] == n.content for n in parts)
    assert all(n.step_index == 1 for n in parts)
    # cuts fall between sentences, and together the parts hold every character of the step
    assert all(n.content.endswith(".") for n in parts[:-1])
    assert "".join(n.content for n in parts).replace(" ", "") == step.replace(" ", "")
    # every part keeps the original node's edges
    for n in parts:
        assert any(e.source == n.id and e.target == "S1" for e in fixed.edges)
        assert any(e.source == "S1" and e.target == n.id for e in fixed.edges)
    assert any(r.startswith("split ST1 (20000 characters") for r in report.repairs)


def test_a_giant_formula_is_cut_too() -> None:
    # no sentence end and no space outside a formula: the cap still holds
    formula = "$" + " + ".join(["x"] * 6000) + "$"
    h, report = validate_hdag(
        HDAG(
            document=doc_of(thinking=formula),
            nodes=[node_at(doc_of(thinking=formula), "G1", PROBLEM, Level.GOAL)],
            edges=[],
            metadata=HDAGMetadata(decomposer="test"),
        )
    )
    assert report.ok
    assert all(len(n.content) <= MAX_SEGMENT_CHARS for n in h.nodes if n.abstraction_level is not Level.GOAL)


def test_anchor_is_linear_on_hostile_quotes() -> None:
    # a quote of many words against a text where every position starts a near match
    text = "a " * 100_000
    quote = "a " * 5_000 + "b"
    assert anchor(text, quote) is None
    assert anchor("x\n\n  y   z", "x y z") == (0, 10)


def test_a_t_auto_node_without_a_decided_claim_is_routed_away() -> None:
    # an LLM decomposer sent prose to the computer tier: a computer seat there checks nothing
    h = good_hdag()
    nodes = [
        n.model_copy(update={"primary_auditor": AuditorType.T_AUTO}) if n.id == "S1" else n for n in h.nodes
    ]
    bad = _with(h, nodes=nodes)
    _, plain = validate_hdag(bad, repair=False)
    assert plain.failed == ["auto_checkable"] and plain.check("auto_checkable").offenders == ["S1"]
    fixed, report = validate_hdag(bad)
    assert report.ok
    by_id = {n.id: n for n in fixed.nodes}
    assert by_id["S1"].primary_auditor is AuditorType.T_LLM
    assert by_id["O1"].primary_auditor is AuditorType.T_AUTO  # "12 + 30 = 42" is a decided claim
    assert any(r.startswith("routed S1 away from T_Auto") for r in report.repairs)
