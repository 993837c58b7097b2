"""`trustnode eval FILE`: measure an auditor on public step-labelled reasoning data."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from trustnode.audit.evaluation.datasets import DatasetError, EvalFormat
from trustnode.audit.evaluation.report import write
from trustnode.audit.evaluation.runner import AuditorKind, EvalError, EvalReport, run
from trustnode.cli.common import console, err_console, errors_as_exit, fail, print_json


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _summary(report: EvalReport) -> Table:
    m = report.metrics
    t = Table(title=f"{report.auditor.value} on {report.format.value}: {report.file}")
    t.add_column("figure")
    t.add_column("value", justify="right")
    t.add_row("traces (erroneous / correct)", f"{m.n} ({m.n_erroneous} / {m.n_correct})")
    t.add_row("excluded suspect labels", str(len(report.excluded)))
    t.add_row("accuracy on erroneous traces", _pct(m.accuracy_erroneous))
    t.add_row("accuracy on correct traces", _pct(m.accuracy_correct))
    t.add_row("F1 (ProcessBench)", _pct(m.f1))
    t.add_row("exact first-error accuracy (all)", _pct(m.exact_first_error_accuracy))
    t.add_row("false alarms", f"{m.false_alarms} ({_pct(m.false_alarm_rate)})")
    t.add_row("coverage", _pct(m.coverage))
    t.add_row("claims checked", str(m.claims_checked))
    c = m.confusion
    t.add_row("confusion exact/early/late/missed", f"{c.exact}/{c.early}/{c.late}/{c.missed}")
    t.add_row("confusion clean/false alarm", f"{c.clean}/{c.false_alarm}")
    t.add_row("time", f"{report.elapsed_s:.1f} s")
    return t


def eval_cmd(
    file: Path = typer.Argument(..., help="Dataset file (read in place)."),
    fmt: EvalFormat = typer.Option(..., "--format", help="processbench | bbm | gsm8k | mrben"),
    auditor: AuditorKind = typer.Option(
        AuditorKind.COMPUTER, "--auditor", help="computer | structural | llm | pipeline"
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N traces of the file."),
    json_out: bool = typer.Option(False, "--json", help="Print the whole report (with rows) as JSON."),
    report_dir: Path | None = typer.Option(
        None, "--report", help="Write report.md, report.json, rows.jsonl and plot.png here."
    ),
    annotations: str = typer.Option(
        "strip", "--annotations", help="GSM8K-style <<expr=result>> notes: strip, or check them as claims."
    ),
    keep_suspect: bool = typer.Option(
        False, "--keep-suspect", help="Keep records whose labels are known to be unreliable."
    ),
) -> None:
    """Audit every trace, predict its earliest wrong step, and report ProcessBench metrics."""
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
            keep_suspect=keep_suspect,
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
