"""The offline decomposer over every ProcessBench trace (GSM8K and MATH subsets)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trustnode.hdag import decompose
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
