"""`trustnode eval FILE`: measure an auditor on public step-labelled reasoning data."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from trustnode.audit.evaluation.datasets import DatasetError, EvalFormat
from trustnode.audit.evaluation.metrics import Metrics
from trustnode.audit.evaluation.report import write
from trustnode.audit.evaluation.runner import AuditorKind, EvalError, EvalReport, run
from trustnode.cli.common import console, err_console, errors_as_exit, fail, print_json


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _rows(m: Metrics) -> list[tuple[str, str]]:
    c = m.confusion
    return [
        ("traces (erroneous / correct)", f"{m.n} ({m.n_erroneous} / {m.n_correct})"),
        ("accuracy on erroneous traces", _pct(m.accuracy_erroneous)),
        ("accuracy on correct traces", _pct(m.accuracy_correct)),
        ("F1 (ProcessBench)", _pct(m.f1)),
        ("exact first-error accuracy (all)", _pct(m.exact_first_error_accuracy)),
        ("false alarms", f"{m.false_alarms} ({_pct(m.false_alarm_rate)})"),
        ("coverage", _pct(m.coverage)),
        ("claims checked", str(m.claims_checked)),
        ("confusion exact/early/late/missed", f"{c.exact}/{c.early}/{c.late}/{c.missed}"),
        ("confusion clean/false alarm", f"{c.clean}/{c.false_alarm}"),
    ]


def _summary(report: EvalReport) -> Table:
    t = Table(title=f"{report.auditor.value} on {report.format.value}: {report.file}")
    t.add_column("figure")
    t.add_column("all traces", justify="right")
    t.add_column("without suspect labels", justify="right")
    for (name, a), (_, b) in zip(_rows(report.metrics), _rows(report.metrics_without_suspect), strict=True):
        t.add_row(name, a, b)
    t.add_row("suspect labels (stated rules)", str(len(report.suspect)), "")
    t.add_row("malformed records skipped", str(len(report.skipped)), "")
    t.add_row("traces that could not be audited", str(len(report.failed)), "")
    if report.llm is not None:
        u = report.llm
        mean = "n/a" if u.mean_latency_s is None else f"{u.mean_latency_s:.2f} s"
        t.add_row("LLM calls / requests", f"{u.calls} / {u.requests}", "")
        t.add_row("LLM tokens (prompt + completion)", f"{u.prompt_tokens} + {u.completion_tokens}", "")
        t.add_row("LLM mean latency per call", mean, "")
        t.add_row(
            "LLM parse failures / repaired / failed", f"{u.parse_failures} / {u.repaired} / {u.failed}", ""
        )
    for f in report.structure:
        t.add_row(
            f"structure: {f.kind} ({'votes' if f.votes else 'evidence'})",
            f"{_pct(f.precision)} precision ({f.on_wrong_steps} wrong / {f.on_correct_steps} correct steps)",
            "",
        )
    t.add_row("time", f"{report.elapsed_s:.1f} s", "")
    return t


def eval_cmd(
    file: Path = typer.Argument(..., help="Dataset file (read in place)."),
    fmt: EvalFormat = typer.Option(..., "--format", help="processbench | bbm | gsm8k | mrben"),
    auditor: AuditorKind = typer.Option(
        AuditorKind.COMPUTER,
        "--auditor",
        help="computer | structural | llm (the judge at the configured llm endpoint) | pipeline",
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N traces of the file."),
    json_out: bool = typer.Option(False, "--json", help="Print the whole report (with rows) as JSON."),
    report_dir: Path | None = typer.Option(
        None, "--report", help="Write report.md, report.json, rows.jsonl and plot.png here."
    ),
    annotations: str = typer.Option(
        "strip", "--annotations", help="GSM8K-style <<expr=result>> notes: strip, or check them as claims."
    ),
) -> None:
    """Audit every trace, predict its earliest wrong step, and report ProcessBench metrics.

    Every figure is shown for all traces and without the ones whose label a stated rule
    distrusts; malformed records are skipped and counted; a trace that cannot be audited
    is listed and the run goes on.
    """
    if annotations not in ("strip", "check"):
        fail(f"--annotations must be 'strip' or 'check', not {annotations!r}")
    with (
        errors_as_exit(DatasetError, EvalError, OSError),
        Progress(
            TextColumn("auditing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=err_console, transient=True,
        ) as bar,
    ):  # fmt: skip
        task = bar.add_task("traces", total=None)
        report = run(
            file,
            fmt,
            auditor,
            limit=limit,
            annotations="check" if annotations == "check" else "strip",
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )
    if report_dir is not None:
        with errors_as_exit(OSError):
            paths = write(report, report_dir)
        if not json_out:
            console.print(f"report: {paths['markdown']}  plot: {paths['plot']}", highlight=False)
    if json_out:
        print_json(report.model_dump(mode="json"))
    else:
        console.print(_summary(report))


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_cmd)
