"""The automated tiers on the public data in ../shared/eval (read in place).

These assert the issue's measured targets through the same harness `trustnode eval`
runs, so a regression shows up in CI; the figures themselves are printed by `trustnode
eval` (see the report). Every target holds both with and without suspect labels.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trustnode.audit.evaluation import AuditorKind, EvalFormat, EvalReport, run
from trustnode.audit.evaluation.findings import SLASH_PRECISION

EVAL = Path(__file__).resolve().parents[2].parent / "shared" / "eval"
BBM = EVAL / "big-bench-mistake" / "multistep_arithmetic.jsonl"
GSM8K = EVAL / "gsm8k" / "test.jsonl"
PB = {"gsm8k": EVAL / "processbench" / "gsm8k.json", "math": EVAL / "processbench" / "math.json"}

pytestmark = pytest.mark.slow


def _need(path: Path) -> None:
    if not path.is_file():
        pytest.skip(f"{path} is not present on this machine")


def _both(rep: EvalReport) -> list[tuple[str, object]]:
    return [("all", rep.metrics), ("without suspect", rep.metrics_without_suspect)]


def test_gsm8k_references_raise_no_false_alarm() -> None:
    _need(GSM8K)
    rep = run(GSM8K, EvalFormat.GSM8K, AuditorKind.COMPUTER)
    assert rep.metrics.n == 1319 and not rep.skipped and not rep.failed
    # no row is excluded by number: the references that write something false are suspect
    # by the stated rule, and what the checker finds in them are those errors
    assert {e.id: e.reason for e in rep.suspect} == {
        "gsm8k-501": "labelled error-free, but step 2 writes 364 / 4 = 273 (it is 91)",
        "gsm8k-931": "labelled error-free, but step 3 writes 4x + 20 = 100 after (2x + 10) + (x + 1) + x = 100 "
        "(no solution of (2x + 10) + (x + 1) + x = 100 solves 4x + 20 = 100)",
        "gsm8k-1024": "labelled error-free, but step 4 writes 32 - 20 = 300 (it is 12)",
    }
    found = {r.id: r.reason for r in rep.rows if r.predicted >= 0}
    assert found == {
        "gsm8k-501": "364 / 4 = 273 (correct: 91)",
        "gsm8k-931": "(2x + 10) + (x + 1) + x = 100 \u21d2 4x + 20 = 100",
        "gsm8k-1024": "32 - 20 = 300 (correct: 12)",
    }
    assert rep.metrics_without_suspect.false_alarms == 0
    assert rep.metrics.claims_checked > 3000  # the checker really reads the references


def test_gsm8k_annotations_checked_as_claims_also_hold() -> None:
    _need(GSM8K)
    rep = run(GSM8K, EvalFormat.GSM8K, AuditorKind.COMPUTER, annotations="check")
    assert rep.metrics_without_suspect.false_alarms == 0 and rep.metrics_without_suspect.n == 1316
    assert rep.metrics.claims_checked > 7000


def test_big_bench_mistake_arithmetic_stays_exact() -> None:
    _need(BBM)
    rep = run(BBM, EvalFormat.BBM, AuditorKind.COMPUTER)
    for name, m in _both(rep):
        assert m.accuracy_erroneous is not None and m.accuracy_erroneous >= 0.95, name  # type: ignore[attr-defined]
    suspect = {e.id: e.reason for e in rep.suspect}
    assert sum("differs from the target" in r for r in suspect.values()) == 18  # the source's own rule
    # every alarm on a trace labelled without mistake is on a suspect record: the checker
    # finds the slip its label missed
    alarms = [r.id for r in rep.rows if r.outcome == "false_alarm"]
    assert alarms and set(alarms) <= set(suspect)
    assert rep.metrics_without_suspect.false_alarms == 0


@pytest.mark.parametrize("subset", ["gsm8k", "math"])
@pytest.mark.parametrize("auditor", [AuditorKind.COMPUTER, AuditorKind.PIPELINE])
def test_processbench_f1_and_false_alarms(subset: str, auditor: AuditorKind) -> None:
    _need(PB[subset])
    rep = run(PB[subset], EvalFormat.PROCESSBENCH, auditor)
    assert not rep.failed and not rep.skipped
    for name, m in _both(rep):
        assert m.f1 is not None and m.f1 >= 0.20, (name, m.f1)  # type: ignore[attr-defined]
        assert m.false_alarm_rate is not None and m.false_alarm_rate <= 0.01, (name, m.false_alarms)  # type: ignore[attr-defined]


@pytest.mark.parametrize("subset", ["gsm8k", "math"])
def test_structural_votes_only_on_findings_worth_a_slash(subset: str) -> None:
    _need(PB[subset])
    rep = run(PB[subset], EvalFormat.PROCESSBENCH, AuditorKind.STRUCTURAL)
    by = {f.kind: f for f in rep.structure}
    for f in rep.structure:
        if f.votes:  # a voting finding is precise enough, or never fires
            assert f.precision is None or f.precision >= SLASH_PRECISION, f
    # the findings kept as evidence are found, and far too often on correct steps to vote
    for kind in ("unclosed", "unsupported"):
        assert not by[kind].votes
        assert by[kind].on_correct_steps > 0 and by[kind].precision is not None
        assert by[kind].precision < SLASH_PRECISION
    # so structure alone votes FAIL nowhere on these sets, and never on a correct trace
    assert rep.metrics.false_alarms == 0
