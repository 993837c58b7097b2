"""Structural facts on a hand-built HDAG whose numbers are worked out below."""

from __future__ import annotations

from collections.abc import Callable

from trustnode.audit.context import build_tasks
from trustnode.audit.structural import VOTING_FINDINGS, StructuralAuditor, analyze, dependency_graph
from trustnode.models.enums import Level, Relationship
from trustnode.models.hdag import HDAG

R = Relationship


def _hdag(make_hdag: Callable[..., HDAG], extra: list[tuple[str, str, Relationship]] | None = None) -> HDAG:
    # G1 -> ST1..ST5 (decomposes_to, outside the step graph)
    # ST2 depends_on ST1; ST1 enables ST3; ST5 depends_on ST2; ST5 depends_on ST3;
    # ST4 is an unused side computation (unclosed) with nothing from the problem in it.
    # ST2 decomposes_to O1 (the operation feeds its step: edge O1 -> ST2).
    return make_hdag(
        "Ann has 12 apples and buys 30 more. How many now?",
        [
            "Find the total.",
            "She starts with 12 apples.",
            "She buys 30 more apples.",
            "12 + 30 = 42",
            "Unrelated: 7 * 9 = 63.",
            "So she has 42 apples.",
            "12 + 30",
        ],
        levels=[Level.GOAL, Level.STEP, Level.STEP, Level.STEP, Level.STEP, Level.STEP, Level.OPERATION],
        edges=[
            ("G1", "ST1", R.DECOMPOSES_TO),
            ("G1", "ST2", R.DECOMPOSES_TO),
            ("ST2", "ST1", R.DEPENDS_ON),
            ("ST1", "ST3", R.ENABLES),
            ("ST5", "ST2", R.DEPENDS_ON),
            ("ST5", "ST3", R.DEPENDS_ON),
            ("ST3", "O1", R.DECOMPOSES_TO),
            *(extra or []),
        ],
    )


def test_graph_statistics_and_closeness(make_hdag: Callable[..., HDAG]) -> None:
    h = _hdag(make_hdag)
    g = dependency_graph(h)
    # step graph: ST1..ST5 + O1 = 6 nodes; edges ST1->ST2, ST1->ST3, ST2->ST5, ST3->ST5, O1->ST3 = 5
    assert sorted(g.nodes) == ["O1", "ST1", "ST2", "ST3", "ST4", "ST5"]
    assert sorted(g.edges) == [("O1", "ST3"), ("ST1", "ST2"), ("ST1", "ST3"), ("ST2", "ST5"), ("ST3", "ST5")]
    rep = analyze(h)
    # density = 2E / (N (N - 1)) = 10 / 30 = 1/3; max in-degree 2 (ST3, ST5); max out-degree 2 (ST1)
    assert rep.stats.nodes == 6 and rep.stats.edges == 5
    assert abs(rep.stats.density - 1 / 3) < 1e-12
    assert rep.stats.max_in_degree == 2 and rep.stats.max_out_degree == 2
    # the last step ST5 is final; ST4 is the only other sink -> unclosed; rate = 5/6
    assert rep.final_nodes == ["ST5"]
    assert rep.unclosed == ["ST4"] and not rep.logically_closed
    assert abs(rep.closeness_rate - 5 / 6) < 1e-12
    # ST4 shares no number with the problem and nothing earlier leads to it
    assert rep.unsupported == ["ST4"]
    assert rep.forward_dependencies == [] and rep.cyclic == []


def test_closed_graph(make_hdag: Callable[..., HDAG]) -> None:
    rep = analyze(_hdag(make_hdag, [("ST5", "ST4", R.DEPENDS_ON)]))  # the final step now uses ST4
    assert rep.unclosed == [] and rep.logically_closed and rep.closeness_rate == 1.0
    # being used later does not make ST4 supported: nothing earlier leads to it
    assert rep.unsupported == ["ST4"]


def test_auditor_votes_fail_only_on_definite_defects(make_hdag: Callable[..., HDAG]) -> None:
    # ST2 depends on ST4, written later: a definite defect
    h = _hdag(make_hdag, [("ST2", "ST4", R.DEPENDS_ON)])
    aud = StructuralAuditor(h)
    results = {t.node_id: aud.audit(t) for t in build_tasks(h)}
    assert results["ST2"].failed
    assert results["ST2"].evidence.details["defects"] == ["depends on ST4, which comes later"]
    # no definite defect: undecided, never a PASS vote (structure does not vouch for text)
    assert not results["ST1"].decided and not results["ST1"].failed
    assert not results["G1"].decided  # outside the step graph
    # unclosed and unsupported are evidence only: reported, no vote
    plain = StructuralAuditor(_hdag(make_hdag))
    st4 = plain.audit(next(t for t in build_tasks(plain.hdag) if t.node_id == "ST4"))
    assert not st4.decided and not st4.failed
    assert st4.evidence.details["closed"] is False and st4.evidence.details["supported"] is False
    kinds = {f["kind"] for f in st4.evidence.details["findings"]}  # type: ignore[union-attr,index]
    assert kinds == {"unclosed", "unsupported"}
    assert {"cycle", "forward_dependency"} == VOTING_FINDINGS


def test_cycles_are_definite(make_hdag: Callable[..., HDAG]) -> None:
    # ST5 -> ST1 closes ST1->ST2->ST5->ST1 and ST1->ST3->ST5->ST1
    h = _hdag(make_hdag, [("ST1", "ST5", R.DEPENDS_ON)])
    rep = analyze(h)
    assert rep.cyclic == ["ST1", "ST2", "ST3", "ST5"]
    assert "on a dependency cycle" in rep.defects("ST1")


def test_support_from_the_problem_reads_numbers_exactly(make_hdag: Callable[..., HDAG]) -> None:
    h = make_hdag(
        "A farm has 100 cows and 1,200.50 dollars.",
        ["It has 1 barn.", "It holds 1200.5 dollars.", "Count the cows."],
        levels=[Level.STEP] * 3,
    )
    # "1" must not match "100" (no stripping of integer zeros); 1200.5 matches 1,200.50;
    # "Count the cows." has no number and shares the word "cows" with the problem
    assert analyze(h).unsupported == ["ST1"]
