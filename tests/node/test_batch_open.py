"""Batched opens (issue 12, end-to-end throughput): the worker whose turn it is sends the opens of
its whole batch back to back in rank order, waits for all the receipts, and reads each session id
from its own receipt. A revert in the middle fails only its own job (which stays retryable), and a
worker killed between send and receipt adopts its sessions on restart instead of opening twice.

Run on the in-memory chain and on anvil with the real contracts.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import client_for
from tests.node.memnet import PROVIDER, MemoryNet
from trustnode.audit.computer import ComputerAuditor
from trustnode.chain.deployment import Deployment
from trustnode.chain.errors import ChainError
from trustnode.chain.port import ChainPort
from trustnode.chain.port.memory_state import MEMORY_SESSION_PARAMS
from trustnode.chain.protocol import DEVNET_SESSION_PARAMS, Protocol
from trustnode.config import Settings
from trustnode.models.enums import Tier
from trustnode.models.jobs import JobStatus, TraceJob, TraceStage
from trustnode.models.trace import TraceInput
from trustnode.node.context import NodeContext
from trustnode.node.pinning import fee_for
from trustnode.node.provider import ProviderPipeline

TOKEN = 10**18
BATCH = 4


def trace(i: int, repeat: int = 1) -> TraceInput:
    """A checkable word problem; `repeat` more rounds of checks make more segments (a larger fee)."""
    a, b, c = 3 + i, 5 + 2 * i, 2 + i % 7
    steps = [
        f"The shop sold {a} pens on Monday and {b} pens on Tuesday, so {a} + {b} = {a + b} pens in all.",
        f"Each pen costs {c} dollars, so the revenue is pens times price: {a + b} × {c} = {(a + b) * c} dollars.",
    ]
    for k in range(repeat):
        steps += [
            f"Check {k + 1}, Monday alone: {a} pens at {c} dollars each make {a} × {c} = {a * c} dollars.",
            f"Check {k + 1}, Tuesday alone: {b} pens at {c} dollars each make {b} × {c} = {b * c} dollars.",
            f"Check {k + 1}, both days: {a * c} + {b * c} = {(a + b) * c} dollars, the same as before.",
        ]
    return TraceInput.model_validate(
        {
            "problem": f"Order {i}: {a} pens on Monday and {b} on Tuesday at {c} dollars each. Revenue?",
            "steps": steps,
            "output": f"{(a + b) * c} dollars",
        }
    )


def batched(pipeline: ProviderPipeline, traces: list[TraceInput]) -> list[TraceJob]:
    """Jobs taken through decompose and pin, then put into one batch; returned in rank order."""
    jobs = []
    for t in traces:
        job, _ = pipeline.ctx.jobs.submit(t, "key:test")
        pipeline._decompose(job)
        pipeline._pin(job)
        pipeline.ctx.jobs.save(job)
        jobs.append(job)
    pipeline._batch(jobs[0])
    pipeline.ctx.jobs.save(jobs[0])
    ranks = {
        r["job_id"]: r["rank"]
        for r in pipeline.ctx.jobs.db.conn().execute("SELECT job_id, rank FROM batches")
    }
    assert sorted(ranks) == sorted(j.id for j in jobs), "one batch holds every job"
    return [pipeline.ctx.jobs.get(j) for j in sorted(ranks, key=ranks.__getitem__)]


def put_at_rank(pipeline: ProviderPipeline, jobs: list[TraceJob], job_id: str, rank: int) -> list[TraceJob]:
    """Swap ranks so that `job_id` opens at `rank` (the test chooses where the failure falls)."""
    order = [j for j in jobs if j.id != job_id]
    order.insert(rank, next(j for j in jobs if j.id == job_id))
    with pipeline.ctx.jobs.db.tx() as conn:
        for r, j in enumerate(order):
            conn.execute("UPDATE batches SET rank = ? WHERE job_id = ?", (r, j.id))
    return order


class Spy:
    """Records what the real port is asked to do (every call goes through to it)."""

    def __init__(self, port: ChainPort) -> None:
        self.port = port
        self.sends: list[list[bytes]] = []
        self.scans = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.port, name)

    def send_opens(self, requests: Any) -> Any:
        self.sends.append([r.merkle_root for r in requests])
        return self.port.send_opens(requests)

    def find_opened(self, root: bytes) -> Any:
        self.scans += 1
        return self.port.find_opened(root)


def lease(pipeline: ProviderPipeline, job_id: str) -> TraceJob:
    """Lease one job as `JobQueue.claim` does (claim takes the oldest; the test names the job)."""
    with pipeline.ctx.jobs.db.tx() as conn:
        conn.execute(
            "UPDATE jobs SET status = 'running', lease_owner = 'test', lease_until = ? WHERE id = ?",
            (time.time() + 60, job_id),
        )
    return pipeline.ctx.jobs.get(job_id)


def open_turn(pipeline: ProviderPipeline, first: TraceJob) -> TraceJob:
    """What a worker does with the job whose turn it is: claim it and run `_open` on it."""
    job = lease(pipeline, first.id)
    pipeline._open(job)
    pipeline.ctx.jobs.save(job)
    return job


def assert_opened_in_rank_order(port: ChainPort, jobs: list[TraceJob], ctx: NodeContext) -> None:
    sids = []
    for j in jobs:
        saved = ctx.jobs.get(j.id)
        assert saved.stage == TraceStage.OPENED and saved.session_id is not None, (saved.stage, saved.error)
        assert port.session(saved.session_id).merkle_root.lower() == (saved.merkle_root or "").lower()
        assert saved.tx_hashes["open"] and saved.chain is not None
        sids.append(saved.session_id)
    assert sids == sorted(sids) and len(set(sids)) == len(sids), f"opened in rank order: {sids}"


def fee(port: ChainPort, job: TraceJob) -> int:
    return fee_for(port.params(), [s.tier for s in job.segments])


# -- in-memory chain ---------------------------------------------------------------------------


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[tuple[MemoryNet, ProviderPipeline, Spy]]:
    net = MemoryNet(
        tmp_path, MEMORY_SESSION_PARAMS.model_copy(update={"seat_cap": 64, "seats_per_tier": (1, 1, 1)})
    )
    for i, tier in enumerate((Tier.COMPUTER, Tier.LLM, Tier.HUMAN)):
        net.add_auditor(f"a{i}", tier, ComputerAuditor(), 2 + i)
    spy = Spy(net.chain.port(PROVIDER))
    settings = Settings(data_dir=tmp_path / "batched", batch={"size": BATCH, "max_wait_s": 0})  # type: ignore[arg-type]
    pipeline = ProviderPipeline(NodeContext(settings, port=spy, store=net.store))  # type: ignore[arg-type]
    yield net, pipeline, spy
    net.close()


def test_memory_batch_opens_in_one_send_with_each_receipts_session(
    mem: tuple[MemoryNet, ProviderPipeline, Spy],
) -> None:
    net, pipeline, spy = mem
    jobs = batched(pipeline, [trace(i) for i in range(BATCH)])
    claimed = pipeline.ctx.jobs.claim(60.0)
    assert claimed is not None and claimed.id == jobs[0].id, "only the job whose turn it is is claimed"
    assert pipeline.ctx.jobs.claim(60.0) is None, "the others wait for it to take them along"
    pipeline.ctx.jobs.release(claimed)
    open_turn(pipeline, jobs[0])
    assert spy.sends == [[bytes.fromhex((j.merkle_root or "")[2:]) for j in jobs]], "one send, in rank order"
    assert spy.scans == 0, "a job never sent scans no logs"
    assert_opened_in_rank_order(spy, jobs, pipeline.ctx)
    followers = [pipeline.ctx.jobs.get(j.id) for j in jobs[1:]]
    assert all(f.status == JobStatus.QUEUED and "opened" in f.stage_times for f in followers)


def test_memory_revert_in_the_middle_leaves_that_job_retryable(
    mem: tuple[MemoryNet, ProviderPipeline, Spy],
) -> None:
    net, pipeline, spy = mem
    jobs = batched(pipeline, [trace(0), trace(1, repeat=4), trace(2), trace(3)])
    big = max(jobs, key=lambda j: len(j.segments))
    jobs = put_at_rank(pipeline, jobs, big.id, 1)
    small = [fee(spy, j) for j in jobs if j.id != big.id]
    assert fee(spy, big) > small[1] + small[2], "the middle open must cost more than the last two together"
    net.chain.balances[PROVIDER] = sum(small)  # enough for every open but the middle one
    open_turn(pipeline, jobs[0])

    assert_opened_in_rank_order(spy, [j for j in jobs if j.id != big.id], pipeline.ctx)
    failed = pipeline.ctx.jobs.get(big.id)
    assert failed.status == JobStatus.QUEUED and failed.stage == TraceStage.BATCHED
    assert failed.session_id is None and "ERC20InsufficientBalance" in (failed.error or "")
    assert pipeline.ctx.jobs.open_sent(big.id) is False, "refused before sending: nothing to look for"

    net.chain.fund(PROVIDER, fee(spy, big))  # the provider tops up; the retry opens it
    with pipeline.ctx.jobs.db.tx() as conn:
        conn.execute("UPDATE jobs SET not_before = 0")
    retried = lease(pipeline, big.id)
    pipeline._open(retried)
    pipeline.ctx.jobs.save(retried)
    assert retried.stage == TraceStage.OPENED
    assert spy.session(retried.session_id or 0).merkle_root == retried.merkle_root


# -- anvil -------------------------------------------------------------------------------------


@pytest.fixture
def chain_pipeline(fresh_devnet: Deployment, tmp_path: Path) -> tuple[Protocol, Settings]:
    """A fresh anvil with one staked auditor per tier (in the draw's snapshot) and the provider's
    settings; the provider (account 1) holds no tokens yet."""
    dep_file = tmp_path / "deployment.json"
    fresh_devnet.save(dep_file)
    owner = Protocol(client_for(fresh_devnet, 0), fresh_devnet.contracts)
    owner.client.transact(
        owner.sessions.functions.setParams(
            DEVNET_SESSION_PARAMS.model_copy(update={"seats_per_tier": (1, 1, 1), "seat_cap": 64}).as_abi()
        )
    )
    for tier, account in ((0, 2), (1, 3), (2, 4)):
        auditor = Protocol(client_for(fresh_devnet, account), fresh_devnet.contracts)
        owner.transfer(auditor.address, 1_000 * TOKEN)
        auditor.register(tier, 1, bytes([account]) * 32)
        auditor.stake(auditor.address, 1_000 * TOKEN)
    owner.mine_to_next_epoch()
    settings = Settings(
        data_dir=tmp_path / "provider",
        chain={"deployment_file": dep_file, "account_index": 1},  # type: ignore[arg-type]
        batch={"size": BATCH, "max_wait_s": 0},  # type: ignore[arg-type]
    )
    return owner, settings


def spied(settings: Settings) -> tuple[ProviderPipeline, Spy]:
    ctx = NodeContext(settings)
    spy = Spy(ctx.port())
    ctx._fixed_port = spy  # type: ignore[assignment]  # the real Web3Port, observed
    return ProviderPipeline(ctx), spy


def set_automine(owner: Protocol, on: bool) -> None:
    owner.client.w3.provider.make_request("evm_setAutomine", [on])  # type: ignore[arg-type]


@pytest.mark.chain
def test_anvil_batch_opens_without_waiting_and_a_mined_revert_fails_only_its_job(
    chain_pipeline: tuple[Protocol, Settings],
) -> None:
    owner, settings = chain_pipeline
    pipeline, spy = spied(settings)
    owner.transfer(spy.address, 1_000 * TOKEN)
    jobs = batched(pipeline, [trace(0), trace(1, repeat=4), trace(2), trace(3)])
    big = max(jobs, key=lambda j: len(j.segments))
    jobs = put_at_rank(pipeline, jobs, big.id, 1)
    small = [fee(spy, j) for j in jobs if j.id != big.id]
    assert fee(spy, big) > small[1] + small[2]
    spy.protocol.ensure_allowance(spy.contract, 2**255)
    spy.protocol.approve(owner.address, 2**255)  # another party may pull the provider's tokens
    drain = spy.token_balance(spy.address) - sum(small)  # after it, every open but the middle one fits
    start_count = spy.session_count()
    w3 = spy.protocol.client.w3
    real_send = spy.send_opens

    def send_then_drain(requests: Any) -> Any:
        """All four are estimated and sent with funds for all four; before they are mined, the
        other party (a higher tip: first in the block) pulls tokens, so the middle open reverts."""
        sent = real_send(requests)
        fn = owner.token.functions.transferFrom(spy.address, owner.address, drain)
        tx = fn.build_transaction(
            {
                "from": owner.address,
                "nonce": w3.eth.get_transaction_count(owner.address, "pending"),
                "gas": 200_000,
                "maxPriorityFeePerGas": 100 * 10**9,
                "maxFeePerGas": 1_000 * 10**9,
                "chainId": owner.client.chain_id,
            }
        )
        w3.eth.send_raw_transaction(owner.client.account.sign_transaction(tx).raw_transaction)
        owner.client.mine(1)
        return sent

    spy.send_opens = send_then_drain  # type: ignore[method-assign]
    nonce = w3.eth.get_transaction_count(spy.address)
    rpc = owner.client.w3.provider
    rpc.make_request("evm_setIntervalMining", [0])  # type: ignore[arg-type]
    set_automine(owner, False)
    try:
        open_turn(pipeline, jobs[0])
    finally:
        set_automine(owner, True)
        rpc.make_request("evm_setIntervalMining", [1])  # type: ignore[arg-type]
    assert spy.token_balance(owner.address) > 0
    assert w3.eth.get_transaction_count(spy.address) - nonce == BATCH, "the middle one was mined, reverted"
    assert len(spy.sends) == 1 and len(spy.sends[0]) == BATCH, "all four sent in one go"
    assert spy.scans == 0
    assert_opened_in_rank_order(spy, [j for j in jobs if j.id != big.id], pipeline.ctx)
    assert spy.session_count() == start_count + 3
    failed = pipeline.ctx.jobs.get(big.id)
    assert failed.status == JobStatus.QUEUED and failed.stage == TraceStage.BATCHED, failed.error
    # (the revert is replayed on the block before, where the funds were still there: it has no name)
    assert "ContractRevertError: reverted" in (failed.error or "") and "open" not in failed.tx_hashes
    assert pipeline.ctx.jobs.open_sent(big.id) is False, "mined and reverted: nothing to look for"

    owner.transfer(spy.address, fee(spy, big))
    with pipeline.ctx.jobs.db.tx() as conn:
        conn.execute("UPDATE jobs SET not_before = 0")
    retried = lease(pipeline, big.id)
    pipeline._open(retried)
    assert retried.stage == TraceStage.OPENED and retried.session_id == start_count + 4
    assert spy.session(retried.session_id).merkle_root.lower() == (retried.merkle_root or "").lower()


class Killed(BaseException):
    """The provider process dies (nothing after this point runs)."""


@pytest.mark.chain
def test_anvil_restart_after_send_adopts_the_sessions_instead_of_opening_twice(
    chain_pipeline: tuple[Protocol, Settings],
) -> None:
    owner, settings = chain_pipeline
    pipeline, spy = spied(settings)
    owner.transfer(spy.address, 1_000 * TOKEN)
    jobs = batched(pipeline, [trace(i) for i in range(BATCH)])

    def die(*args: Any, **kwargs: Any) -> Any:
        raise Killed

    spy.open_receipt = die  # type: ignore[method-assign]  # killed after sending, before any receipt
    with pytest.raises(Killed):
        open_turn(pipeline, jobs[0])
    assert len(spy.sends) == 1 and len(spy.sends[0]) == BATCH
    opened = spy.session_count()
    assert opened == BATCH, "the four opens were sent and mined"
    with pipeline.ctx.jobs.db.tx() as conn:  # the dead worker's leases run out
        conn.execute("UPDATE jobs SET lease_until = 0, status = 'queued', not_before = 0")

    restarted, spy2 = spied(settings)
    first = restarted.ctx.jobs.get(jobs[0].id)
    assert first.stage == TraceStage.BATCHED and first.tx_hashes.get("open"), "the hash was recorded"
    open_turn(restarted, jobs[0])
    assert spy2.sends == [], "nothing sent again"
    assert spy2.scans == 0, "each job found its session from its recorded transaction"
    assert spy2.session_count() == opened
    assert_opened_in_rank_order(spy2, jobs, restarted.ctx)


@pytest.mark.chain
def test_anvil_killed_before_the_hash_was_recorded_finds_the_session_in_the_logs(
    chain_pipeline: tuple[Protocol, Settings],
) -> None:
    owner, settings = chain_pipeline
    pipeline, spy = spied(settings)
    owner.transfer(spy.address, 1_000 * TOKEN)
    jobs = batched(pipeline, [trace(i) for i in range(BATCH)])
    real_send = spy.send_opens

    def send_then_die(requests: Any) -> Any:
        real_send(requests)
        raise Killed  # the hashes never reached the jobs database

    spy.send_opens = send_then_die  # type: ignore[method-assign]
    with pytest.raises(Killed):
        open_turn(pipeline, jobs[0])
    with pipeline.ctx.jobs.db.tx() as conn:
        conn.execute("UPDATE jobs SET lease_until = 0, status = 'queued', not_before = 0")
    assert all(pipeline.ctx.jobs.open_sent(j.id) for j in jobs), "marked before sending"

    restarted, spy2 = spied(settings)
    open_turn(restarted, jobs[0])
    assert spy2.sends == [] and spy2.scans == BATCH
    assert spy2.session_count() == BATCH
    assert_opened_in_rank_order(spy2, jobs, restarted.ctx)


@pytest.mark.chain
def test_anvil_dropped_open_is_sent_again_and_opens_once(chain_pipeline: tuple[Protocol, Settings]) -> None:
    owner, settings = chain_pipeline
    pipeline, spy = spied(settings)
    owner.transfer(spy.address, 1_000 * TOKEN)
    spy.protocol.ensure_allowance(spy.contract, 2**255)
    jobs = batched(pipeline, [trace(i) for i in range(2)])
    spy.protocol.client.tx_timeout_s = 2.0
    rpc = owner.client.w3.provider
    real_send = spy.send_opens

    def send_then_drop_first(requests: Any) -> Any:
        sent = real_send(requests)
        rpc.make_request("anvil_dropTransaction", [sent[0]])  # type: ignore[arg-type]
        owner.client.mine(1)  # the second waits behind the nonce gap
        return sent

    spy.send_opens = send_then_drop_first  # type: ignore[method-assign]
    rpc.make_request("evm_setIntervalMining", [0])  # type: ignore[arg-type]
    set_automine(owner, False)
    try:
        with pytest.raises(ChainError, match="no receipt"):
            open_turn(pipeline, jobs[0])
    finally:
        set_automine(owner, True)
        rpc.make_request("evm_setIntervalMining", [1])  # type: ignore[arg-type]
    assert spy.session_count() == 0
    for j in jobs:  # both kept, marked, their hashes recorded: the retry looks before sending
        saved = pipeline.ctx.jobs.get(j.id)
        assert saved.stage == TraceStage.BATCHED and saved.tx_hashes.get("open")
        assert pipeline.ctx.jobs.open_sent(j.id) is True
    pipeline.ctx.jobs.release(pipeline.ctx.jobs.get(jobs[0].id))

    spy.send_opens = real_send  # type: ignore[method-assign]
    for _ in range(6):  # the workers retry until both are opened
        with pipeline.ctx.jobs.db.tx() as conn:
            conn.execute("UPDATE jobs SET not_before = 0")
        while pipeline.step():
            if all(pipeline.ctx.jobs.get(j.id).session_id is not None for j in jobs):
                break
        if all(pipeline.ctx.jobs.get(j.id).session_id is not None for j in jobs):
            break
        owner.client.mine(1)
    assert spy.session_count() == 2, "each trace opened exactly once"
    saved = [pipeline.ctx.jobs.get(j.id) for j in jobs]
    assert [s.session_id for s in saved] == [1, 2], "still in rank order"
    for s in saved:
        assert spy.session(s.session_id or 0).merkle_root.lower() == (s.merkle_root or "").lower()
