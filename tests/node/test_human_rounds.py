"""Human seats carry their panel round (issue 15's appeals): a round is part of the seat id, so
the same person on the same segment in an appeal is another seat, and a decision of one round
can never be taken for another. Real SQLite human queue."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from trustnode.audit.human_queue import HumanQueue
from trustnode.chain.accounts import dev_account
from trustnode.models.enums import Level, Verdict
from trustnode.models.human import CRITERIA_KEYS, HumanDecision, HumanSeat, round_of_seat_id, seat_id_for
from trustnode.node.backends import HumanSeats
from trustnode.node.votes import VoteRecord

ME = dev_account(5).address
ALL_TRUE = dict.fromkeys(CRITERIA_KEYS, True)


def _seat(round: int, segment: int = 0, deadline: float | None = None) -> HumanSeat:
    return HumanSeat(
        session_id=7,
        segment_index=segment,
        auditor=ME,
        round=round,
        node_id="ST1",
        level=Level.STEP,
        problem="Add 2 and 3.",
        reasoning="2 + 3 = 5.",
        commit_deadline=deadline,
    )


def test_a_round_is_part_of_the_seat_id() -> None:
    first, appeal = _seat(0), _seat(2)
    assert first.seat_id == f"7:0:{ME.lower()}", "round 0 keeps the ids queues already hold"
    assert appeal.seat_id == f"7:0:{ME.lower()}:r2" == seat_id_for(7, 0, ME, 2)
    assert (round_of_seat_id(first.seat_id), round_of_seat_id(appeal.seat_id)) == (0, 2)
    with pytest.raises(ValidationError, match="does not match"):
        HumanSeat.model_validate({**appeal.model_dump(), "round": 1})
    with pytest.raises(ValueError, match="round must be >= 0"):
        seat_id_for(7, 0, ME, -1)


def test_a_decision_belongs_to_its_seats_round() -> None:
    base = {"session_id": 7, "segment_index": 0, "auditor": ME, "verdict": Verdict.PASS}
    d = HumanDecision(seat_id=seat_id_for(7, 0, ME, 3), criteria=ALL_TRUE, decided_at=1.0, **base)
    assert d.round == 3, "read from the seat id when not given"
    with pytest.raises(ValidationError, match="round 1 on seat .* which is round 3"):
        HumanDecision(seat_id=seat_id_for(7, 0, ME, 3), round=1, criteria=ALL_TRUE, decided_at=1.0, **base)


def test_the_queue_keeps_rounds_apart(tmp_path: Path) -> None:
    queue = HumanQueue(tmp_path / "queue.db")
    first, appeal = queue.enqueue(_seat(0)), queue.enqueue(_seat(1))
    assert first.seat_id != appeal.seat_id and len(queue.pending(ME)) == 2
    queue.submit(appeal.seat_id, "FAIL", ALL_TRUE)
    (decided,) = queue.decided(ME)
    assert (decided.seat_id, decided.round, decided.verdict) == (appeal.seat_id, 1, Verdict.FAIL)
    assert queue.decision(first.seat_id) is None, "the first round's seat is untouched"
    assert queue.get(appeal.seat_id).round == 1


def test_the_daemons_queue_records_use_the_rounds_seat_ids(tmp_path: Path) -> None:
    """What the human tier's daemon marks committed or abandoned is the seat of the vote's round."""
    queue = HumanQueue(tmp_path / "queue.db")
    seats = HumanSeats(queue, ME)
    for r in (0, 1):
        queue.enqueue(_seat(r, segment=0))
        queue.enqueue(_seat(r, segment=1))
        queue.submit(seat_id_for(7, 0, ME, r), "PASS", ALL_TRUE)
    seats.committed(VoteRecord(session_id=7, round=1, manifest_cid="bafy", seats=[0]))
    assert queue.decision(seat_id_for(7, 0, ME, 1)).committed  # type: ignore[union-attr]
    assert not queue.decision(seat_id_for(7, 0, ME, 0)).committed  # type: ignore[union-attr]
    seats.abandoned(VoteRecord(session_id=7, round=1, manifest_cid="bafy", seats=[1]), "appeal expired")
    assert [s.seat_id for s in queue.pending(ME)] == [seat_id_for(7, 1, ME, 0)]
    # The backend of an appeal round's vote queues that round's seats, never round 0's.
    appeal = seats(VoteRecord(session_id=7, round=1, manifest_cid="bafy", seats=[0]))
    assert (appeal.session_id, appeal.round) == (7, 1)
    assert (
        appeal.bind(8, None, round=2).round == 2
        and seats(VoteRecord(session_id=7, round=0, manifest_cid="bafy", seats=[0])).round == 0
    )
