"""PNG figures of the simulations (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from trustnode.consensus.sim_beta import BetaSweepResult  # noqa: E402
from trustnode.consensus.sim_corruption import CorruptionResult  # noqa: E402
from trustnode.consensus.simulation import Behaviour, EconomyResult  # noqa: E402

_COLOURS = {Behaviour.HONEST: "#1f77b4", Behaviour.MALICIOUS: "#d62728", Behaviour.RANDOM: "#ff7f0e"}


def plot_economy(res: EconomyResult, path: Path) -> Path:
    """Reputation (left) and cumulative profit (right) per agent, mean per behaviour in bold (Figure 7)."""
    fig, (ax_r, ax_p) = plt.subplots(1, 2, figsize=(13, 5), constrained_layout=True)
    x = np.arange(1, res.config.sessions + 1)
    for b in Behaviour:
        group = [a for a in res.agents if a.behaviour == b]
        if not group:
            continue
        reps = np.array([a.reputation for a in group])
        profits = np.array([a.profit for a in group])
        for row_r, row_p in zip(reps, profits, strict=True):
            ax_r.plot(x, row_r, color=_COLOURS[b], alpha=0.15, linewidth=0.8)
            ax_p.plot(x, row_p, color=_COLOURS[b], alpha=0.15, linewidth=0.8)
        label = f"{b.value} (n={len(group)})"
        ax_r.plot(x, reps.mean(axis=0), color=_COLOURS[b], linewidth=2.5, label=label)
        ax_p.plot(x, profits.mean(axis=0), color=_COLOURS[b], linewidth=2.5, label=label)
    ax_r.set(title="Reputation", xlabel="session", ylabel="reputation r", ylim=(-0.02, 1.02))
    ax_p.set(title="Cumulative profit", xlabel="session", ylabel="tokens (rewards - slashes)")
    ax_p.axhline(0.0, color="black", linewidth=0.8)
    for ax in (ax_r, ax_p):
        ax.grid(alpha=0.3)
        ax.legend(loc="best")
    c = res.config
    fig.suptitle(
        f"{c.sessions} sessions, R={c.reward / 1e18:g}, P={c.penalty / 1e18:g}, "
        f"p_slash in [{c.p_min / 1e18:g}, {c.p_max / 1e18:g}], gamma={c.gamma / 1e18:g}; "
        "thin lines: agents, bold: mean"
    )
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_beta_sweep(res: BetaSweepResult, path: Path) -> Path:
    """Failure probability and its bounds (left), TPR/FPR/accuracy (right) against beta (Figure 4)."""
    fig, (ax_f, ax_a) = plt.subplots(1, 2, figsize=(13, 5), constrained_layout=True)
    beta = np.array(res.beta)
    floor = 1e-18

    def clip(v: list[float]) -> np.ndarray:
        return np.maximum(np.array(v), floor)

    ax_f.semilogy(beta, clip(res.hoeffding), label="Hoeffding bound", color="#2ca02c", linestyle="--")
    ax_f.semilogy(beta, clip(res.chernoff), label="Chernoff bound", color="#9467bd", linestyle="-.")
    ax_f.semilogy(beta, clip(res.exact), label="exact (0 drawn at 1e-18)", color="black", linewidth=2)
    mc = np.array(res.monte_carlo)
    nz = mc > 0
    ax_f.semilogy(
        beta[nz], mc[nz], "o", markersize=3, color="#ff7f0e", label=f"Monte Carlo ({res.config.mc_trials:,})"
    )
    ax_f.axhline(
        1.0 / res.config.mc_trials, color="#ff7f0e", linewidth=0.7, linestyle=":", label="MC resolution"
    )
    ax_f.set(
        title="Pr[correct trace fails] = Pr[W < W_beta]",
        xlabel="trace threshold beta",
        ylabel="probability",
        ylim=(floor, 2.0),
    )
    ax_a.plot(beta, res.accuracy, label="accuracy", color="black", linewidth=2)
    ax_a.plot(beta, res.tpr, label="TPR (correct trace passes)", color="#1f77b4")
    wrong = "all segments" if res.config.n_flawed is None else f"{res.config.n_flawed} segment(s)"
    ax_a.plot(beta, res.fpr, label=f"FPR (trace with {wrong} wrong passes)", color="#d62728")
    if res.high_accuracy_window is not None:
        lo, hi = res.high_accuracy_window
        ax_a.axvspan(lo, hi, color="grey", alpha=0.3, label="accuracy > 99.99%")
    ax_a.set(title="Trace verdict quality", xlabel="trace threshold beta", ylabel="rate", ylim=(-0.02, 1.02))
    for ax in (ax_f, ax_a):
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize=8)
    c = res.config.consensus
    fig.suptitle(
        f"eps C/L/H = {c.computer.eps:g}/{c.llm.eps:g}/{c.human.eps:g}, rho_H = {c.human.rho:g}, "
        f"k C/L/H = {c.computer.k}/{c.llm.k}/{c.human.k}, tau = {c.tau_bps / 10000:g}, "
        f"segments C/L/H = {res.config.shape.computer}/{res.config.shape.llm}/{res.config.shape.human}"
    )
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_corruption(res: CorruptionResult, path: Path) -> Path:
    """Trace accuracy per method as a growing share of votes is flipped (Table 1 / Figure 6 style)."""
    fig, ax = plt.subplots(figsize=(7.5, 5), constrained_layout=True)
    rates = 100.0 * np.array(res.rates)
    for m in res.methods:
        mean, std = np.array(m.mean), np.array(m.std)
        ax.errorbar(rates, mean, yerr=std, marker="o", capsize=3, label=m.method)
    c = res.config.consensus
    ax.set(
        title=(
            f"{res.dataset}: {res.traces} traces ({res.bad_traces} wrong)\n"
            f"eps C/L/H {c.computer.eps:g}/{c.llm.eps:g}/{c.human.eps:g}, rho_H {c.human.rho:g}; "
            f"TRUST k {c.computer.k}/{c.llm.k}/{c.human.k}, tau {c.tau_bps / 10000:g}, beta {c.beta_bps / 10000:g}"
        ),
        xlabel="votes flipped (%)",
        ylabel="trace accuracy (%)",
    )
    ax.grid(alpha=0.3)
    ax.legend(loc="best")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
