"""A session's life on the core: open (fee, root, tiers and weights), draw, publish keys, finalize.

There is no cancel in protocol v2: the draw's randomness is requested at opening, so a session's
fate is fixed from then on (a session that cannot be drawn ends Cancelled or Expired by itself,
see `IAuditSessions.Termination`). Anyone may draw, advance and finalize.
"""

from __future__ import annotations

from collections.abc import Sequence

from web3.logs import DISCARD
from web3.types import TxReceipt

from trustnode.chain.errors import ChainError
from trustnode.chain.protocol.models import RandomnessState
from trustnode.chain.protocol.params import RequestStatus, SessionStatus
from trustnode.chain.protocol.views import ViewOps
from trustnode.consensus.rules import pack_tiers_weights


class SessionOps(ViewOps):
    """Opening and driving sessions (mixed into `Protocol`)."""

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
        return self.open_session_receipt(
            merkle_root, tiers, weights, fee, permit=permit, permit_deadline=permit_deadline
        )[0]

    def open_session_receipt(
        self,
        merkle_root: bytes,
        tiers: Sequence[int],
        weights: Sequence[int],
        fee: int,
        *,
        permit: bool = False,
        permit_deadline: int | None = None,
    ) -> tuple[int, TxReceipt]:
        """`open_session`, returning the receipt too."""
        if len(merkle_root) != 32:
            raise ValueError("the Merkle root must be 32 bytes")
        packed = pack_tiers_weights(tiers, weights)
        if permit:
            deadline = permit_deadline or self.block_timestamp() + 3600
            v, r, s = self.sign_permit(self.sessions.address, fee, deadline)
            fn = self.sessions.functions.openSessionWithPermit(merkle_root, packed, fee, deadline, v, r, s)
        else:
            self.ensure_allowance(self.sessions.address, fee)
            fn = self.sessions.functions.openSession(merkle_root, packed, fee)
        receipt = self._tx(fn)
        events = self.sessions.events.SessionOpened().process_receipt(receipt, errors=DISCARD)
        return int(events[0]["args"]["sessionId"]), receipt

    def draw_randomness(self, session_id: int) -> RandomnessState:
        info = self.session(session_id)
        return self.randomness_state(self.source_of(session_id), info.draw_request)

    def slash_randomness(self, session_id: int) -> RandomnessState | None:
        """The slash coins' randomness, requested at finalization (None before)."""
        info = self.session(session_id)
        if info.status != SessionStatus.FINALIZED or info.slash_request == 0:
            return None
        return self.randomness_state(self.source_of(session_id), info.slash_request)

    def blocks_until_drawable(self, session_id: int) -> int:
        """Blocks to wait before the draw's seed can be fixed (0: now; gas estimation runs at latest)."""
        state = self.draw_randomness(session_id)
        if state.status != RequestStatus.PENDING:
            return 0
        if state.target_block == 0:
            return 1  # a source without a known target (VRF): poll
        return max(0, state.target_block + 1 - self.client.block_number())

    def blocks_until_settleable(self, session_id: int) -> int:
        """Blocks to wait before settlement can fix the slash seed (0: now)."""
        state = self.slash_randomness(session_id)
        if state is None or state.status != RequestStatus.PENDING:
            return 0
        if state.target_block == 0:
            return 1
        return max(0, state.target_block + 1 - self.client.block_number())

    def draw(self, session_id: int, max_seats: int) -> TxReceipt:
        """Draw up to `max_seats` seats (whole segments); the first call fixes the seed."""
        return self._tx(self.sessions.functions.draw(session_id, max_seats))

    def draw_all(self, session_id: int, page: int = 32) -> list[TxReceipt]:
        """Draw page by page until complete (or the session ends for lack of auditors)."""
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

    def finalize(self, session_id: int) -> TxReceipt:
        return self._tx(self.sessions.functions.finalize(session_id))

    def advance(self, session_id: int) -> TxReceipt:
        """Apply due deadline transitions (and finalize when due); anyone may call it."""
        return self._tx(self.sessions.functions.advance(session_id))
