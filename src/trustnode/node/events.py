"""Follow key publications from a checkpointed block, handling each exactly once.

The checkpoint and the set of handled events live in the auditor account's own SQLite file,
so a daemon that restarts (or is killed) continues where it stopped and never handles an
event twice, and daemons of other accounts on the same data dir keep their own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from trustnode.chain.port import ChainPort, KeysPublished
from trustnode.node.sqlite import Database

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, block INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS handled_logs (tx_hash TEXT NOT NULL, log_index INTEGER NOT NULL, PRIMARY KEY (tx_hash, log_index));
"""


class EventFollower:
    """Poll the port's events in block ranges; call `handler` once per event."""

    def __init__(
        self,
        port: ChainPort,
        db: Database,
        *,
        name: str = "sessions",
        start_block: int = 0,
        max_range: int = 2000,
    ) -> None:
        self.port = port
        self.db = db
        db.conn().executescript(SCHEMA)
        self.name = name
        self.start_block = start_block
        self.max_range = max_range

    @property
    def checkpoint(self) -> int:
        row = self.db.conn().execute("SELECT block FROM checkpoints WHERE name = ?", (self.name,)).fetchone()
        return int(row["block"]) if row else self.start_block - 1

    def poll(self, handler: Callable[[KeysPublished], None]) -> int:
        """Handle every new event up to the latest block; returns how many were handled."""
        latest = self.port.block_number()
        handled = 0
        frm = self.checkpoint + 1
        while frm <= latest:
            to = min(latest, frm + self.max_range - 1)
            for ev in self.port.events(frm, to):
                if self._seen(ev):
                    continue
                handler(ev)
                with self.db.tx() as conn:
                    conn.execute(
                        "INSERT OR IGNORE INTO handled_logs (tx_hash, log_index) VALUES (?, ?)",
                        (ev.tx.tx_hash, ev.log_index),
                    )
                handled += 1
            with self.db.tx() as conn:
                conn.execute(
                    "INSERT INTO checkpoints (name, block) VALUES (?, ?) "
                    "ON CONFLICT(name) DO UPDATE SET block = excluded.block",
                    (self.name, to),
                )
            frm = to + 1
        return handled

    def _seen(self, ev: KeysPublished) -> bool:
        row = (
            self.db.conn()
            .execute(
                "SELECT 1 FROM handled_logs WHERE tx_hash = ? AND log_index = ?",
                (ev.tx.tx_hash, ev.log_index),
            )
            .fetchone()
        )
        return row is not None
