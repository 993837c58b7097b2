"""The canary operator's tickets in its own SQLite file (0600, WAL).

A ticket holds everything the operator must never lose: the texts it issued, their truths and
salts, the placement it accepted and where the commit and reveal stand. It is written before each
chain action, so an operator killed between commit and reveal still reveals after a restart.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path

from pydantic import BaseModel, Field

from trustnode.consensus.canaries import canary_commitment
from trustnode.models.canary_operator import (
    CanaryPlacement,
    CanaryReceipt,
    CanaryText,
    CanaryTicketState,
)
from trustnode.models.enums import SegmentOutcome, Verdict
from trustnode.node.sqlite import Database

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tickets (
    ticket TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    session_id INTEGER,
    active INTEGER NOT NULL,
    created REAL NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tickets_active ON tickets (active, created);
CREATE UNIQUE INDEX IF NOT EXISTS tickets_session ON tickets (session_id) WHERE session_id IS NOT NULL;
"""


def outcome(verdict: Verdict) -> SegmentOutcome:
    return SegmentOutcome.PASS if verdict is Verdict.PASS else SegmentOutcome.FAIL


class SecretCanary(BaseModel):
    """An issued canary with what only the operator knows: its truth, salt and defect."""

    text: CanaryText
    verdict: Verdict
    salt: str = Field(pattern=r"^0x[0-9a-f]{64}$")
    mutation: str


class Ticket(BaseModel):
    """One request's canaries and their fate (see the module docstring)."""

    ticket: str
    owner: str = Field(description="The API identity that asked (only it may place the ticket).")
    provider: str
    canaries: list[SecretCanary]
    state: CanaryTicketState = "issued"
    placement: CanaryPlacement | None = Field(
        default=None, description="The placement being committed or committed (never a refused one)."
    )
    tx_hash: str | None = None
    reveal_tx_hash: str | None = None
    reason: str | None = None
    active: bool = Field(default=True, description="The daemon still has something to do for it.")

    def commitments(self, placement: CanaryPlacement | None = None) -> list[bytes]:
        """keccak(sessionId, index, verdict, salt) in slot order (the chain's slots) for `placement`
        (default: the accepted one)."""
        p = placement or self.placement
        assert p is not None
        at = {i.slot: i.index for i in p.items}
        return [
            canary_commitment(p.session_id, at[slot], outcome(c.verdict), bytes.fromhex(c.salt[2:]))
            for slot, c in enumerate(self.canaries)
        ]

    def receipt(self) -> CanaryReceipt:
        return CanaryReceipt(
            ticket=self.ticket,
            state=self.state,
            session_id=self.placement.session_id if self.placement else None,
            tx_hash=self.tx_hash,
            reveal_tx_hash=self.reveal_tx_hash,
            reason=self.reason,
        )


def new_ticket_id() -> str:
    return "cn_" + secrets.token_urlsafe(18)


class SessionTaken(Exception):
    """Another ticket already holds this session's canaries."""


class TooManyOpenTickets(Exception):
    """The client already holds its quota of issued, unplaced tickets."""


class CanaryStore:
    """Tickets by id; `active()` lists those the reveal loop must still look at."""

    def __init__(self, path: Path) -> None:
        self.db = Database(path, _SCHEMA)

    def add(self, t: Ticket, *, max_open: int | None = None, ttl_s: float = 3600.0) -> None:
        """Store a new ticket; with `max_open`, TooManyOpenTickets when its owner already holds that
        many issued tickets younger than `ttl_s` (counted in the same transaction as the insert)."""
        with self.db.tx() as c:
            if max_open is not None:
                held = c.execute(
                    "SELECT COUNT(*) FROM tickets WHERE state = 'issued' AND created > ? "
                    "AND json_extract(data, '$.owner') = ?",
                    (time.time() - ttl_s, t.owner),
                ).fetchone()[0]
                if held >= max_open:
                    raise TooManyOpenTickets(
                        f"this client holds {held} canary tickets not yet placed (the limit is {max_open}); "
                        "place or abandon them first"
                    )
            c.execute(
                "INSERT INTO tickets (ticket, state, session_id, active, created, data) VALUES (?, ?, ?, ?, ?, ?)",
                (t.ticket, t.state, None, int(t.active), time.time(), t.model_dump_json()),
            )

    def get(self, ticket: str) -> Ticket | None:
        row = self.db.conn().execute("SELECT data FROM tickets WHERE ticket = ?", (ticket,)).fetchone()
        return None if row is None else Ticket.model_validate_json(row["data"])

    def by_session(self, session_id: int) -> Ticket | None:
        row = (
            self.db.conn().execute("SELECT data FROM tickets WHERE session_id = ?", (session_id,)).fetchone()
        )
        return None if row is None else Ticket.model_validate_json(row["data"])

    def save(self, t: Ticket) -> None:
        """Write the ticket back; SessionTaken when another ticket already holds its session."""
        sid = t.placement.session_id if t.placement else None
        with self.db.tx() as c:
            if sid is not None:
                other = c.execute(
                    "SELECT ticket FROM tickets WHERE session_id = ? AND ticket != ?", (sid, t.ticket)
                ).fetchone()
                if other is not None:
                    raise SessionTaken(f"session {sid} already has the canaries of ticket {other['ticket']}")
            c.execute(
                "UPDATE tickets SET state = ?, session_id = ?, active = ?, data = ? WHERE ticket = ?",
                (t.state, sid, int(t.active), t.model_dump_json(), t.ticket),
            )

    def active(self, limit: int = 100) -> list[Ticket]:
        """Tickets with a placement whose commit or reveal is not settled yet, oldest first."""
        rows = self.db.conn().execute(
            "SELECT data FROM tickets WHERE active = 1 AND session_id IS NOT NULL ORDER BY created LIMIT ?",
            (limit,),
        )
        return [Ticket.model_validate_json(r["data"]) for r in rows]

    def close(self) -> None:
        self.db.close()
