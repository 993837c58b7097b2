"""`trustnode simulate privacy`: the figure of what k colluding auditors can rebuild (issue 16)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trustnode.cli.main import app
from trustnode.cli.privacy import draw_seats, load_traces, worst_coalitions


def test_draws_keep_the_cap_and_distinct_auditors() -> None:
    rng = random.Random(1)
    tiers = [0] * 6 + [2] * 3
    seats = draw_seats(tiers, (2, 1, 1), 3, (4, 2, 2), rng)
    assert seats is not None
    assert all(len(s) <= 3 for s in seats.values())
    for index, tier in enumerate(tiers):
        holders = [a for a, s in seats.items() if index in s]
        assert len(holders) == (2 if tier == 0 else 1) and all(a.startswith(f"t{tier}-") for a in holders)
    # 6 computer segments x 2 seats need 12 seats; 4 auditors x cap 2 hold 8: the session is cancelled.
    assert draw_seats(tiers, (2, 1, 1), 2, (4, 2, 2), rng) is None


def test_worst_coalition_grows_with_k_and_reaches_everything() -> None:
    spans = [[(0, 10)], [(10, 30)], [(30, 40)], [(40, 100)]]
    keys = [{0}, {1}, {3}, {2, 0}]
    shares = worst_coalitions(keys, spans, [1, 2, 3, 4, 5])
    assert shares[0] == 0.6 and shares == sorted(shares) and shares[-1] == 1.0


def test_cli_writes_the_figure_with_its_parameters(tmp_path: Path, eval_dir: Path) -> None:
    bench = eval_dir / "processbench" / "gsm8k.json"
    args = ["simulate", "privacy", "--out", str(tmp_path), "--processbench", str(bench), "--limit", "4"]
    args += ["--draws", "2", "--seats", "1,1,1;3,3,5", "--caps", "2,32", "--max-k", "4", "--seed", "11"]
    res = CliRunner().invoke(app, [*args, "--quiet"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "privacy.png").stat().st_size > 10_000
    out = json.loads((tmp_path / "privacy.json").read_text())
    cfg = out["config"]
    assert cfg["seed"] == 11 and cfg["seat_caps"] == [2, 32] and cfg["coalition_sizes"] == [1, 2, 3, 4]
    assert cfg["traces"] == 4 + 4 and cfg["share"] == 0.25, "the samples and 4 ProcessBench traces"
    curves = {(c["policy"], tuple(c["seats_per_tier"]), c["seat_cap"]): c for c in out["curves"]}
    assert len(curves) == 2 * 2 * 2
    for (policy, k, cap), c in curves.items():
        if c["mean"]:
            assert c["mean"] == sorted(c["mean"]), "a larger coalition never reads less"
            assert all(0 <= v <= 1 for v in c["max"])
        if policy == "after" and c["mean"]:
            before = curves[("before", k, cap)]
            assert all(a <= b for a, b in zip(c["mean"], before["mean"], strict=True))
    # The same seed gives the same figure.
    again = CliRunner().invoke(app, [*args[:3], str(tmp_path / "again"), *args[4:], "--quiet"])
    assert again.exit_code == 0
    assert json.loads((tmp_path / "again" / "privacy.json").read_text())["curves"] == out["curves"]


def test_missing_dataset_is_a_clear_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["simulate", "privacy", "--processbench", str(tmp_path / "nope.json")])
    assert res.exit_code == 1 and "ProcessBench file not found" in res.output


@pytest.mark.parametrize("text", ["1,1", "0,1,1"])
def test_bad_seat_settings_are_refused(text: str) -> None:
    res = CliRunner().invoke(app, ["simulate", "privacy", "--seats", text])
    assert res.exit_code == 1 and "triples of positive integers" in res.output


def test_samples_decompose() -> None:
    traces = load_traces([], 0)
    assert len(traces) == 4 and all(t.tiers and len(t.tiers) == len(t.spans) for t in traces)
