"""KuboStore failure handling against small real HTTP servers on 127.0.0.1 (no daemon needed)."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from trustnode.storage.blobstore import (
    BlobIntegrityError,
    BlobNotFoundError,
    KuboStore,
    LocalStore,
    RemotePinPendingError,
    ResilientStore,
    StorageError,
    StorageUnavailableError,
)
from trustnode.storage.jsipfs import free_port
from trustnode.storage.kubo import api_base
from trustnode.storage.unixfs import compute_cid

Handler = Callable[[BaseHTTPRequestHandler, int], tuple[int, bytes]]


@pytest.fixture
def fake_rpc() -> Iterator[Callable[[Handler], tuple[str, list[str]]]]:
    """Start a scripted RPC server; it serves until the test ends (daemon thread, bounded)."""
    servers: list[ThreadingHTTPServer] = []

    def start(handler: Handler) -> tuple[str, list[str]]:
        calls: list[str] = []

        class H(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                calls.append(self.path)
                status, body = handler(self, len(calls))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
        servers.append(srv)
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return f"http://127.0.0.1:{srv.server_address[1]}", calls

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


def test_unreachable_daemon_bounded_retries_then_clear_error() -> None:
    sleeps: list[float] = []
    url = f"http://127.0.0.1:{free_port()}"
    store = KuboStore(url, timeout_s=2, retries=3, backoff_s=0.01, sleep=sleeps.append)
    with pytest.raises(StorageUnavailableError, match=r"unreachable for add after 4 attempts"):
        store.add(b"data")
    assert sleeps == [0.01, 0.02, 0.04]  # exponential backoff, exactly `retries` waits


def test_transient_503_is_retried(fake_rpc: Callable[[Handler], tuple[str, list[str]]]) -> None:
    data = b"retried blob"
    cid = compute_cid(data)

    def handler(_req: BaseHTTPRequestHandler, n: int) -> tuple[int, bytes]:
        if n <= 2:
            return 503, b"busy"
        return 200, json.dumps({"Name": "blob", "Hash": cid, "Size": str(len(data))}).encode()

    url, calls = fake_rpc(handler)
    store = KuboStore(url, retries=3, backoff_s=0.001)
    assert store.add(data) == cid
    assert len(calls) == 3
    assert "cid-version=1" in calls[0] and "raw-leaves=true" in calls[0] and "pin=true" in calls[0]


def test_daemon_with_other_layout_is_caught(fake_rpc: Callable[[Handler], tuple[str, list[str]]]) -> None:
    other = compute_cid(b"something else")
    url, _ = fake_rpc(lambda _r, _n: (200, json.dumps({"Hash": other}).encode()))
    with pytest.raises(BlobIntegrityError, match="import layout"):
        KuboStore(url).add(b"mine")


def test_tampered_cat_response_is_caught(fake_rpc: Callable[[Handler], tuple[str, list[str]]]) -> None:
    url, _ = fake_rpc(lambda _r, _n: (200, b"not the bytes you asked for"))
    with pytest.raises(BlobIntegrityError):
        KuboStore(url).cat(compute_cid(b"original"))
    big = compute_cid(bytes(300_000))  # dag-pb root: checked by re-import
    with pytest.raises(BlobIntegrityError, match="tampered"):
        KuboStore(url).cat(big)


def test_errors_are_mapped(fake_rpc: Callable[[Handler], tuple[str, list[str]]]) -> None:
    def handler(req: BaseHTTPRequestHandler, _n: int) -> tuple[int, bytes]:
        if "/cat" in req.path or "/block/get" in req.path:
            return 500, b'{"Message":"Failed to cat file: request timed out","Code":0,"Type":"error"}'
        if "/pin/rm" in req.path:
            return 500, b'{"Message":"Failed to remove pin: x is not pinned","Code":0}'
        return 400, b'{"Message":"Invalid request query input","Code":1}'

    url, calls = fake_rpc(handler)
    store = KuboStore(url, retries=3)
    with pytest.raises(BlobNotFoundError, match="timed out"):
        store.cat(compute_cid(b"q"))
    store.unpin(compute_cid(b"q"))  # "not pinned" is fine
    with pytest.raises(StorageError, match="Invalid request"):
        store.pins()
    assert len(calls) == 3  # HTTP errors with an answer are not retried


def test_api_base_forms() -> None:
    assert api_base("http://127.0.0.1:5001") == "http://127.0.0.1:5001/api/v0"
    assert api_base("http://127.0.0.1:5001/api/v0/") == "http://127.0.0.1:5001/api/v0"
    assert api_base("/ip4/127.0.0.1/tcp/5002") == "http://127.0.0.1:5002/api/v0"
    with pytest.raises(ValueError):
        api_base("127.0.0.1:5001")


def test_resilient_store_spools_when_primary_down(tmp_path: Path) -> None:
    primary = KuboStore(f"http://127.0.0.1:{free_port()}", timeout_s=1, retries=1, backoff_s=0.001)
    store = ResilientStore(primary, LocalStore(tmp_path / "spool"))
    data = b"segment ciphertext"
    with pytest.raises(RemotePinPendingError, match="NOT yet pinned") as info:
        store.add(data)
    assert info.value.cid == compute_cid(data)
    assert store.pending() == [info.value.cid] and store.is_pending(info.value.cid)
    assert store.cat(info.value.cid) == data  # readable locally meanwhile
    res = store.flush()
    assert res.pushed == [] and res.pending == [info.value.cid] and not res.complete
    # a new ResilientStore over the same spool (e.g. after a restart) still knows the backlog
    assert ResilientStore(primary, LocalStore(tmp_path / "spool")).pending() == [info.value.cid]


def test_add_file_retry_rewinds_the_upload(
    fake_rpc: Callable[[Handler], tuple[str, list[str]]], tmp_path: Path
) -> None:
    data = os.urandom(5000)
    f = tmp_path / "f.bin"
    f.write_bytes(data)
    bodies: list[int] = []

    def handler(req: BaseHTTPRequestHandler, n: int) -> tuple[int, bytes]:
        bodies.append(int(req.headers.get("Content-Length") or 0))
        if n == 1:
            return 502, b"bad gateway"
        return 200, json.dumps({"Hash": compute_cid(data)}).encode()

    url, calls = fake_rpc(handler)
    assert KuboStore(url, retries=2, backoff_s=0.001).add_file(f) == compute_cid(data)
    assert len(calls) == 2 and bodies[0] == bodies[1] > len(data)  # the retry re-sent the whole file


def test_resilient_add_file_pending(tmp_path: Path) -> None:
    primary = KuboStore(f"http://127.0.0.1:{free_port()}", timeout_s=1, retries=0)
    store = ResilientStore(primary, LocalStore(tmp_path / "spool"))
    f = tmp_path / "seg"
    f.write_bytes(b"file while down")
    with pytest.raises(RemotePinPendingError) as info:
        store.add_file(f)
    assert info.value.cid == compute_cid(b"file while down") and store.pending() == [info.value.cid]


def test_flush_until_empty_gives_up_at_the_deadline(tmp_path: Path) -> None:
    primary = KuboStore(f"http://127.0.0.1:{free_port()}", timeout_s=1, retries=0)
    store = ResilientStore(primary, LocalStore(tmp_path / "spool"))
    with pytest.raises(RemotePinPendingError):
        store.add(b"waiting")
    waits: list[float] = []
    res = store.flush_until_empty(0.5, interval_s=0.1, sleep=lambda s: (waits.append(s), time.sleep(s)))
    assert res.pending == store.pending() and len(res.pending) == 1
    assert 1 <= len(waits) <= 6
