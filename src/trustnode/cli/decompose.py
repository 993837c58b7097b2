"""`trustnode decompose`: turn a trace file into a validated HDAG and export it."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from trustnode.cli.common import err_console, fail, print_json
from trustnode.cli.common import settings as cli_settings
from trustnode.hdag import HDAGValidationError, ValidationReport, decompose
from trustnode.hdag.export import (
    export_payload,
    hdag_json_schema,
    to_dot,
    to_mermaid,
    to_png,
    write_text_atomic,
)
from trustnode.hdag.importers import DagMathTrace, ImportFormatError, from_dagmath_report, parse_trace_input
from trustnode.hdag.validate import DEFAULT_MIN_COMPLETENESS
from trustnode.llm.errors import LLMError
from trustnode.models.hdag import HDAG
from trustnode.models.trace import TraceInput


class Format(StrEnum):
    json = "json"
    mermaid = "mermaid"
    dot = "dot"
    png = "png"


class LLMModeOption(StrEnum):
    five_step = "five-step"
    single = "single"


def _read(file: Path) -> Any:
    try:
        raw = file.read_text(encoding="utf-8")
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror or exc}")
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        fail(f"{file} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")


def _run(
    obj: Any, use_llm: bool, mode: LLMModeOption, min_completeness: float
) -> tuple[HDAG, ValidationReport]:
    kind, parsed = parse_trace_input(obj)
    if not use_llm:
        if kind == "dagmath":
            return from_dagmath_report(obj, min_completeness=min_completeness)
        assert isinstance(parsed, TraceInput)
        return decompose(parsed, mode="offline", min_completeness=min_completeness)
    if isinstance(parsed, DagMathTrace):
        trace = TraceInput(problem=parsed.problem, steps=[s.body for s in parsed.steps], output=parsed.output)
    else:
        trace = parsed
    settings = cli_settings()
    if not settings.llm.base_url:
        fail("--llm needs an LLM endpoint: set llm.base_url (TRUSTNODE_LLM__BASE_URL) or use --offline")
    from trustnode.llm.client import LLMClient

    with LLMClient(settings.llm, cache_dir=settings.llm_cache_dir) as client:
        if mode is LLMModeOption.single:
            return decompose(trace, mode="llm-single", client=client, min_completeness=min_completeness)
        return decompose(trace, mode="llm-five-step", client=client, min_completeness=min_completeness)


def decompose_command(
    file: Path | None = typer.Argument(
        None, help="JSON trace: {problem, thinking|steps, output}, a ProcessBench record or DAG-MATH JSON."
    ),
    offline: bool = typer.Option(
        False, "--offline", help="Deterministic rules, no LLM (default without an LLM)."
    ),
    llm: bool = typer.Option(
        False, "--llm", help="Use the configured LLM endpoint (default when one is set)."
    ),
    mode: LLMModeOption = typer.Option(
        LLMModeOption.five_step, "--mode", help="LLM pipeline: five-step | single."
    ),
    fmt: Format = typer.Option(Format.json, "--format", "-f", help="json | mermaid | dot | png"),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write the export here (required for png)."),
    as_json: bool = typer.Option(False, "--json", help="Print the HDAG and its validation report as JSON."),
    schema: bool = typer.Option(
        False, "--schema", help="Print the JSON Schema of the exported HDAG and exit."
    ),
    min_completeness: float = typer.Option(
        DEFAULT_MIN_COMPLETENESS, "--min-completeness", min=0.0, max=1.0, help="Completeness threshold."
    ),
) -> None:
    """Decompose a reasoning trace into a validated HDAG (exit 2 if validation still fails)."""
    if schema:
        text = json.dumps(hdag_json_schema(), indent=2) + "\n"
        if out is not None:
            write_text_atomic(out, text)
        else:
            typer.echo(text, nl=False)
        return
    if file is None:
        fail("give a trace FILE (or --schema)")
    if offline and llm:
        fail("choose one of --offline and --llm")
    if fmt is Format.png and out is None:
        fail("--format png needs --out PATH")
    obj = _read(file)
    use_llm = llm or (not offline and bool(cli_settings().llm.base_url))
    try:
        hdag, report = _run(obj, use_llm, mode, min_completeness)
    except (ImportFormatError, HDAGValidationError, LLMError, ValueError) as exc:
        fail(str(exc))
    payload = export_payload(hdag, report)
    try:
        if out is not None:
            if fmt is Format.png:
                to_png(hdag, out)
            else:
                text = {
                    Format.json: lambda: json.dumps(payload, ensure_ascii=False, indent=2) + "\n",
                    Format.mermaid: lambda: to_mermaid(hdag),
                    Format.dot: lambda: to_dot(hdag),
                }[fmt]()
                write_text_atomic(out, text)
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}")
    if as_json:
        print_json({**payload, "out": str(out) if out else None})
    elif out is None:
        if fmt is Format.json:
            print_json(payload)
        else:
            typer.echo(to_mermaid(hdag) if fmt is Format.mermaid else to_dot(hdag), nl=False)
    else:
        err_console.print(
            f"{len(hdag.nodes)} nodes, {len(hdag.edges)} edges, completeness {report.completeness:.3f}, "
            f"{'valid' if report.ok else 'INVALID: ' + ', '.join(report.failed)}, {len(report.repairs)} repair(s) "
            f"-> {out}",
            highlight=False,
        )
    if not report.ok:
        err_console.print(f"validation failed: {', '.join(report.failed)}", highlight=False)
        raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    app.command("decompose")(decompose_command)
