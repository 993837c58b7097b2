"""Importers: pre-split steps and DAG-MATH JSON keep the step index on every node."""

from __future__ import annotations

from typing import Any

import pytest

from trustnode.hdag.importers import ImportFormatError, from_dagmath, from_steps, parse_trace_input
from trustnode.models.enums import Level, Relationship
from trustnode.models.trace import TraceInput

STEPS = ["There are 12 apples.", "She buys 30 more: 12 + 30 = 42.", "The answer is 42."]


def test_from_steps_one_node_per_step() -> None:
    h = from_steps("Ann has 12 apples and buys 30. How many?", STEPS, output="42")
    per_step = [n for n in h.nodes if n.step_index is not None]
    assert [n.step_index for n in per_step] == [0, 1, 2]
    assert [n.content for n in per_step] == STEPS
    assert per_step[1].abstraction_level is Level.OPERATION
    assert h.metadata.decomposer == "import-steps"
    assert any(n.content == "42" and n.step_index is None for n in h.nodes)
    # the same through a TraceInput (how the evaluation runner calls it)
    again = from_steps(
        TraceInput(problem="Ann has 12 apples and buys 30. How many?", steps=STEPS, output="42")
    )
    assert again.model_dump() == h.model_dump()


def test_from_steps_with_explicit_dependencies() -> None:
    h = from_steps("p?", STEPS, dependencies=[None, [0], [1]])
    ids = {n.step_index: n.id for n in h.nodes if n.step_index is not None}
    deps = {(e.source, e.target) for e in h.edges if e.relationship is Relationship.DEPENDS_ON}
    assert deps == {(ids[1], ids[0]), (ids[2], ids[1])}


@pytest.mark.parametrize(
    ("deps", "message"),
    [
        ([None, [1], None], "not an earlier step"),
        ([None], "dependency lists"),
        ([None, [5], None], "not an earlier"),
    ],
)
def test_from_steps_rejects_bad_dependencies(deps: list[Any], message: str) -> None:
    with pytest.raises(ImportFormatError, match=message):
        from_steps("p?", STEPS, dependencies=deps)


def test_from_steps_rejects_bad_input() -> None:
    with pytest.raises(ImportFormatError, match="empty"):
        from_steps("p?", ["ok", "   "])
    with pytest.raises(ImportFormatError, match="steps"):
        from_steps(TraceInput(problem="p", thinking="free text"))


def _dagmath() -> dict[str, Any]:
    return {
        "problem_text": "Find 2 + 3 * 4.",
        "final_answer": "14",
        "steps": [
            {
                "step_id": 1,
                "edge": "From the problem.",
                "node": "$3 \\times 4 = 12$.",
                "direct_dependent_steps": None,
            },
            {
                "step_id": 2,
                "thinking": "Using Step 1.",
                "text": "$2 + 12 = 14$.",
                "direct_dependent_steps": [1],
            },
            {"step_id": 4, "node": "The final answer is 14.", "direct_dependent_steps": [2]},
        ],
    }


def test_from_dagmath() -> None:
    h = from_dagmath(_dagmath())
    assert h.metadata.decomposer == "import-dagmath"
    steps = {n.step_index: n for n in h.nodes if n.step_index is not None}
    assert steps[0].content == "From the problem.\n$3 \\times 4 = 12$."
    assert steps[1].content == "Using Step 1.\n$2 + 12 = 14$."
    assert steps[2].content == "The final answer is 14."
    deps = {(e.source, e.target) for e in h.edges if e.relationship is Relationship.DEPENDS_ON}
    assert deps == {(steps[1].id, steps[0].id), (steps[2].id, steps[1].id)}
    assert h.document.output is not None and h.document.text.endswith("14")


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["steps"][2].update(direct_dependent_steps=[3]), "unknown step_id 3"),
        (lambda d: d["steps"][1].update(direct_dependent_steps=[2]), "not earlier"),
        (lambda d: d["steps"][1].update(step_id=0), "strictly increasing"),
        (lambda d: d["steps"][0].update(node="", edge=None), "no text"),
        (lambda d: d.pop("problem_text"), "problem"),
    ],
)
def test_from_dagmath_errors(mutate: Any, message: str) -> None:
    d = _dagmath()
    mutate(d)
    with pytest.raises(ImportFormatError, match=message):
        from_dagmath(d)


def test_parse_trace_input_formats() -> None:
    kind, t = parse_trace_input({"problem": "p", "thinking": "t", "output": "o"})
    assert kind == "trace" and isinstance(t, TraceInput) and t.output == "o"
    kind, t = parse_trace_input(
        {
            "id": "math-0",
            "generator": "x",
            "problem": "p",
            "steps": ["a", "b"],
            "label": 0,
            "final_answer_correct": False,
        }
    )
    assert kind == "trace" and isinstance(t, TraceInput) and t.steps == ["a", "b"]
    kind, _ = parse_trace_input(_dagmath())
    assert kind == "dagmath"
    with pytest.raises(ImportFormatError, match="list"):
        parse_trace_input([1, 2])
    with pytest.raises(ImportFormatError, match="not a trace"):
        parse_trace_input({"problem": "p"})
