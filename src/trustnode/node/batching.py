"""Batches of traces: each pinned trace joins a batch (any provider's waiting traces), and the
batch's members get a random opening rank, so the order in which sessions appear on chain says
nothing about the order in which traces were submitted (`node.opening` opens them in rank order).
"""

from __future__ import annotations

import secrets
import threading
import time

from trustnode.models.jobs import TraceJob
from trustnode.node.context import NodeContext
from trustnode.node.job_failures import WAIT_S, Waiting
from trustnode.storage.errors import StorageError


def join_batch(ctx: NodeContext, job: TraceJob, lock: threading.Lock) -> None:
    """Put `job` in a batch once the batch is full or its oldest trace waited long enough;
    `Waiting` until then. `lock` serializes batch forming among this process's workers."""
    flush = getattr(ctx.store, "flush", None)
    if flush is not None:
        result = flush()
        if not result.complete:
            raise StorageError("IPFS still unreachable: segments stay spooled locally")
    settings = ctx.settings.batch
    with lock:
        if ctx.jobs.batch_of(job.id) is not None:
            return
        waiting = ctx.jobs.unbatched()
        oldest = min((j.created_at for j in waiting), default=job.created_at)
        age = time.time() - oldest.timestamp()
        if len(waiting) < settings.size and age < settings.max_wait_s:
            raise Waiting("batch not full", delay_s=min(WAIT_S, settings.max_wait_s - age))
        members = waiting[: settings.size] if waiting else [job]
        if job.id not in {m.id for m in members}:
            members.append(job)
        batch_id = "b_" + secrets.token_hex(6)
        order = list(range(len(members)))
        secrets.SystemRandom().shuffle(order)
        ctx.jobs.assign_batch(batch_id, {m.id: rank for m, rank in zip(members, order, strict=True)})
