"""What the chain port returns: typed results that carry their transaction, and two errors.

These models describe the protocol's meaning, not one contract version's storage layout, so a
new contract version changes how an implementation fills them, not the node that reads them.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from trustnode.chain.errors import ChainError
from trustnode.models.enums import SegmentOutcome
from trustnode.models.verdict import SessionState, TierName


class NotReady(ChainError):
    """The action cannot happen yet (randomness not fixed, a phase still open); try again later."""

    def __init__(self, reason: str, *, retry_blocks: int = 1) -> None:
        super().__init__(reason)
        self.retry_blocks = retry_blocks


class AbstainNotSupported(ChainError):
    """This contract version has no way to record an abstaining seat."""


class TxRef(BaseModel):
    """A mined transaction."""

    model_config = ConfigDict(frozen=True)

    tx_hash: str
    block: int


class Capabilities(BaseModel):
    """What the deployed contracts can express."""

    model_config = ConfigDict(frozen=True)

    protocol_version: int
    abstain: bool = Field(description="A seat can abstain (protocol v2: bit 128 + j of the verdict word).")
    refund_cancel: bool = Field(description="The provider can cancel an undrawn session for a refund.")


class SeatVote(StrEnum):
    """One seat's vote."""

    PASS = "PASS"
    FAIL = "FAIL"
    ABSTAIN = "ABSTAIN"


class Ballot(BaseModel):
    """An auditor's votes on all its seats of one session (or appeal round), in seat order."""

    model_config = ConfigDict(frozen=True)

    votes: tuple[SeatVote, ...]

    def count(self, vote: SeatVote) -> int:
        return sum(1 for v in self.votes if v == vote)

    def describe(self) -> str:
        """'3 seat(s): 2 PASS, 1 FAIL, 0 ABSTAIN' (for logs)."""
        parts = ", ".join(f"{self.count(v)} {v.value}" for v in SeatVote)
        return f"{len(self.votes)} seat(s): {parts}"


class SessionInfo(BaseModel):
    """A session's lifecycle, deadlines (block numbers), counters and trace result."""

    session_id: int
    provider: str
    state: SessionState
    params_version: int
    segment_count: int
    auditor_count: int
    merkle_root: str
    fee: int = Field(description="token wei")
    total_seats: int
    drawn_seats: int
    committed_count: int
    revealed_count: int
    draw_deadline: int
    key_deadline: int
    commit_deadline: int
    reveal_deadline: int
    passed: bool
    score_bps: int
    pass_weight: int
    total_weight: int
    termination: str | None = Field(
        default=None,
        description="Why it ended without a verdict, when the chain records it (protocol v2's "
        "Termination, e.g. draw_failed, keys_withheld, snapshot_unavailable).",
    )
    draw_until: int = Field(
        default=0,
        description="Last block its round-0 draw can run (the snapshot's last readable block), read "
        "while it is still to be drawn; 0 when unknown or no longer relevant.",
    )

    @property
    def draw_complete(self) -> bool:
        return self.drawn_seats == self.total_seats


class SegmentTally(BaseModel):
    """One segment as stored on chain: tier, weight, revealed votes, outcome."""

    index: int
    tier: int
    weight: int
    pass_votes: int
    fail_votes: int
    outcome: SegmentOutcome


class VoteState(BaseModel):
    """One auditor's vote in one session round."""

    seat_count: int
    committed: bool
    revealed: bool
    settled: bool
    ballot: Ballot | None = Field(default=None, description="The revealed votes, once revealed.")


class Opened(BaseModel):
    session_id: int
    merkle_root: str
    tx: TxRef


class OpenRequest(BaseModel):
    """One session to open: the trace's Merkle root, its segments' tiers and weights, the fee."""

    model_config = ConfigDict(frozen=True)

    merkle_root: bytes = Field(min_length=32, max_length=32)
    tiers: list[int]
    weights: list[int]
    fee: int = Field(ge=0)


class DrawStep(BaseModel):
    """After one draw call: the session's state and how many seats are drawn."""

    tx: TxRef
    state: SessionState
    drawn_seats: int
    total_seats: int


class DrawFailure(BaseModel):
    """Why a draw could not fill its seats (protocol v2's DrawFailed event, or the node's count)."""

    tier: TierName
    seats_needed: int = Field(description="Seats of this tier the session needs.")
    eligible: int = Field(description="Eligible auditors of this tier.")
    per_segment: int = Field(default=0, description="Distinct auditors each segment of this tier needs.")
    refused: int = Field(
        default=0, description="Sampled auditors that refused their stake lock on the failing segment."
    )

    @property
    def reason(self) -> str:
        need = f"need {self.per_segment} distinct per segment" if self.per_segment else ""
        seats = f"{self.seats_needed} seats"
        detail = f"{need}, {seats}" if need else seats
        short = f"not enough eligible auditors of tier {self.tier.value}: {detail}, have {self.eligible}"
        if not self.refused:
            return short
        return (
            f"{short}; {self.refused} more refused their stake lock after the seed was public, "
            "so the fee is forfeited (a draw is refunded only when the snapshot itself is short)"
        )


class EligibleAuditor(BaseModel):
    """An auditor a draw could pick now, and how many more seats its free stake backs."""

    address: str
    tier: TierName
    free_seats: int = Field(ge=0)


class KeysPublished(BaseModel):
    """The provider published the key bundle: drawn auditors can start."""

    session_id: int
    round: int = 0
    manifest_cid: str
    tx: TxRef
    log_index: int = 0


class SeatsDrawn(BaseModel):
    """One draw call seated these auditors (one entry per seat, in seat order): how an auditor learns
    of its seats before any keys exist, so it can settle a session abandoned before its keys."""

    session_id: int
    round: int = 0
    auditors: list[str]
    tx: TxRef
    log_index: int = 0


class Settlement(BaseModel):
    """One auditor settled in one session round: what it earned, lost and its new reputation."""

    session_id: int
    auditor: str
    round: int = Field(default=0, description="the panel settled (0 = the session's own)")
    correct: int
    incorrect: int
    slashes: int
    reward: int = Field(description="token wei paid for agreeing votes")
    reputation: int = Field(description="WAD, after the session")
    tx: TxRef


class AuditorProfile(BaseModel):
    registered: bool
    tier: TierName | None
    expertise: int
    encryption_key: str


class PoolState(BaseModel):
    """An auditor's staking pool."""

    assets: int
    locked: int
    total_shares: int
    reputation: int
    commission_bps: int


#: `Withdrawal.ready_at` of a request whose shares have not left the pool yet (held, or waiting in
#: the ledger behind the sessions they back): not claimable before it is released.
PENDING_READY_AT = 2**40 - 1


class Withdrawal(BaseModel):
    id: int
    amount: int
    ready_at: int = Field(description="chain time (s) from which it can be claimed")
    claimed: bool
