"""`scripts/bench_gas.py` must keep running against the contracts as they change (a protocol change
once broke it silently: the provider could no longer commit canaries). Its figures are benchmarks,
so this only checks that a small run completes and reports every figure, not what they are."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.chain


def test_a_small_gas_benchmark_runs_and_reports_every_figure(repo_root: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(repo_root / "scripts" / "bench_gas.py"), "--segments", "8", "--seats", "2",
         "--auditors", "12", "--finalize-sizes", "", "--json"],
        capture_output=True, text=True, timeout=600, cwd=repo_root,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    figures = json.loads(out.stdout)
    for key in (
        "gas_per_segment_vote",
        "baseline_gas_per_segment_vote",
        "whole_trace_gas",
        "draw_gas_per_seat",
    ):
        assert figures[key] > 0, key
    # the appeal round and the canary operator's commit and reveal ran too
    assert figures["canary_commit_gas"] > 0 and figures["canary_reveal_gas"] > 0
    assert figures["seats"] == 2 and figures["segments"] == 8
