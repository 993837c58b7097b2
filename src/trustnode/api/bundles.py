"""Session queries for the API and pages that do not refetch a failing session bundle.

`/sessions/{id}` and `/v1/sessions/{id}` read the session bundle from IPFS on every request
until it has been fetched once. The store already remembers CIDs that are missing, oversize or
corrupt (`storage.failures`); an unreachable daemon is not a property of the CID, so the store
retries it every time, which would make every page load wait for the daemon's timeouts while
it is down. Here a failed fetch of a session's bundle, outage included, is remembered for a
short while per session, so a page load during an outage costs no IPFS request.
"""

from __future__ import annotations

from trustnode.node.context import NodeContext
from trustnode.node.queries import SessionQueries
from trustnode.node.structure import SessionBundle
from trustnode.storage.errors import StorageError, StorageUnavailableError
from trustnode.storage.failures import DEFAULT_TTL_S, FailureCache

#: Seconds a daemon outage keeps a session's bundle from being fetched again.
OUTAGE_TTL_S = 15.0


class PublicQueries(SessionQueries):
    """`SessionQueries` with the failures of bundle fetches remembered (bounded, per session)."""

    def __init__(self, ctx: NodeContext) -> None:
        super().__init__(ctx)
        self.bundle_failures = FailureCache(
            max_entries=1024, ttl_s={**DEFAULT_TTL_S, StorageUnavailableError: OUTAGE_TTL_S}
        )

    def bundle(self, session_id: int) -> SessionBundle | None:
        key = f"session:{session_id}"
        self.bundle_failures.check(key)
        try:
            return super().bundle(session_id)
        except StorageError as exc:
            self.bundle_failures.remember(key, exc)
            raise
