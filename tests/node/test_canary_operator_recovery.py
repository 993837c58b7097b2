"""A canary operator that dies inside a placement, on anvil with js-ipfs: the placement is saved
before the commit is sent, so a fresh operator on the same ticket store finishes it without a
second commit. Two crash points: before the transaction was sent, and after it was mined but
before the receipt was saved. And an operator down for the whole reveal window gives up, saying so."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chain.port_scenarios import vote_round
from tests.conftest import client_for, start_server, stop_server
from tests.node.test_canary_operator import (  # noqa: F401 - `net` is a fixture
    OPERATOR,
    Net,
    ask,
    net,
    operator_settings,
    pin_and_open,
    place,
    receipt,
)
from trustnode.api.app import create_app
from trustnode.chain.port import SeatVote
from trustnode.chain.port.evm import Web3Port
from trustnode.chain.protocol import Protocol
from trustnode.node.canary_operator import CanaryOperator
from trustnode.node.context import NodeContext

pytestmark = [pytest.mark.chain, pytest.mark.ipfs]


def _crash_after_saving(net: Net, data: Path, *, mined: bool, seed: int) -> tuple[str, int, list[str]]:  # noqa: F811
    """Issue over HTTP, then do what `place` does up to the crash point; (ticket, session, hashes)."""
    app = create_app(NodeContext(operator_settings(net, data)))
    server, thread, url = start_server(app)
    op: CanaryOperator = app.state.canary_operator
    try:
        batch = ask(url, net.provider.address)
        placed = pin_and_open(net, batch, seed=seed)
        t = op.store.get(batch.ticket)
        assert t is not None
        t.placement = placed.placement()
        op.store.save(t)  # the placement passed its checks and is saved: the process dies here
        hashes = t.commitments()
        if mined:  # ... or just after its transaction was mined
            me = Web3Port(
                Protocol(client_for(net.dep, OPERATOR), net.dep.contracts), deploy_block=net.dep.deploy_block
            )
            me.commit_canaries(placed.sid, hashes)
        assert receipt(url, batch.ticket).state == "issued"
    finally:
        stop_server(server, thread)
        op.store.close()
    return batch.ticket, placed.sid, ["0x" + h.hex() for h in hashes]


@pytest.mark.parametrize("mined", [False, True], ids=["before-send", "after-mined"])
def test_a_fresh_operator_finishes_a_placement_cut_by_a_crash(net: Net, tmp_path: Path, mined: bool) -> None:  # noqa: F811
    data = tmp_path / "operator"
    ticket, sid, hashes = _crash_after_saving(net, data, mined=mined, seed=3 + mined)
    assert net.provider.canaries(sid).committed is mined
    nonce = net.nonce(OPERATOR)
    op = CanaryOperator.for_node(NodeContext(operator_settings(net, data)))
    try:
        assert op.tick() == (0 if mined else 1)
        state = net.provider.canaries(sid)
        assert [h.lower() for h in state.commitments] == hashes
        assert state.operator == client_for(net.dep, OPERATOR).address
        assert net.nonce(OPERATOR) == nonce + (0 if mined else 1), "exactly one commit in all"
        t = op.store.get(ticket)
        assert t is not None and t.state == "committed" and t.active
        assert (t.tx_hash is None) is mined, "a mined commit's hash was lost with the process"
        assert op.tick() == 0, "nothing more to send before the reveal window"
    finally:
        op.store.close()


def test_an_operator_down_for_the_whole_reveal_window_stops_trying_and_says_so(
    net: Net,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The unrevealed canaries cost the provider trace weight, they never block settlement; the
    operator that comes back too late sends nothing and records why."""
    app = create_app(NodeContext(operator_settings(net, tmp_path / "operator")))
    server, thread, url = start_server(app)
    op: CanaryOperator = app.state.canary_operator
    try:
        batch = ask(url, net.provider.address)
        placed = pin_and_open(net, batch, seed=5)
        r = place(url, batch.ticket, placed.placement())
        assert r.status_code == 200 and r.json()["state"] == "committed", r.text
        vote_round(net.provider, net.auditors, placed.sid, 0, lambda r, g: SeatVote.PASS, net.mine)
        state = net.provider.canaries(placed.sid)
        assert state.reveal_until is not None
        net.mine(state.reveal_until - net.provider.block_number())  # the operator sleeps through it
        nonce = net.nonce(OPERATOR)
        assert op.tick() == 0 and net.nonce(OPERATOR) == nonce
        assert not net.provider.canaries(placed.sid).revealed
        rec = receipt(url, batch.ticket)
        assert rec.state == "committed" and rec.reason is not None
        assert f"reveal window of session {placed.sid} closed at block {state.reveal_until}" in rec.reason
        assert not op.store.active(), "the ticket needs nothing more"
    finally:
        stop_server(server, thread)
        op.store.close()
