"""The canary operator's chain duties for one ticket (issue 15): finish a commit, then reveal.

Both read the chain first, so an operator restarted at any point neither commits twice nor misses
a reveal it can still make: truths, salts and the accepted placement are in its ticket store
(0600) from before the commit was sent. A canary never revealed never blocks settlement; it only
costs the provider's trace weight, so a closed window ends the ticket's work, loudly.

These were the provider's duties before; the provider no longer writes, commits or reveals
canaries (CANARY-OPERATOR.md).
"""

from __future__ import annotations

import logging

from trustnode.chain.port import ChainPort
from trustnode.consensus.canaries import CanaryReveal
from trustnode.models.verdict import SessionState
from trustnode.node.canary_store import CanaryStore, Ticket, outcome

log = logging.getLogger(__name__)


def _ours(t: Ticket) -> list[str]:
    return ["0x" + h.hex() for h in t.commitments()]


def _end(store: CanaryStore, t: Ticket, reason: str, *, refused: bool = False) -> None:
    log.error("ticket %s: %s", t.ticket, reason)
    t.reason, t.active = reason, False
    if refused:
        t.state = "refused"
    store.save(t)


def settle_commit(port: ChainPort, store: CanaryStore, t: Ticket) -> bool:
    """Bring a ticket whose commit may have been sent in line with the chain.

    True when the commitment still has to be sent (the chain has none and the window is open)."""
    if t.placement is None or t.state != "issued":
        return False
    sid = t.placement.session_id
    state = port.canaries(sid)
    if state.committed:
        if [h.lower() for h in state.commitments] == _ours(t):
            t.state = "committed"
            t.reason = "committed before a restart; its transaction hash was not recorded"
            store.save(t)
        else:
            _end(store, t, f"session {sid} holds other canary commitments than this ticket's", refused=True)
        return False
    block = port.block_number()
    if block + 1 > state.commit_until or port.session(sid).state is not SessionState.CREATED:
        _end(store, t, f"the canary commit window of session {sid} closed at block {state.commit_until} "
             "before the commitment was mined", refused=True)  # fmt: skip
        return False
    return True


def reveal_ticket(port: ChainPort, store: CanaryStore, t: Ticket) -> int:
    """Reveal what the ticket committed once the window is open; 1 when a transaction was sent."""
    assert t.placement is not None
    sid = t.placement.session_id
    state = port.canaries(sid)
    done = {r.slot for r in state.revealed}
    pending = [slot for slot in range(len(t.canaries)) if slot not in done]
    if not pending:
        t.state, t.active = "revealed", False
        store.save(t)
        return 0
    block = port.block_number()
    if state.reveal_from is None:
        s = port.session(sid)
        if s.state.ended_without_verdict:
            _end(store, t, f"session {sid} ended {s.state.value}: there is nothing to reveal")
        return 0
    if block + 1 < state.reveal_from:
        return 0
    if state.reveal_until is not None and block + 1 > state.reveal_until:
        _end(store, t, f"the canary reveal window of session {sid} closed at block {state.reveal_until} "
             f"with {len(pending)} canaries unrevealed")  # fmt: skip
        return 0
    at = {i.slot: i.index for i in t.placement.items}
    reveals = [
        CanaryReveal(
            slot=slot,
            index=at[slot],
            verdict=outcome(t.canaries[slot].verdict),
            salt=bytes.fromhex(t.canaries[slot].salt[2:]),
        )  # fmt: skip
        for slot in pending
    ]
    tx = port.reveal_canaries(sid, reveals)
    t.state, t.reveal_tx_hash, t.active = "revealed", tx.tx_hash, False
    store.save(t)
    log.info("ticket %s: revealed %d canaries of session %d (tx %s)", t.ticket, len(reveals), sid, tx.tx_hash)
    return 1


def step(port: ChainPort, store: CanaryStore, t: Ticket) -> int:
    """What the daemon does for one active ticket now; the number of transactions sent."""
    if t.state == "issued" and settle_commit(port, store, t):
        assert t.placement is not None
        tx = port.commit_canaries(t.placement.session_id, [bytes.fromhex(h[2:]) for h in _ours(t)])
        t.state, t.tx_hash = "committed", tx.tx_hash
        store.save(t)
        log.info("ticket %s: commitment sent after a restart (tx %s)", t.ticket, tx.tx_hash)
        return 1
    if t.state == "committed":
        return reveal_ticket(port, store, t)
    return 0
