"""Gold canaries in the provider's sessions (issue 15): written and committed by a canary operator,
placed, pinned, keyed and drawn like real segments with a real segment's context shape, and kept
out of the provider's trace report. The provider never holds a truth before the reveal.

Real pipeline, daemons, backends and local blob store on the in-memory chain; the operator is the
real operator node app over HTTP on 127.0.0.1 (`tests.node.operator_net`)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.node.conftest import judge_for
from tests.node.memnet import PROVIDER, MemoryNet, RecordingAuditor
from tests.node.operator_net import OperatorNode
from trustnode.audit.computer import ComputerAuditor
from trustnode.chain.port.memory_state import MEMORY_SESSION_PARAMS
from trustnode.consensus.canaries import canaries_for_real
from trustnode.consensus.rules import WAD
from trustnode.hdag.offline import decompose_offline_report
from trustnode.llm.fake_server import FakeOpenAIServer
from trustnode.models.enums import Level, Tier
from trustnode.models.jobs import JobStatus
from trustnode.node import canaries
from trustnode.node.privacy import plan_release
from trustnode.node.queries import SessionQueries
from trustnode.node.samples import load_samples
from trustnode.node.structure import SessionBundle

RATE = 3000
PARAMS = MEMORY_SESSION_PARAMS.model_copy(
    update={
        "seat_cap": 32, "seats_per_tier": (2, 1, 1), "beta_bps": 9000,
        "canary_rate_bps": RATE, "canary_reveal_blocks": 10, "canary_gamma": WAD // 5,
    }
)  # fmt: skip


@pytest.fixture
def net(tmp_path: Path, fake_llm: FakeOpenAIServer) -> Iterator[MemoryNet]:
    n = MemoryNet(tmp_path, PARAMS)
    op = OperatorNode(n, tmp_path / "operator")
    n.operator = op  # type: ignore[attr-defined]
    n.start_provider(op.client())
    n.add_auditor("computer-1", Tier.COMPUTER, RecordingAuditor(ComputerAuditor()), 2)
    n.add_auditor("computer-2", Tier.COMPUTER, RecordingAuditor(ComputerAuditor()), 3)
    n.add_auditor("llm-1", Tier.LLM, RecordingAuditor(judge_for(fake_llm, tmp_path / "judge")), 4)
    yield n
    n.close()


def operator_of(net: MemoryNet) -> OperatorNode:
    op: OperatorNode = net.operator  # type: ignore[attr-defined]
    return op


def test_layout_places_the_operators_texts_at_random_leaves_with_donor_tiers(net: MemoryNet) -> None:
    sample = next(s for s in load_samples() if s.name == "tunnel-sound")
    hdag, _ = decompose_offline_report(sample.trace, max_share=0.25)
    req = canaries.request_for(hdag, RATE, PROVIDER)
    assert req is not None and req.count == canaries_for_real(len(hdag.nodes), RATE) == 3
    assert [s.tier for s in req.shapes] == [hdag.nodes[i].primary_auditor.tier for i in canaries.donors(hdag)]
    batch = operator_of(net).client().request(req)  # over HTTP: texts only
    canaries.check_batch(batch, req)
    assert "verdict" not in batch.model_dump_json() and "salt" not in batch.model_dump_json()
    positions = set()
    for seed in range(12):
        leaves = canaries.layout(hdag, batch, rng=random.Random(seed))
        made = [(i, leaf.canary) for i, leaf in enumerate(leaves) if leaf.canary is not None]
        assert len(made) == 3
        assert [leaf.hdag_index for leaf in leaves if leaf.canary is None] == list(range(len(hdag.nodes)))
        assert sorted(c.text for _, c in made if c) == sorted(t.text for t in batch.canaries)
        for i, c in made:
            assert c is not None and c.index == i and c.verdict is None and c.salt is None
            donor = leaves[c.imitates]
            assert donor.canary is None and donor.hdag_index is not None
            real = hdag.nodes[donor.hdag_index]
            assert real.abstraction_level is not Level.GOAL, "a canary never imitates the problem statement"
            assert c.auditor.tier is real.primary_auditor.tier and c.level is not Level.GOAL
            positions.add(i)
        by_prefix: dict[str, list[int]] = {}
        for leaf in leaves:
            prefix = leaf.node_id.rstrip("0123456789")
            by_prefix.setdefault(prefix, []).append(int(leaf.node_id[len(prefix) :]))
        assert all(nums == list(range(1, len(nums) + 1)) for nums in by_prefix.values()), by_prefix
    assert len(positions) > 5, "canaries land at many different leaf positions"


def test_a_batch_that_does_not_fit_the_request_is_refused(net: MemoryNet) -> None:
    hdag, _ = decompose_offline_report(next(s for s in load_samples() if s.name == "tunnel-sound").trace)
    req = canaries.request_for(hdag, RATE, PROVIDER)
    assert req is not None
    batch = operator_of(net).client().request(req)
    short = batch.model_copy(update={"canaries": batch.canaries[:-1]})
    with pytest.raises(canaries.BadBatch, match="2 canaries for 3 asked"):
        canaries.check_batch(short, req)
    other = next(t for t in Tier if t is not batch.canaries[0].tier)
    wrong = batch.model_copy(
        update={"canaries": [batch.canaries[0].model_copy(update={"tier": other}), *batch.canaries[1:]]}
    )
    with pytest.raises(canaries.BadBatch, match="not a shape of its tier"):
        canaries.check_batch(wrong, req)


def test_canaries_are_encrypted_keyed_and_shaped_like_real_segments(net: MemoryNet) -> None:
    sample = next(s for s in load_samples() if s.name == "tunnel-flawed")
    tid = net.submit(sample.trace)
    job = net.run([tid])[tid]
    assert job.status == JobStatus.DONE and job.hdag is not None and job.outcome is not None
    n_real = len(job.hdag.nodes)
    assert len(job.canaries) == canaries_for_real(n_real, RATE) == 3
    assert (
        len(job.segments) == n_real + 3 == net.chain.port(net.pipeline.port.address).session(1).segment_count
    )
    assert {s.index for s in job.segments if s.canary} == {c.index for c in job.canaries}
    assert all(c.salt is None and c.mutation is None for c in job.canaries), "no secret on the provider"
    ticket = operator_of(net).operator.store.get(job.canary_ticket or "")
    assert (
        ticket is not None and ticket.placement is not None and ticket.placement.session_id == job.session_id
    )
    assert [c.text for c in job.canaries] == [ticket.canaries[c.slot or 0].text.text for c in job.canaries]

    bundle = SessionBundle.model_validate_json(net.store.cat(job.manifest_cid or ""))
    shape = bundle.shape
    assert len(shape.nodes) == n_real + 3
    for c in job.canaries:
        node, donor = shape.nodes[c.index], shape.nodes[c.imitates]
        assert node.tier == donor.tier and node.weight == donor.weight
        assert node.parents == donor.parents and node.parents, "a parent, like its donor"
        assert node.children == [], "no real segment depends on a canary"
        assert all(c.index in shape.nodes[p].children for p in node.parents), "parents list it as a child"
        assert bundle.manifest.segments[c.index].cid == job.segments[c.index].cid
    # No shape field marks a canary: the parent/child lists are symmetric for every node.
    for node in shape.nodes:
        assert all(node.index in shape.nodes[p].children for p in node.parents)
        assert all(node.index in shape.nodes[ch].parents for ch in node.children)

    # The auditors drawn on canaries decrypted them and got the problem and a parent as context.
    truth = {c.index: c for c in job.canaries}
    seen = [t for d in net.daemons.values() for t in d._backend.tasks if t.segment_index in truth]  # type: ignore[union-attr]
    assert {t.segment_index for t in seen} == set(truth), "every canary was drawn and audited"
    for task in seen:
        c = truth[task.segment_index]
        assert task.content == c.text and task.context.problem
        assert len(task.context.parents) == len(shape.nodes[c.index].parents)
    # The key-release rule gives a canary seat the context budget of its donor's seat.
    spans = canaries.session_spans(job)
    for c in job.canaries:
        plans = plan_release(shape, spans, {"a": [c.index], "b": [c.imitates]})
        assert plans["a"].seats_share == plans["b"].seats_share

    # The provider learned each truth from the operator's reveal on chain, and it is the operator's.
    assert [c.verdict for c in job.canaries] == [ticket.canaries[c.slot or 0].verdict for c in job.canaries]
    # The provider's report keeps canaries apart: never a trace segment, listed with their truth.
    out = job.outcome
    assert {s.index for s in out.segments} == {s.index for s in job.segments if not s.canary}
    assert [(r.index, r.truth.value) for r in out.canaries] == [
        (c.index, c.verdict.value) for c in job.canaries
    ]
    assert out.total_weight == sum(s.weight for s in job.segments if not s.canary)
    assert not {s.index for s in out.failing_segments} & set(truth)
    # The operator committed before the draw and revealed after the votes; the public sees them then.
    assert all(c.committed and c.revealed for c in job.canaries)
    assert job.canary_receipt is not None and job.canary_receipt.state == "committed"
    assert job.tx_hashes["commit_canaries"] == job.canary_receipt.tx_hash == ticket.tx_hash
    state = net.chain.port(PROVIDER).canaries(job.session_id or 0)
    assert state.operator == operator_of(net).address, "committed by the operator, not the provider"
    view = SessionQueries(net.provider_ctx).session(job.session_id or 0)
    assert [c.index for c in view.canaries] == sorted(truth)
    assert {c.index for c in view.outcome.canaries} == set(truth)
    assert not {s.index for s in view.outcome.segments} & set(truth)
    for c in view.canaries:
        assert c.truth.value == truth[c.index].verdict.value and c.votes
        assert all(v.agrees == (v.vote == c.truth.value) for v in c.votes if v.vote not in (None, "ABSTAIN"))


def test_a_restarted_provider_still_learns_the_operators_truths(net: MemoryNet, tmp_path: Path) -> None:
    sample = next(s for s in load_samples() if s.name == "tunnel-sound")
    tid = net.submit(sample.trace)
    net.until(lambda: net.job(tid).stage.order >= 5, what="the draw")
    committed = net.job(tid).canaries
    assert committed and all(c.committed and not c.revealed and c.verdict is None for c in committed)
    db = net.provider_ctx.jobs.db.path
    ticket = operator_of(net).operator.store.get(net.job(tid).canary_ticket or "")
    assert ticket is not None and ticket.state == "committed"
    stored = db.read_bytes()
    assert not any(c.salt[2:].encode() in stored for c in ticket.canaries), (
        "no salt in the provider's jobs.db"
    )
    # The provider process dies; a new one on the same data directory takes over.
    net.provider_ctx = net.context(tmp_path / "provider", PROVIDER)
    net.start_provider(operator_of(net).client())
    job = net.run([tid])[tid]
    assert job.status == JobStatus.DONE
    assert [c.index for c in job.canaries] == [c.index for c in committed]
    assert all(c.revealed for c in job.canaries)
    assert [c.verdict for c in job.canaries] == [ticket.canaries[c.slot or 0].verdict for c in job.canaries]
    revealed = net.chain.port(PROVIDER).canaries(job.session_id or 0).revealed
    assert sorted(r.index for r in revealed) == sorted(c.index for c in committed)
