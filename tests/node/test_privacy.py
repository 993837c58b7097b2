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
from pydantic import ValidationError

from tests.node.memnet import PROVIDER, MarkedAuditor, MemoryNet, address
from trustnode.chain.port.memory_state import MEMORY_SESSION_PARAMS
from trustnode.config import PrivacySettings, Settings
from trustnode.hdag.offline import decompose_offline_report
from trustnode.models.enums import Tier
from trustnode.models.hdag import HDAG
from trustnode.models.jobs import TraceJob
from trustnode.models.trace import TraceInput
from trustnode.node.context import NodeContext
from trustnode.node.privacy import (
    MAX_DECRYPT_SHARE,
    covered,
    plan_release,
    single_seat_shares,
    thinking_spans,
    unrestricted_keys,
)
from trustnode.node.provider import ProviderPipeline
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


APPLES = TraceInput(
    problem="How many apples are left in the crate?",
    steps=[
        "Let x be the number of apples in one box, so x = 4.",
        "There are 12 boxes, and 12 × 4 = 48 apples.",
        "Half of them are red: 48 / 2 = 24 red apples.",
        "A quarter of the red ones are sold: 24 / 4 = 6 sold.",
        "That leaves 24 - 6 = 18 red apples in the crate.",
        "The green ones are untouched: 48 - 24 = 24 green apples.",
        "So the crate holds 18 + 24 = 42 apples.",
        "The answer is 42 apples.",
    ],
    output="42",
)


def _audited(
    tmp_path: Path, share: float | None = None, trace: TraceInput = APPLES
) -> tuple[MemoryNet, TraceJob]:
    """The apples trace audited by twelve auditors (seat cap 2); `share`: the provider's
    `privacy.max_decrypt_share` setting (None: the default)."""
    params = MEMORY_SESSION_PARAMS.model_copy(update={"seat_cap": 2, "seats_per_tier": (1, 1, 1)})
    net = MemoryNet(tmp_path, params)
    if share is not None:
        settings = net.provider_ctx.settings.model_copy(
            update={"privacy": PrivacySettings(max_decrypt_share=share)}
        )
        net.provider_ctx = NodeContext(settings, port=net.chain.port(PROVIDER), store=net.store)
        net.pipeline = ProviderPipeline(net.provider_ctx)
    for i in range(2, 14):
        net.add_auditor(f"a{i}", [Tier.COMPUTER, Tier.LLM, Tier.HUMAN][i % 3], MarkedAuditor(), i)
    tid = net.submit(trace)
    job = net.run([tid])[tid]
    net.close()
    return net, job


def test_the_share_is_the_operators_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`privacy.max_decrypt_share` reaches the key release: at 100% every context key is sealed
    and nothing is withheld; out of (0, 1] the node refuses to start."""
    monkeypatch.setenv("TRUSTNODE_PRIVACY__MAX_DECRYPT_SHARE", "0.4")
    assert Settings().privacy.max_decrypt_share == 0.4
    for bad in ("0", "1.5"):
        monkeypatch.setenv("TRUSTNODE_PRIVACY__MAX_DECRYPT_SHARE", bad)
        with pytest.raises(ValidationError, match="max_decrypt_share"):
            Settings()
    monkeypatch.delenv("TRUSTNODE_PRIVACY__MAX_DECRYPT_SHARE")
    net, job = _audited(tmp_path, share=1.0)
    assert net.pipeline.privacy_share == 1.0
    assert job.hdag is not None and job.manifest_cid is not None
    bundle = SessionBundle.model_validate_json(net.store.cat(job.manifest_cid))
    for who in net.chain.port(address(2)).seats(job.session_id or 0):
        daemon = next(d for d in net.daemons.values() if d.address == who)
        assert open_outline(bundle, who, daemon.keys.private_key) == {}, "nothing withheld at 100%"


def test_the_share_also_cuts_the_providers_segments(tmp_path: Path) -> None:
    """The provider decomposes with its configured share: a step holding half the thinking is cut
    at the default 25%, and left whole when the operator allows 100%."""
    long_step = (
        "Each of the four boxes was checked by hand, and every box held the same count of apples, "
        "which the packing list also states for this delivery, so the count per box can be used for "
        "all of them without opening the crate again, and nothing was removed before the count."
    )
    trace = TraceInput(
        problem="How many apples are in the crate?",
        steps=[
            "Let x be the apples in one box, so x = 4.",
            long_step,
            "So the crate holds 4 * 4 = 16 apples.",
        ],
    )
    cut = _audited(tmp_path / "cut", trace=trace)[1].hdag
    whole = _audited(tmp_path / "whole", share=1.0, trace=trace)[1].hdag
    assert cut is not None and whole is not None
    assert any(n.content.strip() == long_step for n in whole.nodes), "at 100% the long step is one segment"
    assert not any(long_step in n.content for n in cut.nodes), "at 25% it is cut"
    assert len(cut.nodes) > len(whole.nodes)


def test_an_auditor_opens_no_more_than_its_share_and_sees_summaries_for_the_rest(tmp_path: Path) -> None:
    net, job = _audited(tmp_path)
    assert net.pipeline.privacy_share == SHARE, "the default share is the setting's"
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
