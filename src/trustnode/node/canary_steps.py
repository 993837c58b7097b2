"""The provider's three steps for its session's gold canaries (issue 15, `CANARY-OPERATOR` design).

1. `texts`, before pinning: ask the canary operator for `canaries_for_real(n, rate)` texts shaped
   like the trace's real segments. No operator, or one that does not answer, and nothing is pinned
   or paid: the job waits with the reason (an `OperatorError`). A provider never writes its own.
2. `place`, after `openSession` and before the draw: tell the operator where each canary went
   (`pinning.placement`); it checks the placement against the chain and commits the truths. While
   the chain's commit window is open a refusal or an outage is retried; once it has closed the
   session keeps its canaries uncommitted (the contract charges that to the provider) and
   `job.canary_note` says why.
3. `read_reveals`, after round 0 finalized: the operator reveals in the canary window; the job
   records each canary's truth from the chain (the provider's report lists it apart from the
   trace). It waits while the window can still bring a reveal.

Every step reads the chain first, so a restarted provider neither places twice (a replayed
placement is answered with the same receipt anyway) nor misses a reveal.
"""

from __future__ import annotations

import logging

from trustnode.chain.port import ChainPort, NotReady
from trustnode.models.canary_operator import CanaryBatch, CanaryReceipt
from trustnode.models.enums import Verdict
from trustnode.models.jobs import TraceJob
from trustnode.node import canaries
from trustnode.node.canary_client import (
    CanaryClient,
    NoOperator,
    OperatorError,
    OperatorRefused,
    OperatorUnavailable,
)
from trustnode.node.pinning import placement

log = logging.getLogger(__name__)


def texts(client: CanaryClient | None, port: ChainPort, job: TraceJob, rate_bps: int) -> CanaryBatch | None:
    """The operator's texts for this job's session (None: the rate gives it no canary)."""
    assert job.hdag is not None
    req = canaries.request_for(job.hdag, rate_bps, port.address, high_stakes=job.trace.high_stakes)
    if req is None:
        return None
    if client is None:
        raise NoOperator(rate_bps)
    batch = client.request(req)
    try:
        canaries.check_batch(batch, req)
    except canaries.BadBatch as exc:
        raise OperatorRefused(200, str(exc)) from exc
    log.info("trace %s: %d canary texts from the operator (ticket %s)", job.id, req.count, batch.ticket)
    return batch


def place(client: CanaryClient | None, port: ChainPort, job: TraceJob) -> str | None:
    """Have the operator commit this session's canaries; the commit's tx hash once it did.

    Raises `OperatorError` while the commit window is open and the operator has not committed
    (the caller waits and calls again). Returns None when there is nothing (more) to do."""
    if not job.canaries or job.canary_note or all(c.committed for c in job.canaries):
        return None
    assert job.session_id is not None
    sid = job.session_id
    state = port.canaries(sid)
    if state.committed:  # an earlier placement went through (its answer may have been lost)
        _committed(job)
        if (
            client is not None
            and job.canary_ticket
            and (job.canary_receipt is None or not job.canary_receipt.tx_hash)
        ):
            try:
                job.canary_receipt = client.receipt(job.canary_ticket)
            except OperatorError as exc:  # the chain already says committed: the receipt is a record
                log.warning("session %d: no canary receipt from the operator: %s", sid, exc)
        return job.canary_receipt.tx_hash if job.canary_receipt else None
    last = f" (last answer: {job.canary_receipt.reason})" if job.canary_receipt else ""
    if job.canary_ticket is None:
        job.canary_note = "pinned before canary operators (the provider no longer commits its own canaries)"
    elif state.required != len(job.canaries):
        job.canary_note = (
            f"the chain wants {state.required} canary commitments, the session pinned {len(job.canaries)}: "
            "none committed, so its canaries count as trace segments on chain"
        )
    elif port.block_number() > state.commit_until:
        job.canary_note = f"the canary commit window closed at block {state.commit_until} before the operator committed{last}"
    elif client is None:
        raise NoOperator(port.params().canary_rate_bps)
    if job.canary_note:
        log.error("session %d: %s", sid, job.canary_note)
        return None
    assert client is not None and job.canary_ticket is not None
    try:
        receipt = client.place(job.canary_ticket, placement(job, port.chain_id))
    except OperatorRefused as exc:
        job.canary_receipt = CanaryReceipt(
            ticket=job.canary_ticket, state="refused", session_id=sid, reason=exc.reason
        )
        raise
    job.canary_receipt = receipt
    if receipt.state not in ("committed", "revealed"):
        raise OperatorRefused(200, f"placement answered {receipt.state}: {receipt.reason}")
    if not port.canaries(sid).committed:
        raise OperatorUnavailable(
            f"the operator reports the commit in {receipt.tx_hash}, the chain does not show it yet"
        )
    _committed(job)
    log.info(
        "session %d: the operator committed %d gold canaries (tx %s)", sid, len(job.canaries), receipt.tx_hash
    )
    return receipt.tx_hash


def _committed(job: TraceJob) -> None:
    job.canaries = [c.model_copy(update={"committed": True}) for c in job.canaries]


def read_reveals(port: ChainPort, job: TraceJob) -> None:
    """Record the truths the operator revealed; NotReady while the window may still bring one.

    A canary never revealed costs the trace weight on chain but never blocks anything: once the
    window has closed the job goes on without its truth."""
    pending = [c for c in job.canaries if c.committed and not c.revealed]
    if not pending:
        return
    assert job.session_id is not None
    state = port.canaries(job.session_id)
    truth = {r.index: Verdict(r.verdict.name) for r in state.revealed}
    job.canaries = [
        c.model_copy(update={"revealed": True, "verdict": truth[c.index]}) if c.index in truth else c
        for c in job.canaries
    ]
    left = [c.index for c in job.canaries if c.committed and not c.revealed]
    if not left:
        return
    block = port.block_number()
    if state.reveal_until is None or block <= state.reveal_until:
        until = "its end" if state.reveal_until is None else f"block {state.reveal_until}"
        raise NotReady(f"waiting for the canary operator's reveal of segments {left} (window until {until})")
    log.error(
        "session %d: the operator left canaries %s unrevealed (window closed at block %d)",
        job.session_id,
        left,
        state.reveal_until,
    )


__all__ = ["OperatorError", "place", "read_reveals", "texts"]
