"""The human queue: durable seats with the whole audit form, final decisions, two processes."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from trustnode.audit.base import Auditor
from trustnode.audit.context import build_tasks
from trustnode.audit.human_queue import (
    DeadlinePassedError,
    HumanAuditor,
    HumanQueue,
    HumanQueueError,
    SeatAlreadyDecidedError,
    SeatConflictError,
    SeatNotFoundError,
    SeatStateError,
)
from trustnode.models.audit import AuditTask
from trustnode.models.enums import AuditorType, Level, Relationship, Verdict
from trustnode.models.hdag import HDAG
from trustnode.models.human import CRITERIA_KEYS, HumanSeat, seat_id_for

ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
BOB = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"
ALL_TRUE = dict.fromkeys(CRITERIA_KEYS, True)


class Clock:
    """A settable clock, so deadlines are tested without sleeping."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _tasks(make_hdag: Callable[..., HDAG]) -> list[AuditTask]:
    hdag = make_hdag(
        "Martha needs 4 cups of berries per quart and makes 2 quarts. How many 2-cup packages?",
        [
            "Each quart needs 4 cups of berries; she makes two quarts.",
            "For both quarts she needs 2 * 4 = 8 cups of berries.",
            "Packages hold 2 cups, so she buys 8 / 2 = 4 packages.",
        ],
        edges=[
            ("ST2", "ST1", Relationship.DEPENDS_ON),
            ("ST2", "ST3", Relationship.ENABLES),
        ],
        auditors=[AuditorType.T_HUMAN] * 3,
    )
    return build_tasks(hdag)


def _seat(
    task: AuditTask, auditor: str = ALICE, session: int = 7, deadline: float | None = None
) -> HumanSeat:
    return HumanSeat.from_task(task, session_id=session, auditor=auditor, commit_deadline=deadline)


def test_seat_carries_the_whole_audit_form(tmp_path: Path, make_hdag: Callable[..., HDAG]) -> None:
    task = _tasks(make_hdag)[1]
    q = HumanQueue(tmp_path / "human.db")
    stored = q.enqueue(_seat(task, auditor=ALICE.lower()))
    assert stored.seat_id == f"7:1:{ALICE.lower()}" == seat_id_for(7, 1, ALICE)
    assert stored.created_at is not None
    (seat,) = q.pending(ALICE)
    assert seat == stored == q.get(stored.seat_id)
    assert seat.auditor == ALICE  # checksummed whatever case the daemon used
    assert (seat.session_id, seat.segment_index, seat.node_id, seat.level) == (7, 1, "ST2", Level.STEP)
    assert seat.problem.startswith("Martha needs 4 cups")
    assert [d.node_id for d in seat.dependencies] == ["ST1"]
    assert seat.dependencies[0].content == "Each quart needs 4 cups of berries; she makes two quarts."
    assert seat.reasoning == "For both quarts she needs 2 * 4 = 8 cups of berries."
    assert [c.node_id for c in seat.implications] == ["ST3"]
    assert [c.key for c in seat.criteria] == [
        "logical_consistency",
        "mathematical_accuracy",
        "completeness",
        "clarity",
    ]
    assert all(c.question.endswith("?") for c in seat.criteria)
    assert q.pending(BOB) == []
    assert q.decision(seat.seat_id) is None
    assert q.counts() == {"pending": 1, "decided": 0, "committed": 0, "abandoned": 0}


def test_seat_id_must_match_its_coordinates(make_hdag: Callable[..., HDAG]) -> None:
    task = _tasks(make_hdag)[0]
    good = _seat(task)
    data = good.model_dump()
    data["seat_id"] = seat_id_for(8, 0, ALICE)
    with pytest.raises(ValueError, match="does not match"):
        HumanSeat.model_validate(data)
    data["seat_id"] = ""
    assert HumanSeat.model_validate(data).seat_id == good.seat_id
    with pytest.raises(ValueError, match="not an Ethereum address"):
        HumanSeat.from_task(task, session_id=1, auditor="alice")


def test_enqueue_is_idempotent_and_refuses_changed_content(
    tmp_path: Path, make_hdag: Callable[..., HDAG]
) -> None:
    task = _tasks(make_hdag)[1]
    clock = Clock()
    q = HumanQueue(tmp_path / "human.db", clock=clock)
    first = q.enqueue(_seat(task))
    clock.now += 50
    again = q.enqueue(_seat(task))
    assert again == first and again.created_at == first.created_at
    altered = _seat(task.model_copy(update={"content": "For both quarts she needs 9 cups."}))
    with pytest.raises(SeatConflictError, match="different content"):
        q.enqueue(altered)
    assert q.get(first.seat_id).reasoning == task.content
    assert len(q.pending(ALICE)) == 1


def test_submit_decided_commit_lifecycle(tmp_path: Path, make_hdag: Callable[..., HDAG]) -> None:
    tasks = _tasks(make_hdag)
    clock = Clock()
    q = HumanQueue(tmp_path / "human.db", clock=clock)
    seats = [q.enqueue(_seat(t)) for t in tasks]
    q.enqueue(_seat(tasks[0], auditor=BOB))
    criteria = {**ALL_TRUE, "mathematical_accuracy": False}
    clock.now += 10
    d = q.submit(seats[1].seat_id, Verdict.FAIL, criteria, "  2 * 4 is fine but the units are off  ")
    assert (d.verdict, d.criteria, d.note, d.decided_at, d.committed) == (
        Verdict.FAIL,
        criteria,
        "2 * 4 is fine but the units are off",
        clock.now,
        False,
    )
    assert (d.session_id, d.segment_index, d.auditor) == (7, 1, ALICE)
    assert [s.seat_id for s in q.pending(ALICE)] == [seats[0].seat_id, seats[2].seat_id]
    assert q.decided(ALICE) == [d]
    assert q.decided(BOB) == []
    with pytest.raises(SeatStateError, match="no decision yet"):
        q.mark_committed(seats[0].seat_id)
    done = q.mark_committed(d.seat_id)
    assert done.committed and done.verdict is Verdict.FAIL
    assert q.mark_committed(d.seat_id) == done  # idempotent
    assert q.decided(ALICE) == []
    assert q.decision(d.seat_id) == done
    assert q.counts() == {"pending": 3, "decided": 0, "committed": 1, "abandoned": 0}
    result = d.to_result()
    assert result.failed and result.evidence.auditor == "human"
    assert result.evidence.details["criteria"] == criteria
    assert result.evidence.details["note"] == "2 * 4 is fine but the units are off"


def test_a_decision_is_final(tmp_path: Path, make_hdag: Callable[..., HDAG]) -> None:
    task = _tasks(make_hdag)[2]
    clock = Clock()
    q = HumanQueue(tmp_path / "human.db", clock=clock)
    seat = q.enqueue(_seat(task))
    first = q.submit(seat.seat_id, "pass", ALL_TRUE, "ok")
    assert first.verdict is Verdict.PASS
    clock.now += 5
    assert q.submit(seat.seat_id, Verdict.PASS, dict(ALL_TRUE), "ok") == first  # a double click
    with pytest.raises(SeatAlreadyDecidedError, match="already decided \\(verdict PASS\\)"):
        q.submit(seat.seat_id, Verdict.FAIL, ALL_TRUE, "ok")
    with pytest.raises(SeatAlreadyDecidedError, match="different criteria or note"):
        q.submit(seat.seat_id, Verdict.PASS, ALL_TRUE, "changed my mind about the note")
    q.mark_committed(seat.seat_id)
    with pytest.raises(SeatAlreadyDecidedError):
        q.submit(seat.seat_id, Verdict.FAIL, ALL_TRUE, "ok")
    assert q.decision(seat.seat_id) == first.model_copy(update={"committed": True})


def test_deadline_refuses_late_answers_and_hides_expired_seats(
    tmp_path: Path, make_hdag: Callable[..., HDAG]
) -> None:
    tasks = _tasks(make_hdag)
    clock = Clock(1000.0)
    q = HumanQueue(tmp_path / "human.db", clock=clock)
    late = q.enqueue(_seat(tasks[0], deadline=1100.0))
    soon = q.enqueue(_seat(tasks[1], deadline=1050.0))
    never = q.enqueue(_seat(tasks[2], deadline=None))
    assert [s.seat_id for s in q.pending(ALICE)] == [soon.seat_id, late.seat_id, never.seat_id]
    clock.now = 1050.0
    with pytest.raises(DeadlinePassedError, match="deadline passed"):
        q.submit(soon.seat_id, Verdict.PASS, ALL_TRUE)
    assert [s.seat_id for s in q.pending(ALICE)] == [late.seat_id, never.seat_id]
    assert soon.seat_id in {s.seat_id for s in q.pending(ALICE, include_expired=True)}
    assert q.decision(soon.seat_id) is None  # the refusal changed nothing
    ok = q.submit(late.seat_id, Verdict.FAIL, ALL_TRUE, "step skips a case")
    clock.now = 5000.0
    # a decision made in time stays valid (and re-sending it is still idempotent)
    assert q.submit(late.seat_id, Verdict.FAIL, ALL_TRUE, "step skips a case") == ok
    assert q.decided(ALICE) == [ok]
    assert q.submit(never.seat_id, Verdict.PASS, ALL_TRUE).verdict is Verdict.PASS


@pytest.mark.parametrize(
    ("verdict", "criteria", "note", "error", "match"),
    [
        ("MAYBE", ALL_TRUE, "", ValueError, "PASS or FAIL"),
        (Verdict.PASS, {k: True for k in CRITERIA_KEYS[:3]}, "", ValueError, "missing clarity"),
        (Verdict.PASS, {**ALL_TRUE, "style": True}, "", ValueError, "unknown style"),
        (Verdict.PASS, {**ALL_TRUE, "clarity": "yes"}, "", ValueError, "true or false: clarity"),
        (Verdict.PASS, ALL_TRUE, "x" * 4001, ValueError, "at most 4000"),
    ],
)
def test_bad_submissions_are_refused_and_lose_nothing(
    tmp_path: Path,
    make_hdag: Callable[..., HDAG],
    verdict: object,
    criteria: dict[str, object],
    note: str,
    error: type[Exception],
    match: str,
) -> None:
    q = HumanQueue(tmp_path / "human.db")
    seat = q.enqueue(_seat(_tasks(make_hdag)[0]))
    with pytest.raises(error, match=match):
        q.submit(seat.seat_id, verdict, criteria, note)  # type: ignore[arg-type]
    assert q.pending(ALICE) == [seat] and q.decision(seat.seat_id) is None


def test_unknown_seats_and_bad_files(tmp_path: Path) -> None:
    q = HumanQueue(tmp_path / "human.db")
    for call in (
        lambda: q.get("1:0:0xabc"),
        lambda: q.decision("nope"),
        lambda: q.submit("nope", Verdict.PASS, ALL_TRUE),
        lambda: q.mark_committed("nope"),
    ):
        with pytest.raises(SeatNotFoundError, match="no human seat"):
            call()
    with pytest.raises(ValueError, match="not an Ethereum address"):
        q.pending("bob")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(HumanQueueError, match="not a usable human-queue database"):
        HumanQueue(junk)


def test_durable_across_reopen_and_another_process(tmp_path: Path, make_hdag: Callable[..., HDAG]) -> None:
    path = tmp_path / "state" / "human.db"
    tasks = _tasks(make_hdag)
    q = HumanQueue(path)
    seats = [q.enqueue(_seat(t, deadline=time.time() + 3600)) for t in tasks]
    d = q.submit(seats[0].seat_id, Verdict.FAIL, ALL_TRUE, "n")
    del q
    reopened = HumanQueue(path)
    assert reopened.pending(ALICE) == seats[1:]
    assert reopened.decided(ALICE) == [d]
    # a separate interpreter (the web page's process) sees the same state and can decide
    code = (
        "import sys, json\n"
        "from trustnode.audit.human_queue import HumanQueue\n"
        "q = HumanQueue(sys.argv[1])\n"
        "seats = q.pending(sys.argv[2])\n"
        "d = q.submit(seats[0].seat_id, 'PASS', dict.fromkeys(json.loads(sys.argv[3]), True), 'web')\n"
        "print(json.dumps({'n': len(seats), 'seat': d.seat_id}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path), ALICE, json.dumps(CRITERIA_KEYS)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    report = json.loads(out.stdout)
    assert report == {"n": 2, "seat": seats[1].seat_id}
    assert [x.seat_id for x in reopened.decided(ALICE)] == [seats[0].seat_id, seats[1].seat_id]
    assert reopened.decision(seats[1].seat_id).note == "web"  # type: ignore[union-attr]


_WRITER = """
import sys, json
from trustnode.audit.human_queue import HumanQueue
from trustnode.models.enums import Level
from trustnode.models.human import HumanSeat
path, auditor, session, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
keys = json.loads(sys.argv[5])
q = HumanQueue(path, busy_timeout_s=60)
for i in range(n):
    seat = q.enqueue(HumanSeat(session_id=session, segment_index=i, auditor=auditor, node_id=f"ST{i}",
                               level=Level.STEP, problem="p", reasoning=f"step {i}"))
    if i % 2 == 0:
        q.submit(seat.seat_id, "FAIL" if i % 4 == 0 else "PASS", dict.fromkeys(keys, True), f"{session}/{i}")
print("ok")
"""


def test_two_processes_write_concurrently(tmp_path: Path) -> None:
    path = tmp_path / "human.db"
    HumanQueue(path)
    n = 60
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path), who, str(session), str(n), json.dumps(CRITERIA_KEYS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for who, session in ((ALICE, 1), (BOB, 2))
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert out.strip() == "ok"
    q = HumanQueue(path)
    assert q.counts() == {"pending": n, "decided": n, "committed": 0, "abandoned": 0}
    for who, session in ((ALICE, 1), (BOB, 2)):
        pend = q.pending(who)
        assert sorted(s.segment_index for s in pend) == list(range(1, n, 2))
        dec = q.decided(who)
        assert sorted(d.segment_index for d in dec) == list(range(0, n, 2))
        assert all(d.session_id == session and d.note == f"{session}/{d.segment_index}" for d in dec)
        assert all(d.verdict is (Verdict.FAIL if d.segment_index % 4 == 0 else Verdict.PASS) for d in dec)


def test_racing_submissions_exactly_one_verdict_wins(tmp_path: Path, make_hdag: Callable[..., HDAG]) -> None:
    q = HumanQueue(tmp_path / "human.db")
    seats = [q.enqueue(_seat(t)) for t in _tasks(make_hdag)]
    for seat in seats:
        barrier = threading.Barrier(2)
        outcomes: list[object] = []

        def submit(
            verdict: Verdict,
            seat_id: str = seat.seat_id,
            barrier: threading.Barrier = barrier,
            outcomes: list[object] = outcomes,
        ) -> None:
            other = HumanQueue(q.path)  # each thread as its own client
            barrier.wait()
            try:
                outcomes.append(other.submit(seat_id, verdict, ALL_TRUE, ""))
            except SeatAlreadyDecidedError as exc:
                outcomes.append(exc)

        threads = [threading.Thread(target=submit, args=(v,)) for v in (Verdict.PASS, Verdict.FAIL)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        wins = [o for o in outcomes if not isinstance(o, Exception)]
        assert len(outcomes) == 2 and len(wins) == 1
        assert q.decision(seat.seat_id) == wins[0]


def test_human_auditor_enqueues_and_waits_bounded(tmp_path: Path, make_hdag: Callable[..., HDAG]) -> None:
    tasks = _tasks(make_hdag)
    q = HumanQueue(tmp_path / "human.db")
    auditor = HumanAuditor(q, ALICE.lower()).bind(session_id=3, commit_deadline=time.time() + 600)
    assert isinstance(auditor, Auditor) and auditor.name == "human"
    first = auditor.audit(tasks[0])
    assert not first.decided and first.evidence.auditor == "human" and not first.evidence.checkable
    seat_id = seat_id_for(3, 0, ALICE)
    assert first.evidence.details["seat_id"] == seat_id
    assert [s.seat_id for s in q.pending(ALICE)] == [seat_id]

    # nobody answers: the wait is bounded and the result stays undecided
    t0 = time.monotonic()
    timed_out = auditor.audit_and_wait(tasks[1], timeout_s=0.3, poll_s=0.05)
    assert not timed_out.decided and 0.25 <= time.monotonic() - t0 < 5
    assert "no human decision within" in str(timed_out.evidence.details["reason"])

    # a scripted person answers from another thread while the auditor waits
    def person() -> None:
        time.sleep(0.2)
        web = HumanQueue(q.path)
        (seat,) = [s for s in web.pending(ALICE) if s.segment_index == 2]
        web.submit(seat.seat_id, Verdict.FAIL, {**ALL_TRUE, "completeness": False}, "misses a case")

    helper = threading.Thread(target=person)
    helper.start()
    result = auditor.audit_and_wait(tasks[2], timeout_s=20, poll_s=0.05)
    helper.join(timeout=10)
    assert result.decided and result.verdict is Verdict.FAIL
    assert result.evidence.details["criteria"] == {**ALL_TRUE, "completeness": False}
    assert result.evidence.details["note"] == "misses a case"
    # once decided, a later audit of the same seat returns the decision at once
    again = auditor.audit(tasks[2])
    assert again == result
    assert auditor.wait_for(seat_id, timeout_s=0) is None


def test_abandoned_seats_leave_both_lists(tmp_path: Path, make_hdag: Callable[..., HDAG]) -> None:
    q = HumanQueue(tmp_path / "human.db")
    a, b, c = (q.enqueue(_seat(t)) for t in _tasks(make_hdag))
    q.submit(b.seat_id, Verdict.PASS, ALL_TRUE)
    q.submit(c.seat_id, Verdict.FAIL, ALL_TRUE)
    q.mark_committed(c.seat_id)
    q.abandon(a.seat_id, "session 7 expired")
    q.abandon(b.seat_id, "session 7 cancelled")
    assert q.pending(ALICE, include_expired=True) == [] and q.decided(ALICE) == []
    with pytest.raises(SeatStateError, match="abandoned: session 7 expired"):
        q.submit(a.seat_id, Verdict.PASS, ALL_TRUE)
    with pytest.raises(SeatStateError, match="abandoned: session 7 cancelled"):
        q.mark_committed(b.seat_id)
    with pytest.raises(SeatStateError, match="already committed"):
        q.abandon(c.seat_id, "late")
    assert q.decision(a.seat_id) is None
    assert q.decision(b.seat_id).verdict is Verdict.PASS  # type: ignore[union-attr]
    assert q.counts() == {"pending": 0, "decided": 0, "committed": 1, "abandoned": 2}


def test_an_appeal_rounds_auditor_queues_that_rounds_seat(
    tmp_path: Path, make_hdag: Callable[..., HDAG]
) -> None:
    """A person drawn for the same segment in round 0 and in an appeal round gets two seats, each
    with its round, and a decision on one never answers the other."""
    queue = HumanQueue(tmp_path / "q.db")
    task = _tasks(make_hdag)[1]
    first = HumanAuditor(queue, ALICE).bind(7, None)
    appeal = first.bind(7, None, round=1)
    first.audit(task)
    appeal.audit(task)
    ids = {s.seat_id: s.round for s in queue.pending(ALICE)}
    assert ids == {
        seat_id_for(7, task.segment_index, ALICE): 0,
        seat_id_for(7, task.segment_index, ALICE, 1): 1,
    }
    queue.submit(seat_id_for(7, task.segment_index, ALICE, 1), "FAIL", {k: True for k in CRITERIA_KEYS})
    assert appeal.audit(task).verdict == Verdict.FAIL
    assert queue.decision(seat_id_for(7, task.segment_index, ALICE)) is None
