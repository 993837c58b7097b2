"""`trustnode simulate economy|beta|corruption|all`: agent simulations with PNG plots and JSON."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from pydantic import BaseModel, ValidationError
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from trustnode.cli.common import console, errors_as_exit, fail
from trustnode.consensus.plots import plot_beta_sweep, plot_corruption, plot_economy
from trustnode.consensus.rules import BPS, WAD
from trustnode.consensus.sim_beta import BetaSweepConfig, beta_sweep
from trustnode.consensus.sim_corruption import (
    CorruptionConfig,
    corruption_sweep,
    processbench_traces,
    synthetic_traces,
)
from trustnode.consensus.simulation import EconomyConfig, PopulationTier, simulate_economy
from trustnode.consensus.trace import ConsensusParams, TierSetting, TraceShape

simulate_app = typer.Typer(
    help="Agent simulations of the consensus and the economy (plots + JSON).", no_args_is_help=True
)

DEFAULT_PROCESSBENCH = Path("../shared/eval/processbench/gsm8k.json")


@contextmanager
def _bar(label: str, total: int, quiet: bool) -> Iterator[Callable[[int], None]]:
    with Progress(
        TextColumn(f"[bold]{label}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=quiet,
    ) as bar:
        task = bar.add_task(label, total=total)
        yield lambda done: bar.update(task, completed=done)


def _write(out: Path, name: str, model: BaseModel) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    path.write_text(json.dumps(model.model_dump(mode="json"), indent=1) + "\n", encoding="utf-8")
    return path


def _consensus(
    k: tuple[int, int, int],
    w: tuple[int, int, int],
    eps: tuple[float, float, float],
    rho_h: float,
    tau: float,
    beta: float,
) -> ConsensusParams:
    for name, x in (("tau", tau), ("beta", beta)):
        if not 0.0 <= x <= 1.0:
            raise typer.BadParameter(f"{name} must be in [0, 1]")
    return ConsensusParams(
        computer=TierSetting(k=k[0], weight=w[0], eps=eps[0]),
        llm=TierSetting(k=k[1], weight=w[1], eps=eps[1]),
        human=TierSetting(k=k[2], weight=w[2], eps=eps[2], rho=rho_h),
        tau_bps=round(tau * BPS),
        beta_bps=round(beta * BPS),
    )


def _run_economy(
    out: Path, sessions: int, seed: int, quiet: bool, cons: ConsensusParams, shape: TraceShape, **econ: float
) -> None:
    with errors_as_exit(ValidationError, ValueError):
        cfg = EconomyConfig(
            sessions=sessions,
            seed=seed,
            consensus=cons,
            shape=shape,
            population=(
                PopulationTier(
                    honest=int(econ["honest"]), malicious=int(econ["malicious"]), random=int(econ["random"])
                ),
            )
            * 3,
            reward=round(econ["R"] * 10**18),
            penalty=round(econ["P"] * 10**18),
            p_min=round(econ["p_min"] * WAD),
            p_max=round(econ["p_max"] * WAD),
            gamma=round(econ["gamma"] * WAD),
            flaw_rate=econ["flaw_rate"],
        )
    with _bar("economy: sessions", sessions, quiet) as tick, errors_as_exit(ValueError):
        res = simulate_economy(cfg, tick)
    js = _write(out, "economy", res)
    png = plot_economy(res, out / "economy.png")
    t = Table(title=f"Economy after {sessions} sessions (trace accuracy {100 * res.trace_accuracy:.1f}%)")
    for col in ("behaviour", "agents", "final reputation", "final profit (tokens)", "seats"):
        t.add_column(col, justify="right")
    for b, row in res.summary().items():
        t.add_row(
            b,
            f"{row['agents']:.0f}",
            f"{row['final_reputation_mean']:.3f}",
            f"{row['final_profit_mean']:.1f}",
            f"{row['seats_mean']:.0f}",
        )
    console.print(t)
    console.print(f"wrote {png} and {js}")


def _run_beta(
    out: Path,
    cons: ConsensusParams,
    shape: TraceShape,
    trials: int,
    n_flawed: int | None,
    seed: int,
    quiet: bool,
) -> None:
    with errors_as_exit(ValidationError, ValueError):
        cfg = BetaSweepConfig(consensus=cons, shape=shape, mc_trials=trials, n_flawed=n_flawed, seed=seed)
    with _bar("beta sweep: bounds", len(cfg.beta_bps), quiet) as tick, errors_as_exit(ValueError):
        res = beta_sweep(cfg, tick)
    js = _write(out, "beta_sweep", res)
    png = plot_beta_sweep(res, out / "beta_sweep.png")
    window = res.high_accuracy_window
    console.print(
        "beta window with accuracy > 99.99%: "
        + (f"[{window[0]:.2f}, {window[1]:.2f}]" if window else "none for these parameters")
    )
    console.print(f"wrote {png} and {js}")


def _run_corruption(
    out: Path,
    dataset: str,
    path: Path,
    cons: ConsensusParams,
    shape: TraceShape,
    repeats: int,
    n_traces: int,
    seed: int,
    quiet: bool,
) -> None:
    if dataset == "processbench":
        if not path.is_file():
            fail(f"ProcessBench file not found: {path} (run from the repository root or pass --processbench)")
        with errors_as_exit(ValueError, KeyError, json.JSONDecodeError):
            traces = processbench_traces(path)
        title = f"ProcessBench {path.stem}"
    elif dataset == "synthetic":
        traces = synthetic_traces(n_traces, shape, seed=seed)
        title = "synthetic"
    else:
        fail(f"unknown dataset {dataset!r}: use synthetic or processbench")
    with errors_as_exit(ValidationError, ValueError):
        cfg = CorruptionConfig(consensus=cons, repeats=repeats, seed=seed)
    with _bar(f"corruption sweep ({title})", len(cfg.rates) * repeats, quiet) as tick:
        res = corruption_sweep(traces, title, cfg, tick)
    js = _write(out, f"corruption_{dataset}", res)
    png = plot_corruption(res, out / f"corruption_{dataset}.png")
    t = Table(title=f"Trace accuracy (%) on {title}, {res.traces} traces, mean +- std over {repeats} runs")
    t.add_column("method")
    for r in res.rates:
        t.add_column("baseline" if r == 0 else f"{100 * r:g}% corr.", justify="right")
    for m in res.methods:
        t.add_row(m.method, *(f"{a:.1f}+-{s:.1f}" for a, s in zip(m.mean, m.std, strict=True)))
    console.print(t)
    console.print(f"wrote {png} and {js}")


_OUT = typer.Option(Path("sim-out"), "--out", help="Directory for PNG plots and JSON results.")
_SEED = typer.Option(7, "--seed", help="Seed of the run's random generator.")
_QUIET = typer.Option(False, "--quiet", help="No progress bars.")


def _shape(c: int, ll: int, h: int) -> TraceShape:
    with errors_as_exit(ValidationError):
        shape = TraceShape(computer=c, llm=ll, human=h)
    if shape.total == 0:
        fail("a trace needs at least one segment")
    return shape


@simulate_app.command("economy")
def economy_cmd(
    out: Path = _OUT,
    sessions: int = typer.Option(300, "--sessions", min=1),
    honest: int = typer.Option(12, "--honest", min=0, help="Honest auditors per tier."),
    malicious: int = typer.Option(2, "--malicious", min=0, help="Malicious auditors per tier."),
    random: int = typer.Option(2, "--random", min=0, help="Random guessers per tier."),
    R: float = typer.Option(6.0, "--R"),
    P: float = typer.Option(20.0, "--P"),
    p_min: float = typer.Option(0.3, "--p-min"),
    p_max: float = typer.Option(0.6, "--p-max"),
    gamma: float = typer.Option(0.05, "--gamma", help="Reputation step."),
    flaw_rate: float = typer.Option(0.05, "--flaw-rate", help="Share of wrong segments."),
    eps_l: float = typer.Option(0.05, "--eps-l"),
    eps_h: float = typer.Option(0.30, "--eps-h"),
    k_c: int = typer.Option(3, "--k-c"),
    k_l: int = typer.Option(3, "--k-l"),
    k_h: int = typer.Option(5, "--k-h"),
    seed: int = _SEED,
    quiet: bool = _QUIET,
) -> None:
    """Reputation and cumulative profit of honest, malicious and random auditors (Figure 7)."""
    cons = _consensus((k_c, k_l, k_h), (1, 2, 3), (0.0, eps_l, eps_h), 0.0, 0.6, 0.9)
    _run_economy(
        out, sessions, seed, quiet, cons, TraceShape(),
        honest=honest, malicious=malicious, random=random, R=R, P=P, p_min=p_min, p_max=p_max,
        gamma=gamma, flaw_rate=flaw_rate,
    )  # fmt: skip


@simulate_app.command("beta")
def beta_cmd(
    out: Path = _OUT,
    eps_c: float = typer.Option(0.0, "--eps-c"),
    eps_l: float = typer.Option(0.05, "--eps-l"),
    eps_h: float = typer.Option(0.30, "--eps-h"),
    rho_h: float = typer.Option(0.10, "--rho-h"),
    k_c: int = typer.Option(1, "--k-c"),
    k_l: int = typer.Option(3, "--k-l"),
    k_h: int = typer.Option(5, "--k-h"),
    tau: float = typer.Option(0.6, "--tau"),
    n_c: int = typer.Option(8, "--segments-c"),
    n_l: int = typer.Option(4, "--segments-l"),
    n_h: int = typer.Option(2, "--segments-h"),
    n_flawed: int = typer.Option(None, "--n-flawed", help="Wrong segments in a bad trace (default: all)."),
    trials: int = typer.Option(200_000, "--trials", min=1, help="Monte Carlo traces per class."),
    seed: int = _SEED,
    quiet: bool = _QUIET,
) -> None:
    """Exact, Hoeffding, Chernoff and Monte Carlo failure, TPR/FPR/accuracy, against beta (Figure 4)."""
    cons = _consensus((k_c, k_l, k_h), (1, 2, 3), (eps_c, eps_l, eps_h), rho_h, tau, 0.6)
    _run_beta(out, cons, _shape(n_c, n_l, n_h), trials, n_flawed, seed, quiet)


@simulate_app.command("corruption")
def corruption_cmd(
    out: Path = _OUT,
    dataset: str = typer.Option("synthetic", "--dataset", help="synthetic | processbench"),
    processbench: Path = typer.Option(DEFAULT_PROCESSBENCH, "--processbench", help="ProcessBench JSON file."),
    traces: int = typer.Option(400, "--traces", min=1, help="Synthetic traces."),
    repeats: int = typer.Option(10, "--repeats", min=1),
    eps_l: float = typer.Option(0.05, "--eps-l"),
    eps_h: float = typer.Option(0.30, "--eps-h"),
    rho_h: float = typer.Option(0.10, "--rho-h"),
    beta: float = typer.Option(1.0, "--beta", help="TRUST trace threshold."),
    seed: int = _SEED,
    quiet: bool = _QUIET,
) -> None:
    """Flip 5-20% of votes: TRUST vs a single auditor vs plain majority (Table 1 style)."""
    cons = _consensus((3, 3, 5), (1, 2, 3), (0.0, eps_l, eps_h), rho_h, 0.6, beta)
    _run_corruption(out, dataset, processbench, cons, TraceShape(), repeats, traces, seed, quiet)


@simulate_app.command("all")
def all_cmd(
    out: Path = _OUT,
    processbench: Path = typer.Option(DEFAULT_PROCESSBENCH, "--processbench"),
    sessions: int = typer.Option(300, "--sessions", min=1),
    trials: int = typer.Option(200_000, "--trials", min=1),
    repeats: int = typer.Option(10, "--repeats", min=1),
    seed: int = _SEED,
    quiet: bool = _QUIET,
) -> None:
    """Every simulation with its defaults: economy, beta sweep, corruption on synthetic and ProcessBench."""
    econ = _consensus((3, 3, 5), (1, 2, 3), (0.0, 0.05, 0.30), 0.0, 0.6, 0.9)
    _run_economy(
        out, sessions, seed, quiet, econ, TraceShape(),
        honest=12, malicious=2, random=2, R=6.0, P=20.0, p_min=0.3, p_max=0.6, gamma=0.05, flaw_rate=0.05,
    )  # fmt: skip
    fig4 = _consensus((1, 3, 5), (1, 2, 3), (0.0, 0.05, 0.30), 0.10, 0.6, 0.6)
    _run_beta(out, fig4, TraceShape(), trials, None, seed, quiet)
    table1 = _consensus((3, 3, 5), (1, 2, 3), (0.0, 0.05, 0.30), 0.10, 0.6, 1.0)
    _run_corruption(out, "synthetic", processbench, table1, TraceShape(), repeats, 400, seed, quiet)
    _run_corruption(out, "processbench", processbench, table1, TraceShape(), repeats, 400, seed, quiet)


def register(app: typer.Typer) -> None:
    from trustnode.cli.privacy import privacy_cmd
    from trustnode.cli.sim_guards import appeals_cmd, canaries_cmd

    simulate_app.command("privacy")(privacy_cmd)
    simulate_app.command("appeals")(appeals_cmd)
    simulate_app.command("canaries")(canaries_cmd)
    app.add_typer(simulate_app, name="simulate")
