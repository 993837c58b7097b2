"""The chain port: revert names come from the ABI, and both implementations (the deployed
contracts on anvil, the in-memory chain) give the same answers to one session's scenario."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from tests.conftest import client_for
from trustnode.chain.deployment import Deployment
from trustnode.chain.errors import ContractRevertError
from trustnode.chain.port import Ballot, ChainPort, NotReady, SeatVote, reverts
from trustnode.chain.port.evm import Web3Port
from trustnode.chain.port.memory_state import MemoryChain, revert
from trustnode.chain.port.types import PENDING_READY_AT
from trustnode.chain.protocol import DEVNET_SESSION_PARAMS, Protocol
from trustnode.models.enums import Tier
from trustnode.models.verdict import SessionState, TierName, TraceVerdict
from trustnode.node.seating import undrawn_demand
from trustnode.node.verdict import build_outcome

T = TypeVar("T")
TOKEN = 10**18
ROOT = bytes.fromhex("ab" * 32)
SALT = b"\x11" * 32


def test_every_revert_name_the_node_reacts_to_is_declared_by_a_contract() -> None:
    assert reverts.undeclared() == []
    assert "NotReady" not in reverts.declared() and "RandomnessNotReady" not in reverts.declared()
    assert reverts.TOO_EARLY in reverts.declared() and "InvalidSegments" in reverts.PERMANENT
    with pytest.raises(ValueError, match="not a revert name the node knows"):
        reverts.is_revert(ContractRevertError("NotReady", {}, "0x"), "NotReady")
    with pytest.raises(AssertionError, match="not a custom error of any shipped contract"):
        revert("RandomnessNotReady")


def test_permanent_reverts_are_told_apart_from_transient_ones() -> None:
    assert reverts.is_permanent(ContractRevertError("FeeTooLow", {"pool": 1, "required": 2}, "0x"))
    assert not reverts.is_permanent(ContractRevertError("TooEarly", {}, "0x"))
    assert not reverts.is_permanent(ContractRevertError("EnforcedPause", {}, "0x"))
    assert "does not exist on this chain" in reverts.explain(ContractRevertError("UnknownSession", {}, "0x"))


def test_every_error_of_the_deployed_contracts_is_explained() -> None:
    assert reverts.unexplained() == []
    for name in ("SlashSeedPending", "DrawComplete", "WithdrawalPending", "UnsupportedRound"):
        assert name in reverts.declared()
    assert "no longer" in reverts.explain(ContractRevertError("SnapshotUnavailable", {}, "0x"))


def _when_ready(action: Callable[[], T], mine: Callable[[int], None]) -> T:
    """Run `action`, mining the blocks a NotReady asks for (protocol v2: epochs, late randomness)."""
    for _ in range(8):
        try:
            return action()
        except NotReady as exc:
            mine(exc.retry_blocks)
    raise AssertionError("still not ready after 8 waits")


def scenario(provider: ChainPort, auditor: ChainPort, mine: Callable[[int], None]) -> dict[str, object]:
    """One computer segment, one auditor: every port operation of a session's life, in order."""
    assert provider.capabilities.protocol_version == 2 and provider.capabilities.abstain
    auditor.register(Tier.COMPUTER, 1, b"\x42" * 32)
    auditor.stake(200 * TOKEN)
    assert [e.address for e in auditor.eligible_auditors(Tier.COMPUTER)] == [auditor.address]
    params = provider.params()
    fee = params.reward * 2
    opened = _when_ready(lambda: provider.open_session(ROOT, [0], [1], fee), mine)
    assert provider.block_timestamp(opened.tx.block) <= provider.chain_time()
    assert provider.find_opened(ROOT) == opened
    try:
        provider.draw(opened.session_id, 8)
        raise AssertionError("the draw's randomness cannot be fixed in the opening block")
    except NotReady:
        pass
    step = _when_ready(lambda: provider.draw(opened.session_id, 8), mine)
    assert (step.drawn_seats, step.total_seats, step.state) == (1, 1, SessionState.DRAWING)
    assert provider.seats(opened.session_id) == {auditor.address: [0]}
    provider.publish_keys(opened.session_id, "bafy-manifest")
    assert provider.keys_published(opened.session_id).manifest_cid == "bafy-manifest"  # type: ignore[union-attr]
    ballot = Ballot(votes=(SeatVote.FAIL,))
    assert not auditor.commitment_matches(opened.session_id, ballot, SALT)
    auditor.commit(opened.session_id, ballot, SALT)
    assert auditor.commitment_matches(opened.session_id, ballot, SALT)
    assert not auditor.commitment_matches(opened.session_id, Ballot(votes=(SeatVote.ABSTAIN,)), SALT)
    assert auditor.session(opened.session_id).state == SessionState.REVEAL  # everyone committed
    with pytest.raises(ContractRevertError) as late:
        auditor.commit(opened.session_id, Ballot(votes=(SeatVote.PASS,)), SALT)
    assert late.value.name == "WrongStatus"
    return _finish(provider, auditor, mine, opened.session_id, ballot, params.beta_bps)


def _finish(
    provider: ChainPort, auditor: ChainPort, mine: Callable[[int], None], sid: int, ballot: Ballot, beta: int
) -> dict[str, object]:
    """Reveal, finalize, settle once the slash randomness exists."""
    assert auditor.reveal(sid, ballot, SALT) is not None
    assert auditor.reveal(sid, ballot, SALT) is None  # already revealed
    state, _ = provider.advance(sid)
    assert state == SessionState.FINALIZED and provider.finalized(sid) is not None
    info = provider.session(sid)
    outcome = build_outcome(info, provider.segments(sid), beta_bps=beta)
    with pytest.raises(NotReady, match="slash randomness"):
        auditor.settle(sid, auditor.address)  # requested at finalization: not fixed in that block
    settled = _when_ready(lambda: auditor.settle(sid, auditor.address), mine)
    assert settled is not None and auditor.settle(sid, auditor.address) is None
    assert auditor.settlements(auditor=auditor.address) == [settled]
    vote = auditor.vote(sid, auditor.address)
    return {
        "verdict": outcome.verdict,
        "failing": [s.index for s in outcome.failing_segments],
        "settled": (settled.correct, settled.incorrect, settled.slashes, settled.reward, settled.reputation),
        "vote": (vote.committed, vote.revealed, vote.settled, vote.ballot),
        "phases": sorted(provider.session_transactions(sid)),
        "pool": auditor.pool(auditor.address).locked,
    }


EXPECTED = {
    "verdict": TraceVerdict.FAIL,
    "failing": [0],
    "settled": (
        1,
        0,
        0,
        DEVNET_SESSION_PARAMS.reward,
        (9 * 10**17 * (10**18 // 2) + 10**17 * 10**18) // 10**18,
    ),
    "vote": (True, True, True, Ballot(votes=(SeatVote.FAIL,))),
    "phases": ["commit", "draw", "finalize", "open", "publish_keys", "reveal", "settle"],
    "pool": 0,
}


def test_the_memory_port_runs_a_session_by_the_rules() -> None:
    chain = MemoryChain(DEVNET_SESSION_PARAMS, slash_delay=2)
    provider, auditor = chain.port("0x" + "01" * 20), chain.port("0x" + "02" * 20)
    chain.fund(provider.address, 10_000 * TOKEN)
    chain.fund(auditor.address, 10_000 * TOKEN)
    assert scenario(provider, auditor, chain.mine) == EXPECTED


@pytest.mark.chain
def test_the_web3_port_gives_the_same_answers_on_the_deployed_contracts(
    fresh_devnet: Deployment, tmp_path: Path
) -> None:
    owner = Protocol(client_for(fresh_devnet, 0), fresh_devnet.contracts)
    provider_p, auditor_p = (Protocol(client_for(fresh_devnet, i), fresh_devnet.contracts) for i in (1, 2))
    owner.transfer(provider_p.address, 10_000 * TOKEN)
    owner.transfer(auditor_p.address, 10_000 * TOKEN)
    provider = Web3Port(provider_p, deploy_block=fresh_devnet.deploy_block)
    auditor = Web3Port(auditor_p, deploy_block=fresh_devnet.deploy_block)
    assert provider.params() == DEVNET_SESSION_PARAMS and provider.max_segments() == 1024
    assert scenario(provider, auditor, owner.client.mine) == EXPECTED


def failed_draw(provider: ChainPort, auditor: ChainPort, mine: Callable[[int], None]) -> dict[str, object]:
    """One LLM segment needs 3 distinct auditors and only one is eligible: the draw fails with the
    reason, the provider gets the pool back minus R for the seat already drawn, and that seat's
    auditor is paid R (stake unlocked) when it settles."""
    auditor.register(Tier.LLM, 1, b"\x43" * 32)
    auditor.stake(200 * TOKEN)
    params = provider.params()
    fee = params.reward * 3 * 2
    before = provider.token_balance(provider.address)
    opened = _when_ready(lambda: provider.open_session(ROOT, [1], [1], fee), mine)
    step = _when_ready(lambda: provider.draw(opened.session_id, 8), mine)
    assert step.state == SessionState.CANCELLED and step.drawn_seats == 1
    failure = provider.draw_failure(opened.session_id)
    assert failure is not None
    assert "not enough eligible auditors of tier llm" in failure.reason
    assert auditor.pool(auditor.address).locked == params.slash_amount, "the drawn seat stays locked"
    settled = auditor.settle(opened.session_id, auditor.address)
    assert settled is not None and auditor.settle(opened.session_id, auditor.address) is None
    pool, _treasury = fee * 8 // 10, fee - fee * 8 // 10
    return {
        "failure": (failure.tier, failure.seats_needed, failure.eligible, failure.per_segment),
        "provider_paid": before - provider.token_balance(provider.address),
        "settled": (settled.correct, settled.incorrect, settled.slashes, settled.reward, settled.reputation),
        "locked": auditor.pool(auditor.address).locked,
        "expected_paid": fee - (pool - params.reward),
    }


def _check_failed_draw(result: dict[str, object]) -> None:
    assert result["failure"] == (TierName.LLM, 3, 1, 3)
    assert result["provider_paid"] == result["expected_paid"]
    assert result["settled"] == (0, 0, 0, DEVNET_SESSION_PARAMS.reward, 10**18 // 2)
    assert result["locked"] == 0


def test_a_failed_draw_on_the_memory_port() -> None:
    chain = MemoryChain(DEVNET_SESSION_PARAMS)
    provider, auditor = chain.port("0x" + "01" * 20), chain.port("0x" + "02" * 20)
    chain.fund(provider.address, 10_000 * TOKEN)
    chain.fund(auditor.address, 10_000 * TOKEN)
    _check_failed_draw(failed_draw(provider, auditor, chain.mine))


@pytest.mark.chain
def test_a_failed_draw_on_the_deployed_contracts(fresh_devnet: Deployment) -> None:
    owner = Protocol(client_for(fresh_devnet, 0), fresh_devnet.contracts)
    provider_p, auditor_p = (Protocol(client_for(fresh_devnet, i), fresh_devnet.contracts) for i in (1, 2))
    owner.transfer(provider_p.address, 10_000 * TOKEN)
    owner.transfer(auditor_p.address, 10_000 * TOKEN)
    provider = Web3Port(provider_p, deploy_block=fresh_devnet.deploy_block)
    auditor = Web3Port(auditor_p, deploy_block=fresh_devnet.deploy_block)
    _check_failed_draw(failed_draw(provider, auditor, owner.client.mine))


def test_a_draw_emptied_by_a_refused_lock_is_not_refunded_on_the_memory_port() -> None:
    """The memory mirror of `RefusedLocksBuyNoRefund`: a sampled auditor whose stake is locked
    elsewhere refuses; the segment cannot fill, and the provider pays the whole fee."""
    chain = MemoryChain(DEVNET_SESSION_PARAMS)
    provider = chain.port("0x" + "01" * 20)
    honest, busy = chain.port("0x" + "02" * 20), chain.port("0x" + "03" * 20)
    chain.fund(provider.address, 10_000 * TOKEN)
    for a in (honest, busy):
        chain.fund(a.address, 10_000 * TOKEN)
        a.register(Tier.LLM, 1, b"\x43" * 32)
        a.stake(200 * TOKEN)
    chain.auditors[busy.address].locked = chain.auditors[busy.address].assets  # seated in another session
    fee = DEVNET_SESSION_PARAMS.reward * 3 * 2
    before = provider.token_balance(provider.address)
    opened = _when_ready(lambda: provider.open_session(ROOT, [1], [1], fee), chain.mine)
    step = _when_ready(lambda: provider.draw(opened.session_id, 8), chain.mine)
    assert step.state == SessionState.CANCELLED and step.drawn_seats == 1
    failure = provider.draw_failure(opened.session_id)
    assert failure is not None and failure.refused == 1
    assert "refused their stake lock" in failure.reason and "fee is forfeited" in failure.reason
    assert provider.session(opened.session_id).termination == "draw_refused"
    assert before - provider.token_balance(provider.address) == fee, "no refund"


@pytest.mark.chain
def test_the_web3_port_releases_a_held_withdrawal_once_its_hold_is_over(fresh_devnet: Deployment) -> None:
    """protocol-v2 5.1 on the deployed contracts: a withdrawal by a pool in a readable snapshot is
    parked; `release_withdrawal` does nothing during the hold and drains the idle pool after it, so
    the request gets its claim time without any other touch."""
    owner = Protocol(client_for(fresh_devnet, 0), fresh_devnet.contracts)
    me_p = Protocol(client_for(fresh_devnet, 1), fresh_devnet.contracts)
    owner.transfer(me_p.address, 1_000 * TOKEN)
    me = Web3Port(me_p, deploy_block=fresh_devnet.deploy_block)
    me.register(Tier.LLM, 1, b"\x43" * 32)
    me.stake(200 * TOKEN)
    me_p.mine_to_next_epoch()  # the pool stands in a readable snapshot
    shares, _ = me.self_stake(me.address)
    wid = me.request_withdrawal(shares // 4)
    assert me.withdrawal(wid).ready_at == PENDING_READY_AT
    assert me.release_withdrawal(wid) is None, "held"
    for _ in range(2):
        me_p.mine_to_next_epoch()
    assert me.release_withdrawal(wid) is None, "still held in the hold's last epoch"
    me_p.mine_to_next_epoch()
    assert me.release_withdrawal(wid) is not None, "the hold is over: the pool is drained"
    w = me.withdrawal(wid)
    assert w.ready_at != PENDING_READY_AT and w.amount == 50 * TOKEN
    assert me.release_withdrawal(wid) is None, "nothing left to release"


@pytest.mark.chain
def test_the_web3_port_reports_what_an_undrawn_session_still_needs(fresh_devnet: Deployment) -> None:
    """The pre-open check's view of the deployed contracts: an opened, undrawn session says until
    which block it can draw (its snapshot's last readable block) and counts in the tier's demand."""
    owner = Protocol(client_for(fresh_devnet, 0), fresh_devnet.contracts)
    provider_p = Protocol(client_for(fresh_devnet, 1), fresh_devnet.contracts)
    owner.transfer(provider_p.address, 10_000 * TOKEN)
    provider = Web3Port(provider_p, deploy_block=fresh_devnet.deploy_block)
    params = provider.params()
    fee = params.reward * 3 * 2 * 2
    opened = _when_ready(lambda: provider.open_session(ROOT, [1, 1], [1, 1], fee), owner.client.mine)
    info = provider.session(opened.session_id)
    epoch = provider_p.session(opened.session_id).epoch
    assert info.draw_until == provider_p.snapshot_readable_until(epoch) > provider.block_number()
    assert undrawn_demand(provider, params)[1] == 2 * params.seats_per_tier[1]
