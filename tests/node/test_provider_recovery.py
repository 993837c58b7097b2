"""A provider worker that crashed after its openSession transaction was mined, but before it
recorded the session, must adopt that session on restart instead of opening a second one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import DOUBLE_THINKING, TIMES_THINKING, client_for
from trustnode.chain.deployment import Deployment
from trustnode.chain.protocol import DEVNET_SESSION_PARAMS, Protocol
from trustnode.config import Settings
from trustnode.models.jobs import TraceStage
from trustnode.models.trace import TraceInput
from trustnode.node.context import NodeContext
from trustnode.node.provider import ProviderPipeline, fee_for

pytestmark = pytest.mark.chain


def test_open_adopts_a_session_opened_before_the_crash(fresh_devnet: Deployment, tmp_path: Path) -> None:
    dep_file = tmp_path / "deployment.json"
    fresh_devnet.save(dep_file)
    owner = Protocol(client_for(fresh_devnet, 0), fresh_devnet.contracts)
    provider_account = 1
    owner.transfer(client_for(fresh_devnet, provider_account).address, 10_000 * 10**18)
    # One auditor per tier, one seat per segment, no seat cap to speak of: the provider only opens
    # sessions a draw can fill, and this one auditor must be able to take every seat of its tier.
    owner.client.transact(
        owner.sessions.functions.setParams(
            DEVNET_SESSION_PARAMS.model_copy(update={"seats_per_tier": (1, 1, 1), "seat_cap": 64}).as_abi()
        )
    )
    # 200 TRUST backs 25 seats: both sessions below, the second counted behind the first's undrawn
    # seats (node.seating.undrawn_demand), fit.
    for tier, account in ((0, 2), (1, 3), (2, 4)):
        auditor = Protocol(client_for(fresh_devnet, account), fresh_devnet.contracts)
        owner.transfer(auditor.address, 200 * 10**18)
        auditor.register(tier, 1, bytes([account]) * 32)
        auditor.stake(auditor.address, 200 * 10**18)
    owner.mine_to_next_epoch()  # protocol v2: sessions draw from the snapshot of their opening epoch
    settings = Settings(
        data_dir=tmp_path / "provider",
        chain={"deployment_file": dep_file, "account_index": provider_account},  # type: ignore[arg-type]
        batch={"size": 1, "max_wait_s": 0},  # type: ignore[arg-type]
    )
    ctx = NodeContext(settings)
    pipeline = ProviderPipeline(ctx)
    job, _ = ctx.jobs.submit(
        TraceInput(problem="What is 6 times 7?", thinking=TIMES_THINKING, output="42"),
        "key:test",
    )
    for stage in (pipeline._decompose, pipeline._pin, pipeline._batch):
        stage(job)
    ctx.jobs.save(job)
    assert job.stage == TraceStage.BATCHED and job.session_id is None

    # The crashed worker's transaction: mined, never recorded in the job.
    # It had marked the job before sending (node.opening), as every open does.
    ctx.jobs.set_open_sent([job.id], True)
    proto = ctx.protocol()
    params = proto.params()
    tiers = [s.tier for s in job.segments]
    root = bytes.fromhex(job.merkle_root[2:]) if job.merkle_root else b""
    crashed_sid = proto.open_session(root, tiers, [s.weight for s in job.segments], fee_for(params, tiers))
    count = proto.session_count()

    restarted = ProviderPipeline(NodeContext(settings))
    again = restarted.ctx.jobs.get(job.id)
    restarted._open(again)
    assert again.session_id == crashed_sid
    assert again.stage == TraceStage.OPENED
    assert proto.session_count() == count, "no second session was opened"

    # A job whose root was never opened does open a new session.
    other, _ = ctx.jobs.submit(
        TraceInput(problem="What is 2 + 2?", thinking=DOUBLE_THINKING, output="4"), "key:test"
    )
    for stage in (restarted._decompose, restarted._pin, restarted._batch, restarted._open):
        stage(other)
    assert other.session_id == count + 1
