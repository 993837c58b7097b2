"""The computer auditor on the public data in ../shared/eval (read in place).

These assert the issue's measured targets so a regression in the checker shows up in CI;
the figures themselves are printed by `trustnode eval` (see the report).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trustnode.audit.computer import ComputerAuditor
from trustnode.audit.evaluation import AuditorKind, EvalFormat, load, run
from trustnode.audit.evaluation.datasets import GSM8K_REFERENCE_ERRORS
from trustnode.audit.evaluation.runner import run_per_step

EVAL = Path(__file__).resolve().parents[2].parent / "shared" / "eval"
BBM = EVAL / "big-bench-mistake" / "multistep_arithmetic.jsonl"
GSM8K = EVAL / "gsm8k" / "test.jsonl"
PB_GSM8K = EVAL / "processbench" / "gsm8k.json"

pytestmark = pytest.mark.slow


def _need(path: Path) -> None:
    if not path.is_file():
        pytest.skip(f"{path} is not present on this machine")


def test_gsm8k_references_raise_no_false_alarm() -> None:
    _need(GSM8K)
    items = load(GSM8K, EvalFormat.GSM8K)
    assert len(items) == 1319
    auditor = ComputerAuditor(annotations="strip")
    flagged: dict[str, str] = {}
    claims = 0
    for item in items:
        r = run_per_step(item, auditor)
        claims += r.claims_checked
        if r.predicted >= 0:
            flagged[item.id] = r.reason
    # the only flags are the two reference solutions that write a false equation
    assert flagged == {
        "gsm8k-501": "364 / 4 = 273 (correct: 91)",
        "gsm8k-1024": "32 - 20 = 300 (correct: 12)",
    }
    assert set(flagged) == {f"gsm8k-{i}" for i in GSM8K_REFERENCE_ERRORS}
    assert claims > 3000  # the checker really reads the references, not just passes them


def test_gsm8k_annotations_checked_as_claims_also_hold() -> None:
    _need(GSM8K)
    rep = run(GSM8K, EvalFormat.GSM8K, AuditorKind.COMPUTER, annotations="check")
    assert rep.metrics.false_alarms == 0 and rep.metrics.n == 1317
    assert rep.metrics.claims_checked > 7000


def test_big_bench_mistake_thresholds() -> None:
    _need(BBM)
    rep = run(BBM, EvalFormat.BBM, AuditorKind.COMPUTER)
    m = rep.metrics
    assert len(rep.excluded) == 19  # 18 answer != target, 1 hand-verified label error (bbm-125)
    assert m.accuracy_erroneous is not None and m.accuracy_erroneous >= 0.95
    assert m.false_alarm_rate is not None and m.false_alarm_rate <= 0.02
    kept = run(BBM, EvalFormat.BBM, AuditorKind.COMPUTER, keep_suspect=True)
    suspect = {e.id: e.reason for e in rep.excluded}
    alarms = [r.id for r in kept.rows if r.outcome == "false_alarm"]
    # every alarm on a trace labelled "no mistake" is on a suspect record: a wrong final answer
    # (the checker finds the slip the label missed), or bbm-125's two cancelling slips
    assert "bbm-125" in alarms and set(alarms) <= set(suspect)
    assert sum("differs from the target" in suspect[a] for a in alarms) >= 12


def test_processbench_gsm8k_computer_alone_is_precise() -> None:
    _need(PB_GSM8K)
    rep = run(PB_GSM8K, EvalFormat.PROCESSBENCH, AuditorKind.COMPUTER)
    m = rep.metrics
    assert m.n == 400 and m.false_alarms == 0 and m.confusion.early == 0
    assert m.f1 is not None and m.f1 > 0.10
