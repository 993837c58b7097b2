"""`trustnode ipfs ...` through the real root app, on the embedded store and on a real daemon."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trustnode.cli.main import app
from trustnode.storage.errors import StorageUnavailableError
from trustnode.storage.jsipfs import free_port
from trustnode.storage.kubo import KuboStore
from trustnode.storage.unixfs import compute_cid

runner = CliRunner()


def _env(tmp_path: Path, api_url: str | None = None) -> dict[str, str]:
    env = {"TRUSTNODE_DATA_DIR": str(tmp_path / "data"), "TRUSTNODE_CONFIG": str(tmp_path / "none.toml")}
    env["TRUSTNODE_IPFS__API_URL"] = api_url or ""
    env["TRUSTNODE_IPFS__RETRIES"] = "1"
    env["TRUSTNODE_IPFS__TIMEOUT_S"] = "5"
    return env


def test_add_cat_local_store(tmp_path: Path) -> None:
    data = os.urandom(300_000)
    f = tmp_path / "blob.bin"
    f.write_bytes(data)
    env = _env(tmp_path)
    res = runner.invoke(app, ["ipfs", "add", str(f), "--json"], env=env)
    assert res.exit_code == 0, res.output
    cid = json.loads(res.stdout)["cid"]
    assert cid == compute_cid(data)
    assert (tmp_path / "data" / "blobs" / "pins" / cid).exists()
    out = tmp_path / "out.bin"
    res = runner.invoke(app, ["ipfs", "cat", cid, "-o", str(out)], env=env)
    assert res.exit_code == 0, res.output
    assert out.read_bytes() == data
    res = runner.invoke(app, ["ipfs", "cat", cid], env=env)
    assert res.exit_code == 0 and res.stdout_bytes == data
    res = runner.invoke(app, ["ipfs", "cid", str(f)], env=env)
    assert res.stdout.strip() == cid
    res = runner.invoke(app, ["ipfs", "pins", "--json"], env=env)
    assert json.loads(res.stdout) == [cid]
    res = runner.invoke(app, ["ipfs", "unpin", cid], env=env)
    assert res.exit_code == 0
    assert json.loads(runner.invoke(app, ["ipfs", "pins", "--json"], env=env).stdout) == []


def test_plain_add_prints_only_the_cid(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_bytes(b"a")
    res = runner.invoke(app, ["ipfs", "add", str(f)], env=_env(tmp_path))
    assert res.exit_code == 0 and res.stdout.strip() == compute_cid(b"a")


def test_clear_errors(tmp_path: Path) -> None:
    env = _env(tmp_path)
    res = runner.invoke(app, ["ipfs", "add", str(tmp_path / "missing")], env=env)
    assert res.exit_code == 1 and "no such file" in res.output
    res = runner.invoke(app, ["ipfs", "cat", compute_cid(b"never")], env=env)
    assert res.exit_code == 1 and "not in the local store" in res.output
    res = runner.invoke(app, ["ipfs", "cat", "garbage"], env=env)
    assert res.exit_code == 1 and "not a CID" in res.output
    res = runner.invoke(app, ["ipfs", "flush"], env=env)
    assert res.exit_code == 1 and "nothing to flush" in res.output


def test_daemon_down_add_is_pending_not_lost(tmp_path: Path) -> None:
    env = _env(tmp_path, f"http://127.0.0.1:{free_port()}")
    f = tmp_path / "seg.bin"
    f.write_bytes(b"kept while IPFS is down")
    res = runner.invoke(app, ["ipfs", "add", str(f), "--json"], env=env)
    assert res.exit_code == 3
    body = json.loads(res.stdout)
    assert body == {"cid": compute_cid(f.read_bytes()), "pinned_remotely": False, "pending": True}
    assert "NOT yet pinned" in res.stderr
    res = runner.invoke(app, ["ipfs", "cat", body["cid"]], env=env)  # served from the spool
    assert res.exit_code == 0 and res.stdout_bytes == f.read_bytes()
    res = runner.invoke(app, ["ipfs", "flush", "--json"], env=env)
    assert res.exit_code == 3 and json.loads(res.stdout)["pending"] == [body["cid"]]


@pytest.mark.ipfs
def test_add_cat_on_daemon(tmp_path: Path, ipfs_api_url: str) -> None:
    env = _env(tmp_path, ipfs_api_url)
    f = tmp_path / "x.bin"
    data = os.urandom(70_000)
    f.write_bytes(data)
    res = runner.invoke(app, ["ipfs", "add", str(f), "--json"], env=env)
    assert res.exit_code == 0, res.output
    cid = json.loads(res.stdout)["cid"]
    assert cid in KuboStore(ipfs_api_url).pins()
    res = runner.invoke(app, ["ipfs", "cat", cid], env=env)
    assert res.exit_code == 0 and res.stdout_bytes == data


def test_stdin_and_pin_commands(tmp_path: Path) -> None:
    env = _env(tmp_path)
    res = runner.invoke(app, ["ipfs", "add", "-", "--no-pin", "--json"], input=b"from stdin", env=env)
    assert res.exit_code == 0, res.output
    cid = json.loads(res.stdout)["cid"]
    assert cid == compute_cid(b"from stdin")
    assert json.loads(runner.invoke(app, ["ipfs", "pins", "--json"], env=env).stdout) == []
    res = runner.invoke(app, ["ipfs", "pin", cid], env=env)
    assert res.exit_code == 0 and cid in res.stdout
    assert json.loads(runner.invoke(app, ["ipfs", "pins", "--json"], env=env).stdout) == [cid]
    res = runner.invoke(app, ["ipfs", "pin", compute_cid(b"absent")], env=env)
    assert res.exit_code == 1 and "not in the local store" in res.output


@pytest.mark.ipfs
def test_daemon_command_serves_until_sigterm(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, **_env(tmp_path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "trustnode.cli.main", "ipfs", "daemon", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # printed once the API answers and signals are handled
        assert f"127.0.0.1:{port}".encode() in first, first + proc.stdout.read()
        store = KuboStore(f"http://127.0.0.1:{port}", timeout_s=5, retries=0)
        cid = store.add(b"through the CLI daemon")
        assert store.cat(cid) == b"through the CLI daemon"
        assert (tmp_path / "data" / "jsipfs" / "config").is_file()
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == 0, out
        assert b"stopped" in out
        with pytest.raises(StorageUnavailableError):
            store.version()
    finally:
        if proc.poll() is None:  # failure path: SIGTERM lets the CLI stop its js-ipfs child first
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
