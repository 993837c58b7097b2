"""The durable queue between the auditor daemon and the human audit page.

The daemon enqueues a `HumanSeat` when it is drawn for a human seat; the web page lists the
seats pending for the signed-in auditor and submits a verdict; the daemon collects decided
seats, commits them on-chain and marks them committed. The two run as separate processes,
so the queue is one SQLite file in WAL mode: every write is a short `BEGIN IMMEDIATE`
transaction (one writer at a time, readers never blocked) and every call opens its own
connection, which makes the queue safe across threads, processes and restarts.

A seat's life: pending -> decided -> committed, or abandoned (its session was cancelled or
expired before the vote could land). A decision is final: resubmitting the same
answer returns the stored decision; a different one is refused, and so is any answer after
the seat's commit deadline.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from trustnode.audit.base import undecided
from trustnode.models.audit import AuditResult, AuditTask
from trustnode.models.enums import Verdict
from trustnode.models.human import (
    MAX_NOTE_CHARS,
    HumanDecision,
    HumanSeat,
    check_criteria,
    normalize_address,
)

SCHEMA_VERSION = 1

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS seats (
    seat_id       TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL,
    segment_index INTEGER NOT NULL,
    auditor       TEXT NOT NULL,
    seat_json     TEXT NOT NULL,
    deadline      REAL,
    created_at    REAL NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('pending', 'decided', 'committed', 'abandoned')),
    verdict       TEXT,
    criteria_json TEXT,
    note          TEXT,
    decided_at    REAL,
    committed_at  REAL,
    abandon_reason TEXT
)""",
    "CREATE INDEX IF NOT EXISTS seats_by_auditor ON seats (auditor, status)",
)


class HumanQueueError(Exception):
    """Base class of queue refusals; the message says what to do."""


class SeatNotFoundError(HumanQueueError, KeyError):
    """No seat with this id."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "seat not found"


class SeatConflictError(HumanQueueError):
    """A seat with this id exists with different content."""


class SeatAlreadyDecidedError(HumanQueueError):
    """The seat has a decision and the new submission differs from it."""


class DeadlinePassedError(HumanQueueError):
    """The seat's commit deadline has passed: a decision could not reach the chain."""


class SeatStateError(HumanQueueError):
    """The operation does not fit the seat's state (e.g. committing an undecided seat)."""


class HumanQueue:
    """SQLite-backed store of human seats and decisions; safe for several processes."""

    def __init__(
        self, path: Path | str, *, clock: Callable[[], float] = time.time, busy_timeout_s: float = 30.0
    ) -> None:
        self.path = Path(path)
        self.clock = clock
        self._busy_timeout_s = busy_timeout_s
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with self._connect() as conn:
                conn.execute("PRAGMA journal_mode=WAL")
                version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if version not in (0, SCHEMA_VERSION):
                raise HumanQueueError(
                    f"{self.path} has human-queue schema version {version}; this code knows {SCHEMA_VERSION}"
                )
            with self._write() as conn:
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            raise HumanQueueError(f"{self.path} is not a usable human-queue database: {exc}") from exc

    # ------------------------------------------------------------------ plumbing
    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=self._busy_timeout_s, isolation_level=None)
        try:
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout_s * 1000)}")
            conn.row_factory = sqlite3.Row
            yield conn
        finally:
            conn.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One immediate (write-locked) transaction; rolled back on any exception."""
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @staticmethod
    def _seat(row: sqlite3.Row) -> HumanSeat:
        return HumanSeat.model_validate_json(row["seat_json"])

    @staticmethod
    def _decision(row: sqlite3.Row) -> HumanDecision:
        seat = HumanSeat.model_validate_json(row["seat_json"])
        return HumanDecision(
            seat_id=seat.seat_id,
            session_id=seat.session_id,
            segment_index=seat.segment_index,
            auditor=seat.auditor,
            verdict=Verdict(row["verdict"]),
            criteria=json.loads(row["criteria_json"]),
            note=row["note"] or "",
            decided_at=float(row["decided_at"]),
            committed=row["status"] == "committed",
        )

    # ------------------------------------------------------------------ daemon side
    def enqueue(self, seat: HumanSeat) -> HumanSeat:
        """Store a pending seat; enqueueing the same seat again is a no-op returning the stored one."""
        now = self.clock()
        stamped = seat.model_copy(update={"created_at": seat.created_at or now})
        with self._write() as conn:
            row = conn.execute("SELECT * FROM seats WHERE seat_id = ?", (seat.seat_id,)).fetchone()
            if row is not None:
                stored = self._seat(row)
                if not stored.same_content(seat):
                    raise SeatConflictError(
                        f"seat {seat.seat_id} is already queued with different content; "
                        "a seat's context cannot change once it is queued"
                    )
                return stored
            conn.execute(
                "INSERT INTO seats (seat_id, session_id, segment_index, auditor, seat_json, deadline,"
                " created_at, status) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending')",
                (
                    stamped.seat_id,
                    str(stamped.session_id),
                    stamped.segment_index,
                    stamped.auditor.lower(),
                    stamped.model_dump_json(),
                    stamped.commit_deadline,
                    stamped.created_at,
                ),
            )
        return stamped

    def decided(self, auditor: str) -> list[HumanDecision]:
        """Decisions of `auditor` not yet committed on-chain, oldest decision first."""
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT * FROM seats WHERE auditor = ? AND status = 'decided' ORDER BY decided_at, seat_id",
                (normalize_address(auditor).lower(),),
            ).fetchall()
        return [self._decision(r) for r in rows]

    def mark_committed(self, seat_id: str) -> HumanDecision:
        """Record that the decision reached the chain (idempotent); undecided seats are refused."""
        with self._write() as conn:
            row = conn.execute("SELECT * FROM seats WHERE seat_id = ?", (seat_id,)).fetchone()
            if row is None:
                raise SeatNotFoundError(f"no human seat {seat_id!r}")
            if row["status"] == "abandoned":
                raise SeatStateError(f"seat {seat_id} was abandoned: {row['abandon_reason']}")
            if row["status"] == "pending":
                raise SeatStateError(f"seat {seat_id} has no decision yet, so nothing was committed")
            if row["status"] == "decided":
                conn.execute(
                    "UPDATE seats SET status = 'committed', committed_at = ? WHERE seat_id = ?",
                    (self.clock(), seat_id),
                )
                row = conn.execute("SELECT * FROM seats WHERE seat_id = ?", (seat_id,)).fetchone()
        return self._decision(row)

    def abandon(self, seat_id: str, reason: str) -> None:
        """Drop a pending or decided seat whose vote can no longer land (session cancelled or
        expired); it leaves `pending` and `decided`. Committed seats cannot be abandoned."""
        with self._write() as conn:
            row = conn.execute("SELECT status FROM seats WHERE seat_id = ?", (seat_id,)).fetchone()
            if row is None:
                raise SeatNotFoundError(f"no human seat {seat_id!r}")
            if row["status"] == "committed":
                raise SeatStateError(f"seat {seat_id} is already committed on-chain; it cannot be abandoned")
            conn.execute(
                "UPDATE seats SET status = 'abandoned', abandon_reason = ? WHERE seat_id = ?",
                (reason.strip() or "abandoned", seat_id),
            )

    # ------------------------------------------------------------------ web-page side
    def get(self, seat_id: str) -> HumanSeat:
        """The seat with this id, in any state."""
        with self._connect() as conn:
            row = conn.execute("SELECT * FROM seats WHERE seat_id = ?", (seat_id,)).fetchone()
        if row is None:
            raise SeatNotFoundError(f"no human seat {seat_id!r}")
        return self._seat(row)

    def decision(self, seat_id: str) -> HumanDecision | None:
        """The decision on this seat, or None while it is pending."""
        with self._connect() as conn:
            row = conn.execute("SELECT * FROM seats WHERE seat_id = ?", (seat_id,)).fetchone()
        if row is None:
            raise SeatNotFoundError(f"no human seat {seat_id!r}")
        return None if row["verdict"] is None else self._decision(row)

    def pending(self, auditor: str, *, include_expired: bool = False) -> list[HumanSeat]:
        """Undecided seats of `auditor`, soonest deadline first (expired ones hidden by default)."""
        params: list[object] = [normalize_address(auditor).lower()]
        sql = "SELECT * FROM seats WHERE auditor = ? AND status = 'pending'"
        if not include_expired:
            sql += " AND (deadline IS NULL OR deadline > ?)"
            params.append(self.clock())
        sql += " ORDER BY deadline IS NULL, deadline, created_at, seat_id"
        with self._connect() as conn:
            rows = conn.execute(sql, params).fetchall()
        return [self._seat(r) for r in rows]

    def submit(
        self, seat_id: str, verdict: Verdict | str, criteria: dict[str, bool], note: str = ""
    ) -> HumanDecision:
        """Record a person's decision; idempotent for the same answer, refused for a different one."""
        try:
            verdict = Verdict(verdict.strip().upper() if isinstance(verdict, str) else verdict)
        except ValueError:
            raise ValueError(f"verdict must be PASS or FAIL, got {verdict!r}") from None
        answers = check_criteria(criteria)
        if not isinstance(note, str):
            raise ValueError("note must be text")
        note = note.strip()
        if len(note) > MAX_NOTE_CHARS:
            raise ValueError(f"note is {len(note)} characters; at most {MAX_NOTE_CHARS} are kept")
        with self._write() as conn:
            row = conn.execute("SELECT * FROM seats WHERE seat_id = ?", (seat_id,)).fetchone()
            if row is None:
                raise SeatNotFoundError(f"no human seat {seat_id!r}")
            if row["status"] == "abandoned":
                raise SeatStateError(f"seat {seat_id} was abandoned: {row['abandon_reason']}")
            if row["status"] != "pending":
                stored = self._decision(row)
                if (stored.verdict, stored.criteria, stored.note) == (verdict, answers, note):
                    return stored
                what = (
                    f"verdict {stored.verdict.value}"
                    if stored.verdict is not verdict
                    else "the same verdict with different criteria or note"
                )
                raise SeatAlreadyDecidedError(
                    f"seat {seat_id} was already decided ({what}); a decision is final"
                )
            now = self.clock()
            deadline = row["deadline"]
            if deadline is not None and now >= float(deadline):
                raise DeadlinePassedError(
                    f"seat {seat_id}: the commit deadline passed {now - float(deadline):.0f}s ago; "
                    "the verdict could no longer be committed"
                )
            conn.execute(
                "UPDATE seats SET status = 'decided', verdict = ?, criteria_json = ?, note = ?,"
                " decided_at = ? WHERE seat_id = ?",
                (verdict.value, json.dumps(answers), note, now, seat_id),
            )
            row = conn.execute("SELECT * FROM seats WHERE seat_id = ?", (seat_id,)).fetchone()
        return self._decision(row)

    def counts(self) -> dict[str, int]:
        """Seats per state (for metrics and status pages)."""
        with self._connect() as conn:
            rows = conn.execute("SELECT status, COUNT(*) AS n FROM seats GROUP BY status").fetchall()
        out = {"pending": 0, "decided": 0, "committed": 0, "abandoned": 0}
        out.update({r["status"]: int(r["n"]) for r in rows})
        return out


class HumanAuditor:
    """The Auditor protocol over the queue: `audit` asks a person and returns at once.

    The returned result is undecided until the person answers (unless they already did);
    `wait_for` and `audit_and_wait` poll the queue for the decision within a time bound,
    which is what a scripted demo or a test needs.
    """

    name = "human"

    def __init__(
        self,
        queue: HumanQueue,
        auditor: str,
        *,
        session_id: int = 0,
        commit_deadline: float | None = None,
        round: int = 0,
    ) -> None:
        self.queue = queue
        self.auditor = normalize_address(auditor)
        self.session_id = session_id
        self.commit_deadline = commit_deadline
        #: The panel round of the seats this person decides (0: the first panel; issue 15 appeals).
        self.round = round

    def bind(self, session_id: int, commit_deadline: float | None, round: int = 0) -> HumanAuditor:
        """The same person and queue, for another session (or another panel round of it)."""
        return HumanAuditor(
            self.queue, self.auditor, session_id=session_id, commit_deadline=commit_deadline, round=round
        )

    def seat_for(self, task: AuditTask) -> HumanSeat:
        return HumanSeat.from_task(
            task,
            session_id=self.session_id,
            auditor=self.auditor,
            commit_deadline=self.commit_deadline,
            round=self.round,
        )

    def audit(self, task: AuditTask) -> AuditResult:
        """Enqueue the seat; the decision if one exists, otherwise an undecided result."""
        seat = self.queue.enqueue(self.seat_for(task))
        decision = self.queue.decision(seat.seat_id)
        if decision is not None:
            return decision.to_result()
        return undecided(self.name, "waiting for the human auditor", seat_id=seat.seat_id)

    def wait_for(self, seat_id: str, *, timeout_s: float, poll_s: float = 0.2) -> HumanDecision | None:
        """Poll until the seat is decided or `timeout_s` (wall clock) elapses; None on timeout."""
        end = time.monotonic() + max(0.0, timeout_s)
        while True:
            decision = self.queue.decision(seat_id)
            if decision is not None:
                return decision
            left = end - time.monotonic()
            if left <= 0:
                return None
            time.sleep(min(poll_s, left))

    def audit_and_wait(self, task: AuditTask, *, timeout_s: float, poll_s: float = 0.2) -> AuditResult:
        """Enqueue and wait (bounded) for the person; undecided if they do not answer in time."""
        result = self.audit(task)
        if result.decided:
            return result
        seat_id = self.seat_for(task).seat_id
        decision = self.wait_for(seat_id, timeout_s=timeout_s, poll_s=poll_s)
        if decision is None:
            return undecided(self.name, f"no human decision within {timeout_s:g}s", seat_id=seat_id)
        return decision.to_result()
