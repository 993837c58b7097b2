"""Earliest failing segment -> step index of the original trace."""

from __future__ import annotations

from collections.abc import Callable

from trustnode.audit.base import undecided
from trustnode.audit.mapping import map_to_steps
from trustnode.models.audit import AuditResult, Evidence
from trustnode.models.enums import Level, Verdict
from trustnode.models.hdag import HDAG


def _res(verdict: Verdict) -> AuditResult:
    return AuditResult(verdict=verdict, decided=True, evidence=Evidence(auditor="t", checkable=True))


def test_earliest_fail_in_trace_order_wins(make_hdag: Callable[..., HDAG]) -> None:
    h = make_hdag("p", ["a", "b", "c", "d"], levels=[Level.STEP] * 4)
    # node order in the HDAG is not trace order: ST4 fails, ST2 fails; ST2 is earlier
    results = {"ST4": _res(Verdict.FAIL), "ST1": _res(Verdict.PASS), "ST2": _res(Verdict.FAIL)}
    m = map_to_steps(h, results)
    assert (m.first_error_step, m.first_error_node) == (1, "ST2")
    assert m.decided_segments == 3 and sorted(m.failed_segments) == ["ST2", "ST4"]


def test_no_fail_and_undecided_fail_do_not_count(make_hdag: Callable[..., HDAG]) -> None:
    h = make_hdag("p", ["a", "b"], levels=[Level.STEP] * 2)
    not_checkable = undecided("t", "nothing to check").model_copy(update={"verdict": Verdict.FAIL})
    m = map_to_steps(h, {"ST1": not_checkable, "ST2": _res(Verdict.PASS)})
    assert m.first_error_step == -1 and m.first_error_node is None and m.decided_segments == 1


def test_step_index_falls_back_to_the_span(make_hdag: Callable[..., HDAG]) -> None:
    h = make_hdag("p", ["a", "b", "c"], levels=[Level.STEP] * 3)
    nodes = [n.model_copy(update={"step_index": None}) for n in h.nodes]
    h2 = h.model_copy(update={"nodes": nodes})
    assert map_to_steps(h2, {"ST3": _res(Verdict.FAIL)}).first_error_step == 2
