"""Typed Python wrappers over the protocol contracts, for nodes, the CLI and tests.

One `Protocol` object is bound to one signer (a `ChainClient`) and one deployment (addresses
by contract name, as returned by `deploy_protocol`). Writes return the transaction receipt
(or what the transaction created); reads return pydantic models. Reverts surface as the
client's `ContractRevertError` carrying the contract's custom-error name.

Conventions (fixed with the other engineers, mirrored in `trustnode.consensus.rules`):
tiers Computer=0, LLM=1, Human=2; outcomes NONE=0, PASS=1, FAIL=2, INCONCLUSIVE=3;
WAD (1e18) for reputation and probabilities; basis points for tau, beta and commission;
verdict bitmap bit j = 1 means the auditor's j-th seat (seat order = segment index, then
draw order) votes FAIL; commitment = keccak256(abi.encode(chainid, AuditSessions, sessionId,
auditor, verdicts, salt)); segment leaf = keccak256(bytes.concat(keccak256(abi.encode(index,
cid, tier, weight)))).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from enum import IntEnum
from typing import Any

from eth_account.signers.local import LocalAccount
from eth_utils import to_checksum_address
from pydantic import BaseModel, ConfigDict, Field, model_validator
from web3.contract import Contract
from web3.logs import DISCARD
from web3.types import EventData, TxReceipt

from trustnode.chain.client import ChainClient
from trustnode.chain.errors import ChainError
from trustnode.consensus import rules
from trustnode.consensus.rules import pack_tiers_weights as pack_tiers_weights
from trustnode.consensus.rules import verdict_bitmap as verdict_bitmap
from trustnode.models.enums import SegmentOutcome
from trustnode.storage.merkle import segment_leaf as segment_leaf

WAD = 10**18
TOKEN = 10**18
EIP712_NAME = "TrustAuditSessions"
EIP712_VERSION = "1"
TOKEN_NAME = "Trust Audit Token"

_MASK192 = (1 << 192) - 1
_MASK64 = (1 << 64) - 1
_FLAG_COMMITTED = 1
_FLAG_REVEALED = 2
_FLAG_SETTLED = 4


class SessionStatus(IntEnum):
    """AuditSessions.Status."""

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
    """AuditSessions.SessionParams: what a session pins at opening."""

    model_config = ConfigDict(frozen=True)

    tau_bps: int = Field(gt=5000, le=10_000, description="quorum share; q_t = ceil(tau * k_t)")
    beta_bps: int = Field(gt=0, le=10_000, description="trace PASS iff W >= beta * sum(w)")
    seat_cap: int = Field(ge=1, le=64, description="max seats per auditor per session")
    seats_per_tier: tuple[int, int, int] = Field(description="k_t for Computer, LLM, Human (1..31)")
    tier_weight: tuple[int, int, int] = Field(
        description="w_t enforced per tier (0 = the provider chooses any weight >= 1)"
    )
    gamma: int = Field(ge=0, le=WAD)
    p_min: int = Field(ge=0, le=WAD)
    p_max: int = Field(ge=0, le=WAD)
    reward: int = Field(ge=0, description="R per agreeing vote (token wei)")
    slash_amount: int = Field(ge=0, description="P per slash (token wei), locked per seat at draw")
    draw_blocks: int = Field(ge=1)
    key_blocks: int = Field(ge=1)
    commit_blocks: int = Field(ge=1)
    reveal_blocks: int = Field(ge=1)

    @model_validator(mode="after")
    def _check(self) -> SessionParams:
        if self.p_min > self.p_max:
            raise ValueError("p_min must not exceed p_max")
        if not all(1 <= k <= 31 for k in self.seats_per_tier):
            raise ValueError("seats per tier must be in 1..31")
        return self

    def as_abi(self) -> tuple[Any, ...]:
        return (
            self.tau_bps,
            self.beta_bps,
            self.seat_cap,
            list(self.seats_per_tier),
            list(self.tier_weight),
            self.gamma,
            self.p_min,
            self.p_max,
            self.reward,
            self.slash_amount,
            self.draw_blocks,
            self.key_blocks,
            self.commit_blocks,
            self.reveal_blocks,
        )

    @classmethod
    def from_abi(cls, t: Sequence[Any]) -> SessionParams:
        return cls(
            tau_bps=t[0],
            beta_bps=t[1],
            seat_cap=t[2],
            seats_per_tier=tuple(t[3]),
            tier_weight=tuple(t[4]),
            gamma=t[5],
            p_min=t[6],
            p_max=t[7],
            reward=t[8],
            slash_amount=t[9],
            draw_blocks=t[10],
            key_blocks=t[11],
            commit_blocks=t[12],
            reveal_blocks=t[13],
        )


class StakingParams(BaseModel):
    """Staking.StakingParams."""

    model_config = ConfigDict(frozen=True)

    min_stake: tuple[int, int, int] = Field(description="per tier, token wei, for sortition eligibility")
    cooldown: int = Field(ge=0, description="withdrawal cooldown, seconds")
    commission_delay: int = Field(ge=0, description="seconds before a commission change applies")
    initial_reputation: int = Field(ge=0, le=WAD, description="r0")
    reputation_floor: int = Field(ge=0, le=WAD, description="weight = stake * (r + floor)")
    max_commission_bps: int = Field(ge=0, le=5000)

    def as_abi(self) -> tuple[Any, ...]:
        return (
            list(self.min_stake),
            self.cooldown,
            self.commission_delay,
            self.initial_reputation,
            self.reputation_floor,
            self.max_commission_bps,
        )


DEVNET_RANDOMNESS_DELAY = 2
DEVNET_SESSION_PARAMS = SessionParams(
    tau_bps=6000,
    beta_bps=7000,
    seat_cap=8,
    seats_per_tier=(1, 3, 3),
    tier_weight=(0, 0, 0),
    gamma=WAD // 10,
    p_min=WAD // 5,
    p_max=WAD // 2,
    reward=6 * TOKEN,
    slash_amount=8 * TOKEN,
    draw_blocks=40,
    key_blocks=40,
    commit_blocks=40,
    reveal_blocks=40,
)
DEVNET_STAKING_PARAMS = StakingParams(
    min_stake=(10 * TOKEN, 10 * TOKEN, 10 * TOKEN),
    cooldown=60,
    commission_delay=60,
    initial_reputation=WAD // 2,
    reputation_floor=WAD // 2,
    max_commission_bps=2000,
)


class SessionInfo(BaseModel):
    """AuditSessions.sessionOf, decoded."""

    session_id: int
    provider: str
    status: SessionStatus
    params_version: int
    segment_count: int
    auditor_count: int
    settled_count: int
    merkle_root: str
    pool: int
    randomness_id: int
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
    randomness_source: str
    key_manifest_hash: str

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
    """One auditor's vote state in one session (AuditSessions.voteWord, decoded)."""

    seat_count: int
    committed: bool
    revealed: bool
    settled: bool
    commit_nonce: int
    verdicts: int | None = Field(default=None, description="the revealed bitmap, once revealed")
    commitment_prefix: str | None = Field(default=None, description="top 192 bits of the commitment")


class PoolInfo(BaseModel):
    assets: int
    locked: int
    total_shares: int
    reputation: int
    commission_bps: int
    tier: int
    registered: bool


class AuditorProfile(BaseModel):
    tier: int
    registered: bool
    registered_at: int
    expertise: int
    encryption_key: str


class SignedCommit(BaseModel):
    """A commitment signed (EIP-712, compact EIP-2098 signature) for any relayer to submit."""

    auditor: str
    commitment: bytes
    r: bytes
    vs: bytes

    def as_abi(self) -> tuple[str, bytes, bytes, bytes]:
        return (to_checksum_address(self.auditor), self.commitment, self.r, self.vs)


class RevealItem(BaseModel):
    auditor: str
    verdicts: int = Field(ge=0)
    salt: bytes

    def as_abi(self) -> tuple[str, int, bytes]:
        return (to_checksum_address(self.auditor), self.verdicts, self.salt)


def new_salt() -> bytes:
    """32 random bytes for a commitment."""
    return secrets.token_bytes(32)


def compute_commitment(
    chain_id: int, sessions_address: str, session_id: int, auditor: str, verdicts: int, salt: bytes
) -> bytes:
    """keccak256(abi.encode(chainid, AuditSessions, sessionId, auditor, verdicts, salt))."""
    return rules.commitment(
        chain_id,
        to_checksum_address(sessions_address),
        session_id,
        to_checksum_address(auditor),
        verdicts,
        salt,
    )


def _hex(b: bytes) -> str:
    return "0x" + bytes(b).hex()


class Protocol:
    """The protocol's contracts seen by one signer."""

    def __init__(self, client: ChainClient, addresses: Mapping[str, str]) -> None:
        self.client = client
        self.addresses = dict(addresses)
        missing = [
            n
            for n in ("TrustToken", "Staking", "AuditorRegistry", "AuditSessions", "LookaheadRandomness")
            if n not in self.addresses
        ]
        if missing:
            raise ChainError(f"deployment lacks protocol contracts: {', '.join(missing)}")
        self.token: Contract = client.contract("TrustToken", self.addresses["TrustToken"])
        self.staking: Contract = client.contract("Staking", self.addresses["Staking"])
        self.registry: Contract = client.contract("AuditorRegistry", self.addresses["AuditorRegistry"])
        self.sessions: Contract = client.contract("AuditSessions", self.addresses["AuditSessions"])
        self.randomness: Contract = client.contract(
            "LookaheadRandomness", self.addresses["LookaheadRandomness"]
        )

    def as_signer(self, client: ChainClient) -> Protocol:
        """The same deployment seen by another signer."""
        return Protocol(client, self.addresses)

    @property
    def address(self) -> str:
        return self.client.address

    def _tx(self, fn: Any) -> TxReceipt:
        return self.client.transact(fn)

    def _call(self, fn: Any) -> Any:
        return self.client.call(fn)

    # -- token ------------------------------------------------------------------------------

    def balance_of(self, holder: str) -> int:
        return int(self._call(self.token.functions.balanceOf(to_checksum_address(holder))))

    def transfer(self, to: str, amount: int) -> TxReceipt:
        return self._tx(self.token.functions.transfer(to_checksum_address(to), amount))

    def approve(self, spender: str, amount: int) -> TxReceipt:
        return self._tx(self.token.functions.approve(to_checksum_address(spender), amount))

    def sign_permit(self, spender: str, value: int, deadline: int) -> tuple[int, bytes, bytes]:
        """EIP-2612 permit signature (v, r, s) by this signer for `spender`."""
        nonce = int(self._call(self.token.functions.nonces(self.address)))
        signed = self.client.account.sign_typed_data(
            domain_data={
                "name": TOKEN_NAME,
                "version": "1",
                "chainId": self.client.chain_id,
                "verifyingContract": self.token.address,
            },
            message_types={
                "Permit": [
                    {"name": "owner", "type": "address"},
                    {"name": "spender", "type": "address"},
                    {"name": "value", "type": "uint256"},
                    {"name": "nonce", "type": "uint256"},
                    {"name": "deadline", "type": "uint256"},
                ]
            },
            message_data={
                "owner": self.address,
                "spender": to_checksum_address(spender),
                "value": value,
                "nonce": nonce,
                "deadline": deadline,
            },
        )
        return int(signed.v), int(signed.r).to_bytes(32, "big"), int(signed.s).to_bytes(32, "big")

    # -- registry and staking ---------------------------------------------------------------

    def register(self, tier: int, expertise: int, encryption_key: bytes) -> TxReceipt:
        """Register this signer as an auditor (encryption_key: 32-byte X25519 public key)."""
        if len(encryption_key) != 32:
            raise ValueError("the encryption key must be a 32-byte X25519 public key")
        return self._tx(self.registry.functions.register(tier, expertise, encryption_key))

    def update_profile(self, expertise: int, encryption_key: bytes) -> TxReceipt:
        return self._tx(self.registry.functions.updateProfile(expertise, encryption_key))

    def deregister(self) -> TxReceipt:
        return self._tx(self.registry.functions.deregister())

    def profile(self, auditor: str) -> AuditorProfile:
        t = self._call(self.registry.functions.profileOf(to_checksum_address(auditor)))
        return AuditorProfile(
            tier=t[0], registered=t[1], registered_at=t[2], expertise=t[3], encryption_key=_hex(t[4])
        )

    def stake(self, auditor: str, amount: int, *, approve: bool = True) -> TxReceipt:
        """Buy shares of `auditor`'s pool (self-stake when auditor is this signer, else delegation)."""
        if approve:
            self.approve(self.staking.address, amount)
        return self._tx(self.staking.functions.stake(to_checksum_address(auditor), amount))

    def request_withdrawal(self, auditor: str, shares: int) -> int:
        """Redeem shares; returns the withdrawal id to claim after the cooldown."""
        receipt = self._tx(self.staking.functions.requestWithdrawal(to_checksum_address(auditor), shares))
        events = self.staking.events.WithdrawalRequested().process_receipt(receipt, errors=DISCARD)
        return int(events[0]["args"]["id"])

    def claim_withdrawal(self, withdrawal_id: int) -> TxReceipt:
        return self._tx(self.staking.functions.claimWithdrawal(withdrawal_id))

    def set_commission(self, bps: int) -> TxReceipt:
        return self._tx(self.staking.functions.setCommission(bps))

    def pool(self, auditor: str) -> PoolInfo:
        t = self._call(self.staking.functions.poolOf(to_checksum_address(auditor)))
        return PoolInfo(
            assets=t[0],
            locked=t[1],
            total_shares=t[2],
            reputation=t[3],
            commission_bps=t[4],
            tier=t[5],
            registered=t[6],
        )

    def shares_of(self, auditor: str, holder: str) -> int:
        return int(
            self._call(
                self.staking.functions.sharesOf(to_checksum_address(auditor), to_checksum_address(holder))
            )
        )

    def reputation(self, auditor: str) -> int:
        return int(self._call(self.staking.functions.reputationOf(to_checksum_address(auditor))))

    # -- sessions: open and draw --------------------------------------------------------------

    def open_session(
        self,
        merkle_root: bytes,
        tiers: Sequence[int],
        weights: Sequence[int],
        fee: int,
        *,
        permit: bool = False,
        permit_deadline: int | None = None,
    ) -> int:
        """Open a session and return its id; the fee is pulled by approve+transferFrom or a permit."""
        if len(merkle_root) != 32:
            raise ValueError("the Merkle root must be 32 bytes")
        packed = pack_tiers_weights(tiers, weights)
        if permit:
            deadline = permit_deadline or int(self.client.w3.eth.get_block("latest")["timestamp"]) + 3600
            v, r, s = self.sign_permit(self.sessions.address, fee, deadline)
            fn = self.sessions.functions.openSessionWithPermit(merkle_root, packed, fee, deadline, v, r, s)
        else:
            self.approve(self.sessions.address, fee)
            fn = self.sessions.functions.openSession(merkle_root, packed, fee)
        receipt = self._tx(fn)
        events = self.sessions.events.SessionOpened().process_receipt(receipt, errors=DISCARD)
        return int(events[0]["args"]["sessionId"])

    def cancel(self, session_id: int) -> TxReceipt:
        return self._tx(self.sessions.functions.cancel(session_id))

    def blocks_until_drawable(self, session_id: int) -> int:
        """Blocks to mine/wait before the seed can be fixed (gas estimation runs at the latest block)."""
        info = self.session(session_id)
        target = int(self._call(self.randomness.functions.targetBlockOf(info.randomness_id)))
        return max(0, target + 1 - self.client.block_number())

    def draw(self, session_id: int, max_seats: int) -> TxReceipt:
        return self._tx(self.sessions.functions.draw(session_id, max_seats))

    def draw_all(self, session_id: int, page: int = 32) -> list[TxReceipt]:
        """Draw page by page until complete (or the session is cancelled for lack of auditors)."""
        receipts: list[TxReceipt] = []
        for _ in range(10_000):
            info = self.session(session_id)
            if info.status not in (SessionStatus.CREATED, SessionStatus.DRAWING) or (
                info.status == SessionStatus.DRAWING and info.draw_complete
            ):
                return receipts
            receipts.append(self.draw(session_id, page))
        raise ChainError(f"session {session_id}: draw did not complete")

    def publish_keys(self, session_id: int, manifest_cid: str) -> TxReceipt:
        return self._tx(self.sessions.functions.publishKeys(session_id, manifest_cid))

    # -- voting ---------------------------------------------------------------------------

    def compute_commitment(self, session_id: int, auditor: str, verdicts: int, salt: bytes) -> bytes:
        return compute_commitment(
            self.client.chain_id, self.sessions.address, session_id, auditor, verdicts, salt
        )

    def commit(self, session_id: int, commitment: bytes) -> TxReceipt:
        """Commit (or re-commit) this signer's verdict bitmap commitment."""
        return self._tx(self.sessions.functions.commit(session_id, commitment))

    def sign_commit(
        self, account: LocalAccount, session_id: int, commitment: bytes, nonce: int | None = None
    ) -> SignedCommit:
        """An auditor's EIP-712 signature over its commitment, for a relayer's commitBatch."""
        if nonce is None:
            nonce = self.vote(session_id, account.address).commit_nonce
        signed = account.sign_typed_data(
            domain_data={
                "name": EIP712_NAME,
                "version": EIP712_VERSION,
                "chainId": self.client.chain_id,
                "verifyingContract": self.sessions.address,
            },
            message_types={
                "Commit": [
                    {"name": "sessionId", "type": "uint256"},
                    {"name": "auditor", "type": "address"},
                    {"name": "commitment", "type": "bytes32"},
                    {"name": "nonce", "type": "uint256"},
                ]
            },
            message_data={
                "sessionId": session_id,
                "auditor": account.address,
                "commitment": commitment,
                "nonce": nonce,
            },
        )
        vs = int(signed.s) | ((int(signed.v) - 27) << 255)
        return SignedCommit(
            auditor=account.address,
            commitment=commitment,
            r=int(signed.r).to_bytes(32, "big"),
            vs=vs.to_bytes(32, "big"),
        )

    def commit_batch(self, session_id: int, items: Sequence[SignedCommit]) -> TxReceipt:
        return self._tx(self.sessions.functions.commitBatch(session_id, [i.as_abi() for i in items]))

    def reveal(self, session_id: int, auditor: str, verdicts: int, salt: bytes) -> TxReceipt:
        return self.reveal_batch(session_id, [RevealItem(auditor=auditor, verdicts=verdicts, salt=salt)])

    def reveal_batch(self, session_id: int, items: Sequence[RevealItem]) -> TxReceipt:
        return self._tx(self.sessions.functions.revealBatch(session_id, [i.as_abi() for i in items]))

    def finalize(self, session_id: int) -> TxReceipt:
        return self._tx(self.sessions.functions.finalize(session_id))

    def advance(self, session_id: int) -> TxReceipt:
        """Apply due deadline transitions (and finalize when due); anyone may call it."""
        return self._tx(self.sessions.functions.advance(session_id))

    def settle(self, session_id: int, auditor: str) -> TxReceipt:
        return self.settle_batch(session_id, [auditor])

    def settle_batch(self, session_id: int, auditors: Sequence[str]) -> TxReceipt:
        return self._tx(
            self.sessions.functions.settleBatch(session_id, [to_checksum_address(a) for a in auditors])
        )

    # -- views ------------------------------------------------------------------------------

    def session_count(self) -> int:
        return int(self._call(self.sessions.functions.sessionCount()))

    def session(self, session_id: int) -> SessionInfo:
        t = self._call(self.sessions.functions.sessionOf(session_id))
        if t[1] == SessionStatus.NONE:
            raise ChainError(f"no session {session_id}")
        return SessionInfo(
            session_id=session_id,
            provider=t[0],
            status=SessionStatus(t[1]),
            params_version=t[2],
            segment_count=t[3],
            auditor_count=t[4],
            settled_count=t[5],
            merkle_root=_hex(t[6]),
            pool=t[7],
            randomness_id=t[8],
            total_seats=t[9],
            drawn_seats=t[10],
            seed=_hex(t[11]),
            draw_deadline=t[12],
            key_deadline=t[13],
            commit_deadline=t[14],
            reveal_deadline=t[15],
            committed_count=t[18],
            revealed_count=t[19],
            pass_weight=t[20],
            total_weight=t[21],
            score_bps=t[22],
            passed=t[23],
            fee=t[24],
            randomness_source=t[25],
            key_manifest_hash=_hex(t[26]),
        )

    def status(self, session_id: int) -> SessionStatus:
        return SessionStatus(self._call(self.sessions.functions.statusOf(session_id)))

    def params(self, version: int | None = None) -> SessionParams:
        if version is None:
            version = int(self._call(self.sessions.functions.paramsVersion()))
        return SessionParams.from_abi(self._call(self.sessions.functions.paramsAt(version)))

    def segments(self, session_id: int) -> list[SegmentInfo]:
        """Every segment's tier, weight, tally and outcome (8 segments per packed word)."""
        n = self.session(session_id).segment_count
        out: list[SegmentInfo] = []
        for w in range((n + 7) // 8):
            word = int(self._call(self.sessions.functions.segmentWord(session_id, w)))
            for lane in range(8):
                i = w * 8 + lane
                if i >= n:
                    break
                seg = word >> (lane * 32)
                out.append(
                    SegmentInfo(
                        index=i,
                        tier=(seg >> 14) & 3,
                        weight=(seg >> 16) & 0xFFFF,
                        pass_votes=(seg >> 6) & 63,
                        fail_votes=seg & 63,
                        outcome=SegmentOutcome((seg >> 12) & 3),
                    )
                )
        return out

    def auditors_of(self, session_id: int) -> list[str]:
        return [str(a) for a in self._call(self.sessions.functions.auditorsOf(session_id))]

    def seats_of(self, session_id: int, auditor: str) -> list[int]:
        """The auditor's seats as segment indices in seat order (bit j of its verdict bitmap)."""
        return [
            int(s)
            for s in self._call(self.sessions.functions.seatsOf(session_id, to_checksum_address(auditor)))
        ]

    def vote(self, session_id: int, auditor: str) -> VoteInfo:
        v = int(self._call(self.sessions.functions.voteWord(session_id, to_checksum_address(auditor))))
        flags = (v >> 200) & 0xFF
        revealed = bool(flags & _FLAG_REVEALED)
        committed = bool(flags & _FLAG_COMMITTED)
        return VoteInfo(
            seat_count=(v >> 192) & 0xFF,
            committed=committed,
            revealed=revealed,
            settled=bool(flags & _FLAG_SETTLED),
            commit_nonce=(v >> 208) & 0xFF,
            verdicts=(v & _MASK64) if revealed else None,
            commitment_prefix=_hex((v & _MASK192).to_bytes(24, "big"))
            if committed and not revealed
            else None,
        )

    def verify_segment(
        self, session_id: int, index: int, cid: str, tier: int, weight: int, proof: Sequence[bytes]
    ) -> bool:
        return bool(
            self._call(
                self.sessions.functions.verifySegment(session_id, index, cid, tier, weight, list(proof))
            )
        )

    def assignments(self, auditor: str, *, from_block: int = 0) -> list[tuple[int, int]]:
        """(session id, segment index) of every seat `auditor` was drawn for, from SeatAssigned logs."""
        logs = self.sessions.events.SeatAssigned().get_logs(
            from_block=from_block, argument_filters={"auditor": to_checksum_address(auditor)}
        )
        return [(int(e["args"]["sessionId"]), int(e["args"]["segmentIndex"])) for e in logs]

    def events(
        self, contract: str, event: str, *, from_block: int = 0, session_id: int | None = None
    ) -> list[EventData]:
        """Decoded logs of `contract`.`event` (optionally one session's), oldest first."""
        c = {
            "AuditSessions": self.sessions,
            "Staking": self.staking,
            "AuditorRegistry": self.registry,
            "TrustToken": self.token,
            "LookaheadRandomness": self.randomness,
        }[contract]
        filters: dict[str, Any] = {"sessionId": session_id} if session_id is not None else {}
        logs = getattr(c.events, event)().get_logs(from_block=from_block, argument_filters=filters or None)
        return list(logs)
