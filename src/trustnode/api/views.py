"""Response models of the API (what clients may rely on)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from trustnode.models.canary_operator import CanaryReceipt
from trustnode.models.hdag import HDAG, ValidationReport
from trustnode.models.jobs import JobStatus, TraceJob, TraceStage
from trustnode.models.verdict import SessionOutcome


class TraceAccepted(BaseModel):
    trace_id: str
    status: JobStatus
    stage: TraceStage


class CanaryInfo(BaseModel):
    """One canary of the provider's session: where it is, its text, its truth once revealed on chain
    (the canary operator keeps it until then), how it was made (jobs from before operators only)."""

    index: int
    verdict: str | None
    mutation: str | None
    text: str
    committed: bool
    revealed: bool


class TraceView(BaseModel):
    trace_id: str
    status: JobStatus
    stage: TraceStage
    session_id: int | None
    merkle_root: str | None
    manifest_cid: str | None
    tx_hashes: dict[str, str]
    outcome: SessionOutcome | None = Field(description="The session's verdict, once it has one.")
    error: str | None
    segments: int
    hdag: HDAG | None = Field(default=None, description="The decomposition (its own provider only).")
    validation: ValidationReport | None = Field(
        default=None, description="The HDAG validation report (its own provider only)."
    )
    stage_times: dict[str, float]
    final: bool = Field(default=False, description="The outcome can no longer change (appeals closed).")
    canaries: list[CanaryInfo] | None = Field(
        default=None,
        description="The gold canaries the operator wrote and this provider placed (its own provider only).",
    )
    canary_receipt: CanaryReceipt | None = Field(
        default=None, description="The canary operator's answer to the placement (its own provider only)."
    )
    canary_note: str | None = Field(
        default=None, description="Why the session's canaries were not committed, when they were not."
    )


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
        final=job.final,
        canaries=[
            CanaryInfo(
                index=c.index,
                verdict=c.verdict.value if c.verdict is not None else None,
                mutation=c.mutation,
                text=c.text,
                committed=c.committed,
                revealed=c.revealed,
            )
            for c in job.canaries
        ]
        if include_hdag
        else None,
        canary_receipt=job.canary_receipt if include_hdag else None,
        canary_note=job.canary_note if include_hdag else None,
    )
