"""Issue 16, privacy: no auditor can decrypt more than the configured share of a trace's thinking,
its seats and their context together; context beyond the share arrives as node summaries.

Checked where the keys are sealed (the release plan), on the four bundled samples and on every
shared ProcessBench trace after offline decomposition, and end to end: what an auditor can
actually open in a published bundle, and what its tasks show.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.node.memnet import MarkedAuditor, MemoryNet, address
from trustnode.chain.port.memory_state import MEMORY_SESSION_PARAMS
from trustnode.hdag.offline import decompose_offline_report
from trustnode.models.enums import Tier
from trustnode.models.hdag import HDAG
from trustnode.models.trace import TraceInput
from trustnode.node.privacy import (
    MAX_DECRYPT_SHARE,
    covered,
    plan_release,
    single_seat_shares,
    thinking_spans,
    unrestricted_keys,
)
from trustnode.node.samples import load_samples
from trustnode.node.structure import SessionBundle, SessionShape
from trustnode.node.tasks import build_tasks, open_outline

SHARE = MAX_DECRYPT_SHARE


def _check(hdag: HDAG) -> float:
    """The property for every single seat; returns the largest share the old rule handed out."""
    before, after = single_seat_shares(hdag, share=SHARE)
    spans = thinking_spans(hdag)
    total = covered(spans, range(len(spans)))
    for i, got in enumerate(after):
        own = covered(spans, [i]) / total
        assert got <= max(SHARE, own) + 1e-12, (hdag.nodes[i].id, got, own)
    return max(before)


def test_bundled_samples_keep_every_auditor_within_the_share() -> None:
    for sample in load_samples():
        hdag, _ = decompose_offline_report(sample.trace)
        assert _check(hdag) == 1.0, "the old rule let one seat decrypt the whole thinking"


def test_every_processbench_trace_keeps_every_auditor_within_the_share(eval_dir: Path) -> None:
    files = sorted((eval_dir / "processbench").glob("*.json"))
    assert files, "no shared ProcessBench traces"
    checked = 0
    for path in files:
        for row in json.loads(path.read_text()):
            hdag, _ = decompose_offline_report(TraceInput(problem=row["problem"], steps=row["steps"]))
            _check(hdag)
            checked += 1
    assert checked >= 1000


def test_seats_and_context_count_together() -> None:
    """An auditor with several seats: the union of everything it can open stays within the share."""
    hdag, _ = decompose_offline_report(load_samples()[1].trace)
    shape = SessionShape.from_hdag(hdag, [1] * len(hdag.nodes))
    spans = thinking_spans(hdag)
    total = covered(spans, range(len(spans)))
    small = sorted(range(len(spans)), key=lambda i: covered(spans, [i]))[:2]
    plan = plan_release(shape, spans, {"a": small}, share=SHARE)["a"]
    assert covered(spans, plan.keys) / total == pytest.approx(plan.share)
    assert plan.share <= SHARE and plan.withheld
    assert set(plan.keys) | set(plan.withheld) == unrestricted_keys(shape, small)


def test_an_auditor_opens_no_more_than_its_share_and_sees_summaries_for_the_rest(tmp_path: Path) -> None:
    steps = [
        "Let x be the number of apples in one box, so x = 4.",
        "There are 12 boxes, and 12 × 4 = 48 apples.",
        "Half of them are red: 48 / 2 = 24 red apples.",
        "A quarter of the red ones are sold: 24 / 4 = 6 sold.",
        "That leaves 24 - 6 = 18 red apples in the crate.",
        "The green ones are untouched: 48 - 24 = 24 green apples.",
        "So the crate holds 18 + 24 = 42 apples.",
        "The answer is 42 apples.",
    ]
    trace = TraceInput(problem="How many apples are left in the crate?", steps=steps, output="42")
    params = MEMORY_SESSION_PARAMS.model_copy(update={"seat_cap": 2, "seats_per_tier": (1, 1, 1)})
    net = MemoryNet(tmp_path, params)
    for i in range(2, 14):
        net.add_auditor(f"a{i}", [Tier.COMPUTER, Tier.LLM, Tier.HUMAN][i % 3], MarkedAuditor(), i)
    tid = net.submit(trace)
    job = net.run([tid])[tid]
    net.close()
    assert job.hdag is not None and job.manifest_cid is not None
    bundle = SessionBundle.model_validate_json(net.store.cat(job.manifest_cid))
    spans = thinking_spans(job.hdag)
    total = covered(spans, range(len(spans)))
    seats = net.chain.port(address(2)).seats(job.session_id or 0)
    withheld_seen = 0
    for who, own in seats.items():
        opened = {e.segment_index for e in bundle.manifest.entries_for(who)}
        assert set(own) <= opened
        assert covered(spans, opened) / total <= max(SHARE, covered(spans, own) / total) + 1e-12
        daemon = next(d for d in net.daemons.values() if d.address == who)
        outline = open_outline(bundle, who, daemon.keys.private_key)
        assert not set(outline) & opened, "a summary is never given for text whose key it holds"
        tasks = build_tasks(
            net.store,
            bundle,
            address=who,
            private_key=daemon.keys.private_key,
            seats=own,
            onchain_root=bytes.fromhex((job.merkle_root or "0x")[2:]),
        )
        for task in tasks:
            for c in [*task.context.parents, *task.context.children]:
                if c.withheld:
                    withheld_seen += 1
                    assert c.content == "" and c.summary == job.hdag.node(c.node_id).summary
                else:
                    assert c.content == job.hdag.node(c.node_id).content
    assert withheld_seen > 0, "the trace is long enough that some context must be withheld"
