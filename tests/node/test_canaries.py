"""Gold canaries in the provider's sessions (issue 15): pinned, keyed and drawn like real segments,
with a real segment's context shape, and kept out of the provider's trace report.

Real pipeline, daemons, backends and local blob store on the in-memory chain."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.node.conftest import judge_for
from tests.node.memnet import PROVIDER, MemoryNet, RecordingAuditor
from trustnode.audit.computer import ComputerAuditor
from trustnode.chain.port.memory_state import MEMORY_SESSION_PARAMS
from trustnode.consensus.canaries import canaries_for_real
from trustnode.consensus.rules import WAD
from trustnode.hdag.offline import decompose_offline_report
from trustnode.llm.fake_server import FakeOpenAIServer
from trustnode.models.enums import Level, Tier
from trustnode.models.jobs import JobStatus
from trustnode.node import canaries
from trustnode.node.appeals import ProviderAppeals
from trustnode.node.privacy import plan_release
from trustnode.node.provider import ProviderPipeline
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
    n.add_auditor("computer-1", Tier.COMPUTER, RecordingAuditor(ComputerAuditor()), 2)
    n.add_auditor("computer-2", Tier.COMPUTER, RecordingAuditor(ComputerAuditor()), 3)
    n.add_auditor("llm-1", Tier.LLM, RecordingAuditor(judge_for(fake_llm, tmp_path / "judge")), 4)
    yield n
    n.close()


def test_layout_places_the_public_count_at_random_leaves_with_donor_tiers() -> None:
    sample = next(s for s in load_samples() if s.name == "tunnel-sound")
    hdag, _ = decompose_offline_report(sample.trace, max_share=0.25)
    positions = set()
    for seed in range(12):
        leaves = canaries.layout(hdag, RATE, rng=random.Random(seed))
        made = [(i, leaf.canary) for i, leaf in enumerate(leaves) if leaf.canary is not None]
        assert len(made) == canaries_for_real(len(hdag.nodes), RATE) == 3
        assert [leaf.hdag_index for leaf in leaves if leaf.canary is None] == list(range(len(hdag.nodes)))
        for i, c in made:
            assert c is not None and c.index == i
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
    assert all(c.salt.startswith("0x") and len(c.salt) == 66 for c in job.canaries)

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

    # The provider's report keeps canaries apart: never a trace segment, listed with their truth.
    out = job.outcome
    assert {s.index for s in out.segments} == {s.index for s in job.segments if not s.canary}
    assert [(r.index, r.truth.value) for r in out.canaries] == [
        (c.index, c.verdict.value) for c in job.canaries
    ]
    assert out.total_weight == sum(s.weight for s in job.segments if not s.canary)
    assert not {s.index for s in out.failing_segments} & set(truth)
    # Committed before the draw, revealed after the votes; the public sees them only then.
    assert all(c.committed and c.revealed for c in job.canaries)
    assert {"commit_canaries", "reveal_canaries"} <= set(job.tx_hashes)
    view = SessionQueries(net.provider_ctx).session(job.session_id or 0)
    assert [c.index for c in view.canaries] == sorted(truth)
    assert {c.index for c in view.outcome.canaries} == set(truth)
    assert not {s.index for s in view.outcome.segments} & set(truth)
    for c in view.canaries:
        assert c.truth.value == truth[c.index].verdict.value and c.votes
        assert all(v.agrees == (v.vote == c.truth.value) for v in c.votes if v.vote not in (None, "ABSTAIN"))


def test_a_restarted_provider_still_reveals_its_canaries(net: MemoryNet, tmp_path: Path) -> None:
    sample = next(s for s in load_samples() if s.name == "tunnel-sound")
    tid = net.submit(sample.trace)
    net.until(lambda: net.job(tid).stage.order >= 5, what="the draw")
    committed = net.job(tid).canaries
    assert committed and all(c.committed and not c.revealed for c in committed)
    db = net.provider_ctx.jobs.db.path
    assert db.stat().st_mode & 0o777 == 0o600, "truths and salts are in an owner-only file"
    # The provider process dies; a new one on the same data directory takes over.
    net.provider_ctx = net.context(tmp_path / "provider", net.pipeline.port.address)
    net.pipeline = ProviderPipeline(net.provider_ctx)
    net.appeals = ProviderAppeals(net.provider_ctx)
    job = net.run([tid])[tid]
    assert job.status == JobStatus.DONE
    assert [(c.index, c.salt) for c in job.canaries] == [(c.index, c.salt) for c in committed]
    assert all(c.revealed for c in job.canaries)
    revealed = net.chain.port(PROVIDER).canaries(job.session_id or 0).revealed
    assert sorted(r.index for r in revealed) == sorted(c.index for c in committed)
