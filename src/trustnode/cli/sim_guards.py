"""`trustnode simulate appeals|canaries` (issue 15): the two figures of the protocol's guards.

appeals: trace error with and without appeals over the paper's Table 1 corruption sweep (5%..30%
corrupted auditors); canaries: sessions until a lazy auditor (always PASS) and a random guesser
fall below the reputation threshold, by canary rate, with the honest auditors' false drops.
Each writes a PNG and a JSON holding every parameter and the seed (same seed, same figures).
"""

from __future__ import annotations

from pathlib import Path

import typer
from pydantic import ValidationError

from trustnode.cli.common import console, errors_as_exit, fail
from trustnode.consensus.appeals import AppealParams
from trustnode.consensus.sim_appeals import AppealSimConfig, AppealSimResult, simulate_appeals
from trustnode.consensus.sim_appeals import total_steps as appeal_steps
from trustnode.consensus.sim_canaries import CanarySimConfig, CanarySimResult, Kind, simulate_canaries
from trustnode.consensus.sim_canaries import total_steps as canary_steps

_OUT = typer.Option(Path("sim-out"), "--out", help="Directory for the PNG and the JSON.")
_SEED = typer.Option(7, "--seed", help="Seed of the run (recorded in the JSON).")
_QUIET = typer.Option(False, "--quiet", help="No progress bar.")


def _floats(text: str, what: str) -> list[float]:
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        fail(f"{what} must be comma-separated numbers, got {text!r}")
    if not vals or any(not 0 <= v <= 1 for v in vals):
        fail(f"{what} must be numbers between 0 and 1, got {text!r}")
    return vals


def plot_appeals(res: AppealSimResult, path: Path) -> Path:
    """Left: trace error per scenario (band = std over repeats); right: appeals per trace."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [100 * r for r in res.rates]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.4))
    for i, s in enumerate(res.series):
        colour = f"C{i}"
        y = [100 * v for v in s.trace_error]
        sd = [100 * v for v in s.trace_error_std]
        style = "--" if s.scenario.max_rounds == 0 else "-"
        ax.plot(x, y, style, color=colour, marker="o", ms=3, label=s.scenario.label)
        ax.fill_between(x, [a - b for a, b in zip(y, sd, strict=True)], [a + b for a, b in zip(y, sd, strict=True)],
                        color=colour, alpha=0.12)  # fmt: skip
        if s.scenario.max_rounds:
            ax2.plot(x, s.appeals_per_trace, color=colour, marker="o", ms=3, label=s.scenario.label)
    c = res.config
    ax.set(xlabel="corrupted auditors (%)", ylabel="trace error (%)", ylim=(0, None),
           title="Trace error with and without appeals")  # fmt: skip
    ax2.set(xlabel="corrupted auditors (%)", ylabel="appeal rounds per trace", title="Appeals opened")
    for a in (ax, ax2):
        a.grid(alpha=0.3)
        a.legend(fontsize=7)
    fig.suptitle(
        f"{c.traces} traces x {c.repeats} repeats per point, {c.population} auditors per tier, "
        f"k=({c.consensus.computer.k},{c.consensus.llm.k},{c.consensus.human.k}) panels 2k+1, "
        f"tau={c.consensus.tau_bps / 100:g}%, beta={c.consensus.beta_bps / 100:g}%, seed {c.seed}",
        fontsize=9,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_canaries(res: CanarySimResult, path: Path) -> Path:
    """Left: median sessions to drop below the threshold (band: quartiles); right: share dropped."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    c = res.config
    x = [100 * r for r in res.rates]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.4))
    for curve in res.curves:
        ax2.plot(x, [100 * v for v in curve.dropped_share], marker="o", ms=3, label=curve.kind.value)
        if curve.kind is Kind.HONEST:
            continue
        pts = [(xi, m) for xi, m in zip(x, curve.median_sessions, strict=True) if m is not None]
        if pts:
            ax.plot(*zip(*pts, strict=True), marker="o", ms=3, label=f"{curve.kind.value} (median)")
        band = [(xi, lo, hi) for xi, lo, hi in zip(x, curve.q25_sessions, curve.q75_sessions, strict=True)
                if lo is not None and hi is not None]  # fmt: skip
        if band:
            bx, lo, hi = zip(*band, strict=True)
            ax.fill_between(bx, lo, hi, alpha=0.15)
    ax.set(xlabel="canary rate (% of segments)", ylabel="sessions until reputation < threshold", yscale="log",
           title=f"Caught within {c.sessions} sessions (points beyond: fewer than half caught)")  # fmt: skip
    ax2.set(xlabel="canary rate (% of segments)", ylabel=f"dropped by session {c.sessions} (%)",
            title="Share below the threshold (honest = false drops)", ylim=(-2, 102))  # fmt: skip
    for a in (ax, ax2):
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    fig.suptitle(
        f"{c.replicas} auditors per behaviour, {c.seats} seats/session, k={c.k}, gamma={c.gamma:g}, "
        f"canaryGamma={c.canary_gamma:g}, r0={c.r0:g}, threshold={c.threshold:g}, eps={c.eps:g}, seed {c.seed}",
        fontsize=9,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def appeals_cmd(
    out: Path = _OUT,
    rates: str = typer.Option(
        "0.05,0.10,0.15,0.20,0.25,0.30", "--rates", help="Corrupted shares of auditors."
    ),
    traces: int = typer.Option(100, "--traces", min=1, help="Traces per point, repeat and scenario."),
    repeats: int = typer.Option(4, "--repeats", min=1, help="Corrupt sets drawn per rate."),
    population: int = typer.Option(200, "--population", min=1, help="Auditors per tier."),
    max_rounds: int = typer.Option(
        3, "--max-rounds", min=1, max=4, help="Appeal rounds of the appeal scenarios."
    ),
    reward_bps: int = typer.Option(2000, "--reward-bps", min=0, max=10_000, help="appealRewardBps."),
    watchdog_eps: float = typer.Option(
        0.02, "--watchdog-eps", min=0, max=1, help="The appellant's own error."
    ),
    seed: int = _SEED,
    quiet: bool = _QUIET,
) -> None:
    """Trace error with and without appeals under 5-30% corrupted auditors (Table 1 setting)."""
    from trustnode.cli.simulate import _bar, _write

    with errors_as_exit(ValidationError):
        base = AppealSimConfig()
        scenarios = [
            sc.model_copy(update={"max_rounds": max_rounds}) if sc.max_rounds else sc for sc in base.scenarios
        ]
        cfg = AppealSimConfig(
            rates=_floats(rates, "--rates"), traces=traces, repeats=repeats, population=population,
            scenarios=scenarios, watchdog_eps=watchdog_eps, seed=seed,
            appeal=AppealParams(max_rounds=max_rounds, reward_bps=reward_bps),
        )  # fmt: skip
    with _bar("appeals: rates x repeats", appeal_steps(cfg), quiet) as tick:
        res = simulate_appeals(cfg, tick)
    js = _write(out, "appeals", res)
    png = plot_appeals(res, out / "appeals.png")
    for s in res.series:
        console.print(
            f"{s.scenario.label:<32}: "
            + " ".join(f"{100 * r:g}%:{100 * e:.1f}" for r, e in zip(res.rates, s.trace_error, strict=True))
            + " (trace error %)"
        )
    console.print(f"wrote {png} and {js}")


def canaries_cmd(
    out: Path = _OUT,
    rates: str = typer.Option("0,0.025,0.05,0.075,0.10,0.15,0.20,0.25,0.30", "--rates", help="Canary rates."),
    sessions: int = typer.Option(500, "--sessions", min=1, help="Horizon."),
    replicas: int = typer.Option(400, "--replicas", min=1, help="Auditors per behaviour."),
    seats: int = typer.Option(4, "--seats", min=1, help="Seats an auditor holds per session."),
    threshold: float = typer.Option(0.75, "--threshold", min=0, max=1, help="Reputation threshold."),
    canary_gamma: float = typer.Option(0.1, "--canary-gamma", min=0.001, max=1, help="canaryGamma."),
    seed: int = _SEED,
    quiet: bool = _QUIET,
) -> None:
    """Sessions until a lazy auditor and a random guesser fall below the threshold, by canary rate."""
    from trustnode.cli.simulate import _bar, _write

    bps = [round(r * 10_000) for r in _floats(rates, "--rates")]
    with errors_as_exit(ValidationError):
        cfg = CanarySimConfig(rates_bps=bps, sessions=sessions, replicas=replicas, seats=seats,
                              threshold=threshold, canary_gamma=canary_gamma, seed=seed)  # fmt: skip
    if any(b > 3000 for b in bps):
        fail("--rates: the protocol caps the canary rate at 0.30")
    with _bar("canaries: rates x behaviours", canary_steps(cfg), quiet) as tick:
        res = simulate_canaries(cfg, tick)
    js = _write(out, "canaries", res)
    png = plot_canaries(res, out / "canaries.png")
    for curve in res.curves:
        med = " ".join(
            f"{100 * r:g}%:{'>' + str(cfg.sessions) if m is None else f'{m:g}'}"
            for r, m in zip(res.rates, curve.median_sessions, strict=True)
        )
        console.print(f"{curve.kind.value:<7} median sessions to drop: {med}")
    console.print(f"wrote {png} and {js}")
