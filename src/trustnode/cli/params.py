"""`trustnode params check|tune`: Theorem D.1's dials for a parameter setting, and the tuner."""

from __future__ import annotations

import math

import typer
from pydantic import ValidationError
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from trustnode.cli.common import console, errors_as_exit, print_json
from trustnode.consensus.dials import EconomicParams, check_dials
from trustnode.consensus.rules import BPS
from trustnode.consensus.trace import ConsensusParams, TierSetting, TraceShape
from trustnode.consensus.tuner import TuneError, TuneRequest, tune

params_app = typer.Typer(
    help="Check and tune consensus and economic parameters (Theorem D.1).", no_args_is_help=True
)


def _bps(x: float, name: str) -> int:
    if not 0.0 <= x <= 1.0:
        raise typer.BadParameter(f"{name} must be a ratio in [0, 1], got {x}")
    return round(x * BPS)


def _fmt_exp(log_value: float) -> str:
    """A probability given by its natural log, as e^x ~ 10^y."""
    if log_value == -math.inf:
        return "0"
    return f"e^{log_value:.1f} ~ 10^{log_value / math.log(10):.1f}"


def _ok(flag: bool) -> str:
    return "[green]holds[/]" if flag else "[red]fails[/]"


@params_app.command("check")
def check_cmd(
    R: float = typer.Option(6.0, "--R", help="Reward per agreeing vote."),
    P: float = typer.Option(8.0, "--P", help="Penalty per slashed vote."),
    p_min: float = typer.Option(0.2, "--p-min", help="Slash probability at reputation 1."),
    p_max: float = typer.Option(0.5, "--p-max", help="Slash probability at reputation 0."),
    delta: float = typer.Option(
        0.2, "--delta", help="Design constant: minimum loss per malicious seat, as delta*P."
    ),
    lam: float = typer.Option(60.0, "--lam", help="Segments per unit time (lambda)."),
    T: float = typer.Option(24.0, "--T", help="Horizon in the same time unit."),
    eps_h: float = typer.Option(0.30, "--eps-h", help="Honest human error rate."),
    eps_c: float = typer.Option(0.0, "--eps-c", help="Computer error rate."),
    eps_l: float = typer.Option(0.05, "--eps-l", help="LLM error rate."),
    rho_h: float = typer.Option(0.10, "--rho-h", help="Probability a human seat is malicious."),
    k_c: int = typer.Option(1, "--k-c", help="Seats per computer segment."),
    k_l: int = typer.Option(3, "--k-l", help="Seats per LLM segment."),
    k_h: int = typer.Option(5, "--k-h", help="Seats per human segment."),
    w_c: int = typer.Option(1, "--w-c", help="Weight of a computer segment."),
    w_l: int = typer.Option(2, "--w-l", help="Weight of an LLM segment."),
    w_h: int = typer.Option(3, "--w-h", help="Weight of a human segment."),
    n_c: int = typer.Option(8, "--segments-c", help="Computer segments per trace."),
    n_l: int = typer.Option(4, "--segments-l", help="LLM segments per trace."),
    n_h: int = typer.Option(2, "--segments-h", help="Human segments per trace."),
    tau: float = typer.Option(0.6, "--tau", help="Segment quorum ratio (> 0.5)."),
    beta: float = typer.Option(0.6, "--beta", help="Trace threshold ratio."),
    eps_target: float = typer.Option(
        1e-6, "--eps-target", help="Target probability that any trace fails in T."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the full report as JSON."),
    strict: bool = typer.Option(False, "--strict", help="Exit with status 1 unless every dial holds."),
) -> None:
    """Evaluate the statistical dial (S1), the economic dial (E1) and both tail bounds."""
    with errors_as_exit(ValidationError, ValueError):
        econ = EconomicParams(R=R, P=P, p_min=p_min, p_max=p_max, delta=delta, lam=lam, T=T, eps_h=eps_h)
        cons = ConsensusParams(
            computer=TierSetting(k=k_c, weight=w_c, eps=eps_c),
            llm=TierSetting(k=k_l, weight=w_l, eps=eps_l),
            human=TierSetting(k=k_h, weight=w_h, eps=eps_h, rho=rho_h),
            tau_bps=_bps(tau, "tau"),
            beta_bps=_bps(beta, "beta"),
        )
        shape = TraceShape(computer=n_c, llm=n_l, human=n_h)
        if shape.total == 0:
            raise ValueError("a trace needs at least one segment")
        rep = check_dials(econ, cons, shape, eps_target)
    if json_out:
        print_json(rep.model_dump(mode="json"))
    else:
        e, s = rep.economic_report, rep.statistical_report
        t = Table(title="Economic layer (Theorem D.1)", show_header=True)
        t.add_column("quantity")
        t.add_column("value", justify="right")
        t.add_row("mu_min", f"{e.mu_min:.1f}")
        t.add_row("sigma_H^2", f"{e.sigma_h_sq:.1f}")
        t.add_row("b", f"{e.b:g}")
        t.add_row(
            "honest tail exponent",
            f"{e.honest_tail_exponent:.1f}  (Pr <= {_fmt_exp(e.honest_tail_exponent)})",
        )
        t.add_row(
            "malicious tail exponent",
            f"{e.malicious_tail_exponent:.1f}  (Pr <= {_fmt_exp(e.malicious_tail_exponent)})",
        )
        t.add_row("malicious expected loss / segment", f"{e.malicious_expected_loss:.1f}")
        t.add_row("malicious loss at reputation 1", f"{e.malicious_expected_loss_worst:.1f}")
        t.add_row("E1: R > eps/(1-eps) P p_max", f"{R:g} > {e.reward_lower_bound:.3f}: {_ok(e.e1_reward_ok)}")
        t.add_row(
            "E1: p_min >= delta/(1-alpha)",
            f"{p_min:g} >= {e.p_min_lower_bound:.3f} (alpha {e.alpha:.3f}): {_ok(e.e1_p_min_ok)}",
        )
        t.add_row("economic dial", _ok(e.economic_dial_ok))
        console.print(t)
        u = Table(title=f"Statistical layer (trace of {shape.total} segments, beta {beta:g})")
        u.add_column("quantity")
        u.add_column("value", justify="right")
        u.add_row("mu_vote", f"{s.mu_vote:.4f}")
        u.add_row("sigma_vote^2 / sigma_max^2", f"{s.sigma_vote_sq:.4f} / {s.sigma_max_sq:g}")
        u.add_row("mu_vote - W_beta", f"{s.margin:.4f}")
        u.add_row("S1 needs (sigma_vote)", f"{s.s1_required_margin:.4f}: {_ok(s.s1_ok)}")
        u.add_row("Hoeffding needs (sigma_max)", f"{s.hoeffding_required_margin:.4f}: {_ok(s.hoeffding_ok)}")
        u.add_row("Pr\\[trace fails] exact", f"{s.trace_failure_exact:.3e}")
        u.add_row(
            "Pr\\[trace fails] Hoeffding / Chernoff",
            f"{s.trace_failure_hoeffding:.3e} / {s.trace_failure_chernoff:.3e}",
        )
        u.add_row(
            f"lambda T x exact vs eps_target {eps_target:g}",
            f"{s.horizon_failure_exact_bound:.3e}: {_ok(s.exact_ok)}",
        )
        console.print(u)
        console.print(f"all dials: {_ok(rep.all_ok)}")
    if strict and not rep.all_ok:
        raise typer.Exit(1)


@params_app.command("tune")
def tune_cmd(
    eps_c: float = typer.Option(0.0, "--eps-c", help="Computer error rate."),
    eps_l: float = typer.Option(0.05, "--eps-l", help="LLM error rate."),
    eps_h: float = typer.Option(0.30, "--eps-h", help="Honest human error rate."),
    rho_h: float = typer.Option(0.10, "--rho-h", help="Probability a human seat is malicious."),
    n_c: int = typer.Option(8, "--segments-c", help="Computer segments per trace."),
    n_l: int = typer.Option(4, "--segments-l", help="LLM segments per trace."),
    n_h: int = typer.Option(2, "--segments-h", help="Human segments per trace."),
    w_c: int = typer.Option(1, "--w-c"),
    w_l: int = typer.Option(2, "--w-l"),
    w_h: int = typer.Option(3, "--w-h"),
    eps_target: float = typer.Option(
        1e-6, "--eps-target", help="Target probability that any trace fails in T."
    ),
    lam: float = typer.Option(60.0, "--lam"),
    T: float = typer.Option(24.0, "--T"),
    delta: float = typer.Option(0.2, "--delta"),
    min_beta: float = typer.Option(0.5, "--min-beta", help="Lowest trace threshold allowed."),
    max_false_accept: float = typer.Option(
        None, "--max-false-accept", help="Cap on Pr[a trace with one wrong segment passes] (default: none)."
    ),
    min_malicious_loss: float = typer.Option(1.6, "--min-malicious-loss", help="Required P * p_min."),
    max_honest_tail: float = typer.Option(1e-6, "--max-honest-tail"),
    max_malicious_tail: float = typer.Option(1e-6, "--max-malicious-tail"),
    k_max: int = typer.Option(15, "--k-max", help="Largest seats per segment to try."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Find the cheapest setting (seats x R per trace) meeting the failure target and both dials."""
    with errors_as_exit(ValidationError, ValueError):
        req = TuneRequest(
            shape=TraceShape(computer=n_c, llm=n_l, human=n_h),
            eps=(eps_c, eps_l, eps_h),
            rho_h=rho_h,
            weights=(w_c, w_l, w_h),
            eps_target=eps_target,
            lam=lam,
            T=T,
            delta=delta,
            min_beta_bps=_bps(min_beta, "min-beta"),
            max_false_accept=max_false_accept,
            min_malicious_loss=min_malicious_loss,
            max_honest_tail=max_honest_tail,
            max_malicious_tail=max_malicious_tail,
            k_max=k_max,
        )
    with (
        Progress(
            TextColumn("searching k, tau, beta"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            disable=json_out,
        ) as bar,
        errors_as_exit(TuneError),
    ):
        task = bar.add_task("tune", total=None)

        def on_progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        res = tune(req, on_progress)
    if json_out:
        print_json(res.model_dump(mode="json"))
        return
    c = res.statistical.consensus
    e = res.economic.economic
    t = Table(
        title=f"Cheapest setting: {res.seats} seats x R {res.reward:g} = {res.cost_per_trace:g} per trace"
    )
    t.add_column("parameter")
    t.add_column("value", justify="right")
    t.add_row("k computer / LLM / human", f"{c.computer.k} / {c.llm.k} / {c.human.k}")
    t.add_row("tau / beta", f"{c.tau_bps / BPS:g} / {c.beta_bps / BPS:g}")
    t.add_row("R / P", f"{e.R:g} / {e.P:g}")
    t.add_row("p_min / p_max", f"{e.p_min:g} / {e.p_max:g}")
    t.add_row("Pr\\[trace fails] exact", f"{res.statistical.trace_failure:.3e}")
    t.add_row("lambda T x Pr\\[trace fails]", f"{res.statistical.horizon_failure:.3e}")
    t.add_row("Pr\\[trace with 1 wrong segment passes]", f"{res.statistical.false_accept:.3e}")
    t.add_row(
        "honest / malicious tail",
        f"10^{res.economic.honest_tail_log10:.1f} / 10^{res.economic.malicious_tail_log10:.1f}",
    )
    t.add_row("candidates checked", str(res.candidates_checked))
    console.print(t)


def register(app: typer.Typer) -> None:
    app.add_typer(params_app, name="params")
