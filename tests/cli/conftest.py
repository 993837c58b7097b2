"""Helpers of the CLI tests: the CLI in a subprocess (as a user runs it), the process umask kept."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def keep_umask() -> Iterator[None]:
    """Node commands set a private umask for their process; in-process runs must not leak it."""
    old = os.umask(0o022)
    os.umask(old)
    try:
        yield
    finally:
        os.umask(old)


def clean_env(**env: str) -> dict[str, str]:
    """The environment without any TRUSTNODE_* setting of the caller, plus `env`."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("TRUSTNODE_")}
    return {**base, **env}


def run_cli(
    args: list[str], *, timeout: float = 120, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trustnode.cli.main", *args],
        capture_output=True,
        text=True,
        env=clean_env(**env),
        timeout=timeout,
        check=False,
        cwd=cwd,
    )
