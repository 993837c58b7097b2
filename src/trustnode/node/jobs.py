"""A durable job queue (SQLite) for submitted traces, with leases so a crashed worker's
job is picked up again and two workers never run the same job at once."""

from __future__ import annotations

import os
import secrets
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trustnode.models.jobs import JobStatus, TraceJob, TraceStage
from trustnode.models.trace import TraceInput
from trustnode.node.sqlite import Database

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    idempotency_key TEXT,
    status TEXT NOT NULL,
    stage TEXT NOT NULL,
    doc TEXT NOT NULL,
    lease_owner TEXT,
    lease_until REAL NOT NULL DEFAULT 0,
    not_before REAL NOT NULL DEFAULT 0,
    created REAL NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS jobs_idem ON jobs(provider, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS jobs_status ON jobs(status, not_before);
CREATE TABLE IF NOT EXISTS batches (
    job_id TEXT PRIMARY KEY,
    batch_id TEXT NOT NULL,
    rank INTEGER NOT NULL,
    opened INTEGER NOT NULL DEFAULT 0,
    open_sent INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS batches_rank ON batches(batch_id, rank);
"""


#: A batched job (`j`) with an unopened, unfinished job ranked before it: it is not claimed, so the
#: worker that opens the earlier one can take it along (`claim_followers`) without a lease in the way.
_NOT_YET_ITS_TURN = (
    "j.stage = 'batched' AND EXISTS (SELECT 1 FROM batches b JOIN batches e ON e.batch_id = b.batch_id "
    "AND e.rank < b.rank AND e.opened = 0 JOIN jobs ej ON ej.id = e.job_id "
    "WHERE b.job_id = j.id AND ej.status IN ('queued', 'running'))"
)


class JobNotFoundError(KeyError):
    pass


def new_trace_id() -> str:
    return "tr_" + secrets.token_hex(10)


class JobQueue:
    """Trace jobs: submit, claim with a lease, advance stage by stage, finish or fail."""

    def __init__(self, path: Path) -> None:
        self.db = Database(path, SCHEMA)
        columns = {r["name"] for r in self.db.conn().execute("PRAGMA table_info(batches)")}
        if "open_sent" not in columns:  # a queue from before open_sent: its opens may have been sent
            self.db.conn().execute("ALTER TABLE batches ADD COLUMN open_sent INTEGER NOT NULL DEFAULT 1")
        self.worker_id = f"{os.getpid()}-{secrets.token_hex(3)}"

    def submit(
        self, trace: TraceInput, provider: str, idempotency_key: str | None = None
    ) -> tuple[TraceJob, bool]:
        """Store a new job; returns (job, created). A repeated idempotency key returns the first job."""
        now = datetime.now(UTC)
        with self.db.tx() as conn:
            if idempotency_key is not None:
                row = conn.execute(
                    "SELECT doc FROM jobs WHERE provider = ? AND idempotency_key = ?",
                    (provider, idempotency_key),
                ).fetchone()
                if row is not None:
                    return TraceJob.model_validate_json(row["doc"]), False
            job = TraceJob(
                id=new_trace_id(),
                provider=provider,
                status=JobStatus.QUEUED,
                stage=TraceStage.RECEIVED,
                trace=trace,
                idempotency_key=idempotency_key,
                created_at=now,
                updated_at=now,
            )
            conn.execute(
                "INSERT INTO jobs (id, provider, idempotency_key, status, stage, doc, created, not_before) "
                "VALUES (?,?,?,?,?,?,?,?)",
                (
                    job.id,
                    provider,
                    idempotency_key,
                    job.status,
                    job.stage,
                    job.model_dump_json(),
                    now.timestamp(),
                    now.timestamp(),  # due from now: claimed in turn with the polls already due
                ),
            )
        return job, True

    def get(self, job_id: str) -> TraceJob:
        row = self.db.conn().execute("SELECT doc FROM jobs WHERE id = ?", (job_id,)).fetchone()
        if row is None:
            raise JobNotFoundError(job_id)
        return TraceJob.model_validate_json(row["doc"])

    def list_jobs(self, *, status: JobStatus | None = None, limit: int = 100) -> list[TraceJob]:
        q = (
            "SELECT doc FROM jobs"
            + (" WHERE status = ?" if status else "")
            + " ORDER BY created DESC LIMIT ?"
        )
        args: tuple[Any, ...] = (status, limit) if status else (limit,)
        return [TraceJob.model_validate_json(r["doc"]) for r in self.db.conn().execute(q, args)]

    def depth(self) -> dict[str, int]:
        rows = self.db.conn().execute("SELECT status, COUNT(*) AS n FROM jobs GROUP BY status").fetchall()
        return {r["status"]: r["n"] for r in rows}

    def claim(self, lease_s: float = 60.0, *, at_stage: set[TraceStage] | None = None) -> TraceJob | None:
        """Lease the runnable job (queued, or running with an expired lease) that has been due the
        longest: a new trace does not wait behind every older one's next poll."""
        now = time.time()
        with self.db.tx() as conn:
            rows = conn.execute(
                "SELECT id, stage FROM jobs j WHERE status IN ('queued', 'running') AND lease_until < ? "
                f"AND not_before <= ? AND NOT ({_NOT_YET_ITS_TURN}) ORDER BY not_before, created LIMIT 50",
                (now, now),
            ).fetchall()
            for row in rows:
                if at_stage is not None and TraceStage(row["stage"]) not in at_stage:
                    continue
                conn.execute(
                    "UPDATE jobs SET status = 'running', lease_owner = ?, lease_until = ? WHERE id = ?",
                    (self.worker_id, now + lease_s, row["id"]),
                )
                doc = conn.execute("SELECT doc FROM jobs WHERE id = ?", (row["id"],)).fetchone()["doc"]
                job = TraceJob.model_validate_json(doc)
                job.status = JobStatus.RUNNING
                return job
        return None

    def save(self, job: TraceJob, *, lease_s: float | None = None) -> None:
        """Persist the job's fields (a stage's outputs go in the same write as the stage)."""
        job.updated_at = datetime.now(UTC)
        with self.db.tx() as conn:
            sets = "status = ?, stage = ?, doc = ?"
            args: list[Any] = [job.status, job.stage, job.model_dump_json()]
            if lease_s is not None:
                sets += ", lease_until = ?"
                args.append(time.time() + lease_s)
            conn.execute(f"UPDATE jobs SET {sets} WHERE id = ?", (*args, job.id))

    def unbatched(self) -> list[TraceJob]:
        """Pinned, unfinished jobs that belong to no batch yet, oldest first."""
        rows = (
            self.db.conn()
            .execute(
                "SELECT doc FROM jobs WHERE stage = ? AND status IN ('queued', 'running') "
                "AND id NOT IN (SELECT job_id FROM batches) ORDER BY created",
                (TraceStage.PINNED,),
            )
            .fetchall()
        )
        return [TraceJob.model_validate_json(r["doc"]) for r in rows]

    def assign_batch(self, batch_id: str, ranks: dict[str, int]) -> None:
        """Put jobs into one batch with their (shuffled) opening ranks, atomically."""
        with self.db.tx() as conn:
            for job_id, rank in ranks.items():
                conn.execute(
                    "INSERT INTO batches (job_id, batch_id, rank, open_sent) VALUES (?, ?, ?, 0)",
                    (job_id, batch_id, rank),
                )
                doc = conn.execute("SELECT doc FROM jobs WHERE id = ?", (job_id,)).fetchone()["doc"]
                job = TraceJob.model_validate_json(doc)
                if job.stage == TraceStage.PINNED:
                    job.stage = TraceStage.BATCHED
                conn.execute(
                    "UPDATE jobs SET stage = ?, doc = ? WHERE id = ?",
                    (job.stage, job.model_dump_json(), job_id),
                )

    def batch_of(self, job_id: str) -> str | None:
        row = self.db.conn().execute("SELECT batch_id FROM batches WHERE job_id = ?", (job_id,)).fetchone()
        return None if row is None else str(row["batch_id"])

    def is_turn(self, job_id: str) -> bool:
        """Whether every trace ranked before this one in its batch has opened (or failed)."""
        conn = self.db.conn()
        row = conn.execute("SELECT batch_id, rank FROM batches WHERE job_id = ?", (job_id,)).fetchone()
        if row is None:
            return True
        blocking = conn.execute(
            "SELECT COUNT(*) AS n FROM batches b JOIN jobs j ON j.id = b.job_id "
            "WHERE b.batch_id = ? AND b.rank < ? AND b.opened = 0 AND j.status IN ('queued', 'running')",
            (row["batch_id"], row["rank"]),
        ).fetchone()["n"]
        return int(blocking) == 0

    def claim_followers(self, job_id: str, lease_s: float) -> list[TraceJob]:
        """Lease the batch members ranked after `job_id` that wait to open, in rank order, so that
        one worker sends their opens back to back. Stops at the first one another worker holds
        (the rest open after it, keeping the rank order); finished members are skipped."""
        now = time.time()
        claimed: list[TraceJob] = []
        with self.db.tx() as conn:
            me = conn.execute("SELECT batch_id, rank FROM batches WHERE job_id = ?", (job_id,)).fetchone()
            if me is None:
                return []
            rows = conn.execute(
                "SELECT j.id, j.status, j.stage, j.lease_until, j.doc FROM batches b JOIN jobs j ON j.id = b.job_id "
                "WHERE b.batch_id = ? AND b.rank > ? AND b.opened = 0 ORDER BY b.rank",
                (me["batch_id"], me["rank"]),
            ).fetchall()
            for row in rows:
                if row["status"] not in ("queued", "running"):
                    continue
                if row["lease_until"] >= now or row["stage"] != TraceStage.BATCHED:
                    break
                conn.execute(
                    "UPDATE jobs SET status = 'running', lease_owner = ?, lease_until = ? WHERE id = ?",
                    (self.worker_id, now + lease_s, row["id"]),
                )
                job = TraceJob.model_validate_json(row["doc"])
                job.status = JobStatus.RUNNING
                claimed.append(job)
        return claimed

    def open_sent(self, job_id: str) -> bool | None:
        """Whether an open transaction may have been sent for the job (None: it has no batch row)."""
        row = self.db.conn().execute("SELECT open_sent FROM batches WHERE job_id = ?", (job_id,)).fetchone()
        return None if row is None else bool(row["open_sent"])

    def set_open_sent(self, job_ids: list[str], sent: bool) -> None:
        """Written before the opens are sent (a restart then looks on chain before sending again),
        cleared once they are known not to have opened anything (refused at estimation, reverted)."""
        with self.db.tx() as conn:
            conn.executemany(
                "UPDATE batches SET open_sent = ? WHERE job_id = ?", [(int(sent), j) for j in job_ids]
            )

    def mark_opened(self, job_id: str) -> None:
        with self.db.tx() as conn:
            conn.execute("UPDATE batches SET opened = 1 WHERE job_id = ?", (job_id,))

    def open_sessions(self, limit: int = 200) -> list[TraceJob]:
        """Audited traces whose session outcome can still change (appeal windows, running rounds)."""
        rows = (
            self.db.conn()
            .execute(
                "SELECT doc FROM jobs WHERE status = 'done' AND json_extract(doc, '$.session_id') IS NOT NULL "
                "AND coalesce(json_extract(doc, '$.final'), 0) = 0 ORDER BY created LIMIT ?",
                (limit,),
            )
            .fetchall()
        )
        return [TraceJob.model_validate_json(r["doc"]) for r in rows]

    def release(self, job: TraceJob, *, delay_s: float = 0.0, error: str | None = None) -> None:
        """Give the lease back (the job waits `delay_s` before it can be claimed again)."""
        job.error = error
        job.attempts += 1 if error else 0
        job.status = JobStatus.QUEUED
        job.updated_at = datetime.now(UTC)
        with self.db.tx() as conn:
            conn.execute(
                "UPDATE jobs SET status = ?, doc = ?, lease_owner = NULL, lease_until = 0, not_before = ? WHERE id = ?",
                (job.status, job.model_dump_json(), time.time() + delay_s, job.id),
            )

    def finish(self, job: TraceJob, status: JobStatus, error: str | None = None) -> None:
        job.status = status
        job.error = error
        job.updated_at = datetime.now(UTC)
        with self.db.tx() as conn:
            conn.execute(
                "UPDATE jobs SET status = ?, doc = ?, lease_owner = NULL, lease_until = 0 WHERE id = ?",
                (status, job.model_dump_json(), job.id),
            )
