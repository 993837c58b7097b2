"""IPFS reads are bounded (issue 16): the root block first, its declared size against the limit,
the rest streamed and never past the declared size; failures of a CID are remembered."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from trustnode.storage.blobstore import (
    BlobIntegrityError,
    BlobNotFoundError,
    BlobTooLargeError,
    KuboStore,
    LocalStore,
    StorageUnavailableError,
)
from trustnode.storage.cids import cid_v1_bytes, make_cid
from trustnode.storage.dagpb import UNIXFS_FILE, PBLink, PBNode, UnixFSData
from trustnode.storage.failures import FailureCache
from trustnode.storage.jsipfs import free_port
from trustnode.storage.unixfs import import_bytes

MiB = 1024 * 1024
Route = Callable[[str], tuple[int, bytes]]


@pytest.fixture
def scripted() -> Iterator[Callable[[Route], tuple[str, list[str]]]]:
    """An RPC server on 127.0.0.1 answering each path from `route`; records the paths asked."""
    servers: list[ThreadingHTTPServer] = []

    def start(route: Route) -> tuple[str, list[str]]:
        calls: list[str] = []

        class H(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                calls.append(self.path.split("?")[0].removeprefix("/api/v0/"))
                status, body = route(self.path)
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)  # the client may stop reading: that is the point

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


def _root_declaring(size: int) -> tuple[str, bytes]:
    """A valid dag-pb file root that declares `size` bytes (its children need not exist)."""
    leaf = cid_v1_bytes(0x55, bytes(32))
    fs = UnixFSData(UNIXFS_FILE, b"", size, (size,))
    block = PBNode((PBLink(leaf, size),), fs.encode()).encode()
    return make_cid("dag-pb", block), block


def test_an_oversize_declaration_is_refused_after_one_block_and_remembered(
    scripted: Callable[[Route], tuple[str, list[str]]],
) -> None:
    cid, root = _root_declaring(1024**3)  # "1 GiB"
    url, calls = scripted(lambda path: (200, root) if "block/get" in path else (200, bytes(1024)))
    now = [0.0]
    store = KuboStore(url, max_fetch_bytes=16 * MiB, failures=FailureCache(clock=lambda: now[0]))
    with pytest.raises(BlobTooLargeError, match="declares 1,073,741,824 bytes") as info:
        store.cat(cid)
    assert info.value.size == 1024**3 and info.value.limit == 16 * MiB
    assert calls == ["block/get"], "nothing past the root block is fetched"
    # A page loading the session again: refused at once, without asking the daemon.
    with pytest.raises(BlobTooLargeError, match="remembered failure"):
        store.cat(cid)
    assert calls == ["block/get"]
    now[0] += 3601  # remembered for an hour, then asked again
    with pytest.raises(BlobTooLargeError):
        store.cat(cid)
    assert calls == ["block/get", "block/get"]


def test_a_daemon_cannot_push_more_or_fewer_bytes_than_declared(
    scripted: Callable[[Route], tuple[str, list[str]]],
) -> None:
    data = os.urandom(600_000)  # three chunks: a dag-pb root
    imported = import_bytes(data)
    blocks = dict(imported.blocks)
    root = blocks[imported.cid]
    for body, error in ((data + b"x" * 100_000, "more than"), (data[:-1], "truncated")):
        url, _ = scripted(lambda path, body=body: (200, root) if "block/get" in path else (200, body))
        with pytest.raises(BlobIntegrityError, match=error):
            KuboStore(url).cat(imported.cid)
    url, _ = scripted(lambda path: (200, root) if "block/get" in path else (200, data))
    assert KuboStore(url).cat(imported.cid) == data
    # Same size, other bytes: caught by the re-import.
    evil = bytearray(data)
    evil[-1] ^= 1
    url, _ = scripted(lambda path: (200, root) if "block/get" in path else (200, bytes(evil)))
    with pytest.raises(BlobIntegrityError, match="tampered"):
        KuboStore(url).cat(imported.cid)


def test_an_endless_root_block_is_cut_off(scripted: Callable[[Route], tuple[str, list[str]]]) -> None:
    url, _ = scripted(lambda _path: (200, bytes(6 * MiB)))
    with pytest.raises(BlobTooLargeError, match="root block"):
        KuboStore(url).cat(make_cid("raw", b"x"))


def test_outages_are_not_remembered_but_missing_blobs_are(
    scripted: Callable[[Route], tuple[str, list[str]]],
) -> None:
    down = KuboStore(f"http://127.0.0.1:{free_port()}", retries=0)
    cid = make_cid("raw", b"anything")
    for _ in range(2):
        with pytest.raises(StorageUnavailableError):
            down.cat(cid)
    assert len(down.failures) == 0
    url, calls = scripted(lambda _p: (500, b'{"Message":"block was not found locally (offline)"}'))
    store = KuboStore(url)
    for _ in range(3):
        with pytest.raises(BlobNotFoundError):
            store.cat(cid)
    assert calls == ["block/get"] and store.failures.hits == 2


def test_failure_cache_is_bounded() -> None:
    cache = FailureCache(max_entries=3)
    for i in range(10):
        cache.remember(f"cid{i}", BlobNotFoundError(f"cid{i} not found"))
    assert len(cache) == 3
    cache.check("cid0")  # evicted: no failure raised
    with pytest.raises(BlobNotFoundError):
        cache.check("cid9")


@pytest.mark.ipfs
def test_real_daemon_caps(ipfs_api_url: str) -> None:
    data = bytes(3 * MiB)
    cid = KuboStore(ipfs_api_url).add(data, pin=False)
    with pytest.raises(BlobTooLargeError):
        KuboStore(ipfs_api_url, max_fetch_bytes=MiB).cat(cid)
    assert KuboStore(ipfs_api_url, max_fetch_bytes=4 * MiB).cat(cid) == data
    assert KuboStore(ipfs_api_url, max_fetch_bytes=MiB).cat(cid, max_bytes=3 * MiB) == data


def test_local_store_cap(tmp_path: Path) -> None:
    store = LocalStore(tmp_path, max_fetch_bytes=MiB)
    big = store.add(bytes(2 * MiB))
    small = store.add(b"small")
    with pytest.raises(BlobTooLargeError):
        store.cat(big)
    assert store.cat(small) == b"small" and store.cat(big, max_bytes=2 * MiB) == bytes(2 * MiB)
