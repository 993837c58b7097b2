"""`trustnode params ...` and `trustnode simulate ...`.

The commands run in an app holding only this package's command groups, so a broken module
of another group cannot mask them; a separate check pins their registration in the root app.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from trustnode.cli import params, simulate

app = typer.Typer()
params.register(app)
simulate.register(app)
runner = CliRunner()


def test_registered_in_the_root_app(repo_root: Path) -> None:
    main = (repo_root / "src" / "trustnode" / "cli" / "main.py").read_text()
    assert '"trustnode.cli.params",' in main and '"trustnode.cli.simulate",' in main


def test_params_check_prints_the_worked_example() -> None:
    res = runner.invoke(app, ["params", "check"])
    assert res.exit_code == 0, res.output
    out = res.output
    assert "mu_min" in out and "│                                 3.0 │" in out
    assert "25.8" in out
    assert "-203.8" in out  # ~ -204
    assert "-63.6" in out
    assert "-4.0" in out
    assert "E1: p_min >= delta/(1-alpha)" in out and "fails" in out


def test_params_check_json_and_overrides() -> None:
    res = runner.invoke(app, ["params", "check", "--json", "--R", "10", "--p-min", "0.35"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["economic"]["R"] == 10.0
    e = data["economic_report"]
    assert e["mu_min"] == 0.7 * 10 - 0.3 * 8 * 0.5
    assert e["economic_dial_ok"] is True
    s = data["statistical_report"]
    assert 0.0 <= s["trace_failure_exact"] <= s["trace_failure_chernoff"] <= 1.0
    assert data["all_ok"] is False  # the default trace misses the exact failure target


def test_params_check_strict_and_bad_input() -> None:
    assert runner.invoke(app, ["params", "check", "--strict"]).exit_code == 1
    ok = [
        "params", "check", "--strict", "--p-min", "0.35", "--k-l", "5", "--k-h", "9", "--tau", "0.51", "--beta", "0.5",
    ]  # fmt: skip
    res = runner.invoke(app, ok)
    assert res.exit_code == 0, res.output
    assert "all dials: holds" in res.output
    bad = runner.invoke(app, ["params", "check", "--tau", "0.4"])
    assert bad.exit_code == 1 and "tau_bps" in bad.output
    bad = runner.invoke(app, ["params", "check", "--p-min", "0.9"])
    assert bad.exit_code == 1 and "p_min must not exceed p_max" in bad.output
    bad = runner.invoke(
        app, ["params", "check", "--segments-c", "0", "--segments-l", "0", "--segments-h", "0"]
    )
    assert bad.exit_code == 1 and "at least one segment" in bad.output


def test_params_tune_json() -> None:
    res = runner.invoke(
        app,
        [
            "params",
            "tune",
            "--json",
            "--segments-c",
            "3",
            "--segments-l",
            "2",
            "--segments-h",
            "1",
            "--k-max",
            "9",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["cost_per_trace"] == data["seats"] * data["reward"]
    assert data["statistical"]["horizon_failure"] <= 1e-6
    table = runner.invoke(
        app, ["params", "tune", "--segments-c", "3", "--segments-l", "2", "--segments-h", "1"]
    )
    assert table.exit_code == 0 and "Cheapest setting" in table.output
    none = runner.invoke(app, ["params", "tune", "--k-max", "1"])
    assert none.exit_code == 1 and "no (k_t, tau, beta)" in none.output


def test_simulate_writes_plots_and_json(tmp_path: Path) -> None:
    res = runner.invoke(app, ["simulate", "economy", "--out", str(tmp_path), "--sessions", "15", "--quiet"])
    assert res.exit_code == 0, res.output
    econ = json.loads((tmp_path / "economy.json").read_text())
    assert len(econ["agents"]) == 3 * 16 and len(econ["agents"][0]["reputation"]) == 15
    res = runner.invoke(app, ["simulate", "beta", "--out", str(tmp_path), "--trials", "2000", "--quiet"])
    assert res.exit_code == 0, res.output
    beta = json.loads((tmp_path / "beta_sweep.json").read_text())
    assert len(beta["exact"]) == len(beta["beta"]) == 101
    assert "beta window with accuracy > 99.99%: [0.37, 0.63]" in res.output
    res = runner.invoke(
        app, ["simulate", "corruption", "--out", str(tmp_path), "--traces", "40", "--repeats", "2", "--quiet"]
    )
    assert res.exit_code == 0, res.output
    assert "TRUST" in res.output and "20% corr." in res.output
    for name in ("economy.png", "beta_sweep.png", "corruption_synthetic.png"):
        png = (tmp_path / name).read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_simulate_errors_are_clear(tmp_path: Path) -> None:
    res = runner.invoke(
        app,
        [
            "simulate",
            "corruption",
            "--dataset",
            "processbench",
            "--processbench",
            str(tmp_path / "nope.json"),
        ],
    )
    assert res.exit_code == 1 and "ProcessBench file not found" in res.output
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    res = runner.invoke(
        app, ["simulate", "corruption", "--dataset", "processbench", "--processbench", str(bad)]
    )
    assert res.exit_code == 1 and "error" in res.output
    res = runner.invoke(app, ["simulate", "corruption", "--dataset", "mmlu", "--out", str(tmp_path)])
    assert res.exit_code == 1 and "unknown dataset" in res.output
    res = runner.invoke(app, ["simulate", "economy", "--honest", "1", "--malicious", "0", "--random", "0"])
    assert res.exit_code == 1 and "fewer than k" in res.output
