"""What the protocol wrappers read and send: decoded views of the v2 contracts' storage and calls."""

from __future__ import annotations

import secrets

from eth_utils import to_checksum_address
from pydantic import BaseModel, Field

from trustnode.chain.protocol.params import RequestStatus, SessionStatus, Termination
from trustnode.models.enums import SegmentOutcome


class SessionInfo(BaseModel):
    """IAuditSessions.sessionOf, decoded, with the fee (SessionOpened) and the trace weights."""

    session_id: int
    provider: str
    status: SessionStatus
    termination: Termination
    passed: bool
    params_version: int
    segment_count: int
    score_bps: int
    source: int = Field(description="index of the randomness source the session pinned")
    merkle_root: str
    pool: int
    total_seats: int
    epoch: int = Field(description="snapshot epoch the draw samples")
    draw_request: int
    slash_request: int
    draw_deadline: int
    key_deadline: int
    commit_deadline: int
    reveal_deadline: int
    drawn_seats: int
    auditor_count: int
    committed_count: int
    revealed_count: int
    settled_count: int

    @property
    def draw_complete(self) -> bool:
        return self.drawn_seats == self.total_seats


class SegmentInfo(BaseModel):
    index: int
    tier: int
    weight: int
    pass_votes: int
    fail_votes: int
    outcome: SegmentOutcome


class VoteInfo(BaseModel):
    """One auditor's ballot in one panel (DrawModule seat word + VotingModule ballot)."""

    seat_count: int
    draw_reputation: int = Field(description="reputation (WAD) fixed when the auditor was drawn")
    committed: bool
    revealed: bool
    settled: bool
    commit_nonce: int
    verdicts: int | None = Field(default=None, description="the revealed verdicts word, once revealed")
    commitment: str | None = Field(default=None, description="the full commitment, until revealed")


class PoolInfo(BaseModel):
    """Staking.poolOf and auditorOf: a pool's accounting, registration and commission."""

    assets: int
    pending_deposits: int
    total_shares: int
    exiting_shares: int
    backing: int = Field(description="what backs new seats: unqueued shares' value + pending deposits")
    locked: int
    reputation: int
    generation: int
    tier: int
    registered: bool
    commission_bps: int


class AuditorProfile(BaseModel):
    tier: int
    registered: bool
    registered_at: int
    expertise: int
    encryption_key: str


class WithdrawalInfo(BaseModel):
    """Staking.withdrawalOf: amount and readyAt are 0 while the request waits in a FLOW entry."""

    id: int
    owner: str
    auditor: str
    shares: int
    amount: int
    ready_at: int
    claimed: bool
    flow: int
    park_epoch: int = Field(0, description="epoch the shares were parked in (0: never held)")


class RandomnessState(BaseModel):
    request_id: int
    status: RequestStatus
    target_block: int = Field(description="lookahead target block (0 when fixed or not a lookahead source)")


class SignedCommit(BaseModel):
    """A commitment signed (EIP-712, 65-byte r||s||v) for any relayer to submit."""

    auditor: str
    commitment: bytes
    signature: bytes

    def as_abi(self) -> tuple[str, bytes, bytes]:
        return (to_checksum_address(self.auditor), self.commitment, self.signature)


class RevealItem(BaseModel):
    auditor: str
    verdicts: int = Field(ge=0)
    salt: bytes

    def as_abi(self) -> tuple[str, int, bytes]:
        return (to_checksum_address(self.auditor), self.verdicts, self.salt)


def new_salt() -> bytes:
    """32 random bytes for a commitment."""
    return secrets.token_bytes(32)
