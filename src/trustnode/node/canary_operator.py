"""The canary operator (issue 15): writes gold canaries for providers, checks where they were
placed, commits their truths and reveals them.

The provider never sees a truth or a salt, so it cannot turn a real segment it fears into a PASS
"canary". It receives texts only, places them in its session, and reports each one's leaf index,
CID, content key and Merkle proof; the operator commits nothing until every canary of the ticket
is proven to sit, with exactly its text, under the session's on-chain root (`check_placement`).
Chain writes (commit here, reveal in `canary_duties`) are serialized by one lock, since they share
the operator's account and its nonces.
"""

from __future__ import annotations

import logging
import random
import secrets
import threading
from pathlib import Path

from pydantic import ValidationError

from trustnode.canary import SegmentShape, make_canaries
from trustnode.chain.errors import ChainError
from trustnode.chain.port import ChainPort
from trustnode.config import Settings
from trustnode.hdag.rules import classify, summarize
from trustnode.models.canary_operator import (
    CanaryBatch,
    CanaryPlacement,
    CanaryPlacementItem,
    CanaryReceipt,
    CanaryRequest,
    CanaryText,
)
from trustnode.models.enums import Level, Tier
from trustnode.models.verdict import SessionState
from trustnode.node import canary_duties
from trustnode.node.canary_store import CanaryStore, SecretCanary, SessionTaken, Ticket, new_ticket_id
from trustnode.node.context import NodeContext
from trustnode.node.structure import SegmentPlaintext
from trustnode.storage.crypto import DecryptionError, decrypt_segment
from trustnode.storage.errors import BlobNotFoundError
from trustnode.storage.merkle import segment_leaf, verify

log = logging.getLogger(__name__)


class PlacementRefused(Exception):
    """A request the operator will not act on; `status` is the HTTP answer (422, 404, 409)."""

    def __init__(self, reason: str, status: int = 422) -> None:
        super().__init__(reason)
        self.reason, self.status = reason, status


def write_canaries(req: CanaryRequest, rng: random.Random) -> list[SecretCanary]:
    """The texts and truths of a request: `make_canaries`, routed like any segment."""
    shapes = [SegmentShape(tier=s.tier, chars=s.chars) for s in req.shapes]
    out: list[SecretCanary] = []
    for slot, c in enumerate(make_canaries(shapes, req.count, rng, high_stakes=req.high_stakes)):
        assert c.source is not None
        unit = classify(c.text, high_stakes=req.high_stakes or c.tier is Tier.HUMAN)
        level = unit.level
        if level is Level.GOAL:  # a canary never reads as the problem statement
            level = req.shapes[c.source].level or Level.STEP
        text = CanaryText(
            slot=slot, source=c.source, tier=c.tier, text=c.text, level=level, kind=unit.type,
            auditor=unit.primary, summary=summarize(c.text, unit.type),
        )  # fmt: skip
        salt = "0x" + secrets.token_bytes(32).hex()  # never from `rng`: a known salt reveals the truth
        out.append(SecretCanary(text=text, verdict=c.verdict, salt=salt, mutation=c.mutation.value))
    return out


def _check_item(
    ctx: NodeContext,
    port: ChainPort,
    item: CanaryPlacementItem,
    canary: CanaryText,
    nonce: str,
    root: bytes,
    weight: int,
) -> None:
    """Refused unless the CID decrypts to exactly this canary at `item.index`, proven under `root`."""
    where = f"slot {item.slot} (index {item.index}, CID {item.cid})"
    try:
        leaf = segment_leaf(item.index, item.cid, int(canary.tier), weight)
    except ValueError as exc:
        raise PlacementRefused(f"{where}: {exc}") from None
    proof = [bytes.fromhex(p[2:]) for p in item.proof]
    if not verify(leaf, proof, root):
        raise PlacementRefused(
            f"{where}: the Merkle proof does not prove the leaf (index {item.index}, its CID, tier "
            f"{int(canary.tier)}, weight {weight}) under the session's on-chain root 0x{root.hex()}"
        )
    try:
        blob = ctx.store.cat(item.cid)
    except BlobNotFoundError:
        raise PlacementRefused(f"{where}: no ciphertext is pinned at this CID") from None
    try:
        raw = decrypt_segment(
            blob, bytes.fromhex(item.key_hex[2:]), chain_id=port.chain_id, session_key=nonce,
            segment_index=item.index,
        )  # fmt: skip
        plain = SegmentPlaintext.model_validate_json(raw)
    except DecryptionError as exc:
        raise PlacementRefused(
            f"{where}: the ciphertext does not decrypt with the given key as segment {item.index} "
            f"of this chain and session nonce ({exc})"
        ) from None
    except ValidationError:
        raise PlacementRefused(f"{where}: the decrypted segment is not a segment plaintext") from None
    if plain.index != item.index:
        raise PlacementRefused(f"{where}: the plaintext says index {plain.index}, the placement {item.index}")
    if plain.content != canary.text:
        raise PlacementRefused(f"{where}: the segment's content is not the text issued for this slot")


def check_placement(ctx: NodeContext, port: ChainPort, ticket: Ticket, p: CanaryPlacement) -> list[bytes]:
    """The commitments to post, once every check of the design passed; PlacementRefused otherwise."""
    n, sid = len(ticket.canaries), p.session_id
    slots = sorted(i.slot for i in p.items)
    if slots != list(range(n)):
        raise PlacementRefused(f"the placement must name each of the ticket's {n} slots once, got {slots}")
    if len({i.index for i in p.items}) != n:
        raise PlacementRefused("two canaries are placed at the same leaf index")
    if not 1 <= sid <= port.session_count():
        raise PlacementRefused(f"session {sid} does not exist on chain", 404)
    s = port.session(sid)
    if s.provider.lower() != ticket.provider.lower():
        raise PlacementRefused(
            f"session {sid} was opened by {s.provider}, not by the ticket's provider {ticket.provider}"
        )
    if s.provider.lower() == port.address.lower():
        raise PlacementRefused(
            f"session {sid} is this operator's own: the chain takes no canaries from a session's provider"
        )
    if s.state is not SessionState.CREATED:
        raise PlacementRefused(
            f"session {sid} is {s.state.value}, not created: its canaries can no longer be committed"
        )
    state = port.canaries(sid)
    if state.committed:
        raise PlacementRefused(f"session {sid} already has canary commitments", 409)
    block = port.block_number()
    if block + 1 > state.commit_until:
        raise PlacementRefused(
            f"the canary commit window of session {sid} closed at block {state.commit_until} (now {block}): "
            "the draw's randomness target, canaryCommitBlocks after the opening at the least"
        )
    if state.required != n:
        raise PlacementRefused(f"session {sid} owes {state.required} canaries, the ticket holds {n}")
    if any(i.index >= s.segment_count for i in p.items):
        raise PlacementRefused(f"a leaf index is beyond the session's {s.segment_count} segments")
    params = port.params(s.params_version)
    root = bytes.fromhex(s.merkle_root.removeprefix("0x"))
    for item in sorted(p.items, key=lambda i: i.slot):
        canary = ticket.canaries[item.slot].text
        weight = params.tier_weight[int(canary.tier)] or 1  # what the provider's pinning gives a free tier
        _check_item(ctx, port, item, canary, p.session_nonce, root, weight)
    return ticket.commitments(p)


def ticket_store_path(settings: Settings) -> Path:
    """The operator's tickets: texts, truths, salts and placements (0600, in a 0700 directory)."""
    return settings.data_dir / "canary-operator" / "tickets.db"


class CanaryOperator:
    """Tickets in, commitments and reveals out (see the module docstring)."""

    def __init__(
        self, ctx: NodeContext, store: CanaryStore, *, rng: random.Random | None = None, poll_s: float = 2.0
    ) -> None:
        self.ctx, self.store, self.poll_s = ctx, store, poll_s
        self.rng = rng or random.SystemRandom()
        self.lock = threading.Lock()

    @classmethod
    def for_node(cls, ctx: NodeContext) -> CanaryOperator:
        """The operator of a node with `canary_operator.enabled`, on its own ticket store."""
        return cls(ctx, CanaryStore(ticket_store_path(ctx.settings)))

    def issue(self, req: CanaryRequest, owner: str) -> CanaryBatch:
        canaries = write_canaries(req, self.rng)
        t = Ticket(ticket=new_ticket_id(), owner=owner, provider=req.provider, canaries=canaries)
        limits = self.ctx.settings.canary_operator
        self.store.add(t, max_open=limits.max_open_tickets, ttl_s=limits.open_ticket_ttl_s)
        log.info("ticket %s: %d canaries issued to %s", t.ticket, len(canaries), req.provider)
        return CanaryBatch(ticket=t.ticket, canaries=[c.text for c in canaries])

    def _ticket(self, ticket_id: str, owner: str) -> Ticket:
        t = self.store.get(ticket_id)
        if t is None or t.owner != owner:  # another client's ticket is as good as unknown
            raise PlacementRefused(f"no canary ticket {ticket_id!r}", 404)
        return t

    def receipt(self, ticket_id: str, owner: str) -> CanaryReceipt:
        return self._ticket(ticket_id, owner).receipt()

    def place(self, ticket_id: str, p: CanaryPlacement, owner: str) -> CanaryReceipt:
        """Check, then commit; a replay of the accepted placement returns the same receipt."""
        with self.lock:
            t = self._ticket(ticket_id, owner)
            if t.placement is not None:
                canary_duties.settle_commit(self.ctx.port(), self.store, t)
                if t.placement == p and t.state in ("committed", "revealed"):
                    return t.receipt()
                if t.state in ("committed", "revealed"):
                    raise PlacementRefused(
                        f"ticket {ticket_id} is committed for session {t.placement.session_id} "
                        "with another placement",
                        409,
                    )
            port = self.ctx.port()
            try:
                hashes = check_placement(self.ctx, port, t, p)
            except PlacementRefused as exc:
                self._refuse(t, exc.reason)
                raise
            t.placement, t.state, t.reason, t.active = p, "issued", None, True
            try:
                self.store.save(t)  # before the transaction: a restart finds what it may have sent
            except SessionTaken as exc:
                raise PlacementRefused(str(exc), 409) from None
            try:
                tx = port.commit_canaries(p.session_id, hashes)
            except ChainError as exc:
                canary_duties.settle_commit(port, self.store, t)
                if t.state == "committed":
                    return t.receipt()
                t.placement, t.active = None, False
                self._refuse(t, f"the chain refused the commitment: {exc}")
                raise PlacementRefused(t.reason or "", 422) from None
            t.state, t.tx_hash = "committed", tx.tx_hash
            self.store.save(t)
            log.info(
                "ticket %s: %d canaries committed for session %d (tx %s)",
                t.ticket,
                len(hashes),
                p.session_id,
                tx.tx_hash,
            )
            return t.receipt()

    def _refuse(self, t: Ticket, reason: str) -> None:
        """Record the refusal (nothing committed); a corrected placement may still follow."""
        log.warning("ticket %s: placement refused: %s", t.ticket, reason)
        if t.state in ("issued", "refused"):
            t.state, t.reason = "refused", reason
            self.store.save(t)

    def tick(self) -> int:
        """One pass of the daemon over active tickets; how many chain transactions it sent."""
        sent = 0
        active = self.store.active()
        if not active:  # nothing to do: do not even reach the chain
            return 0
        port = self.ctx.port()
        for listed in active:
            with self.lock:
                t = self.store.get(listed.ticket)  # a placement may have changed it meanwhile
                if t is None or not t.active:
                    continue
                try:
                    sent += canary_duties.step(port, self.store, t)
                except ChainError as exc:
                    log.warning("ticket %s: %s", t.ticket, exc)
        return sent

    def run(self, stop: threading.Event) -> None:
        """Reveal in each window until `stop`; a chain outage only delays (backs off, then retries)."""
        delay = self.poll_s
        while not stop.is_set():
            try:
                self.tick()
                delay = self.poll_s
            except (ChainError, OSError) as exc:
                log.warning("canary operator: chain not reachable (%s); retrying in %.0fs", exc, delay)
                delay = min(delay * 2, 60.0)
            stop.wait(delay)
