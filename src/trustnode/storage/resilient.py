"""Write-behind over a remote daemon: blobs land in a local spool first, so an IPFS outage loses nothing.

`add` stores and pins the bytes in the spool (same CID as the daemon would give), then
pushes them to the primary. If the primary stays unreachable after its bounded retries the
CID is recorded in an outbox on disk and RemotePinPendingError says so, carrying the CID;
`flush()` (or simply adding the same bytes again) pushes everything once the daemon is back.
The outbox survives restarts because it is just files named by CID.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from trustnode.storage.base import BlobStore
from trustnode.storage.cids import normalize_cid
from trustnode.storage.errors import (
    BlobNotFoundError,
    RemotePinPendingError,
    StorageError,
    StorageUnavailableError,
)
from trustnode.storage.local import LocalStore


class FlushResult(BaseModel):
    """What one `flush()` achieved: pushed CIDs, those still waiting, and per-CID errors that need a human."""

    pushed: list[str] = Field(default_factory=list)
    pending: list[str] = Field(default_factory=list)
    errors: dict[str, str] = Field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return not self.pending and not self.errors


class ResilientStore(BlobStore):
    """`primary` (usually a KuboStore) backed by a durable local `spool` (a LocalStore)."""

    def __init__(self, primary: BlobStore, spool: LocalStore, *, keep_local: bool = True) -> None:
        self.primary = primary
        self.spool = spool
        self.keep_local = keep_local
        self._outbox = spool.root / "outbox"
        self._outbox.mkdir(parents=True, exist_ok=True)
        self._mutex = threading.Lock()

    def __repr__(self) -> str:
        return f"ResilientStore({self.primary!r}, spool={self.spool!r})"

    def close(self) -> None:
        self.primary.close()

    # -- outbox -----------------------------------------------------------------------------

    def _mark(self, cid: str, pin: bool) -> None:
        path = self._outbox / cid
        tmp = path.with_name(f".tmp-{cid}")
        tmp.write_text(json.dumps({"pin": pin}))
        tmp.replace(path)

    def _unmark(self, cid: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self._outbox / cid).unlink()

    def pending(self) -> list[str]:
        """CIDs held locally that the primary does not have yet."""
        return sorted(p.name for p in self._outbox.iterdir() if not p.name.startswith("."))

    def is_pending(self, cid: str) -> bool:
        return (self._outbox / normalize_cid(cid)).exists()

    # -- BlobStore --------------------------------------------------------------------------

    def add(self, data: bytes, *, pin: bool = True) -> str:
        # Local first, pinned regardless of `pin`, so the bytes survive until the primary has them.
        cid = self.spool.add(data, pin=True)
        return self._push(cid, pin, lambda: self.primary.add(data, pin=pin))

    def add_file(self, path: Path | str, *, pin: bool = True) -> str:
        cid = self.spool.add_file(path, pin=True)
        return self._push(cid, pin, lambda: self.primary.add_file(path, pin=pin))

    def _push(self, cid: str, pin: bool, send: Callable[[], str]) -> str:
        try:
            remote = send()
        except StorageUnavailableError as exc:
            with self._mutex:
                self._mark(cid, pin)
            raise RemotePinPendingError(
                f"blob {cid} is stored in the local spool {self.spool.root} but NOT yet pinned on "
                f"{self.primary!r}: {exc}. It is queued; flush() pushes it when the daemon is back.",
                cid=cid,
            ) from exc
        if remote != cid:
            raise StorageError(f"primary returned {remote} for a blob the spool stores as {cid}")
        with self._mutex:
            self._unmark(cid)
        if not self.keep_local:
            self.spool.unpin(cid)
        return cid

    def flush(self) -> FlushResult:
        """Push every pending blob; stops early (leaving the rest queued) while the primary is down."""
        result = FlushResult()
        queue = self.pending()
        for i, cid in enumerate(queue):
            try:
                meta = json.loads((self._outbox / cid).read_text())
            except (FileNotFoundError, ValueError):
                meta = {"pin": True}
            try:
                data = self.spool.cat(cid)
                remote = self.primary.add(data, pin=bool(meta.get("pin", True)))
            except StorageUnavailableError:
                result.pending.extend(queue[i:])
                return result
            except StorageError as exc:  # corrupt spool block or a layout mismatch: keep it, report it
                result.errors[cid] = str(exc)
                continue
            if remote != cid:
                result.errors[cid] = f"primary returned {remote}"
                continue
            with self._mutex:
                self._unmark(cid)
            if not self.keep_local:
                self.spool.unpin(cid)
            result.pushed.append(cid)
        return result

    def flush_until_empty(
        self, timeout_s: float, *, interval_s: float = 1.0, sleep: Callable[[float], None] = time.sleep
    ) -> FlushResult:
        """Flush repeatedly until nothing is pending or `timeout_s` passes (e.g. before opening a
        session, whose auditors must be able to fetch every segment); returns the last result."""
        deadline = time.monotonic() + timeout_s
        while True:
            result = self.flush()
            if not result.pending or time.monotonic() + interval_s > deadline:
                return result
            sleep(interval_s)

    def cat(self, cid: str, *, max_bytes: int | None = None) -> bytes:
        norm = normalize_cid(cid)
        if self.spool.has(norm):
            with contextlib.suppress(BlobNotFoundError):
                return self.spool.cat(norm, max_bytes=max_bytes)
        if max_bytes is None:
            return self.primary.cat(norm)
        return self.primary.cat(norm, max_bytes=max_bytes)  # type: ignore[call-arg]

    def pin(self, cid: str) -> None:
        norm = normalize_cid(cid)
        try:
            self.primary.pin(norm)
        except StorageUnavailableError as exc:
            if not self.spool.has(norm):
                raise
            self.spool.pin(norm)
            with self._mutex:
                self._mark(norm, True)
            raise RemotePinPendingError(
                f"{norm} pinned in the local spool only; the primary is unreachable ({exc}); flush() retries",
                cid=norm,
            ) from exc
        if self.keep_local and self.spool.has(norm):
            self.spool.pin(norm)

    def unpin(self, cid: str) -> None:
        norm = normalize_cid(cid)
        self.primary.unpin(norm)
        self.spool.unpin(norm)
        with self._mutex:
            self._unmark(norm)

    def pins(self) -> list[str]:
        """Pinned on the primary, plus what is queued for it (pinned locally until pushed)."""
        remote = set(self.primary.pins())
        return sorted(remote | set(self.pending()))

    def has(self, cid: str) -> bool:
        norm = normalize_cid(cid)
        return self.spool.has(norm) or self.primary.has(norm)

    @property
    def spool_root(self) -> Path:
        return self.spool.root
