"""Opening a batch's sessions: one worker sends the opens of every trace that is ready, back to
back in the batch's shuffled rank order (consecutive nonces), then waits for all the receipts,
and reads each session id from its own receipt's `SessionOpened` event.

The jobs database stays the source of truth. Before anything is sent, each job's batch row is
marked `open_sent`; each transaction hash goes into the job as soon as it is known. A job marked
so (a worker killed between send and receipt, a receipt that never came) looks on the chain
first when it is opened again (its recorded transaction's receipt, else the provider's
`SessionOpened` logs for its Merkle root) and adopts the session it finds instead of opening a
second one. The mark is cleared only once nothing can have been opened: an open refused at
estimation (never sent) or mined and reverted. A job without the mark never scans logs.

Each job gets its own outcome: one open that reverts in the middle of a batch fails (or retries)
only its own job; the others open.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from trustnode.chain.errors import ChainError, ContractRevertError
from trustnode.chain.port import ChainPort, DrawFailure, EligibleAuditor, NotReady, Opened, OpenRequest
from trustnode.models.enums import Tier
from trustnode.models.jobs import TraceJob
from trustnode.node.jobs import JobQueue
from trustnode.node.pinning import fee_for
from trustnode.node.seating import shortfall, undrawn_demand

#: What became of one job's open: its session, the seats no draw could fill (nothing was paid),
#: or the error to handle as the job's own (NotReady, a revert, an outage).
OpenResult = Opened | DrawFailure | Exception


def merkle_root(job: TraceJob) -> bytes:
    return bytes.fromhex(job.merkle_root[2:]) if job.merkle_root else b""


def earlier_open(port: ChainPort, job: TraceJob) -> Opened | None:
    """The session an earlier attempt opened for `job`, if any: from its recorded transaction's
    receipt when it has one, else from this signer's `SessionOpened` logs for its root."""
    root = merkle_root(job)
    recorded = job.tx_hashes.get("open")
    if recorded:
        try:
            opened = port.open_receipt(recorded, wait=False)
        except ContractRevertError:
            opened = None  # it reverted; an earlier attempt may still have opened one
        if opened is not None and opened.merkle_root.lower() == "0x" + root.hex():
            return opened
    return port.find_opened(root)


def open_jobs(
    queue: JobQueue, port: ChainPort, jobs: Sequence[TraceJob], lease_s: float
) -> dict[str, OpenResult]:
    """Open a session for each job (the caller holds every job's lease), in the given order."""
    results: dict[str, OpenResult] = {}
    params = port.params()
    eligible: dict[int, list[EligibleAuditor]] = {}
    to_send: list[TraceJob] = []
    busy: Counter[int] | None = None  # seats still to draw per tier, read once when first needed
    for job in jobs:
        crowded: DrawFailure | None = None
        try:
            if queue.open_sent(job.id) is not False:
                found = earlier_open(port, job)
                if found is not None:
                    results[job.id] = found
                    continue
            tiers = [s.tier for s in job.segments]
            short = shortfall(port, tiers, params=params, eligible_by_tier=eligible)
            if short is None:
                busy = undrawn_demand(port, params) if busy is None else busy
                crowded = shortfall(port, tiers, params=params, eligible_by_tier=eligible, pending=busy)
        except Exception as exc:  # noqa: BLE001 - an outage is this job's to retry
            results[job.id] = exc
            continue
        if short is not None:
            results[job.id] = short  # the tier cannot fill it even alone: nothing to wait for
        elif crowded is not None and busy is not None:
            results[job.id] = NotReady(
                f"{crowded.reason} once the {busy[int(Tier[crowded.tier.name])]} seats that sessions opened "
                "earlier still have to draw in that tier are taken (opened now, its draw could meet only "
                "refused locks and forfeit the fee)",
                retry_blocks=max(1, params.draw_blocks // 4),
            )
        else:
            to_send.append(job)
            assert busy is not None
            busy.update(s.tier for s in job.segments for _ in range(params.seats_per_tier[s.tier]))
    if not to_send:
        return results
    requests = [
        OpenRequest(
            merkle_root=merkle_root(j),
            tiers=[s.tier for s in j.segments],
            weights=[s.weight for s in j.segments],
            fee=fee_for(params, [s.tier for s in j.segments]),
        )
        for j in to_send
    ]
    queue.set_open_sent([j.id for j in to_send], True)  # before sending: a crash from here looks first
    try:
        sent = port.send_opens(requests)
    except NotReady as exc:  # nothing was sent
        queue.set_open_sent([j.id for j in to_send], False)
        return results | {j.id: exc for j in to_send}
    except Exception as exc:  # noqa: BLE001 - how far it got is unknown: the marks stay
        return results | {j.id: exc for j in to_send}
    for job, out in zip(to_send, sent, strict=True):
        if isinstance(out, str):
            job.tx_hashes["open"] = out
            queue.save(job, lease_s=lease_s)
        else:
            if isinstance(out, ContractRevertError):  # refused at estimation: never sent
                queue.set_open_sent([job.id], False)
            results[job.id] = out
    for job, out in zip(to_send, sent, strict=True):
        if isinstance(out, str):
            results[job.id] = _receipt(queue, port, job, out)
    return results


def _receipt(queue: JobQueue, port: ChainPort, job: TraceJob, tx_hash: str) -> OpenResult:
    try:
        opened = port.open_receipt(tx_hash)
    except ContractRevertError as exc:  # mined and reverted: nothing opened, the job may retry
        queue.set_open_sent([job.id], False)
        job.tx_hashes.pop("open", None)
        return exc
    except ChainError as exc:  # no receipt in time: the mark stays, the retry looks on chain first
        return exc
    if opened is None:  # a waiting read returns a receipt or raises
        return ChainError(f"no receipt for {tx_hash}")
    return opened
