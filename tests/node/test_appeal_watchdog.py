"""An appeal nobody draws cannot make an outcome final unreviewed, and a provider that walks away
cannot leave its auditors unsettled: auditors waiting for a session's final outcome draw its
undrawn appeal rounds, end rounds whose deadline passed and close the appeal phase themselves.

The appellant here is a stranger that appeals the wrongly passed segment and never draws, and
the provider's appeal service is gone (it neither draws, publishes the round's keys, nor closes
the phase). Before the watchdog the round lapsed undrawn (UNFILLABLE, the wrong PASS final, the
whole bond back) and nobody closed the appeal phase."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.node.memnet import MemoryNet, address
from tests.node.test_appeals import APPELLANT, lazy_network, run_to_appeal_window
from trustnode.chain.port.types_appeals import RoundState
from trustnode.llm.fake_server import FakeOpenAIServer
from trustnode.node import auditor as auditor_mod
from trustnode.node.appellant import appeal


@pytest.fixture
def net(tmp_path: Path, fake_llm: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[MemoryNet]:
    monkeypatch.setattr(auditor_mod, "WATCH_EVERY_S", 0.0)  # blocks pass faster than seconds here
    n = lazy_network(tmp_path, fake_llm)
    yield n
    n.close()


def test_auditors_draw_an_appeal_nobody_draws_and_close_the_phase_without_the_provider(
    net: MemoryNet,
) -> None:
    _, sid, wrong = run_to_appeal_window(net)
    net.appeals.step = lambda: 0  # type: ignore[method-assign]  # the provider's appeal service is gone
    port = net.chain.port(address(APPELLANT))
    _, opened = appeal(port, sid, [wrong])  # and the appellant never draws
    net.until(lambda: port.appeal_status(sid).final, what="the final outcome", rounds=600)
    (rnd,) = port.rounds(sid)
    # the auditors drew the whole panel; with no keys it ended KEYS_WITHHELD, not lapsed undrawn
    assert rnd.drawn_seats == rnd.total_seats == 3 and rnd.state == RoundState.KEYS_WITHHELD, rnd
    assert opened.round == rnd.round
    # every round-0 seat got settled by its own daemon against the final outcome
    net.until(
        lambda: all(port.vote(sid, a, 0).settled for a in port.seats(sid, 0)),
        what="round-0 settlement",
        rounds=100,
    )
