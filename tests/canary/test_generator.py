"""Canary generator (issue 15): tiers and lengths follow the session's real segments, and the
offline pipeline (router + computer checker) classifies the generated canaries correctly."""

from __future__ import annotations

import random
import statistics
from pathlib import Path

import pytest

from trustnode.audit.computer import ComputerAuditor
from trustnode.canary import Mutation, SegmentShape, make_canaries
from trustnode.canary.generator import routed_tier
from trustnode.hdag.offline import decompose_offline
from trustnode.models.audit import AuditTask, SegmentContext
from trustnode.models.enums import AuditorType, Level, Tier, Verdict
from trustnode.node.samples import load_samples


@pytest.fixture(scope="module")
def real_shapes() -> list[SegmentShape]:
    """Tiers and lengths of the bundled sample traces' segments, decomposed offline as the node does."""
    shapes = []
    for sample in load_samples():
        for node in decompose_offline(sample.trace).nodes:
            shapes.append(SegmentShape(tier=node.primary_auditor.tier, chars=len(node.content)))
    assert {s.tier for s in shapes} >= {Tier.COMPUTER, Tier.LLM}
    return shapes


def _audit(text: str) -> tuple[bool, Verdict | None]:
    task = AuditTask(segment_index=0, node_id="C1", level=Level.OPERATION, auditor_type=AuditorType.T_AUTO,
                     content=text, context=SegmentContext(problem="A problem."))  # fmt: skip
    res = ComputerAuditor().audit(task)
    return res.decided, res.verdict if res.decided else None


def test_the_computer_checker_classifies_computer_canaries_correctly(real_shapes: list[SegmentShape]) -> None:
    computer = [s for s in real_shapes if s.tier is Tier.COMPUTER]
    canaries = make_canaries(computer, 400, random.Random(15))
    right = sum(_audit(c.text) == (True, c.verdict) for c in canaries)
    # measured: 400 of 400 (every mutation kind leaves exactly one claim the checker refutes)
    assert right / len(canaries) >= 0.99, right
    kinds = {c.mutation for c in canaries if c.verdict is Verdict.FAIL}
    assert kinds == {Mutation.NUMBER, Mutation.OPERATOR, Mutation.DROP_CONDITION, Mutation.SWAP_INFERENCE}
    assert 0.4 < sum(c.verdict is Verdict.FAIL for c in canaries) / len(canaries) < 0.6


def test_every_fail_mutation_is_caught_pass_twin_holds() -> None:
    shape = SegmentShape(tier=Tier.COMPUTER, chars=200)
    rng = random.Random(3)
    for _ in range(200):
        (c,) = make_canaries([shape], 1, rng, fail_share=1.0)
        assert _audit(c.text) == (True, Verdict.FAIL), (c.mutation, c.text)
        (p,) = make_canaries([shape], 1, rng, fail_share=0.0)
        assert p.mutation is Mutation.NONE and _audit(p.text) == (True, Verdict.PASS), p.text


def test_verbal_canaries_route_off_the_computer_tier(real_shapes: list[SegmentShape]) -> None:
    rng = random.Random(5)
    llm = make_canaries([SegmentShape(tier=Tier.LLM, chars=250)], 60, rng)
    human = make_canaries([SegmentShape(tier=Tier.HUMAN, chars=300)], 30, rng)
    assert all(routed_tier(c.text, high_stakes=False) is Tier.LLM for c in llm)
    assert all(routed_tier(c.text, high_stakes=True) is Tier.HUMAN for c in human)
    # the computer checker finds nothing to check there: it never votes on them
    assert all(_audit(c.text) == (False, None) for c in llm + human)
    assert {c.mutation for c in llm if c.verdict is Verdict.FAIL} == {
        Mutation.DROP_CONDITION,
        Mutation.SWAP_INFERENCE,
    }


def test_tiers_and_lengths_follow_the_real_segments(real_shapes: list[SegmentShape]) -> None:
    canaries = make_canaries(real_shapes, 600, random.Random(8))
    for tier in {s.tier for s in real_shapes}:
        real = [s.chars for s in real_shapes if s.tier is tier]
        made = [len(c.text) for c in canaries if c.tier is tier]
        share_real, share_made = len(real) / len(real_shapes), len(made) / len(canaries)
        assert abs(share_real - share_made) < 0.06, (tier, share_real, share_made)
        if len(made) >= 20:
            ratio = statistics.median(made) / statistics.median(real)
            assert 0.6 < ratio < 1.8, (tier, statistics.median(made), statistics.median(real))


def test_deterministic_by_seed_and_refuses_nonsense() -> None:
    shapes = [SegmentShape(tier=Tier.COMPUTER, chars=150), SegmentShape(tier=Tier.LLM, chars=150)]
    assert make_canaries(shapes, 20, random.Random(1)) == make_canaries(shapes, 20, random.Random(1))
    assert make_canaries(shapes, 20, random.Random(1)) != make_canaries(shapes, 20, random.Random(2))
    with pytest.raises(ValueError):
        make_canaries([], 1, random.Random(1))
    with pytest.raises(ValueError):
        make_canaries(shapes, 1, random.Random(1), fail_share=1.5)


def test_the_generator_never_reads_evaluation_data() -> None:
    pkg = Path(__file__).resolve().parents[2] / "src" / "trustnode" / "canary"
    for path in pkg.glob("*.py"):
        text = path.read_text()
        assert "shared/eval" not in text and "processbench" not in text.lower() and "open(" not in text, path


def test_every_tier_with_a_canary_gets_a_fail_one() -> None:
    """Verdicts are stratified per tier (ceil(n/2) FAIL): a lazy approver meets a FAIL canary in
    every session that gives its tier a canary, never sitting one out by luck."""
    shapes = [SegmentShape(tier=Tier.COMPUTER, chars=120)] * 14 + [SegmentShape(tier=Tier.LLM, chars=200)] * 2
    rng = random.Random(21)
    for _ in range(300):
        made = make_canaries(shapes, rng.randint(1, 6), rng)
        for tier in {c.tier for c in made}:
            mine = [c for c in made if c.tier is tier]
            fails = sum(c.verdict is Verdict.FAIL for c in mine)
            assert fails == -(-len(mine) // 2), (tier, [c.verdict for c in mine])
