"""The provider-side lifecycle of a submitted trace.

Each stage's outputs are stored with the stage, so a worker that crashes resumes from the
last completed stage and never repeats an on-chain action it already took.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from trustnode.models.trace import TraceInput


class TraceStage(StrEnum):
    """Completed stage of a trace job, in pipeline order."""

    RECEIVED = "received"
    DECOMPOSED = "decomposed"
    PINNED = "pinned"
    BATCHED = "batched"
    OPENED = "opened"
    DRAWN = "drawn"
    KEYS_PUBLISHED = "keys_published"
    FINALIZED = "finalized"

    @property
    def order(self) -> int:
        return list(TraceStage).index(self)


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class SegmentRecord(BaseModel):
    """What the provider keeps about one pinned segment (the key never leaves the node)."""

    index: int
    node_id: str
    cid: str
    key_hex: str
    tier: int
    weight: int
    parents: list[int] = Field(default_factory=list)
    children: list[int] = Field(default_factory=list)


class TraceJob(BaseModel):
    id: str
    provider: str
    status: JobStatus
    stage: TraceStage
    trace: TraceInput
    idempotency_key: str | None = None
    hdag: dict[str, Any] | None = None
    report: dict[str, Any] | None = None
    segments: list[SegmentRecord] = Field(default_factory=list)
    session_nonce: str | None = None
    merkle_root: str | None = None
    structure_cid: str | None = None
    batch_id: str | None = None
    session_id: int | None = None
    manifest_cid: str | None = None
    tx_hashes: dict[str, str] = Field(default_factory=dict)
    outcome: dict[str, Any] | None = None
    error: str | None = None
    attempts: int = 0
    created_at: datetime
    updated_at: datetime
    stage_times: dict[str, float] = Field(
        default_factory=dict,
        description="Wall seconds from the previous stage to each stage, waits included.",
    )
    stage_entered_at: float | None = Field(
        default=None, description="Unix time the current stage was reached."
    )
