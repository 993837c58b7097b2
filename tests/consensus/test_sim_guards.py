"""The issue-15 simulations: appeals lower the trace error, canaries catch lazy auditors sooner,
both reproducible by seed, and `trustnode simulate appeals|canaries` write PNG + JSON."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from trustnode.cli import simulate
from trustnode.consensus.sim_appeals import AppealSimConfig, Appellant, Scenario, simulate_appeals
from trustnode.consensus.sim_canaries import CanarySimConfig, Kind, simulate_canaries

app = typer.Typer()
simulate.register(app)
runner = CliRunner()

NONE = Scenario(label="without appeals", max_rounds=0, appellant=Appellant.NONE)
WATCHDOG = Scenario(label="watchdog, 3 rounds", max_rounds=3, appellant=Appellant.WATCHDOG)


def test_appeals_lower_the_trace_error_at_30_percent_corruption() -> None:
    cfg = AppealSimConfig(rates=[0.05, 0.30], traces=200, repeats=1, scenarios=[NONE, WATCHDOG], seed=11)
    res = simulate_appeals(cfg)
    without, with_ = res.series
    assert without.appeals_per_trace == [0.0, 0.0]
    assert all(a > 0 for a in with_.appeals_per_trace)
    # measured with this seed: 5%: 0.295 -> 0.035; 30%: 0.49 -> 0.35 (the test leaves room for noise)
    assert with_.trace_error[0] < without.trace_error[0] - 0.10
    assert with_.trace_error[1] < without.trace_error[1] - 0.05
    # appeals replace wrong outcomes: the segment error falls too
    assert with_.segment_error[1] < without.segment_error[1]


def test_appeals_are_reproducible_by_seed() -> None:
    cfg = AppealSimConfig(rates=[0.2], traces=15, repeats=1, scenarios=[WATCHDOG], seed=3)
    a, b = simulate_appeals(cfg), simulate_appeals(cfg)
    assert a.model_dump() == b.model_dump()
    c = simulate_appeals(cfg.model_copy(update={"seed": 4}))
    assert c.model_dump() != a.model_dump()


def test_more_canaries_catch_a_lazy_auditor_sooner() -> None:
    cfg = CanarySimConfig(rates_bps=[0, 500, 1500, 3000], sessions=400, replicas=150, seed=5)
    res = simulate_canaries(cfg)
    lazy = next(c for c in res.curves if c.kind is Kind.LAZY)
    honest = next(c for c in res.curves if c.kind is Kind.HONEST)
    assert lazy.median_sessions[0] is None  # without canaries most lazy auditors are never caught
    meds = [m for m in lazy.median_sessions[1:]]
    assert all(m is not None for m in meds)
    assert meds[0] > meds[1] > meds[2]  # type: ignore[operator]
    assert lazy.dropped_share[-1] == 1.0
    # honest auditors mostly survive the same horizon at the same rates
    assert all(h < 0.5 for h in honest.dropped_share)
    assert all(h < lz for h, lz in zip(honest.dropped_share[1:], lazy.dropped_share[1:], strict=True))


def test_canaries_are_reproducible_by_seed() -> None:
    cfg = CanarySimConfig(rates_bps=[1000], sessions=50, replicas=20, seed=9)
    assert simulate_canaries(cfg).model_dump() == simulate_canaries(cfg).model_dump()
    assert (
        simulate_canaries(cfg).model_dump()
        != simulate_canaries(cfg.model_copy(update={"seed": 10})).model_dump()
    )


def test_cli_writes_both_figures_with_parameters_and_seed(tmp_path: Path) -> None:
    res = runner.invoke(app, ["simulate", "appeals", "--out", str(tmp_path), "--rates", "0.05,0.3", "--traces", "8",
                              "--repeats", "1", "--seed", "21", "--quiet"])  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "appeals.json").read_text())
    assert data["config"]["seed"] == 21 and data["rates"] == [0.05, 0.3]
    assert {s["scenario"]["label"] for s in data["series"]} >= {"without appeals", "watchdog, 3 rounds"}
    assert (tmp_path / "appeals.png").stat().st_size > 10_000
    res = runner.invoke(app, ["simulate", "canaries", "--out", str(tmp_path), "--rates", "0,0.1", "--sessions", "30",
                              "--replicas", "10", "--seed", "22", "--quiet"])  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "canaries.json").read_text())
    assert data["config"]["seed"] == 22 and data["rates"] == [0.0, 0.1]
    assert [c["kind"] for c in data["curves"]] == ["lazy", "random", "honest"]
    assert (tmp_path / "canaries.png").stat().st_size > 10_000


def test_cli_refuses_bad_rates(tmp_path: Path) -> None:
    res = runner.invoke(app, ["simulate", "canaries", "--out", str(tmp_path), "--rates", "0.5"])
    assert res.exit_code != 0 and "0.30" in res.output
    res = runner.invoke(app, ["simulate", "appeals", "--out", str(tmp_path), "--rates", "x"])
    assert res.exit_code != 0 and "--rates" in res.output
    assert not (tmp_path / "appeals.json").exists()
