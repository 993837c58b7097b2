"""The in-memory chain's gold canaries (issue 15), as ICanaryModule does them.

The core's owner (`MemoryChain.owner`) authorizes canary operators; an authorized operator that is
not the session's provider commits exactly `canary_count(segments, canaryRateBps)` hashes while the draw's
randomness is pending (before anyone can know the seats), and reveals `(slot, index, verdict,
salt)` (only the committing operator, while authorized) in the canary window `(finalizedAt, finalizedAt + canaryRevealBlocks]`. A revealed canary
leaves the trace verdict and its votes are scored against its truth; a commitment never revealed
(or never made) takes the largest segment weight off the passed weight and blocks nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from eth_utils import to_checksum_address

from trustnode.chain.port.memory_state import Session, revert
from trustnode.chain.port.types import TxRef
from trustnode.chain.port.types_appeals import CanaryReveal, CanaryState, RevealedCanary
from trustnode.consensus.appeals import DECIDED
from trustnode.consensus.canaries import canary_commitment, canary_count
from trustnode.models.verdict import SessionState

if TYPE_CHECKING:
    from trustnode.chain.port.memory_state import MemoryChain


class CanaryOps:
    """Canary commit, reveal and state of `MemoryPort` (mixed in)."""

    c: MemoryChain

    if TYPE_CHECKING:  # provided by the port class this is mixed into

        @property
        def address(self) -> str: ...

        def _recompute_verdict(self, s: Session) -> None: ...

    def _required(self, s: Session) -> int:
        return canary_count(len(s.tiers), self.c.params_of(s).canary_rate_bps)

    def set_canary_operator(self, address: str, allowed: bool) -> TxRef:
        with self.c.op():
            if self.address != self.c.owner:
                raise revert("NotCoreOwner", caller=self.address)
            operator = to_checksum_address(address)
            if int(operator, 16) == 0:
                raise revert("ZeroOperator")
            tx = self.c.tx()
            if allowed:
                self.c.canary_operators.add(operator)
            else:
                self.c.canary_operators.discard(operator)
            return tx

    def is_canary_operator(self, address: str) -> bool:
        with self.c.op():
            return to_checksum_address(address) in self.c.canary_operators

    def _only_committing_operator(self, s: Session) -> None:
        if self.address not in self.c.canary_operators:
            raise revert("NotCanaryOperator", caller=self.address)
        if s.canary_operator != self.address:
            raise revert("NotCommittingOperator", sessionId=s.id, caller=self.address)

    def commit_canaries(self, session_id: int, commitments: Sequence[bytes]) -> TxRef:
        with self.c.op():
            if self.address not in self.c.canary_operators:
                raise revert("NotCanaryOperator", caller=self.address)
            s = self.c.session(session_id)
            if self.address == s.provider:
                raise revert("ProviderIsCanaryOperator", sessionId=s.id)
            if s.canary_operator is not None:
                raise revert("CanariesAlreadyCommitted", sessionId=s.id)
            if s.state != SessionState.CREATED or self.c.block + 1 > s.target:
                raise revert("CommitTooLate", sessionId=s.id)
            required = self._required(s)
            if len(commitments) != required:
                raise revert("WrongCanaryCount", sessionId=s.id, given=len(commitments), required=required)
            for slot, h in enumerate(commitments):
                if len(h) != 32 or not any(h):
                    raise revert("ZeroCommitment", sessionId=s.id, slot=slot)
            tx = self.c.tx()
            s.canary_commitments = [bytes(h) for h in commitments]
            s.canary_operator = self.address
            s.note("canaries", tx)
            return tx

    def _check_reveal(self, s: Session, r: CanaryReveal, pending: list[RevealedCanary]) -> bool:
        """False when the slot is revealed already; the named revert for any other bad item."""
        commitments = s.canary_commitments or []
        if not r.slot < len(commitments):
            raise revert("UnknownCanarySlot", sessionId=s.id, slot=r.slot)
        if any(c.slot == r.slot for c in pending):
            return False
        if r.index >= len(s.tiers):
            raise revert("InvalidSegment", sessionId=s.id, index=r.index)
        if any(c.index == r.index for c in pending):
            raise revert("SegmentAlreadyCanary", sessionId=s.id, index=r.index)
        if r.verdict not in DECIDED:
            raise revert("InvalidVerdict", sessionId=s.id, verdict=int(r.verdict))
        if canary_commitment(s.id, r.index, r.verdict, r.salt) != commitments[r.slot]:
            raise revert("CanaryMismatch", sessionId=s.id, slot=r.slot)
        return True

    def reveal_canaries(self, session_id: int, reveals: Sequence[CanaryReveal]) -> TxRef:
        with self.c.op():
            if not reveals:  # like the evm port, before anything is read
                raise revert("EmptyBatch")
            s = self.c.session(session_id)
            self._only_committing_operator(s)
            block = self.c.block + 1
            if not s.finalized_at or block <= s.finalized_at:
                raise revert("CanaryRevealNotOpen", sessionId=s.id, opensAfter=s.finalized_at)
            if block > s.canary_end:
                raise revert("CanaryRevealClosed", sessionId=s.id, closedAt=s.canary_end)
            pending = list(s.canaries_revealed)
            for r in reveals:  # every item is checked before anything is recorded
                if self._check_reveal(s, r, pending):
                    pending.append(RevealedCanary(slot=r.slot, index=r.index, verdict=r.verdict))
            if len(pending) == len(s.canaries_revealed):  # every item was revealed already
                raise revert("CanaryAlreadyRevealed", sessionId=s.id, slot=reveals[0].slot)
            tx = self.c.tx()
            s.canaries_revealed = pending
            self._recompute_verdict(s)
            s.note("canaries", tx)
            return tx

    def canaries(self, session_id: int) -> CanaryState:
        with self.c.op():
            s = self.c.session(session_id)
            return CanaryState(
                session_id=s.id,
                required=self._required(s),
                commitments=["0x" + h.hex() for h in s.canary_commitments or []],
                commit_until=s.target,
                reveal_from=s.finalized_at + 1 if s.finalized_at else None,
                reveal_until=s.canary_end if s.finalized_at else None,
                revealed=list(s.canaries_revealed),
                operator=s.canary_operator,
            )
