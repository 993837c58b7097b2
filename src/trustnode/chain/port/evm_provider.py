"""The provider's side of `Web3Port`: who could be drawn, and opening sessions (one at a time, or
a batch sent back to back without waiting, each session read from its own receipt).

Who is eligible is read in one pass over the registered auditors for every tier, by one thread
at a time, and kept for the block it was read in: the provider asks once to count seats and once
more to check the draw's snapshot, often from several workers in the same block, and the answer
read at "latest" cannot change until the next block. An auditor's weight in an epoch's snapshot never changes
once the epoch started, so weights found there are kept for the epoch.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from web3.logs import DISCARD

from trustnode.chain.errors import ChainError
from trustnode.chain.port.evm_auditor import _hex, ref
from trustnode.chain.port.types import EligibleAuditor, NotReady, Opened, OpenRequest
from trustnode.chain.protocol import Protocol
from trustnode.consensus.rules import pack_tiers_weights
from trustnode.models.enums import Tier
from trustnode.models.verdict import TierName


class ProviderOps:
    """Provider operations of `Web3Port` (mixed in; `protocol` is the signer's `Protocol`)."""

    protocol: Protocol
    address: str

    def __init__(self) -> None:
        self._memo_lock = threading.Lock()
        self._eligible_memo: tuple[int, dict[int, list[EligibleAuditor]]] | None = None
        self._in_snapshot: set[tuple[int, int, str]] = set()  # (epoch, tier, auditor) with weight

    if TYPE_CHECKING:  # provided by the port class this is mixed into

        def _logs(self, contract: Any, event: str, **filters: Any) -> list[Any]: ...

    def eligible_auditors(self, tier: Tier) -> list[EligibleAuditor]:
        """Registered auditors of `tier` with sortition weight and free stake for a seat now.

        Weight is the live tree's: stake added in this epoch counts (`open_session` waits for
        the epoch in which the snapshot holds it).
        """
        return list(self._eligible_by_tier().get(int(tier), []))

    def _eligible_by_tier(self) -> dict[int, list[EligibleAuditor]]:
        """One read per block, by one thread: threads that ask while it runs take its answer."""
        p = self.protocol
        block = p.client.block_number()
        with self._memo_lock:
            if self._eligible_memo is not None and self._eligible_memo[0] >= block:
                return self._eligible_memo[1]
            params = p.params()
            out: dict[int, list[EligibleAuditor]] = {}
            for a in p.registered_auditors():
                pool = p.pool(a)
                if not pool.registered or p.weight(a) == 0:
                    continue
                free = pool.backing - pool.locked
                seats = params.seat_cap if params.slash_amount == 0 else free // params.slash_amount
                if seats > 0:
                    e = EligibleAuditor(
                        address=a, tier=TierName.of(Tier(pool.tier)), free_seats=min(seats, params.seat_cap)
                    )
                    out.setdefault(int(pool.tier), []).append(e)
            self._eligible_memo = (block, out)
            return out

    def _unsnapshotted(self, tiers: Sequence[int]) -> int:
        """Auditors of `tiers` with live weight but none in this epoch's snapshot (joined this epoch)."""
        p = self.protocol
        epoch = p.current_epoch()
        eligible = self._eligible_by_tier()
        count = 0
        for t in set(tiers):
            for e in eligible.get(t, []):
                key = (epoch, t, e.address)
                if e.address == self.address or key in self._in_snapshot:
                    continue
                if p.snapshot_weight(t, e.address, epoch) == 0:
                    count += 1
                else:
                    self._in_snapshot.add(key)
        return count

    def _snapshot_ready(self, tiers: Sequence[int]) -> None:
        """NotReady while auditors of `tiers` who joined this epoch are not in the draw's snapshot."""
        p = self.protocol
        late = self._unsnapshotted(tiers)
        if late:
            wait = max(1, p.next_epoch_block() - p.client.block_number())
            raise NotReady(
                f"{late} eligible auditor(s) staked in this epoch and enter draws at block "
                f"{p.next_epoch_block()}; opening then",
                retry_blocks=wait,
            )

    def open_session(
        self, merkle_root: bytes, tiers: Sequence[int], weights: Sequence[int], fee: int
    ) -> Opened:
        """Open; NotReady while auditors who joined this epoch are not in the draw's snapshot yet."""
        self._snapshot_ready(tiers)
        sid, receipt = self.protocol.open_session_receipt(merkle_root, tiers, weights, fee)
        return Opened(session_id=sid, merkle_root=_hex(merkle_root), tx=ref(receipt))

    def send_opens(self, requests: Sequence[OpenRequest]) -> list[str | ChainError]:
        """Estimate, sign and send each open in order; the client's nonce manager gives them
        consecutive nonces (an estimation revert takes none, so it leaves no gap)."""
        p = self.protocol
        if not requests:
            return []
        self._snapshot_ready(sorted({t for r in requests for t in r.tiers}))
        p.ensure_allowance(p.sessions.address, sum(r.fee for r in requests))
        sent: list[str | ChainError] = []
        for r in requests:
            fn = p.sessions.functions.openSession(
                r.merkle_root, pack_tiers_weights(r.tiers, r.weights), r.fee
            )
            try:
                sent.append(_hex(p.client.transact(fn, wait=False)["transactionHash"]))
            except ChainError as exc:
                sent.append(exc)
        return sent

    def open_receipt(self, tx_hash: str, *, wait: bool = True) -> Opened | None:
        p = self.protocol
        receipt = p.client.receipt(tx_hash, wait=wait)
        if receipt is None:
            return None
        events = p.sessions.events.SessionOpened().process_receipt(receipt, errors=DISCARD)
        if not events:
            raise ChainError(f"transaction {tx_hash} opened no session (not an openSession transaction)")
        args = events[0]["args"]
        return Opened(
            session_id=int(args["sessionId"]), merkle_root=_hex(args["merkleRoot"]), tx=ref(receipt)
        )

    def find_opened(self, merkle_root: bytes) -> Opened | None:
        for ev in self._logs(self.protocol.sessions, "SessionOpened", provider=self.address):
            if bytes(ev["args"]["merkleRoot"]) == merkle_root:
                return Opened(
                    session_id=int(ev["args"]["sessionId"]), merkle_root=_hex(merkle_root), tx=ref(ev)
                )
        return None
