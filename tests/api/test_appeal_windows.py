"""A human's appeal-round seat is timed by its round on chain (issue 15): the audit page reads the
round's own phase and commit deadline, so a person can audit an appeal seat while its round is
committing, and is refused once the round has moved on. In-memory chain, real node code."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.node.conftest import fake_llm  # noqa: F401 - the stand-in LLM judge's server
from tests.node.memnet import MemoryNet, address
from tests.node.test_appeals import APPELLANT, lazy_network, run_to_appeal_window
from trustnode.api.web.deadline import CommitWindows
from trustnode.llm.fake_server import FakeOpenAIServer
from trustnode.models.enums import Level
from trustnode.models.human import HumanSeat
from trustnode.node.appellant import appeal


@pytest.fixture
def net(tmp_path: Path, fake_llm: FakeOpenAIServer) -> Iterator[MemoryNet]:  # noqa: F811
    n = lazy_network(tmp_path, fake_llm)
    yield n
    n.close()


def test_an_appeal_seat_window_comes_from_its_round(net: MemoryNet) -> None:
    _, sid, wrong = run_to_appeal_window(net)
    port = net.chain.port(address(APPELLANT))
    appeal(port, sid, [wrong])
    for _ in range(60):  # the provider draws and publishes the round; no auditor has voted yet
        if port.keys_published(sid, 1) is not None:
            break
        net.appeals.step()
        net.chain.mine(1)
    (rnd,) = port.rounds(sid)
    auditor = next(iter(port.seats(sid, 1)))
    seat = HumanSeat(
        session_id=sid, segment_index=wrong, auditor=auditor, round=1, node_id="O2", level=Level.OPERATION,
        problem="p", reasoning="r",
    )  # fmt: skip
    windows = CommitWindows(lambda: port, lambda n: 1_000 + n)
    w = windows.from_rounds([seat])[seat.seat_id]
    assert w.open and w.round == 1 and w.source == "chain", w
    assert w.deadline_block == rnd.commit_deadline and w.deadline_block != port.session(sid).commit_deadline
    net.until(lambda: port.appeal_status(sid).final, what="the end of the round")
    closed = windows.from_rounds([seat])[seat.seat_id]
    assert not closed.open and "finalized" in (closed.reason or ""), closed
