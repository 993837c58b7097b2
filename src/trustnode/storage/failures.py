"""A bounded memory of failed fetches, so a bad CID is not fetched again on every request.

CIDs of sessions come from the chain, chosen by providers: one that is missing, oversize or
whose bytes do not match would otherwise cost a full fetch (or a lookup timeout) on every
page load. A failure is remembered per CID for a while (a missing blob may appear later; a
blob too large or corrupt stays so longer) in an LRU of bounded size, shared by threads.
An outage of the daemon itself is not a property of the CID and is never remembered.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from trustnode.storage.errors import (
    BlobIntegrityError,
    BlobNotFoundError,
    BlobTooLargeError,
    StorageError,
)

#: Seconds a failure of each kind is remembered (not found may be pinned soon; the others last).
DEFAULT_TTL_S: dict[type[StorageError], float] = {
    BlobNotFoundError: 60.0,
    BlobTooLargeError: 3600.0,
    BlobIntegrityError: 600.0,
}


class FailureCache:
    """CID -> (failure, until); `check` re-raises a remembered failure, `remember` stores one."""

    def __init__(
        self,
        max_entries: int = 4096,
        ttl_s: dict[type[StorageError], float] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self.ttl_s = dict(DEFAULT_TTL_S if ttl_s is None else ttl_s)
        self._clock = clock
        self._entries: OrderedDict[str, tuple[StorageError, float]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def _ttl(self, exc: StorageError) -> float | None:
        for kind, ttl in self.ttl_s.items():
            if isinstance(exc, kind):
                return ttl
        return None

    def remember(self, cid: str, exc: StorageError) -> None:
        """Remember `exc` for `cid` if it is a property of the CID (not an outage)."""
        ttl = self._ttl(exc)
        if ttl is None or ttl <= 0:
            return
        with self._lock:
            self._entries[cid] = (exc, self._clock() + ttl)
            self._entries.move_to_end(cid)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def check(self, cid: str) -> None:
        """Raise a copy of the failure remembered for `cid`, if it is still fresh."""
        with self._lock:
            entry = self._entries.get(cid)
            if entry is None:
                return
            exc, until = entry
            left = until - self._clock()
            if left <= 0:
                del self._entries[cid]
                return
            self.hits += 1
        again = copy.copy(exc)
        again.args = (f"{exc} (remembered failure: not fetched again for {left:.0f}s)", *exc.args[1:])
        raise again

    def forget(self, cid: str) -> None:
        with self._lock:
            self._entries.pop(cid, None)
