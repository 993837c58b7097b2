"""IPFS down and back: bounded retries, a clear error, nothing lost, and the flush succeeds later."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from trustnode.storage.blobstore import KuboStore, LocalStore, RemotePinPendingError, ResilientStore
from trustnode.storage.jsipfs import JsIpfsDaemon

pytestmark = pytest.mark.ipfs


def test_daemon_down_then_back(tmp_path: Path) -> None:
    # A daemon of its own: stopping the shared one would disturb other tests.
    daemon = JsIpfsDaemon(tmp_path / "repo")
    with daemon:
        kubo = KuboStore(daemon.api_url, timeout_s=10, retries=2, backoff_s=0.05)
        store = ResilientStore(kubo, LocalStore(tmp_path / "spool"))
        before = os.urandom(5000)
        assert store.add(before) in kubo.pins()

        daemon.stop()
        segment = os.urandom(300_000)  # multi-chunk, like a large segment
        t0 = time.monotonic()
        with pytest.raises(RemotePinPendingError) as info:
            store.add(segment)
        assert time.monotonic() - t0 < 30  # bounded: 3 attempts, short backoff
        cid = info.value.cid
        assert "unreachable" in str(info.value) and cid in str(info.value)
        assert store.pending() == [cid]
        assert store.cat(cid) == segment  # kept locally, same CID
        assert store.flush().pending == [cid]  # still down: stays queued

        daemon.start()  # same repo, same port
        assert cid not in kubo.pins()
        result = store.flush()
        assert result.pushed == [cid] and result.complete
        assert store.pending() == []
        assert cid in kubo.pins()
        assert kubo.cat(cid) == segment
        assert kubo.cat(store.add(before)) == before  # pins from before the outage survived


def test_retrying_add_after_recovery_clears_backlog(tmp_path: Path) -> None:
    daemon = JsIpfsDaemon(tmp_path / "repo")
    spool = LocalStore(tmp_path / "spool")
    kubo = KuboStore(daemon.api_url, timeout_s=5, retries=1, backoff_s=0.01)
    store = ResilientStore(kubo, spool)
    data = os.urandom(1234)
    with pytest.raises(RemotePinPendingError):
        store.add(data)  # daemon never started yet
    with daemon:
        cid = store.add(data)  # the next attempt succeeds
        assert store.pending() == [] and cid in kubo.pins() and kubo.cat(cid) == data


def test_flush_until_empty_returns_once_the_daemon_is_back(tmp_path: Path) -> None:
    daemon = JsIpfsDaemon(tmp_path / "repo")
    store = ResilientStore(KuboStore(daemon.api_url, timeout_s=5, retries=0), LocalStore(tmp_path / "spool"))
    blobs = [os.urandom(100 + i) for i in range(3)]
    for b in blobs:
        with pytest.raises(RemotePinPendingError):
            store.add(b)
    assert len(store.pending()) == 3
    with daemon:
        result = store.flush_until_empty(60, interval_s=0.2)
        assert result.complete and sorted(result.pushed) == sorted(store.spool.pins())
        assert store.pending() == []
