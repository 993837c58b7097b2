"""Follow chain events (key publications, draws) from a checkpointed block, handling each exactly once.

The checkpoint and the set of handled events live in the auditor account's own SQLite file,
so a daemon that restarts (or is killed) continues where it stopped and never handles an
event twice, and daemons of other accounts on the same data dir keep their own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Generic, Protocol, TypeVar

from trustnode.chain.port import ChainPort, TxRef
from trustnode.node.sqlite import Database

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, block INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS handled_logs (tx_hash TEXT NOT NULL, log_index INTEGER NOT NULL, PRIMARY KEY (tx_hash, log_index));
"""


class Logged(Protocol):
    """An event the follower can tell apart from every other: its transaction and log index."""

    @property
    def tx(self) -> TxRef: ...
    @property
    def log_index(self) -> int: ...


E = TypeVar("E", bound=Logged)


class EventFollower(Generic[E]):
    """Poll `fetch` (a port's event query over a block range) in ranges; call `handler` once per event.
    Each follower keeps its own checkpoint under `name`."""

    def __init__(
        self,
        port: ChainPort,
        db: Database,
        fetch: Callable[[int, int], Sequence[E]],
        *,
        name: str = "sessions",
        start_block: int = 0,
        max_range: int = 2000,
    ) -> None:
        self.port = port
        self.fetch = fetch
        self.db = db
        db.conn().executescript(SCHEMA)
        self.name = name
        self.start_block = start_block
        self.max_range = max_range

    @property
    def checkpoint(self) -> int:
        row = self.db.conn().execute("SELECT block FROM checkpoints WHERE name = ?", (self.name,)).fetchone()
        return int(row["block"]) if row else self.start_block - 1

    def poll(self, handler: Callable[[E], None]) -> int:
        """Handle every new event up to the latest block; returns how many were handled."""
        latest = self.port.block_number()
        handled = 0
        frm = self.checkpoint + 1
        while frm <= latest:
            to = min(latest, frm + self.max_range - 1)
            for ev in self.fetch(frm, to):
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

    def _seen(self, ev: E) -> bool:
        row = (
            self.db.conn()
            .execute(
                "SELECT 1 FROM handled_logs WHERE tx_hash = ? AND log_index = ?",
                (ev.tx.tx_hash, ev.log_index),
            )
            .fetchone()
        )
        return row is not None
