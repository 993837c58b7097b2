"""The chain port over the deployed contracts (protocol v1), delegating to `chain.protocol.Protocol`.

Everything specific to this contract version lives here: the status numbering, the verdict
bitmap (bit j = seat j votes FAIL; no abstention), the 192-bit stored commitment, event
names. Protocol v2 replaces this module (abstain bits 128 + j, per-round seats and
commitments, `ItemSkipped` instead of batch reverts, the draw's `DrawFailed` reason, the
slash randomness settlement waits for); the node keeps talking to `ChainPort`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

from eth_utils import to_checksum_address
from web3.logs import DISCARD
from web3.types import TxReceipt

from trustnode.chain.errors import ChainError, ContractRevertError
from trustnode.chain.port import reverts
from trustnode.chain.port.types import (
    AbstainNotSupported,
    AuditorProfile,
    Ballot,
    Capabilities,
    DrawFailure,
    DrawStep,
    EligibleAuditor,
    KeysPublished,
    NotReady,
    Opened,
    PoolState,
    SeatVote,
    SegmentTally,
    SessionInfo,
    Settlement,
    TxRef,
    VoteState,
    Withdrawal,
)
from trustnode.chain.protocol import Protocol, SessionParams, pack_tiers_weights
from trustnode.models.enums import Tier
from trustnode.models.verdict import SessionState, TierName

_MAX_UINT = 2**256 - 1
_PAGE = 200
_PHASES = (
    ("SessionOpened", "open"),
    ("DrawCompleted", "draw"),
    ("KeysPublished", "publish_keys"),
    ("Committed", "commit"),
    ("Revealed", "reveal"),
    ("SessionFinalized", "finalize"),
    ("AuditorSettled", "settle"),
)


def _hex(b: Any) -> str:
    return "0x" + bytes(b).hex()


def _ref(receipt: Any) -> TxRef:
    return TxRef(tx_hash=_hex(receipt["transactionHash"]), block=int(receipt.get("blockNumber") or 0))


def _state(status: Any) -> SessionState:
    return SessionState(status.name.lower())


def bitmap_of(ballot: Ballot) -> int:
    """v1 verdict word: bit j = 1 iff seat j votes FAIL; an abstention cannot be expressed."""
    if SeatVote.ABSTAIN in ballot.votes:
        raise AbstainNotSupported(
            "protocol v1 contracts cannot record an abstaining seat (protocol v2: bit 128 + j)"
        )
    return sum(1 << j for j, v in enumerate(ballot.votes) if v == SeatVote.FAIL)


def ballot_of(bitmap: int, seats: int) -> Ballot:
    return Ballot(votes=tuple(SeatVote.FAIL if bitmap >> j & 1 else SeatVote.PASS for j in range(seats)))


class Web3Port:
    """`ChainPort` over a `Protocol` (one signer, one deployment)."""

    capabilities = Capabilities(protocol_version=1, abstain=False, refund_cancel=True)

    def __init__(self, protocol: Protocol, *, deploy_block: int = 0) -> None:
        self.protocol = protocol
        self._deploy_block = deploy_block

    # -- identity and chain --------------------------------------------------------------------
    @property
    def chain_id(self) -> int:
        return self.protocol.client.chain_id

    @property
    def contract(self) -> str:
        return str(self.protocol.sessions.address)

    @property
    def address(self) -> str:
        return self.protocol.address

    @property
    def deploy_block(self) -> int:
        return self._deploy_block

    def block_number(self) -> int:
        return self.protocol.client.block_number()

    def chain_time(self) -> int:
        return int(self.protocol.client.w3.eth.get_block("latest")["timestamp"])

    def _tx(self, fn: Any) -> TxReceipt:
        return self.protocol.client.transact(fn)

    def _call(self, fn: Any) -> Any:
        return self.protocol.client.call(fn)

    def _logs(self, event: str, contract: Any = None, **filters: Any) -> list[Any]:
        c = self.protocol.sessions if contract is None else contract
        return list(
            getattr(c.events, event)().get_logs(
                from_block=self._deploy_block, argument_filters=filters or None
            )
        )

    # -- parameters and auditors ---------------------------------------------------------------
    def params(self, version: int | None = None) -> SessionParams:
        return self.protocol.params(version)

    @cached_property
    def _max_segments(self) -> int:
        return int(self._call(self.protocol.sessions.functions.MAX_SEGMENTS()))

    def max_segments(self) -> int:
        return self._max_segments

    def eligible_auditors(self, tier: Tier) -> list[EligibleAuditor]:
        p = self.protocol
        params = p.params()
        count = int(self._call(p.registry.functions.auditorCount()))
        out = []
        for start in range(0, count, _PAGE):
            for a in self._call(p.registry.functions.auditors(start, _PAGE)):
                pool = p.pool(a)
                if not pool.registered or pool.tier != int(tier):
                    continue
                if int(self._call(p.staking.functions.weightOf(a))) == 0:
                    continue  # below the minimum stake
                free = pool.assets - pool.locked
                seats = params.seat_cap if params.slash_amount == 0 else free // params.slash_amount
                if seats > 0:
                    out.append(
                        EligibleAuditor(
                            address=str(a), tier=TierName.of(tier), free_seats=min(seats, params.seat_cap)
                        )
                    )
        return out

    def profile(self, auditor: str) -> AuditorProfile:
        prof = self.protocol.profile(auditor)
        return AuditorProfile(
            registered=prof.registered,
            tier=TierName.of(prof.tier) if prof.registered else None,
            expertise=prof.expertise,
            encryption_key=prof.encryption_key,
        )

    def pool(self, auditor: str) -> PoolState:
        pool = self.protocol.pool(auditor)
        return PoolState(
            assets=pool.assets,
            locked=pool.locked,
            total_shares=pool.total_shares,
            reputation=pool.reputation,
            commission_bps=pool.commission_bps,
        )

    def token_balance(self, holder: str) -> int:
        return self.protocol.balance_of(holder)

    def self_stake(self, auditor: str) -> tuple[int, int]:
        p = self.protocol
        shares = p.shares_of(auditor, auditor)
        value = int(self._call(p.staking.functions.previewRedeem(to_checksum_address(auditor), shares)))
        return shares, value

    # -- provider ------------------------------------------------------------------------------
    def open_session(
        self, merkle_root: bytes, tiers: Sequence[int], weights: Sequence[int], fee: int
    ) -> Opened:
        p = self.protocol
        allowance = int(self._call(p.token.functions.allowance(self.address, p.sessions.address)))
        if allowance < fee:
            self._tx(p.token.functions.approve(p.sessions.address, _MAX_UINT))
        packed = pack_tiers_weights(tiers, weights)
        receipt = self._tx(p.sessions.functions.openSession(merkle_root, packed, fee))
        events = p.sessions.events.SessionOpened().process_receipt(receipt, errors=DISCARD)
        return Opened(
            session_id=int(events[0]["args"]["sessionId"]), merkle_root=_hex(merkle_root), tx=_ref(receipt)
        )

    def find_opened(self, merkle_root: bytes) -> Opened | None:
        for ev in self._logs("SessionOpened", provider=self.address):
            if bytes(ev["args"]["merkleRoot"]) == merkle_root:
                return Opened(
                    session_id=int(ev["args"]["sessionId"]), merkle_root=_hex(merkle_root), tx=_ref(ev)
                )
        return None

    def draw(self, session_id: int, max_seats: int) -> DrawStep:
        try:
            receipt = self._tx(self.protocol.sessions.functions.draw(session_id, max_seats))
        except ContractRevertError as exc:
            if reverts.is_revert(exc, reverts.TOO_EARLY):
                raise NotReady(f"session {session_id}: the draw's randomness is not fixed yet") from exc
            raise
        info = self.session(session_id)
        return DrawStep(
            tx=_ref(receipt), state=info.state, drawn_seats=info.drawn_seats, total_seats=info.total_seats
        )

    def draw_failure(self, session_id: int) -> DrawFailure | None:
        return None  # v1 cancels without saying why; the node counts eligible auditors instead

    def seats(self, session_id: int, round: int = 0) -> dict[str, list[int]]:
        self._round0(round)
        p = self.protocol
        return {a: p.seats_of(session_id, a) for a in p.auditors_of(session_id)}

    def publish_keys(self, session_id: int, manifest_cid: str) -> TxRef:
        return _ref(self.protocol.publish_keys(session_id, manifest_cid))

    def keys_published(self, session_id: int) -> KeysPublished | None:
        logs = self._logs("KeysPublished", sessionId=session_id)
        return self._keys_event(logs[0]) if logs else None

    @staticmethod
    def _keys_event(ev: Any) -> KeysPublished:
        return KeysPublished(
            session_id=int(ev["args"]["sessionId"]),
            manifest_cid=str(ev["args"]["manifestCid"]),
            tx=_ref(ev),
            log_index=int(ev["logIndex"]),
        )

    def advance(self, session_id: int) -> tuple[SessionState, TxRef]:
        receipt = self.protocol.advance(session_id)
        return self.session(session_id).state, _ref(receipt)

    def finalized(self, session_id: int) -> TxRef | None:
        logs = self._logs("SessionFinalized", sessionId=session_id)
        return _ref(logs[0]) if logs else None

    # -- auditor ---------------------------------------------------------------------------------
    def register(self, tier: Tier, expertise: int, encryption_key: bytes) -> TxRef:
        return _ref(self.protocol.register(int(tier), expertise, encryption_key))

    def update_profile(self, expertise: int, encryption_key: bytes) -> TxRef:
        return _ref(self.protocol.update_profile(expertise, encryption_key))

    def stake(self, amount: int) -> TxRef:
        p = self.protocol
        if int(self._call(p.token.functions.allowance(self.address, p.staking.address))) < amount:
            self._tx(p.token.functions.approve(p.staking.address, _MAX_UINT))
        return _ref(self._tx(p.staking.functions.stake(self.address, amount)))

    def events(self, from_block: int, to_block: int) -> list[KeysPublished]:
        logs = self.protocol.sessions.events.KeysPublished().get_logs(
            from_block=from_block, to_block=to_block
        )
        ordered = sorted(logs, key=lambda lg: (lg["blockNumber"], lg["logIndex"]))
        return [self._keys_event(lg) for lg in ordered]

    def vote(self, session_id: int, auditor: str, round: int = 0) -> VoteState:
        self._round0(round)
        v = self.protocol.vote(session_id, auditor)
        ballot = ballot_of(v.verdicts, v.seat_count) if v.verdicts is not None else None
        return VoteState(
            seat_count=v.seat_count,
            committed=v.committed,
            revealed=v.revealed,
            settled=v.settled,
            ballot=ballot,
        )

    def _commitment(self, session_id: int, ballot: Ballot, salt: bytes) -> bytes:
        return self.protocol.compute_commitment(session_id, self.address, bitmap_of(ballot), salt)

    def commitment_matches(self, session_id: int, ballot: Ballot, salt: bytes, round: int = 0) -> bool:
        self._round0(round)
        v = self.protocol.vote(session_id, self.address)
        if v.revealed:
            return v.verdicts == bitmap_of(ballot)
        return v.committed and v.commitment_prefix == _hex(self._commitment(session_id, ballot, salt)[:24])

    def commit(self, session_id: int, ballot: Ballot, salt: bytes, round: int = 0) -> TxRef:
        self._round0(round)
        return _ref(self.protocol.commit(session_id, self._commitment(session_id, ballot, salt)))

    def reveal(self, session_id: int, ballot: Ballot, salt: bytes, round: int = 0) -> TxRef | None:
        self._round0(round)
        try:
            return _ref(self.protocol.reveal(session_id, self.address, bitmap_of(ballot), salt))
        except ContractRevertError as exc:
            if reverts.is_revert(exc, reverts.ALREADY_REVEALED):
                return None
            raise

    def settle(self, session_id: int, auditor: str, round: int = 0) -> Settlement | None:
        self._round0(round)
        try:
            receipt = self.protocol.settle(session_id, auditor)
        except ContractRevertError as exc:
            if reverts.is_revert(exc, reverts.ALREADY_SETTLED):
                return None
            raise
        events = self.protocol.sessions.events.AuditorSettled().process_receipt(receipt, errors=DISCARD)
        mine = [e for e in events if e["args"]["auditor"] == to_checksum_address(auditor)]
        return self._settlement(mine[0], _ref(receipt)) if mine else None

    @staticmethod
    def _settlement(ev: Any, tx: TxRef | None = None) -> Settlement:
        a = ev["args"]
        return Settlement(
            session_id=int(a["sessionId"]),
            auditor=str(a["auditor"]),
            correct=int(a["correct"]),
            incorrect=int(a["incorrect"]),
            slashes=int(a["slashes"]),
            reward=int(a["reward"]),
            reputation=int(a["reputation"]),
            tx=tx or _ref(ev),
        )

    def settlements(self, *, auditor: str | None = None, session_id: int | None = None) -> list[Settlement]:
        filters: dict[str, Any] = {}
        if auditor is not None:
            filters["auditor"] = to_checksum_address(auditor)
        if session_id is not None:
            filters["sessionId"] = session_id
        return [self._settlement(ev) for ev in self._logs("AuditorSettled", **filters)]

    def request_withdrawal(self, shares: int) -> int:
        return self.protocol.request_withdrawal(self.address, shares)

    def withdrawal(self, withdrawal_id: int) -> Withdrawal:
        w = self._call(self.protocol.staking.functions.withdrawalOf(withdrawal_id))
        return Withdrawal(id=withdrawal_id, amount=int(w[1]), ready_at=int(w[3]), claimed=bool(w[4]))

    def claim_withdrawal(self, withdrawal_id: int) -> TxRef:
        return _ref(self.protocol.claim_withdrawal(withdrawal_id))

    # -- public reads ---------------------------------------------------------------------------
    def session_count(self) -> int:
        return self.protocol.session_count()

    def session(self, session_id: int) -> SessionInfo:
        s = self.protocol.session(session_id)
        return SessionInfo(
            session_id=session_id,
            provider=s.provider,
            state=_state(s.status),
            params_version=s.params_version,
            segment_count=s.segment_count,
            auditor_count=s.auditor_count,
            merkle_root=s.merkle_root,
            fee=s.fee,
            total_seats=s.total_seats,
            drawn_seats=s.drawn_seats,
            committed_count=s.committed_count,
            revealed_count=s.revealed_count,
            draw_deadline=s.draw_deadline,
            key_deadline=s.key_deadline,
            commit_deadline=s.commit_deadline,
            reveal_deadline=s.reveal_deadline,
            passed=s.passed,
            score_bps=s.score_bps,
            pass_weight=s.pass_weight,
            total_weight=s.total_weight,
        )

    def segments(self, session_id: int) -> list[SegmentTally]:
        return [SegmentTally.model_validate(s.model_dump()) for s in self.protocol.segments(session_id)]

    def session_transactions(self, session_id: int) -> dict[str, list[str]]:
        txs: dict[str, list[str]] = {}
        for event, phase in _PHASES:
            hashes = [_hex(lg["transactionHash"]) for lg in self._logs(event, sessionId=session_id)]
            if hashes:
                txs[phase] = list(dict.fromkeys(hashes))
        return txs

    def verify_segment(
        self, session_id: int, index: int, cid: str, tier: int, weight: int, proof: Sequence[bytes]
    ) -> bool:
        return self.protocol.verify_segment(session_id, index, cid, tier, weight, proof)

    @staticmethod
    def _round0(round: int) -> None:
        if round != 0:
            raise ChainError("protocol v1 contracts have one panel per session (round 0)")
