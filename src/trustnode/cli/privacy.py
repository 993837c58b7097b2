"""`trustnode simulate privacy`: how much of a trace k colluding auditors can rebuild (issue 16).

Each trace (the bundled samples and the shared ProcessBench traces) is decomposed offline into
its HDAG. For every setting of seats per tier (k_t) and seat cap, sessions are drawn the way
the contract draws them (k_t distinct auditors per segment of tier t from that tier's
population, uniform stake, none above the cap; a segment that cannot be filled cancels the
session), and the node's key-release rule decides which segment keys each drawn auditor
receives. A coalition of k drawn auditors pools its keys; the figure shows the share of the
trace's thinking characters the worst coalition of each size can read (chosen greedily, which
finds at least 63% of the true worst case and in practice nearly all of it), before the
privacy share (every seat's problem, parents and children) and under it.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

import typer
from pydantic import BaseModel, Field, ValidationError

from trustnode.cli.common import console, errors_as_exit, fail
from trustnode.hdag.offline import decompose_offline
from trustnode.models.trace import TraceInput
from trustnode.node.privacy import MAX_DECRYPT_SHARE, covered, plan_release, thinking_spans, unrestricted_keys
from trustnode.node.samples import load_samples
from trustnode.node.structure import SessionShape

Span = tuple[int, int]
POLICIES = ("before", "after")
DEFAULT_PROCESSBENCH = (
    Path("../shared/eval/processbench/gsm8k.json"),
    Path("../shared/eval/processbench/math.json"),
)


class PrivacyTrace(BaseModel):
    """What the simulation needs of one decomposed trace."""

    name: str
    tiers: list[int]
    spans: list[list[Span]]
    shape: SessionShape


class PrivacyConfig(BaseModel):
    """Everything a run depends on (recorded in the JSON next to the figure)."""

    coalition_sizes: list[int] = Field(description="k: how many drawn auditors collude.")
    seat_caps: list[int]
    seats_per_tier: list[tuple[int, int, int]]
    population: tuple[int, int, int] = Field(description="Auditors per tier in the network.")
    share: float = Field(gt=0, le=1, description="The key-release rule's privacy share.")
    draws: int = Field(ge=1, description="Sessions drawn per trace and setting.")
    seed: int
    sources: list[str]
    traces: int


class PrivacyCurve(BaseModel):
    """One line of the figure: a policy under one (seats per tier, cap) setting."""

    policy: str
    seats_per_tier: tuple[int, int, int]
    seat_cap: int
    sessions: int = Field(description="Sessions drawn (cancelled ones excluded from the shares).")
    cancelled: int
    mean: list[float] = Field(description="Mean share rebuilt by the worst coalition of each size.")
    p95: list[float]
    max: list[float]


class PrivacyResult(BaseModel):
    config: PrivacyConfig
    curves: list[PrivacyCurve]


def load_traces(sources: Sequence[Path], limit: int) -> list[PrivacyTrace]:
    """The bundled samples, then up to `limit` traces of each ProcessBench file (0: all)."""
    from trustnode.audit.evaluation.datasets import load_processbench

    inputs: list[tuple[str, TraceInput]] = [(f"sample:{s.name}", s.trace) for s in load_samples()]
    for path in sources:
        items = load_processbench(path).items
        for item in items[:limit] if limit else items:
            inputs.append((f"{path.stem}:{item.id}", TraceInput(problem=item.problem, steps=item.steps)))
    out = []
    for name, trace in inputs:
        hdag = decompose_offline(trace)
        out.append(
            PrivacyTrace(
                name=name,
                tiers=[int(n.primary_auditor.tier) for n in hdag.nodes],
                spans=thinking_spans(hdag),
                shape=SessionShape.from_hdag(hdag, [1] * len(hdag.nodes)),
            )
        )
    return out


def draw_seats(
    tiers: Sequence[int],
    k: tuple[int, int, int],
    cap: int,
    population: tuple[int, int, int],
    rng: random.Random,
) -> dict[str, list[int]] | None:
    """Seats of one session as the contract draws them; None when a segment cannot be filled."""
    held: dict[str, list[int]] = {}
    for index, tier in enumerate(tiers):
        pool = [f"t{tier}-{j}" for j in range(population[tier]) if len(held.get(f"t{tier}-{j}", [])) < cap]
        if len(pool) < k[tier]:
            return None
        for auditor in rng.sample(pool, k[tier]):
            held.setdefault(auditor, []).append(index)
    return held


def released(policy: str, trace: PrivacyTrace, seats: dict[str, list[int]], share: float) -> list[set[int]]:
    """The segments each drawn auditor can decrypt under `policy`."""
    if policy == "before":
        return [unrestricted_keys(trace.shape, own) for own in seats.values()]
    plans = plan_release(trace.shape, trace.spans, seats, share=share)
    return [set(p.keys) for p in plans.values()]


def worst_coalitions(keys: list[set[int]], spans: list[list[Span]], sizes: Sequence[int]) -> list[float]:
    """Greedy worst coalition of each size: the share of the thinking its pooled keys cover."""
    total = covered(spans, range(len(spans))) or 1
    pooled: set[int] = set()
    left = list(range(len(keys)))
    shares: dict[int, float] = {}
    for size in range(1, max(sizes) + 1):
        if left:
            best = max(left, key=lambda a: covered(spans, pooled | keys[a]))
            pooled |= keys[best]
            left.remove(best)
        shares[size] = covered(spans, pooled) / total
    return [shares[s] for s in sizes]


def simulate_privacy(
    cfg: PrivacyConfig, traces: list[PrivacyTrace], tick: Callable[[int], None] | None = None
) -> PrivacyResult:
    curves = []
    done = 0
    for k in cfg.seats_per_tier:
        for cap in cfg.seat_caps:
            rng = random.Random(f"{cfg.seed}:{k}:{cap}")
            rows: dict[str, list[list[float]]] = {p: [] for p in POLICIES}
            sessions = cancelled = 0
            for trace in traces:
                for _ in range(cfg.draws):
                    sessions += 1
                    seats = draw_seats(trace.tiers, k, cap, cfg.population, rng)
                    if seats is None:
                        cancelled += 1
                        continue
                    for policy in POLICIES:
                        keys = released(policy, trace, seats, cfg.share)
                        rows[policy].append(worst_coalitions(keys, trace.spans, cfg.coalition_sizes))
                done += 1
                if tick is not None:
                    tick(done)
            for policy in POLICIES:
                columns = list(zip(*rows[policy], strict=True)) if rows[policy] else []
                curves.append(
                    PrivacyCurve(
                        policy=policy,
                        seats_per_tier=k,
                        seat_cap=cap,
                        sessions=sessions,
                        cancelled=cancelled,
                        mean=[round(statistics.fmean(c), 4) for c in columns],
                        p95=[round(sorted(c)[int(0.95 * (len(c) - 1))], 4) for c in columns],
                        max=[round(max(c), 4) for c in columns],
                    )
                )
    return PrivacyResult(config=cfg, curves=curves)


def plot_privacy(res: PrivacyResult, path: Path) -> Path:
    """One panel per seats-per-tier setting; a colour per seat cap; dashed before, solid under the share."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    settings = res.config.seats_per_tier
    fig, axes = plt.subplots(1, len(settings), figsize=(5.2 * len(settings), 4.6), squeeze=False, sharey=True)
    colours = plt.get_cmap("viridis")
    x = res.config.coalition_sizes
    for ax, k in zip(axes[0], settings, strict=True):
        for ci, cap in enumerate(res.config.seat_caps):
            colour = colours(ci / max(1, len(res.config.seat_caps) - 1))
            for curve in res.curves:
                if curve.seats_per_tier != k or curve.seat_cap != cap or not curve.mean:
                    continue
                style = "--" if curve.policy == "before" else "-"
                label = None
                if curve.policy == "after":
                    label = f"cap {cap}" + (
                        f" ({100 * curve.cancelled / curve.sessions:.0f}% cancelled)"
                        if curve.cancelled
                        else ""
                    )
                ax.plot(x, [100 * v for v in curve.mean], style, color=colour, marker="o", ms=3, label=label)
        ax.plot([], [], "--", color="black", label="before: every context key")
        ax.plot([], [], "-", color="black", label=f"under the {100 * res.config.share:g}% share")
        ax.axhline(100 * res.config.share, color="grey", linewidth=0.8, linestyle=":")
        ax.set(
            title=f"seats per tier {','.join(map(str, k))} (computer,llm,human)",
            xlabel="colluding auditors k",
            ylim=(0, 101),
        )
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("thinking characters they can read (%, mean of worst coalition)")
    fig.suptitle(
        f"Trace rebuilt by colluding auditors: {res.config.traces} traces, {res.config.draws} draws each, "
        f"population {','.join(map(str, res.config.population))}, privacy share {100 * res.config.share:g}%",
        fontsize=10,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _triples(text: str, what: str) -> list[tuple[int, int, int]]:
    out = []
    for part in text.split(";"):
        nums = [int(x) for x in part.split(",") if x.strip()]
        if len(nums) != 3 or min(nums) < 1:
            fail(f"{what} must be triples of positive integers like 2,1,1;3,3,5, got {part!r}")
        out.append((nums[0], nums[1], nums[2]))
    return out


def privacy_cmd(
    out: Path = typer.Option(Path("sim-out"), "--out", help="Directory for the PNG and the JSON."),
    processbench: list[Path] = typer.Option(
        list(DEFAULT_PROCESSBENCH), "--processbench", help="ProcessBench JSON files (repeatable)."
    ),
    limit: int = typer.Option(100, "--limit", min=0, help="Traces per ProcessBench file (0: all)."),
    seats: str = typer.Option(
        "1,1,1;2,1,1;3,3,5", "--seats", metavar="C,L,H;...", help="Seats-per-tier settings to compare."
    ),
    caps: str = typer.Option("2,4,8,32", "--caps", metavar="N,...", help="Seat caps to compare."),
    population: str = typer.Option("16,8,8", "--population", metavar="C,L,H", help="Auditors per tier."),
    max_k: int = typer.Option(6, "--max-k", min=1, metavar="N", help="Largest coalition."),
    share: float = typer.Option(MAX_DECRYPT_SHARE, "--share", help="The key-release rule's privacy share."),
    draws: int = typer.Option(3, "--draws", min=1, help="Sessions drawn per trace and setting."),
    seed: int = typer.Option(7, "--seed", help="Seed of the draws."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
) -> None:
    """How much of a trace k colluding auditors can rebuild, by seat cap and seats per tier (issue 16)."""
    from trustnode.cli.simulate import _bar, _write

    missing = [str(p) for p in processbench if not p.is_file()]
    if missing:
        fail(
            f"ProcessBench file not found: {', '.join(missing)} (run from the repository root or pass --processbench)"
        )
    pop = _triples(population, "--population")[0]
    try:
        cap_list = [int(c) for c in caps.split(",") if c.strip()]
    except ValueError:
        fail(f"--caps must be integers like 2,4,8,32, got {caps!r}")
    with console.status("decomposing traces offline ..."), errors_as_exit(ValueError):
        traces = load_traces(processbench, limit)
    with errors_as_exit(ValidationError):
        cfg = PrivacyConfig(
            coalition_sizes=list(range(1, max_k + 1)),
            seat_caps=cap_list,
            seats_per_tier=_triples(seats, "--seats"),
            population=pop,
            share=share,
            draws=draws,
            seed=seed,
            sources=["bundled samples", *(str(p) for p in processbench)],
            traces=len(traces),
        )
    total = len(cfg.seats_per_tier) * len(cfg.seat_caps) * len(traces)
    with _bar("privacy: traces x settings", total, quiet) as tick:
        res = simulate_privacy(cfg, traces, tick)
    js = _write(out, "privacy", res)
    png = plot_privacy(res, out / "privacy.png")
    for c in res.curves:
        if c.mean:
            console.print(
                f"seats {','.join(map(str, c.seats_per_tier))} cap {c.seat_cap:>2} {c.policy:<6}: "
                + " ".join(f"k={k} {100 * v:.0f}%" for k, v in zip(cfg.coalition_sizes, c.mean, strict=True))
                + (f" ({c.cancelled} of {c.sessions} sessions cancelled)" if c.cancelled else "")
            )
    console.print(f"wrote {png} and {js}")
