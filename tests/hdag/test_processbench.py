"""The offline decomposer over every ProcessBench trace (GSM8K and MATH subsets)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trustnode.audit.computer import ComputerAuditor
from trustnode.audit.context import build_tasks
from trustnode.audit.evaluation.datasets import EvalItem
from trustnode.audit.evaluation.modes import step_tasks
from trustnode.hdag import decompose
from trustnode.hdag.rules import classify
from trustnode.models.enums import AuditorType, Level
from trustnode.models.trace import TraceInput

EVAL = Path(__file__).resolve().parents[3] / "shared" / "eval" / "processbench"


@pytest.mark.slow
@pytest.mark.parametrize("subset", ["gsm8k", "math"])
def test_every_trace_validates_and_maps_to_steps(subset: str) -> None:
    path = EVAL / f"{subset}.json"
    if not path.is_file():
        pytest.skip(f"{path} not present")
    records = json.loads(path.read_text(encoding="utf-8"))
    assert len(records) >= 400
    completeness: list[float] = []
    auto = 0
    for rec in records:
        trace = TraceInput(problem=rec["problem"], steps=rec["steps"])
        h, report = decompose(trace, mode="offline")
        assert report.ok, (rec["id"], report.failed)
        completeness.append(report.completeness)
        doc = h.document
        seen_steps: set[int] = set()
        for n in h.nodes:
            assert doc.text[n.span.start : n.span.end] == n.content
            if n.abstraction_level is Level.GOAL and n.step_index is None:
                continue
            assert n.step_index is not None, (rec["id"], n.id)
            st = doc.steps[n.step_index]
            assert st.start <= n.span.start and n.span.end <= st.end
            seen_steps.add(n.step_index)
            auto += n.primary_auditor is AuditorType.T_AUTO
        assert seen_steps == set(range(len(rec["steps"]))), rec["id"]
    mean = sum(completeness) / len(completeness)
    print(f"{subset}: {len(records)} traces, mean completeness {mean:.4f}, min {min(completeness):.4f}")
    assert min(completeness) == 1.0
    assert auto > len(records)  # arithmetic is routed to the computer tier


@pytest.mark.slow
@pytest.mark.parametrize("subset", ["gsm8k", "math"])
def test_router_and_checker_agree_on_every_step(subset: str) -> None:
    """One definition of checkable: T_Auto exactly where the checker decides a claim.

    Every original step (routed as a whole, as the step importer does) and every unit of
    the offline decomposition: the router sends it to the computer tier if and only if
    the computer auditor, reading it alone, decides at least one claim; and a segment it
    sends there is decided with its context too (no computer seat ever has nothing to check).
    """
    path = EVAL / f"{subset}.json"
    if not path.is_file():
        pytest.skip(f"{path} not present")
    alone, with_context = ComputerAuditor(use_context=False), ComputerAuditor()
    checked = disagreements = 0
    for rec in json.loads(path.read_text(encoding="utf-8")):
        trace = TraceInput(problem=rec["problem"], steps=rec["steps"])
        item = EvalItem(id=rec["id"], problem=rec["problem"], steps=rec["steps"], label=rec["label"])
        segments = [(t, classify(t.content).primary) for t in step_tasks(item)]
        h, _ = decompose(trace, mode="offline")
        segments += [(t, t.auditor_type) for t in build_tasks(h) if t.level is not Level.GOAL]
        for task, routed in segments:
            auto = routed is AuditorType.T_AUTO
            agree = alone.audit(task).decided == auto and (not auto or with_context.audit(task).decided)
            checked += 1
            disagreements += not agree
            assert agree, (rec["id"], task.node_id, routed, task.content[:200])
    assert checked > 1000 and disagreements == 0
