"""The provider without its own canaries (issue 15, CANARY-OPERATOR): it refuses to start when the
chain wants canaries and no operator is named, and an operator that is down or refuses makes the
job wait with the reason, losing nothing and never opening a session with provider-written
canaries. Real pipeline, daemons and store on the in-memory chain; the operator is the real
operator node app over HTTP on 127.0.0.1, taken down and brought back on the same port."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.node.memnet import PROVIDER, MemoryNet
from tests.node.operator_net import KEY, OperatorNode
from trustnode.api.views import trace_view
from trustnode.audit.computer import ComputerAuditor
from trustnode.chain.port.memory_state import MEMORY_SESSION_PARAMS
from trustnode.config import Settings
from trustnode.consensus.rules import WAD
from trustnode.models.canary_operator import CanaryBatch, CanaryRequest
from trustnode.models.enums import Tier
from trustnode.models.jobs import CanaryRecord, JobStatus, TraceJob, TraceStage
from trustnode.node.canary_client import CanaryClient, NoOperator, missing_operator
from trustnode.node.provider import ProviderPipeline
from trustnode.node.samples import load_samples

RATE = 3000
PARAMS = MEMORY_SESSION_PARAMS.model_copy(
    update={
        "seat_cap": 32, "seats_per_tier": (1, 1, 1), "beta_bps": 9000,
        "canary_rate_bps": RATE, "canary_reveal_blocks": 10, "canary_gamma": WAD // 5,
    }
)  # fmt: skip
#: A computer-only trace, so computer auditors fill every seat (canaries copy its tiers).
TRACE = next(s for s in load_samples() if s.name == "tunnel-sound").trace


@pytest.fixture
def net(tmp_path: Path) -> Iterator[MemoryNet]:
    n = MemoryNet(tmp_path, PARAMS, randomness_delay=8)
    yield n
    n.close()


@pytest.fixture
def op(net: MemoryNet, tmp_path: Path) -> OperatorNode:
    o = OperatorNode(net, tmp_path / "operator")
    return o


def _auditors(net: MemoryNet) -> None:
    for i, account in enumerate((2, 3, 4, 5)):
        net.add_auditor(f"computer-{i}", Tier.COMPUTER, ComputerAuditor(), account)
    net.add_auditor("llm", Tier.LLM, ComputerAuditor(), 6)
    net.add_auditor("human", Tier.HUMAN, ComputerAuditor(), 7)


def test_a_provider_refuses_to_start_without_an_operator_when_the_chain_wants_canaries(
    net: MemoryNet, tmp_path: Path
) -> None:
    with pytest.raises(NoOperator, match=r"canaryRateBps is 3000.*canaries\.operator_url"):
        ProviderPipeline(net.provider_ctx)
    assert missing_operator(net.provider_ctx.settings, RATE) is not None
    named = Settings(data_dir=tmp_path, canaries={"operator_url": "http://127.0.0.1:9"})  # type: ignore[arg-type]
    assert missing_operator(named, RATE) is None
    # A chain without canaries needs no operator.
    plain = MemoryNet(tmp_path / "plain")
    assert plain.pipeline.canary_client is None
    assert missing_operator(plain.provider_ctx.settings, 0) is None
    plain.close()


def _rounds(net: MemoryNet, n: int) -> None:
    for _ in range(n):
        net.round()


def test_an_operator_that_is_down_holds_the_job_before_anything_is_paid_then_it_completes(
    net: MemoryNet, op: OperatorNode
) -> None:
    _auditors(net)
    op.stop()
    net.start_provider(op.client())
    tid = net.submit(TRACE)
    _rounds(net, 3)
    job = net.job(tid)
    assert job.status == JobStatus.QUEUED and job.stage == TraceStage.DECOMPOSED, (job.stage, job.error)
    assert "canary operator" in (job.error or "") and op.url in (job.error or ""), job.error
    assert job.segments == [] and job.session_id is None, "nothing pinned, nothing paid"
    assert trace_view(job, include_hdag=False).error == job.error, "the reason is on the trace's REST view"
    op.start()
    job = net.run([tid])[tid]
    assert job.status == JobStatus.DONE and job.error is None, job.error
    assert job.canary_receipt is not None and job.canary_receipt.state == "committed"
    assert len(job.canaries) == 3 and all(c.committed and c.revealed and c.verdict for c in job.canaries)


def test_a_refusing_operator_holds_the_job_with_its_reason(net: MemoryNet, op: OperatorNode) -> None:
    net.start_provider(CanaryClient(op.url, "not-the-key"))
    tid = net.submit(TRACE)
    _rounds(net, 2)
    job = net.job(tid)
    assert job.status == JobStatus.QUEUED and job.stage == TraceStage.DECOMPOSED
    assert "canary operator refused (401)" in (job.error or ""), job.error
    assert job.session_id is None


class DownAfterTexts(CanaryClient):
    """The real client; the operator goes down right after it issued the texts (before the open)."""

    def __init__(self, op: OperatorNode) -> None:
        super().__init__(op.url, KEY)
        self.op = op

    def request(self, req: CanaryRequest) -> CanaryBatch:
        batch = super().request(req)
        self.op.stop()
        return batch


def test_an_operator_down_at_placement_is_waited_for_inside_the_commit_window(
    net: MemoryNet, op: OperatorNode
) -> None:
    _auditors(net)
    net.start_provider(DownAfterTexts(op))
    tid = net.submit(TRACE)
    net.until(lambda: net.job(tid).session_id is not None, what="the open")
    _rounds(net, 2)
    job = net.job(tid)
    assert job.stage == TraceStage.OPENED and "waiting for the canary operator" in (job.error or ""), (
        job.error
    )
    assert not net.chain.port(PROVIDER).canaries(job.session_id or 0).committed
    # the provider sees why on its own trace view (REST), not only in the log
    assert trace_view(job, include_hdag=True).canary_note == job.canary_note
    assert trace_view(job, include_hdag=False).canary_note is None
    op.start()
    job = net.run([tid])[tid]
    assert job.status == JobStatus.DONE and job.canary_note is None, job.canary_note
    assert job.canary_receipt is not None and job.canary_receipt.state == "committed"
    assert all(c.revealed and c.verdict for c in job.canaries)


def test_an_operator_down_for_the_whole_commit_window_leaves_the_canaries_uncommitted(
    net: MemoryNet, op: OperatorNode
) -> None:
    _auditors(net)
    net.start_provider(DownAfterTexts(op))
    tid = net.submit(TRACE)
    job = net.run([tid])[tid]
    assert job.status == JobStatus.DONE, job.error
    assert job.canary_note and "commit window closed" in job.canary_note, job.canary_note
    assert not any(c.committed for c in job.canaries)
    assert not net.chain.port(PROVIDER).canaries(job.session_id or 0).committed


def test_jobs_stored_before_operators_still_load() -> None:
    old = {
        "index": 4, "verdict": "FAIL", "salt": "0x" + "ab" * 32, "mutation": "operator", "imitates": 2,
        "text": "Let A = 3 * 4 = 13.", "level": "STEP", "kind": "calculation", "auditor": "T_Auto",
        "committed": True, "revealed": False,
    }  # fmt: skip
    rec = CanaryRecord.model_validate(old)
    assert rec.verdict is not None and rec.salt and rec.slot is None
    assert TraceJob.model_fields["canary_receipt"].default is None
