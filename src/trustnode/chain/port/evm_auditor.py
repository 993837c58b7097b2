"""The auditor's side of `Web3Port` (protocol v2): registry, stake, ballots, settlement, withdrawals."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from eth_utils import to_checksum_address
from web3.logs import DISCARD

from trustnode.chain.errors import ContractRevertError
from trustnode.chain.port import reverts
from trustnode.chain.port.ballots import ballot_word, word_ballot
from trustnode.chain.port.types import (
    PENDING_READY_AT,
    AuditorProfile,
    Ballot,
    NotReady,
    SeatsDrawn,
    Settlement,
    TxRef,
    VoteState,
    Withdrawal,
)
from trustnode.chain.protocol import WAD, Protocol, RequestStatus, SessionStatus
from trustnode.models.enums import Tier
from trustnode.models.verdict import TierName


def _hex(b: Any) -> str:
    return "0x" + bytes(b).hex()


def ref(receipt: Any) -> TxRef:
    return TxRef(tx_hash=_hex(receipt["transactionHash"]), block=int(receipt.get("blockNumber") or 0))


class AuditorOps:
    """Auditor operations of `Web3Port` (mixed in; `protocol` is the signer's `Protocol`)."""

    protocol: Protocol

    @property
    def address(self) -> str:
        return self.protocol.address

    def profile(self, auditor: str) -> AuditorProfile:
        prof = self.protocol.profile(auditor)
        return AuditorProfile(
            registered=prof.registered,
            tier=TierName.of(prof.tier) if prof.registered else None,
            expertise=prof.expertise,
            encryption_key=prof.encryption_key,
        )

    def register(self, tier: Tier, expertise: int, encryption_key: bytes) -> TxRef:
        return ref(self.protocol.register(int(tier), expertise, encryption_key))

    def update_profile(self, expertise: int, encryption_key: bytes) -> TxRef:
        return ref(self.protocol.update_profile(expertise, encryption_key))

    def stake(self, amount: int) -> TxRef:
        """Self-stake; an earlier deposit still waiting in the ledger is drained first if it can be."""
        p = self.protocol
        try:
            return ref(p.stake(self.address, amount))
        except ContractRevertError as exc:
            if not reverts.is_revert(exc, reverts.DEPOSIT_PENDING):
                raise
            p.drain(self.address)
            return ref(p.stake(self.address, amount))

    def self_stake(self, auditor: str) -> tuple[int, int]:
        """(shares, their value + a deposit still waiting in the ledger): what the auditor put in."""
        p = self.protocol
        shares, pending, _flow = p.position(auditor, auditor)
        return shares, p.preview_redeem(auditor, shares) + pending

    # -- ballots -------------------------------------------------------------------------------
    def vote(self, session_id: int, auditor: str, round: int = 0) -> VoteState:
        v = self.protocol.vote(session_id, auditor, round)
        return VoteState(
            seat_count=v.seat_count,
            committed=v.committed,
            revealed=v.revealed,
            settled=v.settled,
            ballot=None if v.verdicts is None else word_ballot(v.verdicts, v.seat_count),
        )

    def commitment_matches(self, session_id: int, ballot: Ballot, salt: bytes, round: int = 0) -> bool:
        v = self.protocol.vote(session_id, self.address, round)
        word = ballot_word(ballot)
        if v.revealed:
            return v.verdicts == word
        mine = self.protocol.compute_commitment(session_id, self.address, word, salt, round)
        return v.committed and v.commitment == _hex(mine)

    def commit(self, session_id: int, ballot: Ballot, salt: bytes, round: int = 0) -> TxRef:
        p = self.protocol
        commitment = p.compute_commitment(session_id, self.address, ballot_word(ballot), salt, round)
        return ref(p.commit(session_id, commitment, round))

    def reveal(self, session_id: int, ballot: Ballot, salt: bytes, round: int = 0) -> TxRef | None:
        try:
            return ref(self.protocol.reveal(session_id, self.address, ballot_word(ballot), salt, round))
        except ContractRevertError as exc:
            if reverts.is_revert(exc, reverts.ALREADY_REVEALED):
                return None
            raise

    # -- settlement ------------------------------------------------------------------------------
    def settle(self, session_id: int, auditor: str, round: int = 0) -> Settlement | None:
        """Settle `auditor`'s seats of `round`; the settle transaction itself fixes the slash seed once
        it exists. With appeals, the outcome must be final first (this advances the appeal module
        when it is due) and the appealed segments' money resolved (`settleAppeals`, done here)."""
        p = self.protocol
        self._outcome_final(session_id)
        state = p.slash_randomness(session_id)
        if state is not None and state.status == RequestStatus.PENDING:
            wait = max(1, state.target_block + 1 - p.client.block_number()) if state.target_block else 1
            raise NotReady(f"session {session_id}: slash randomness not fixed yet", retry_blocks=wait)
        try:
            receipt = self._settle_resolved(session_id, auditor, round)
        except ContractRevertError as exc:
            if reverts.is_revert(exc, reverts.ALREADY_SETTLED):
                return None
            if reverts.is_revert(exc, reverts.SLASH_SEED_PENDING) or reverts.is_revert(
                exc, reverts.TOO_EARLY
            ):
                raise NotReady(f"session {session_id}: slash randomness not fixed yet") from exc
            if reverts.is_revert(exc, reverts.OUTCOME_NOT_FINAL):
                raise NotReady(f"session {session_id}: the outcome is not final yet") from exc
            raise
        events = p.settlement.events.AuditorSettled().process_receipt(receipt, errors=DISCARD)
        mine = [e for e in events if e["args"]["auditor"] == to_checksum_address(auditor)]
        if not mine:
            return None
        return self._settlement(mine[0], ref(receipt), reputation=p.reputation(auditor))

    def _outcome_final(self, session_id: int) -> None:
        """NotReady while the session's outcome can still change (canary reveals, appeals)."""
        p = self.protocol
        if p.appeal_module is None or p.session(session_id).status != SessionStatus.FINALIZED:
            return
        if p.is_outcome_final(session_id):
            return
        until = p.session_appeals(session_id).last_window_end
        if p.client.block_number() + 1 > until and p.session_appeals(session_id).open_rounds == 0:
            p.advance_appeals(session_id)
            if p.is_outcome_final(session_id):
                return
        raise NotReady(
            f"session {session_id}: the outcome can change until block {until} (canary reveals, appeals)",
            retry_blocks=max(1, until + 1 - p.client.block_number()),
        )

    def _settle_resolved(self, session_id: int, auditor: str, round: int) -> Any:
        """`settle`, resolving the appealed segments' money first when the contract asks for it."""
        p = self.protocol
        try:
            return p.settle(session_id, auditor, round)
        except ContractRevertError as exc:
            if not reverts.is_revert(exc, reverts.APPEALS_UNRESOLVED):
                raise
        appealed = p.session_appeals(session_id).appealed_count
        for _ in range(1024):  # bounded: each call resolves up to 64 segments
            p.settle_appeals(session_id)
            if p.session_money(session_id).resolved_count >= appealed:
                break
        return p.settle(session_id, auditor, round)

    def _settlement(self, ev: Any, tx: TxRef | None = None, *, reputation: int | None = None) -> Settlement:
        a = ev["args"]
        if reputation is None:  # the session's map applied to the reputation fixed at the draw
            drawn = self.protocol.vote(int(a["sessionId"]), str(a["auditor"]), int(a["round"]))
            reputation = min(WAD, drawn.draw_reputation * int(a["repMul"]) // WAD + int(a["repAdd"]))
        return Settlement(
            session_id=int(a["sessionId"]),
            auditor=str(a["auditor"]),
            round=int(a["round"]),
            correct=int(a["correct"]),
            incorrect=int(a["incorrect"]),
            slashes=int(a["slashes"]),
            reward=int(a["reward"]),
            reputation=reputation,
            tx=tx or ref(ev),
        )

    def settlements(self, *, auditor: str | None = None, session_id: int | None = None) -> list[Settlement]:
        filters: dict[str, Any] = {}
        if auditor is not None:
            filters["auditor"] = to_checksum_address(auditor)
        if session_id is not None:
            filters["sessionId"] = session_id
        logs = self.protocol.settlement.events.AuditorSettled().get_logs(
            from_block=self.deploy_block, argument_filters=filters or None
        )
        return [self._settlement(ev) for ev in logs]

    def seats_drawn(self, from_block: int, to_block: int) -> list[SeatsDrawn]:
        """The DrawModule's `SeatsDrawn` (every round's draw calls), in chain order."""
        logs = self.protocol.draw_module.events.SeatsDrawn().get_logs(
            from_block=from_block, to_block=to_block
        )
        return [
            SeatsDrawn(
                session_id=int(lg["args"]["sessionId"]),
                round=int(lg["args"]["round"]),
                auditors=[to_checksum_address(a) for a in lg["args"]["auditors"]],
                tx=ref(lg),
                log_index=int(lg["logIndex"]),
            )
            for lg in sorted(logs, key=lambda lg: (lg["blockNumber"], lg["logIndex"]))
        ]

    if TYPE_CHECKING:  # provided by the port class this is mixed into

        @property
        def deploy_block(self) -> int: ...

        def _logs(self, contract: Any, event: str, **filters: Any) -> list[Any]: ...

    # -- withdrawals -----------------------------------------------------------------------------
    def request_withdrawal(self, shares: int) -> int:
        return self.protocol.request_withdrawal(self.address, shares)

    def withdrawal(self, withdrawal_id: int) -> Withdrawal:
        """A request still waiting in the ledger reads as not ready (`PENDING_READY_AT`)."""
        w = self.protocol.withdrawal(withdrawal_id)
        ready_at = w.ready_at if w.ready_at else PENDING_READY_AT
        return Withdrawal(id=withdrawal_id, amount=w.amount, ready_at=ready_at, claimed=w.claimed)

    def claim_withdrawal(self, withdrawal_id: int) -> TxRef:
        return ref(self.protocol.claim_withdrawal(withdrawal_id))

    def release_withdrawal(self, withdrawal_id: int) -> TxRef | None:
        """Queue a parked request whose hold is over (`drain` its pool, which anyone may call); None
        while it is still held or when it is not parked at all."""
        p = self.protocol
        w = p.withdrawal(withdrawal_id)
        if w.claimed or w.ready_at or not w.park_epoch or p.current_epoch() <= w.park_epoch + p.hold_epochs():
            return None
        if self._logs(p.staking, "ParkedBatchQueued", auditor=w.auditor, epoch=w.park_epoch):
            return None  # queued already: it leaves when its FLOW applies, behind the sessions it backs
        return ref(p.drain(w.auditor))
