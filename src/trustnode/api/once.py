"""A durable record of things that may be used only once: signed requests, sign-in challenges,
and revoked web sessions.

Kept in memory, such a list forgets everything on a restart and is not seen by a second
process serving the same data directory, so a replay would work there. Here it is one SQLite
file in the data directory (WAL, one short write transaction per claim): a claim is an insert
that only the first caller wins, in any process. Entries carry their expiry, past which the
thing they guard is refused anyway (a signature's max age, a challenge's or a cookie's
lifetime), so the table stays bounded by what was used within that window.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from trustnode.config import Settings
from trustnode.node.sqlite import Database

_SCHEMA = """
CREATE TABLE IF NOT EXISTS used_once (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (kind, key)
);
CREATE INDEX IF NOT EXISTS used_once_expiry ON used_once (expires_at);
"""

#: Kinds of entries (one table; the kind keeps them apart).
SIGNED_REQUEST = "signed-request"
SIGNIN_CHALLENGE = "signin-challenge"
REVOKED_SESSION = "revoked-session"


def used_once_path(settings: Settings) -> Path:
    """Where the API and the pages of one data directory keep what was used (0600)."""
    return settings.data_dir / "api" / "used-once.db"


class UsedOnce:
    """Claim a key once per kind until it expires; shared by threads and processes."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.clock = clock
        self.db = Database(path, _SCHEMA)

    def claim(self, kind: str, key: str, expires_at: float) -> bool:
        """True the first time (kind, key) is claimed while unexpired; False for a reuse."""
        now = self.clock()
        with self.db.tx() as conn:
            conn.execute("DELETE FROM used_once WHERE expires_at < ?", (now,))
            cur = conn.execute(
                "INSERT OR IGNORE INTO used_once (kind, key, expires_at) VALUES (?, ?, ?)",
                (kind, key, max(expires_at, now)),
            )
            return cur.rowcount == 1

    def contains(self, kind: str, key: str) -> bool:
        """Whether (kind, key) was claimed and has not expired."""
        row = (
            self.db.conn()
            .execute(
                "SELECT 1 FROM used_once WHERE kind = ? AND key = ? AND expires_at >= ?",
                (kind, key, self.clock()),
            )
            .fetchone()
        )
        return row is not None

    def count(self) -> int:
        """Unexpired entries (for tests and status)."""
        row = (
            self.db.conn()
            .execute("SELECT COUNT(*) FROM used_once WHERE expires_at >= ?", (self.clock(),))
            .fetchone()
        )
        return int(row[0])
