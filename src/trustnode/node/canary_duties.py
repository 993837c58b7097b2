"""The provider's two on-chain duties for its gold canaries (issue 15): commit, then reveal.

Commit: right after `openSession` returned the id and before the draw's randomness target,
one `keccak(sessionId, index, verdict, salt)` per canary (`commit_canaries`). Reveal: after the
round-0 reveal phase, inside the canary reveal window (`reveal_canaries`). Both read the chain
first, so a provider restarted at any point neither commits twice nor misses a reveal it can
still make: the truths and salts are in the job (jobs.db, 0600) from the moment it was pinned.
"""

from __future__ import annotations

import logging

from trustnode.chain.port import ChainPort, NotReady
from trustnode.consensus.canaries import CanaryReveal
from trustnode.models.jobs import TraceJob
from trustnode.node.canaries import commitments, outcome_of

log = logging.getLogger(__name__)


def commit(port: ChainPort, job: TraceJob) -> str | None:
    """Commit the job's canaries if the chain has not got them yet; the tx hash when sent.

    A chain that wants another count (its rate changed between pinning and opening) or whose
    commit window has passed gets none: the canaries then stay unscored segments, and the
    session's record says so in the log."""
    if not job.canaries or job.canary_note or all(c.committed for c in job.canaries):
        return None
    assert job.session_id is not None
    sid = job.session_id
    state = port.canaries(sid)
    mine = ["0x" + h.hex() for h in commitments(sid, job.canaries)]
    if state.committed:
        if [h.lower() for h in state.commitments] != mine:
            log.error("session %d: the chain holds other canary commitments than this job's", sid)
        job.canaries = [c.model_copy(update={"committed": True}) for c in job.canaries]
        return None
    if state.required != len(job.canaries):
        job.canary_note = (
            f"the chain wants {state.required} canary commitments, the session pinned {len(job.canaries)}: "
            "none committed, so its canaries count as trace segments on chain"
        )
    elif port.block_number() > state.commit_until:
        job.canary_note = (
            f"the canary commit window closed at block {state.commit_until} before the commitment"
        )
    if job.canary_note:
        log.error("session %d: %s", sid, job.canary_note)
        return None
    tx = port.commit_canaries(sid, [bytes.fromhex(h[2:]) for h in mine])
    job.canaries = [c.model_copy(update={"committed": True}) for c in job.canaries]
    log.info("session %d: committed %d gold canaries (tx %s)", sid, len(mine), tx.tx_hash)
    return tx.tx_hash


def reveal(port: ChainPort, job: TraceJob) -> str | None:
    """Reveal the committed canaries inside the reveal window; NotReady before it opens.

    Returns the tx hash when it sent one; None when nothing was left to reveal or the window
    passed (an unrevealed canary never blocks settlement; it only costs the trace weight)."""
    pending = [c for c in job.canaries if c.committed and not c.revealed]
    if not pending:
        return None
    assert job.session_id is not None
    sid = job.session_id
    state = port.canaries(sid)
    done = {r.index for r in state.revealed}
    job.canaries = [c.model_copy(update={"revealed": c.revealed or c.index in done}) for c in job.canaries]
    pending = [c for c in job.canaries if c.committed and not c.revealed]
    if not pending:
        return None
    block = port.block_number()
    if state.reveal_from is None or block < state.reveal_from:
        wait = 1 if state.reveal_from is None else state.reveal_from - block
        raise NotReady(f"the canary reveal window opens at block {state.reveal_from}", retry_blocks=wait)
    if state.reveal_until is not None and block > state.reveal_until:
        log.error(
            "session %d: the canary reveal window closed at block %d unrevealed", sid, state.reveal_until
        )
        return None
    slots = {c.index: i for i, c in enumerate(job.canaries)}
    reveals = [
        CanaryReveal(
            slot=slots[c.index], index=c.index, verdict=outcome_of(c.verdict), salt=bytes.fromhex(c.salt[2:])
        )
        for c in pending
    ]
    tx = port.reveal_canaries(sid, reveals)
    job.canaries = [c.model_copy(update={"revealed": c.revealed or c.committed}) for c in job.canaries]
    log.info("session %d: revealed %d gold canaries (tx %s)", sid, len(reveals), tx.tx_hash)
    return tx.tx_hash
