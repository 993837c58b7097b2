"""The js-ipfs launcher: clear errors when it cannot start, a clean stop of the whole process tree."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import httpx
import pytest

from trustnode.storage.jsipfs import JsIpfsDaemon, JsIpfsError


def test_missing_binary_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(JsIpfsError, match="not found"):
        JsIpfsDaemon(tmp_path / "repo", jsipfs=tmp_path / "no-such-jsipfs")


@pytest.mark.ipfs
def test_port_taken_fails_with_log_and_leaves_nothing_running(tmp_path: Path) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        port = blocker.getsockname()[1]
        daemon = JsIpfsDaemon(tmp_path / "repo", api_port=port, startup_timeout_s=60)
        with pytest.raises(JsIpfsError, match="EADDRINUSE"):
            daemon.start()
        assert not daemon.running


@pytest.mark.ipfs
def test_stop_ends_the_process_group(jsipfs_daemon: JsIpfsDaemon) -> None:
    """The shared daemon answers; a second daemon on its own repo stops completely."""
    assert httpx.post(f"{jsipfs_daemon.api_url}/api/v0/version", timeout=5).status_code == 200
    other = JsIpfsDaemon(jsipfs_daemon.repo_dir.parent / "other-repo")
    other.start()
    proc = other._proc
    assert proc is not None
    pgid = proc.pid
    other.stop()
    assert not other.running
    with pytest.raises(ProcessLookupError):
        os.killpg(pgid, 0)
    with pytest.raises(httpx.TransportError):
        httpx.post(f"{other.api_url}/api/v0/version", timeout=2)
