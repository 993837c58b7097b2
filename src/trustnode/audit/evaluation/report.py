"""Write a run's report: markdown, JSON, per-trace rows and a PNG plot."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from trustnode.audit.evaluation.metrics import Metrics  # noqa: E402
from trustnode.audit.evaluation.runner import EvalReport, Excluded  # noqa: E402


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _figures(m: Metrics) -> list[str]:
    return [
        f"{_pct(m.accuracy_erroneous)}",
        f"{_pct(m.accuracy_correct)}",
        f"{_pct(m.f1)}",
        f"{_pct(m.exact_first_error_accuracy)}",
        f"{m.false_alarms} ({_pct(m.false_alarm_rate)} of correct traces)",
        f"{_pct(m.coverage)}",
        f"{m.claims_checked}",
        f"{m.n} ({m.n_erroneous} with an error, {m.n_correct} without)",
    ]


_FIGURE_NAMES = [
    "accuracy on erroneous traces (exact first error)",
    "accuracy on correct traces (no alarm)",
    "F1 (ProcessBench)",
    "exact first-error accuracy, all traces",
    "false alarms",
    "coverage (auditor decided >= 1 segment)",
    "claims checked",
    "traces",
]


def _excluded(title: str, items: list[Excluded]) -> list[str]:
    if not items:
        return []
    rows = [f"| {e.id} | {e.reason.replace('|', '/')} |" for e in items]
    return [f"## {title}", "", "| id | reason |", "|---|---|", *rows, ""]


def markdown(report: EvalReport, max_rows: int = 400) -> str:
    """The human-readable report (every figure also in report.json)."""
    m, clean = report.metrics, report.metrics_without_suspect
    c = m.confusion
    lines = [
        f"# Audit evaluation: {report.auditor.value} on {report.format.value}",
        "",
        f"- file: `{report.file}`",
        f"- auditor: `{report.auditor.value}`; calculator annotations: {report.annotations}",
        f"- traces audited: {m.n}" + (f"; limit {report.limit}" if report.limit else ""),
        f"- malformed records skipped: {len(report.skipped)}; suspect labels (kept, figures both ways): "
        f"{len(report.suspect)}; could not be audited: {len(report.failed)}",
        f"- run time: {report.elapsed_s:.1f} s",
        "",
        "## Figures",
        "",
        "| figure | all traces | without suspect labels |",
        "|---|---|---|",
        *(
            f"| {n} | {a} | {b} |"
            for n, a, b in zip(_FIGURE_NAMES, _figures(m), _figures(clean), strict=True)
        ),
        "",
        "## Confusion (all traces)",
        "",
        "| label \\ prediction | exact step | too early | too late | no error |",
        "|---|---|---|---|---|",
        f"| has an error | {c.exact} | {c.early} | {c.late} | {c.missed} |",
        f"| no error | - | {c.false_alarm} (false alarm) | - | {c.clean} |",
        "",
    ]
    if report.llm is not None:
        u = report.llm
        mean = "n/a" if u.mean_latency_s is None else f"{u.mean_latency_s:.2f} s"
        lines += [
            "## LLM calls",
            "",
            "| requests | calls | prompt tokens | completion tokens | mean latency | parse failures | "
            "repairs | repaired | failed | rejected | retries | cache hits |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
            f"| {u.requests} | {u.calls} | {u.prompt_tokens} | {u.completion_tokens} | {mean} | "
            f"{u.parse_failures} | {u.repairs} | {u.repaired} | {u.failed} | {u.rejected} | {u.retries} | "
            f"{u.cache_hits} |",
            "",
        ]
    if report.structure:
        lines += [
            "## Structural findings against the step labels",
            "",
            "| finding | votes FAIL | on wrong steps | on correct steps | precision |",
            "|---|---|---|---|---|",
            *(
                f"| {f.kind} | {'yes' if f.votes else 'no (evidence)'} | {f.on_wrong_steps} | "
                f"{f.on_correct_steps} | {_pct(f.precision)} |"
                for f in report.structure
            ),
            "",
        ]
    lines += _excluded("Traces that could not be audited", report.failed)
    lines += _excluded("Suspect labels (kept; figures shown with and without)", report.suspect)
    lines += _excluded("Malformed records (skipped)", report.skipped)
    lines += [
        "## Traces",
        "",
        "| id | label | predicted | outcome | suspect | decided segments | claims | first failure |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in report.rows[:max_rows]:
        reason = r.reason.replace("|", "\\|").replace("\n", " ")
        lines.append(
            f"| {r.id} | {r.label} | {r.predicted} | {r.outcome} | {'yes' if r.suspect else ''} | "
            f"{r.decided_segments}/{r.segments} | {r.claims_checked} | {reason} |"
        )
    if len(report.rows) > max_rows:
        lines.append(f"\n{len(report.rows) - max_rows} more rows in rows.jsonl.")
    return "\n".join(lines) + "\n"


def plot(report: EvalReport, path: Path) -> None:
    """Headline figures and the confusion counts, side by side."""
    m = report.metrics
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    names = ["acc. erroneous", "acc. correct", "F1", "coverage"]
    values = [m.accuracy_erroneous, m.accuracy_correct, m.f1, m.coverage]
    shown = [100 * v if v is not None else 0.0 for v in values]
    bars = ax1.bar(names, shown, color=["#c0504d", "#4f81bd", "#9bbb59", "#8064a2"])
    for b, v in zip(bars, values, strict=True):
        ax1.annotate("n/a" if v is None else f"{100 * v:.1f}", (b.get_x() + b.get_width() / 2, b.get_height()),
                     ha="center", va="bottom", fontsize=9)  # fmt: skip
    ax1.set_ylim(0, 105)
    ax1.set_ylabel("%")
    ax1.set_title(f"{report.auditor.value} on {report.format.value} (n={m.n})")
    c = m.confusion
    cells = ["exact", "early", "late", "missed", "clean", "false alarm"]
    counts = [c.exact, c.early, c.late, c.missed, c.clean, c.false_alarm]
    colors = ["#9bbb59", "#f79646", "#f79646", "#c0504d", "#4f81bd", "#c0504d"]
    ax2.bar(cells, counts, color=colors)
    for i, v in enumerate(counts):
        ax2.annotate(str(v), (i, v), ha="center", va="bottom", fontsize=9)
    ax2.set_title("outcomes (erroneous: exact/early/late/missed; correct: clean/false alarm)", fontsize=9)
    ax2.tick_params(axis="x", labelrotation=20)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(report: EvalReport, directory: Path) -> dict[str, Path]:
    """report.md, report.json, rows.jsonl and plot.png in `directory` (created if needed)."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = {
        "markdown": directory / "report.md",
        "json": directory / "report.json",
        "rows": directory / "rows.jsonl",
        "plot": directory / "plot.png",
    }
    paths["markdown"].write_text(markdown(report), encoding="utf-8")
    paths["json"].write_text(report.model_dump_json(indent=2), encoding="utf-8")
    with paths["rows"].open("w", encoding="utf-8") as fh:
        for r in report.rows:
            fh.write(r.model_dump_json() + "\n")
    plot(report, paths["plot"])
    return paths
