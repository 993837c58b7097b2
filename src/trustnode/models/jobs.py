"""The provider-side lifecycle of a submitted trace.

Each stage's outputs are stored with the stage, so a worker that crashes resumes from the
last completed stage and never repeats an on-chain action it already took.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from trustnode.models.canary_operator import CanaryReceipt
from trustnode.models.enums import AuditorType, Level, Verdict
from trustnode.models.hdag import HDAG, ValidationReport
from trustnode.models.trace import TraceInput
from trustnode.models.verdict import SessionOutcome


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
    node_id: str = Field(description="The id the published shape gives it (the HDAG's id without canaries).")
    cid: str
    key_hex: str
    tier: int
    weight: int
    hdag_index: int | None = Field(
        default=None, description="Position of its HDAG node (None: a canary; jobs before canaries: index)."
    )
    canary: bool = False


class CanaryRecord(BaseModel):
    """A gold canary placed in this provider's session: the canary operator's text and where it went.

    The provider never learns a canary's truth before the reveal (issue 15: canaries are written and
    committed by an authorized operator, never by the provider), so `verdict` stays None until the
    operator's reveal is read from the chain. Rows stored before the operator existed (the provider
    wrote its own canaries) still load: they carry their truth, salt and mutation.
    """

    index: int = Field(ge=0, description="Leaf (segment) index in the session.")
    slot: int | None = Field(
        default=None, ge=0, description="Its slot in the operator's batch (None: rows from before operators)."
    )
    imitates: int = Field(
        ge=0, description="Session index of the real segment whose tier and length it copies."
    )
    text: str = Field(description="The canary's content (what its auditors decrypt).")
    level: Level
    kind: str = Field(description="The router's unit type, as a real segment's `type`.")
    auditor: AuditorType
    summary: str = ""
    verdict: Verdict | None = Field(
        default=None, description="Its truth, once revealed on chain (old rows: the provider's own)."
    )
    salt: str | None = Field(default=None, description="Old rows only: the provider's own salt.")
    mutation: str | None = Field(default=None, description="Old rows only: how the FAIL text was broken.")
    committed: bool = False
    revealed: bool = False


class ChainBinding(BaseModel):
    """Which chain a trace's session lives on: a session id means nothing without it.

    After a chain reset (a new devnet, a redeployment) the same session id names another
    session; a link is only followed when all three still match.
    """

    model_config = ConfigDict(frozen=True)

    chain_id: int
    contract: str = Field(description="Address of the sessions contract the session was opened on.")
    merkle_root: str = Field(description="0x-hex Merkle root the session committed to.")


class TraceJob(BaseModel):
    id: str
    provider: str
    status: JobStatus
    stage: TraceStage
    trace: TraceInput
    idempotency_key: str | None = None
    hdag: HDAG | None = None
    report: ValidationReport | None = Field(
        default=None, description="What validating (and repairing) the HDAG found."
    )
    segments: list[SegmentRecord] = Field(default_factory=list)
    canaries: list[CanaryRecord] = Field(
        default_factory=list, description="Gold canaries placed in the session (where they are is secret)."
    )
    canary_ticket: str | None = Field(default=None, description="The canary operator's ticket for them.")
    canary_receipt: CanaryReceipt | None = Field(
        default=None, description="The operator's last answer to the placement (committed or why not)."
    )
    canary_note: str | None = Field(default=None, description="Why the canaries were not committed, if so.")
    final: bool = Field(
        default=False,
        description="The session's outcome can no longer change (appeals closed, rounds ended).",
    )
    session_nonce: str | None = None
    merkle_root: str | None = None
    session_id: int | None = None
    chain: ChainBinding | None = Field(default=None, description="Set when the session is opened.")
    manifest_cid: str | None = None
    tx_hashes: dict[str, str] = Field(default_factory=dict)
    outcome: SessionOutcome | None = None
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

    @field_validator("outcome", mode="before")
    @classmethod
    def _drop_old_outcome(cls, v: Any) -> Any:
        """Jobs stored before the typed verdict kept a loose dict; it is rebuilt, not guessed."""
        if isinstance(v, dict) and "state" not in v:
            return None
        return v
