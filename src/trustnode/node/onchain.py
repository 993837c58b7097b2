"""Reading and driving the AuditSessions contract from Python: the node's view of a session.

Decodes the packed on-chain state (segment words, vote words) into pydantic models, so the
provider worker, the auditor daemon and the public API share one interpretation of it.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from pydantic import BaseModel
from web3.contract import Contract

from trustnode.chain.client import ChainClient
from trustnode.chain.deployment import Deployment
from trustnode.models.enums import SegmentOutcome, Tier

WAD = 10**18
BPS = 10_000


class SessionStatus(IntEnum):
    NONE = 0
    CREATED = 1
    DRAWING = 2
    KEYS_PUBLISHED = 3
    COMMIT = 4
    REVEAL = 5
    FINALIZED = 6
    CANCELLED = 7
    EXPIRED = 8

    @property
    def terminal(self) -> bool:
        return self in (SessionStatus.FINALIZED, SessionStatus.CANCELLED, SessionStatus.EXPIRED)


class SessionParams(BaseModel):
    tau_bps: int
    beta_bps: int
    seat_cap: int
    seats_per_tier: list[int]
    tier_weight: list[int]
    gamma: int
    p_min: int
    p_max: int
    reward: int
    slash_amount: int
    draw_blocks: int
    key_blocks: int
    commit_blocks: int
    reveal_blocks: int

    @classmethod
    def from_tuple(cls, t: Any) -> SessionParams:
        names = list(cls.model_fields)
        return cls(
            **{n: (list(v) if isinstance(v, list | tuple) else v) for n, v in zip(names, t, strict=True)}
        )

    def weight_of(self, tier: int) -> int:
        """The weight a segment of `tier` must carry (1 when the tier's weight is free)."""
        return self.tier_weight[tier] or 1

    def fee_for(self, tiers: list[int]) -> int:
        """The smallest fee whose 80% audit pool covers R for every seat."""
        seats = sum(self.seats_per_tier[t] for t in tiers)
        need = seats * self.reward
        return -(-need * BPS // 8_000)


class SegmentState(BaseModel):
    index: int
    tier: Tier
    weight: int
    pass_votes: int
    fail_votes: int
    outcome: SegmentOutcome


class SessionState(BaseModel):
    session_id: int
    provider: str
    status: SessionStatus
    params_version: int
    segment_count: int
    auditor_count: int
    settled_count: int
    merkle_root: str
    pool: int
    total_seats: int
    drawn_seats: int
    seed: str
    draw_deadline: int
    key_deadline: int
    commit_deadline: int
    reveal_deadline: int
    committed_count: int
    revealed_count: int
    pass_weight: int
    total_weight: int
    score_bps: int
    passed: bool
    fee: int
    key_manifest_hash: str


_SESSION_FIELDS = [
    ("provider", str),
    ("status", SessionStatus),
    ("params_version", int),
    ("segment_count", int),
    ("auditor_count", int),
    ("settled_count", int),
    ("merkle_root", "hex"),
    ("pool", int),
    ("randomness_id", None),
    ("total_seats", int),
    ("drawn_seats", int),
    ("seed", "hex"),
    ("draw_deadline", int),
    ("key_deadline", int),
    ("commit_deadline", int),
    ("reveal_deadline", int),
    ("draw_segment", None),
    ("draw_seat_in_segment", None),
    ("committed_count", int),
    ("revealed_count", int),
    ("pass_weight", int),
    ("total_weight", int),
    ("score_bps", int),
    ("passed", bool),
    ("fee", int),
    ("key_manifest_hash", "hex"),
]


class Protocol:
    """The deployed contracts, bound to one signing client."""

    def __init__(self, client: ChainClient, deployment: Deployment) -> None:
        self.client = client
        self.deployment = deployment
        self.sessions: Contract = client.contract("AuditSessions", deployment.address("AuditSessions"))
        self.token: Contract = client.contract("TrustToken", deployment.address("TrustToken"))
        self.staking: Contract = client.contract("Staking", deployment.address("Staking"))
        self.registry: Contract = client.contract("AuditorRegistry", deployment.address("AuditorRegistry"))

    # -- reads ---------------------------------------------------------------------------

    def params(self, version: int | None = None) -> SessionParams:
        v = self.client.call(self.sessions.functions.paramsVersion()) if version is None else version
        return SessionParams.from_tuple(self.client.call(self.sessions.functions.paramsAt(v)))

    def session(self, session_id: int) -> SessionState:
        raw = self.client.call(self.sessions.functions.sessionOf(session_id))
        out: dict[str, Any] = {"session_id": session_id}
        for (name, kind), value in zip(_SESSION_FIELDS, raw, strict=True):
            if kind is None:
                continue
            if kind == "hex":
                out[name] = "0x" + bytes(value).hex()
            else:
                out[name] = kind(value)  # type: ignore[operator]
        return SessionState(**out)

    def status(self, session_id: int) -> SessionStatus:
        return SessionStatus(self.client.call(self.sessions.functions.statusOf(session_id)))

    def segments(self, session_id: int, count: int) -> list[SegmentState]:
        out: list[SegmentState] = []
        for w in range((count + 7) // 8):
            word = int(self.client.call(self.sessions.functions.segmentWord(session_id, w)))
            for lane in range(8):
                i = w * 8 + lane
                if i >= count:
                    break
                seg = word >> (lane * 32)
                out.append(
                    SegmentState(
                        index=i,
                        fail_votes=seg & 63,
                        pass_votes=(seg >> 6) & 63,
                        outcome=SegmentOutcome((seg >> 12) & 3),
                        tier=Tier((seg >> 14) & 3),
                        weight=(seg >> 16) & 0xFFFF,
                    )
                )
        return out

    def auditors_of(self, session_id: int) -> list[str]:
        return [str(a) for a in self.client.call(self.sessions.functions.auditorsOf(session_id))]

    def seats_of(self, session_id: int, auditor: str) -> list[int]:
        return [int(s) for s in self.client.call(self.sessions.functions.seatsOf(session_id, auditor))]

    def vote_word(self, session_id: int, auditor: str) -> int:
        return int(self.client.call(self.sessions.functions.voteWord(session_id, auditor)))

    def vote_flags(self, session_id: int, auditor: str) -> dict[str, bool]:
        flags = (self.vote_word(session_id, auditor) >> 200) & 0xFF
        return {"committed": bool(flags & 1), "revealed": bool(flags & 2), "settled": bool(flags & 4)}

    def commitment_prefix_matches(self, session_id: int, auditor: str, commitment: bytes) -> bool:
        """Whether the stored (unrevealed) commitment is `commitment` (the contract keeps its top 192 bits)."""
        word = self.vote_word(session_id, auditor)
        return word & ((1 << 192) - 1) == int.from_bytes(commitment, "big") >> 64

    def compute_commitment(self, session_id: int, auditor: str, verdicts: int, salt: bytes) -> bytes:
        return bytes(
            self.client.call(self.sessions.functions.computeCommitment(session_id, auditor, verdicts, salt))
        )

    def encryption_key_of(self, auditor: str) -> bytes:
        return bytes(self.client.call(self.registry.functions.encryptionKeyOf(auditor)))

    def block_number(self) -> int:
        return self.client.block_number()
