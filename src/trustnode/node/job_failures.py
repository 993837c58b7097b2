"""What becomes of a trace job whose stage raised: it waits, it is retried, or it ends.

Every stage of the provider pipeline (`node.provider`) raises to say it cannot advance; this one
place decides what that means, so every stage and every batch follower is treated alike:

- `Waiting`: the chain phase (or the canary operator) is not there yet; the job is handed back
  and tried again after `delay_s`, its reason shown on the trace when `show` is set;
- `PermanentFailure`, or a revert that can never succeed (`chain.port.reverts.PERMANENT`): the job
  ends at once with the reason;
- an outage (chain, IPFS, the canary operator, the OS): retried with backoff for as long as it
  lasts, the error visible on the trace; anything else a few times, then the job fails.
"""

from __future__ import annotations

import logging

from trustnode.chain.errors import ChainError, ContractRevertError
from trustnode.chain.port import reverts
from trustnode.models.jobs import JobStatus, TraceJob
from trustnode.node.canary_client import OperatorError
from trustnode.node.jobs import JobQueue
from trustnode.storage.errors import StorageError

#: The pipeline's own log: operators read the provider's failures under one name.
log = logging.getLogger("trustnode.node.provider")

MAX_ATTEMPTS = 5
WAIT_S = 0.25
#: Errors that say "something we depend on is down", never "this job is wrong".
OUTAGES = (ChainError, StorageError, OSError, OperatorError)


class Waiting(Exception):
    """The job cannot advance yet (chain phase not reached); try again after `delay_s`.

    `show`: the reason is kept on the trace while it waits (a wait someone should know about,
    such as a canary operator that does not answer), not just in the log."""

    def __init__(self, reason: str, delay_s: float = WAIT_S, *, show: bool = False) -> None:
        super().__init__(reason)
        self.delay_s, self.show = delay_s, show


class PermanentFailure(Exception):
    """The job can never complete (invalid trace, session cancelled or expired, chain reset)."""


def handle(jobs: JobQueue, job: TraceJob, exc: Exception) -> None:
    """Wait, fail or retry a job whose stage raised `exc`; the job's lease is given back."""
    if isinstance(exc, Waiting):
        jobs.release(job, delay_s=exc.delay_s, error=str(exc) if exc.show else None)
    elif isinstance(exc, PermanentFailure):
        log.warning("trace %s failed: %s", job.id, exc)
        jobs.finish(job, JobStatus.FAILED, str(exc))
    elif isinstance(exc, ContractRevertError):
        if not reverts.is_permanent(exc):
            retry(jobs, job, exc, expected=False)  # a few times: it may pass on a later block
            return
        reason = f"the chain refused the {job.stage.value} step for good: {reverts.explain(exc)}"
        log.warning("trace %s failed: %s", job.id, reason)
        jobs.finish(job, JobStatus.FAILED, reason)
    else:
        retry(jobs, job, exc, expected=isinstance(exc, OUTAGES))


def retry(jobs: JobQueue, job: TraceJob, exc: Exception, *, expected: bool) -> None:
    """Keep everything, back off, try again; the error is visible on the trace.
    Outages are retried for as long as they last; anything else a few times."""
    delay = min(30.0, 1.0 * 2 ** min(job.attempts, 5))
    if not expected and job.attempts + 1 >= MAX_ATTEMPTS:
        log.error("trace %s failed at stage %s: %s", job.id, job.stage, exc, exc_info=True)
        jobs.finish(job, JobStatus.FAILED, f"{type(exc).__name__}: {exc}")
        return
    log.log(
        logging.WARNING if expected else logging.ERROR,
        "trace %s stage %s will retry in %.1fs: %s",
        job.id,
        job.stage,
        delay,
        exc,
        exc_info=not expected,
    )
    jobs.release(job, delay_s=delay, error=f"{type(exc).__name__}: {exc}")
