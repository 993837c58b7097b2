"""A provider that abandons a session after its draw (never publishes keys) cannot leave its drawn
auditors' stake locked: each auditor daemon learns of its seats from the draw (`SeatsDrawn`), not
only from key publications, and settles them itself once the key deadline has passed, so each
seat is paid R and its ledger moves on. Before this only the provider's own node settled them.

The same scenario on the in-memory chain and on the deployed contracts (anvil)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import client_for
from tests.node.memnet import MarkedAuditor, MemoryNet
from trustnode.chain.deployment import Deployment
from trustnode.chain.port import ChainPort, NotReady
from trustnode.chain.port.evm import Web3Port
from trustnode.chain.port.memory_state import MEMORY_SESSION_PARAMS
from trustnode.chain.protocol import Protocol
from trustnode.config import Settings
from trustnode.models.enums import Tier
from trustnode.models.verdict import SessionState
from trustnode.node.auditor import AuditorDaemon
from trustnode.node.context import NodeContext
from trustnode.node.votes import VoteState

TOKEN = 10**18


def _abandoned_session(
    provider: ChainPort, daemons: list[AuditorDaemon], mine: Callable[[int], None]
) -> dict[str, object]:
    """Open a 3-segment computer session, draw it whole, publish no keys; tick the daemons (and
    nothing else) until the key deadline is long past. Returns what each drawn auditor ended with."""
    for d in daemons:
        d.release.every_s = 0.0  # blocks pass faster than seconds here
    fee = provider.params().reward * 12
    for _ in range(16):
        try:
            sid = provider.open_session(b"\x5a" * 32, [0, 0, 0], [1, 1, 1], fee).session_id
            break
        except NotReady as exc:
            mine(exc.retry_blocks)
    for _ in range(16):
        try:
            if provider.draw(sid, 64).drawn_seats == provider.session(sid).total_seats:
                break
        except NotReady as exc:
            mine(exc.retry_blocks)
    seats = provider.seats(sid)
    assert seats and provider.session(sid).state == SessionState.DRAWING
    for d in daemons:
        d.tick()  # the daemons see the draw; the keys never come
    assert all(d.votes.get(sid) is None for d in daemons)
    info = provider.session(sid)
    mine(info.key_deadline - provider.block_number() + 1)
    for _ in range(3):
        for d in daemons:
            d.tick()
        mine(1)
    out: dict[str, object] = {"state": provider.session(sid).state}
    for d in daemons:
        if d.address not in seats:
            continue
        rec = d.votes.get(sid)
        settled = [s for s in provider.settlements(auditor=d.address, session_id=sid) if s.round == 0]
        out[d.address] = (
            rec.state if rec else None,
            "expired" in (rec.note if rec else ""),
            provider.vote(sid, d.address).settled,
            [s.reward for s in settled],
            len(seats[d.address]),
        )
    return out


def _expected(out: dict[str, object], reward: int) -> None:
    assert out.pop("state") == SessionState.EXPIRED
    assert out, "nobody was drawn"
    for who, (state, says_why, settled, rewards, n_seats) in out.items():  # type: ignore[misc]
        assert state == VoteState.SETTLED and says_why, (who, state)
        assert settled and rewards == [n_seats * reward], (who, rewards, n_seats)


def test_auditors_settle_their_seats_of_a_session_abandoned_before_its_keys(tmp_path: Path) -> None:
    params = MEMORY_SESSION_PARAMS.model_copy(update={"seat_cap": 32, "seats_per_tier": (2, 1, 1)})
    net = MemoryNet(tmp_path, params)
    try:
        daemons = [net.add_auditor(f"c{i}", Tier.COMPUTER, MarkedAuditor(), 2 + i) for i in range(3)]
        out = _abandoned_session(net.provider_ctx.port(), daemons, net.chain.mine)
        _expected(out, params.reward)
        for who in out:
            assert net.chain.auditors[who].locked == 0  # the seats' stake is free again
    finally:
        net.close()


@pytest.mark.chain
def test_auditors_settle_abandoned_seats_on_the_deployed_contracts(
    fresh_devnet: Deployment, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    dep_file = tmp_path / "deployment.json"
    fresh_devnet.save(dep_file)
    owner = Protocol(client_for(fresh_devnet, 0), fresh_devnet.contracts)
    daemons = []
    for i in range(3):
        settings = Settings(
            data_dir=tmp_path / f"a{i}",
            chain={"deployment_file": dep_file, "account_index": 2 + i},  # type: ignore[arg-type]
            auditor={"stake": 500 * TOKEN},  # type: ignore[arg-type]
        )
        daemon = AuditorDaemon(NodeContext(settings), Tier.COMPUTER, MarkedAuditor(), poll_s=0.0)
        owner.transfer(daemon.address, 1_000 * TOKEN)
        daemon.ensure_registered()
        daemons.append(daemon)
    provider = Web3Port(
        Protocol(client_for(fresh_devnet, 1), fresh_devnet.contracts), deploy_block=fresh_devnet.deploy_block
    )
    owner.transfer(provider.address, 1_000 * TOKEN)
    try:
        with caplog.at_level(logging.INFO, logger="trustnode.node.auditor"):
            out = _abandoned_session(provider, daemons, provider.protocol.client.mine)
        reward = provider.params().reward
        _expected(out, reward)
        said = [r.getMessage() for r in caplog.records if "before its keys came" in r.getMessage()]
        assert len(said) == len(out) and all("session expired" in m for m in said), said
    finally:
        for d in daemons:
            d.close()
