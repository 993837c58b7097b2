"""The provider's state machine on the in-memory chain (issue 13: items 2, 4 and 7, the typed verdict).

Real pipeline, real auditor daemons and backends, real local blob store; only the chain is
`MemoryChain`, so each test runs a whole session in well under a second.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import start_server, stop_server
from tests.node.conftest import judge_for
from tests.node.memnet import PROVIDER, MemoryNet, address
from trustnode.api.app import create_app
from trustnode.audit.computer import ComputerAuditor
from trustnode.chain.errors import ContractRevertError
from trustnode.chain.port import NotReady
from trustnode.chain.port.memory_state import MEMORY_SESSION_PARAMS, MemoryChain
from trustnode.chain.port.types import PENDING_READY_AT, DrawFailure
from trustnode.hdag.offline import decompose_offline
from trustnode.llm.fake_server import FakeOpenAIServer
from trustnode.models.enums import Tier
from trustnode.models.jobs import JobStatus, TraceStage
from trustnode.models.trace import TraceInput
from trustnode.models.verdict import SegmentVerdict, SessionState, TierName, TraceVerdict
from trustnode.node.pinning import fee_for
from trustnode.node.queries import SessionQueries, StaleTraceLinkError
from trustnode.node.samples import Sample, load_samples
from trustnode.node.seating import shortfall, undrawn_demand
from trustnode.node.votes import withdraw_rewards

PARAMS = MEMORY_SESSION_PARAMS.model_copy(
    update={"seat_cap": 32, "seats_per_tier": (2, 1, 1), "beta_bps": 9000}
)


def _llm_seats(trace: TraceInput) -> int:
    """LLM-tier seats of `trace` (counted from its offline HDAG, so a change of segmentation changes
    the expected figures with it)."""
    return sum(n.primary_auditor.tier == Tier.LLM for n in decompose_offline(trace).nodes)


def _llm_shortfall(trace: TraceInput) -> str:
    """The refusal for a trace whose LLM-tier seats nobody can take."""
    seats = _llm_seats(trace)
    return f"not enough eligible auditors of tier llm: need 1 distinct per segment, {seats} seats, have 0"


@pytest.fixture
def samples() -> dict[str, Sample]:
    return {s.name: s for s in load_samples()}


@pytest.fixture
def net(tmp_path: Path, fake_llm: FakeOpenAIServer) -> Iterator[MemoryNet]:
    n = MemoryNet(tmp_path, PARAMS)
    n.add_auditor("computer-1", Tier.COMPUTER, ComputerAuditor(), 2)
    n.add_auditor("computer-2", Tier.COMPUTER, ComputerAuditor(), 3)
    n.add_auditor("llm-1", Tier.LLM, judge_for(fake_llm, tmp_path / "judge"), 4)
    yield n
    n.close()


def test_flawed_trace_fails_on_its_wrong_step_with_a_typed_verdict(
    net: MemoryNet, samples: dict[str, Sample]
) -> None:
    tid = net.submit(samples["tunnel-flawed"].trace)
    job = net.run([tid])[tid]
    assert job.status == JobStatus.DONE and job.outcome is not None
    out = job.outcome
    assert out.verdict == TraceVerdict.FAIL and out.state == SessionState.FINALIZED
    assert out.beta_bps == 9000 and "a PASS needs 90%" in out.summary
    assert len(out.failing_segments) == 1
    failing = out.failing_segments[0]
    assert job.hdag is not None and "1.2 × 0.8 = 1.06" in job.hdag.node(failing.node_id or "").content
    assert failing.tier.value == "computer" and failing.cid == job.segments[failing.index].cid
    assert set(job.tx_hashes) >= {"open", "draw", "publish_keys", "finalize"}
    assert job.chain is not None and job.chain.chain_id == net.chain.chain_id
    assert job.chain.merkle_root == job.merkle_root and job.chain.contract == net.chain.contract


def test_no_session_is_opened_when_a_tier_lacks_auditors(tmp_path: Path, samples: dict[str, Sample]) -> None:
    net = MemoryNet(tmp_path, PARAMS)
    net.add_auditor("computer-1", Tier.COMPUTER, ComputerAuditor(), 2)
    net.add_auditor("computer-2", Tier.COMPUTER, ComputerAuditor(), 3)
    balance = net.chain.balances[PROVIDER]
    tid = net.submit(samples["tunnel-flawed"].trace)
    job = net.run([tid])[tid]
    net.close()
    assert job.status == JobStatus.FAILED
    assert job.error == "no session opened (nothing paid): " + _llm_shortfall(samples["tunnel-flawed"].trace)
    assert net.chain.sessions == [] and net.chain.balances[PROVIDER] == balance


def test_a_provider_that_is_also_an_auditor_is_warned_about_and_not_counted(
    tmp_path: Path, samples: dict[str, Sample], caplog: pytest.LogCaptureFixture
) -> None:
    net = MemoryNet(tmp_path, PARAMS)
    net.add_auditor("computer-1", Tier.COMPUTER, ComputerAuditor(), 2)
    net.add_auditor("computer-2", Tier.COMPUTER, ComputerAuditor(), 3)
    port = net.chain.port(PROVIDER)
    port.register(Tier.LLM, 1, b"\x01" * 32)
    port.stake(1_000 * 10**18)
    with caplog.at_level(logging.WARNING, logger="trustnode.node.seating"):
        tid = net.submit(samples["tunnel-flawed"].trace)
        job = net.run([tid])[tid]
    net.close()
    assert (
        job.status == JobStatus.FAILED and "tier llm" in (job.error or "") and "have 0" in (job.error or "")
    )
    warned = [r.getMessage() for r in caplog.records if "also a registered llm auditor" in r.getMessage()]
    assert warned and PROVIDER in warned[0]


def test_a_cancelled_draw_ends_the_job_with_its_reason(
    net: MemoryNet, samples: dict[str, Sample], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="trustnode.node.provider")
    tid = net.submit(samples["tunnel-flawed"].trace)
    net.pipeline.step()  # as far as it goes: the opened session waits for its draw's randomness
    assert net.job(tid).stage == TraceStage.OPENED
    # The only LLM auditor stands in the session's snapshot, but seats of other sessions drawn first
    # now lock its whole stake: it cannot take a seat, and its refusal forfeits the fee. (A withdrawal
    # would not do it: stake in a snapshot is held until the draw, see the test below.)
    pool = net.chain.auditors[address(4)]
    pool.locked = pool.assets
    job = net.run([tid])[tid]
    reason = DrawFailure(
        tier=TierName.LLM, seats_needed=_llm_seats(samples["tunnel-flawed"].trace), eligible=1,
        per_segment=1, refused=1,
    ).reason  # fmt: skip
    assert "1 more refused their stake lock" in reason
    assert job.status == JobStatus.FAILED and reason in (job.error or "")
    assert job.outcome is not None and job.outcome.state == SessionState.CANCELLED
    assert job.outcome.reason == reason and job.outcome.verdict is None
    assert all(s.outcome == SegmentVerdict.PENDING for s in job.outcome.segments)
    public = SessionQueries(net.provider_ctx).outcome(job.session_id or 0)
    assert public.reason == reason and public.summary == f"cancelled, no verdict: {reason}"
    logged = [r.getMessage() for r in caplog.records if r.name == "trustnode.node.provider"]
    assert any(f"session {job.session_id} cancelled: {reason}" in m for m in logged), logged
    server, thread, url = start_server(create_app(net.provider_ctx))
    try:
        rest = httpx.get(f"{url}/v1/sessions/{job.session_id}").json()
    finally:
        stop_server(server, thread)
    assert rest["outcome"]["state"] == "cancelled" and rest["outcome"]["reason"] == reason, rest


def test_a_withdrawal_after_the_opening_cannot_refuse_the_draw(
    net: MemoryNet, samples: dict[str, Sample], caplog: pytest.LogCaptureFixture
) -> None:
    """protocol-v2 5.1 in the in-memory chain: the only LLM auditor asks (through its daemon's own
    reward-withdrawal path) to take out nearly all its stake after the session opened. The session
    still draws it and is audited; the request is held until no undrawn session counts the stake,
    then leaves at the price of then and is claimed after the cooldown."""
    caplog.set_level(logging.INFO, logger="trustnode.node.auditor")
    tid = net.submit(samples["tunnel-flawed"].trace)
    net.pipeline.step()
    assert net.job(tid).stage == TraceStage.OPENED
    daemon = net.daemons["llm-1"]
    port, who = daemon.port, address(4)
    withdraw_rewards(port, daemon.votes, who, target_stake=10**18)  # keep 1 TRUST: below min stake
    [(wid, _, claimed)] = daemon.votes.withdrawals()
    assert not claimed and port.withdrawal(wid).ready_at == PENDING_READY_AT
    assert net.chain.weight(net.chain.auditors[who]) == 0, "the weight drops at once"
    with pytest.raises(ContractRevertError) as held:
        port.claim_withdrawal(wid)
    assert held.value.name == "WithdrawalPending"
    assert port.release_withdrawal(wid) is None, "held while the session can still draw"
    job = net.run([tid])[tid]
    assert job.status == JobStatus.DONE and job.outcome is not None
    assert job.outcome.state == SessionState.FINALIZED
    assert who in net.chain.session(job.session_id or 0).seats, "the held stake was drawn"
    assert net.chain.auditors[who].parked == 0, "released once the session was drawn and settled"
    w = port.withdrawal(wid)
    assert w.ready_at != PENDING_READY_AT and w.amount > 0
    net.chain.mine(net.chain.cooldown_s + 1)
    before = net.chain.balances[who]
    withdraw_rewards(port, daemon.votes, who, target_stake=10**30)
    assert net.chain.balances[who] - before == w.amount
    assert any(f"claimed withdrawal {wid}" in r.getMessage() for r in caplog.records)


def test_an_idle_pools_held_withdrawal_is_released_by_its_daemon(
    net: MemoryNet, samples: dict[str, Sample], caplog: pytest.LogCaptureFixture
) -> None:
    """A held request whose session ended without touching the pool (the draw cancelled before
    reaching it) leaves only at a touch: the daemon's withdrawal pass makes that touch itself."""
    caplog.set_level(logging.INFO, logger="trustnode.node.auditor")
    tid = net.submit(samples["tunnel-flawed"].trace)
    net.pipeline.step()
    daemon = net.daemons["llm-1"]
    port, who = daemon.port, address(4)
    withdraw_rewards(port, daemon.votes, who, target_stake=10**18)
    [(wid, _, _)] = daemon.votes.withdrawals()
    session = net.chain.session(net.job(tid).session_id or 0)
    session.state = SessionState.CANCELLED  # it ended before any draw (no seat, no result)
    assert port.withdrawal(wid).ready_at == PENDING_READY_AT, "nothing touched the pool yet"
    withdraw_rewards(port, daemon.votes, who, target_stake=10**30)
    assert port.withdrawal(wid).ready_at != PENDING_READY_AT
    assert any(f"withdrawal {wid} left its hold" in r.getMessage() for r in caplog.records)


def test_a_trace_waits_while_earlier_sessions_still_need_its_tier(
    net: MemoryNet, samples: dict[str, Sample]
) -> None:
    """Outside review 7 (node side): the pre-open check subtracts the seats that sessions opened
    earlier (by anyone) still have to draw. A rival's undrawn session needs every free LLM seat, so
    opening now could only end in refused locks and a forfeited fee: the trace waits (nothing paid),
    and opens once the rival's draw has taken its seats and the tier has room again."""
    rival = net.chain.port(address(9))
    llm_seats = net.chain.port(PROVIDER).eligible_auditors(Tier.LLM)[0].free_seats
    tiers = [int(Tier.LLM)] * llm_seats
    net.chain.fund(rival.address, 10 * fee_for(PARAMS, tiers))
    opened = rival.open_session(b"\x77" * 32, tiers, [1] * llm_seats, fee_for(PARAMS, tiers))
    trace = samples["tunnel-flawed"].trace
    assert shortfall(rival, [int(Tier.LLM)]) is None, "alone, the tier could take the trace's seat"
    assert undrawn_demand(rival, PARAMS)[int(Tier.LLM)] == llm_seats
    tid = net.submit(trace)
    for _ in range(5):
        net.round()
    assert net.job(tid).stage != TraceStage.OPENED and len(net.chain.sessions) == 1, "it waited"
    assert net.job(tid).status != JobStatus.FAILED
    balance = net.chain.balances[PROVIDER]
    for _ in range(50):  # the rival draws its session once its randomness is there
        if rival.session(opened.session_id).draw_complete:
            break
        try:
            rival.draw(opened.session_id, 64)
        except NotReady:
            net.round()
    assert rival.session(opened.session_id).draw_complete
    job = net.run([tid])[tid]
    assert job.status == JobStatus.DONE and job.session_id == 2
    assert net.chain.balances[PROVIDER] < balance, "it paid once it opened"


def test_a_permanent_revert_fails_the_job_at_once(net: MemoryNet, samples: dict[str, Sample]) -> None:
    # The contract allows 3 segments, the node believes 1024 (a stale view): openSession reverts.
    net.chain.max_segments = 3
    net.pipeline.port.max_segments = lambda: 1024  # type: ignore[method-assign]
    tid = net.submit(samples["tunnel-flawed"].trace)
    job = net.run([tid])[tid]
    assert job.status == JobStatus.FAILED and job.attempts == 0
    assert job.error is not None and "InvalidSegments" in job.error and "for good" in job.error
    assert net.chain.sessions == []


def test_an_outage_is_retried_until_the_chain_is_back(net: MemoryNet, samples: dict[str, Sample]) -> None:
    tid = net.submit(samples["tunnel-flawed"].trace)
    net.chain.down = True
    for _ in range(5):
        with net.provider_ctx.jobs.db.tx() as conn:
            conn.execute("UPDATE jobs SET not_before = 0")
        net.pipeline.step()
    down = net.job(tid)
    assert down.status == JobStatus.QUEUED and down.attempts >= 3 and "not reachable" in (down.error or "")
    net.chain.down = False
    assert net.run([tid])[tid].status == JobStatus.DONE


def test_a_trace_too_large_for_a_session_fails_before_anything_is_paid(
    tmp_path: Path, samples: dict[str, Sample]
) -> None:
    net = MemoryNet(tmp_path, PARAMS, max_segments=3)
    tid = net.submit(samples["tunnel-flawed"].trace)
    job = net.run([tid])[tid]
    assert job.status == JobStatus.FAILED and job.attempts == 0
    segments = len(decompose_offline(samples["tunnel-flawed"].trace).nodes)
    assert job.error == f"the trace decomposes into {segments} segments; a session holds at most 3"
    assert job.stage == TraceStage.DECOMPOSED and net.chain.sessions == []


def test_after_a_chain_reset_a_trace_link_says_so(
    net: MemoryNet, samples: dict[str, Sample], tmp_path: Path
) -> None:
    tid = net.submit(samples["tunnel-flawed"].trace)
    job = net.run([tid])[tid]
    assert SessionQueries(net.provider_ctx).session_of_trace(job) == job.session_id
    # A new chain with the same id and contract address: session 1 exists, with another root.
    reset = MemoryChain(PARAMS)
    reset.fund(PROVIDER, 10**24)
    reset.port(PROVIDER).open_session(b"\x07" * 32, [0], [1], 10**20)
    queries = SessionQueries(net.context(tmp_path / "after-reset", PROVIDER, reset))
    with pytest.raises(StaleTraceLinkError, match="the chain was reset"):
        queries.session_of_trace(job)
    # Another deployment (contract address) altogether.
    other = MemoryChain(PARAMS, contract="0x" + "77" * 20)
    queries = SessionQueries(net.context(tmp_path / "other", PROVIDER, other))
    with pytest.raises(StaleTraceLinkError, match="now follows chain 31337 at 0x7777"):
        queries.session_of_trace(job)
