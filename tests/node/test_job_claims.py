"""The job queue hands out the job that has been due the longest: a trace just submitted is not
starved by older traces whose next poll falls due after it arrived."""

from __future__ import annotations

import time
from pathlib import Path

from trustnode.models.trace import TraceInput
from trustnode.node.jobs import JobQueue

TRACE = TraceInput(problem="What is 2 + 2?", thinking="Two and two make four. " * 20, output="4")


def test_a_new_trace_is_claimed_before_a_poll_that_fell_due_after_it(tmp_path: Path) -> None:
    queue = JobQueue(tmp_path / "jobs.db")
    old, _ = queue.submit(TRACE, "key:test")
    claimed = queue.claim(60.0)
    assert claimed is not None and claimed.id == old.id
    queue.release(claimed, delay_s=0.5)  # the old trace polls again in half a second
    new, _ = queue.submit(TRACE, "key:test")  # due now: before the old one's next poll
    time.sleep(0.6)  # both are due
    first = queue.claim(60.0)
    assert first is not None and first.id == new.id
    second = queue.claim(60.0)
    assert second is not None and second.id == old.id
    assert queue.claim(60.0) is None


def test_among_due_jobs_the_earliest_due_goes_first(tmp_path: Path) -> None:
    queue = JobQueue(tmp_path / "jobs.db")
    a, _ = queue.submit(TRACE, "key:test")
    b, _ = queue.submit(TRACE, "key:test")
    for job, delay in ((queue.claim(60.0), 0.8), (queue.claim(60.0), 0.2)):
        assert job is not None
        queue.release(job, delay_s=delay)
    time.sleep(1.0)
    first = queue.claim(60.0)
    assert first is not None and first.id == b.id, "b fell due before a"
