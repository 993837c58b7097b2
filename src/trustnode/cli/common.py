"""Shared CLI helpers: settings, error reporting and JSON output."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import typer
from rich.console import Console

from trustnode.config import Settings, load_settings

console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)


def settings() -> Settings:
    return load_settings()


def fail(message: str, code: int = 1) -> NoReturn:
    err_console.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")


@contextmanager
def errors_as_exit(*kinds: type[BaseException]) -> Iterator[None]:
    """Turn expected failures into a one-line error and exit code 1 (no traceback)."""
    try:
        yield
    except kinds as exc:
        fail(str(exc))
