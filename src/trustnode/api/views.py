"""Response models of the API (what clients may rely on)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from trustnode.models.jobs import JobStatus, TraceJob, TraceStage


class TraceAccepted(BaseModel):
    trace_id: str
    status: JobStatus
    stage: TraceStage


class TraceView(BaseModel):
    trace_id: str
    status: JobStatus
    stage: TraceStage
    session_id: int | None
    merkle_root: str | None
    manifest_cid: str | None
    tx_hashes: dict[str, str]
    outcome: dict[str, Any] | None
    error: str | None
    segments: int
    hdag: dict[str, Any] | None = None
    validation: dict[str, Any] | None = None
    stage_times: dict[str, float]


def trace_view(job: TraceJob, *, include_hdag: bool) -> TraceView:
    return TraceView(
        trace_id=job.id,
        status=job.status,
        stage=job.stage,
        session_id=job.session_id,
        merkle_root=job.merkle_root,
        manifest_cid=job.manifest_cid,
        tx_hashes=job.tx_hashes,
        outcome=job.outcome,
        error=job.error,
        segments=len(job.segments),
        hdag=job.hdag if include_hdag else None,
        validation=job.report if include_hdag else None,
        stage_times=job.stage_times,
    )
