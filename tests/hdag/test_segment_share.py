"""No segment holds more than the privacy share of its trace's thinking (issue 16).

An auditor always decrypts its own seats, so one segment over SPEC 3's share (25% of the
thinking) breaks the privacy rule by itself. Validation repair cuts such segments for
every decomposer, when the trace is long enough for pieces of MIN_SHARE_PIECE_CHARS.
The share is checked here with the node's own measure (`node.privacy`), not a copy.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trustnode.config import LLMSettings
from trustnode.hdag import decompose
from trustnode.hdag.offline import decompose_offline_report
from trustnode.hdag.spans import (
    MAX_SEGMENT_SHARE,
    MIN_SHARE_PIECE_CHARS,
    privacy_problem,
    private_thinking_floor,
    share_limit,
    too_short_for_share,
)
from trustnode.hdag.validate import validate_hdag
from trustnode.llm.client import LLMClient
from trustnode.llm.fake_server import FakeOpenAIServer, Reply
from trustnode.models.enums import Level
from trustnode.models.hdag import HDAG, HDAGMetadata
from trustnode.models.trace import TraceInput
from trustnode.node.privacy import covered, single_seat_shares, thinking_spans

from .conftest import PROBLEM, edge, node_at

PB = Path(__file__).resolve().parents[2].parent / "shared" / "eval" / "processbench"

OPENING = "We add the apples she buys to those she has, one purchase at a time."
LONG = " ".join(
    f"On day {d} she buys {d} more apples, so the running total grows by {d} and we write it down."
    for d in range(1, 11)
)
CLOSING = "So she has 12 + 30 = 42 apples in the end, and the answer is 42."


def _seat_shares(h: HDAG) -> list[float]:
    """Each node's own share of the thinking, as node.privacy counts it."""
    spans = thinking_spans(h)
    total = covered(spans, range(len(spans)))
    return [covered(spans, [i]) / total for i in range(len(spans))]


def _one_long_step() -> HDAG:
    doc = TraceInput(problem=PROBLEM, steps=[OPENING, LONG, CLOSING]).to_document()
    nodes = [
        node_at(doc, "G1", PROBLEM, Level.GOAL),
        node_at(doc, "S1", OPENING, Level.STRATEGY).model_copy(update={"step_index": 0}),
        node_at(doc, "ST1", LONG, Level.STEP).model_copy(update={"step_index": 1}),
        node_at(doc, "ST2", CLOSING, Level.STEP).model_copy(update={"step_index": 2}),
    ]
    edges = [edge("G1", "S1"), edge("S1", "ST1"), edge("S1", "ST2"), edge("ST1", "ST2")]
    return HDAG(document=doc, nodes=nodes, edges=edges, metadata=HDAGMetadata(decomposer="llm-single"))


def test_a_segment_over_the_share_is_cut_and_its_parts_keep_step_and_edges() -> None:
    h = _one_long_step()
    assert max(_seat_shares(h)) > 0.7  # ST1 alone: most of the thinking
    _, plain = validate_hdag(h, repair=False)
    assert plain.failed == ["segment_share"] and plain.check("segment_share").offenders == ["ST1"]

    fixed, report = validate_hdag(h)
    assert report.ok, report.failed
    assert any(r.startswith("split ST1 (") and "over 25% of the thinking" in r for r in report.repairs)
    assert max(_seat_shares(fixed)) <= MAX_SEGMENT_SHARE
    # what the privacy rule sees: one seat and all the context it may get stay within the share
    _, after = single_seat_shares(fixed)
    assert max(after) <= MAX_SEGMENT_SHARE
    parts = [n for n in fixed.nodes if n.step_index == 1]
    assert len(parts) >= 4 and all(n.abstraction_level is Level.STEP for n in parts)
    assert all(fixed.document.text[n.span.start : n.span.end] == n.content for n in parts)
    assert " ".join(n.content for n in parts) == LONG  # cut at spaces, nothing lost
    assert all(n.content.endswith(".") for n in parts)  # at sentence ends where there are some
    for p in parts:  # every part keeps ST1's edges
        assert any(e.source == "S1" and e.target == p.id for e in fixed.edges)
        assert any(e.source == p.id and e.target == "ST2" for e in fixed.edges)


def test_a_custom_share_is_honoured() -> None:
    fixed, report = validate_hdag(_one_long_step(), max_share=0.4)
    assert report.ok and 0.25 < max(_seat_shares(fixed)) <= 0.4


@pytest.mark.parametrize("share", [0.15, 0.4])
def test_decompose_passes_the_configured_share_to_every_decomposer(share: float) -> None:
    run_on = ", then ".join(f"add {d} apples" for d in range(1, 40))
    trace = TraceInput(problem=PROBLEM, steps=[OPENING, run_on, CLOSING])
    h, report = decompose(trace, mode="offline", max_share=share)
    assert report.ok and share - 0.1 < max(_seat_shares(h)) <= share
    with FakeOpenAIServer([Reply.json({"nodes": [], "edges": []})] * 3) as srv:
        settings = LLMSettings(base_url=srv.base_url, model="fake-model", timeout_s=5.0, max_retries=1)
        with LLMClient(settings, None, backoff_base_s=0.01) as client:
            h, report = decompose(trace, mode="llm-single", client=client, max_share=share)
    assert report.ok and max(_seat_shares(h)) <= share


def test_thinking_too_short_for_the_share_is_not_cut() -> None:
    h = _one_long_step()
    short = TraceInput(
        problem=PROBLEM, steps=["We add.", "12 + 30 = 42 apples in all.", "So 42."]
    ).to_document()
    nodes = [
        node_at(short, "G1", PROBLEM, Level.GOAL),
        node_at(short, "S1", "We add.", Level.STRATEGY).model_copy(update={"step_index": 0}),
        node_at(short, "ST1", "12 + 30 = 42 apples in all.", Level.STEP).model_copy(update={"step_index": 1}),
        node_at(short, "ST2", "So 42.", Level.STEP).model_copy(update={"step_index": 2}),
    ]
    tiny = h.model_copy(update={"document": short, "nodes": nodes})
    assert share_limit(short, nodes) is None  # 25% of 39 characters is no auditable piece
    fixed, report = validate_hdag(tiny)
    assert report.ok and [n.id for n in fixed.nodes] == ["G1", "S1", "ST1", "ST2"]
    assert "too short" in report.check("segment_share").detail
    # ... so the node must refuse it: ST1 alone is most of the thinking
    problem = privacy_problem(short, fixed.nodes)
    assert problem is not None and "at least 320" in problem and "privacy.max_decrypt_share" in problem
    assert too_short_for_share(short) is not None  # the same verdict before decomposing


def test_the_short_trace_floor_follows_the_share() -> None:
    assert private_thinking_floor(0.25) == 320 and private_thinking_floor(0.5) == 160
    words = ("twelve plus thirty is forty-two apples " * 20).strip()
    for chars, share, refused in [(319, 0.25, True), (320, 0.25, False), (200, 0.5, False), (159, 0.5, True)]:
        doc = TraceInput(
            problem=PROBLEM, thinking=words[:chars].rstrip() + "x" * (chars - len(words[:chars].rstrip()))
        ).to_document()
        assert len(doc.thinking_text.strip()) == chars
        assert (too_short_for_share(doc, share) is not None) is refused, (chars, share)


def test_a_long_trace_after_the_cut_has_no_privacy_problem() -> None:
    fixed, _ = validate_hdag(_one_long_step())
    assert privacy_problem(fixed.document, fixed.nodes) is None
    # and the check is real: the uncut graph has one
    h = _one_long_step()
    assert "ST1" in (privacy_problem(h.document, h.nodes) or "")


def test_the_llm_decomposer_output_is_cut_to_the_share() -> None:
    trace = TraceInput(problem=PROBLEM, thinking=f"{OPENING}\n\n{LONG}\n\n{CLOSING}")

    def node(nid: str, level: str, para: str, text: str) -> dict[str, object]:
        return {
            "id": nid, "level": level, "paragraph": para, "text": text, "type": "inference",
            "summary": "a step", "complexity": "Low", "primary_auditor": "T_LLM", "secondary_auditors": [],
        }  # fmt: skip

    graph = {
        "nodes": [node("S1", "STRATEGY", "P1", OPENING), node("ST1", "STEP", "P2", LONG), node("ST2", "STEP", "P3", CLOSING)],
        "edges": [
            {"from": "G1", "to": "S1", "relationship": "decomposes_to", "strength": "strong", "confidence": 0.9},
            {"from": "S1", "to": "ST1", "relationship": "decomposes_to", "strength": "strong", "confidence": 0.9},
            {"from": "ST1", "to": "ST2", "relationship": "depends_on", "strength": "strong", "confidence": 0.9},
        ],
    }  # fmt: skip
    with FakeOpenAIServer([Reply.json(graph)]) as srv:
        settings = LLMSettings(base_url=srv.base_url, model="fake-model", timeout_s=5.0, max_retries=1)
        with LLMClient(settings, None, backoff_base_s=0.01) as client:
            h, report = decompose(trace, mode="llm-single", client=client)
    assert report.ok, report.failed
    assert any("over 25% of the thinking" in r for r in h.metadata.repairs)
    assert max(_seat_shares(h)) <= MAX_SEGMENT_SHARE
    assert max(single_seat_shares(h)[1]) <= MAX_SEGMENT_SHARE


def test_the_offline_decomposer_keeps_one_long_sentence_within_the_share() -> None:
    # one unit (no sentence end) that is most of the thinking: cut at spaces
    run_on = ", then ".join(f"add {d} apples" for d in range(1, 40))
    h, report = decompose_offline_report(TraceInput(problem=PROBLEM, steps=[OPENING, run_on, CLOSING]))
    assert report.ok
    assert max(_seat_shares(h)) <= MAX_SEGMENT_SHARE
    assert all(len(n.content) >= MIN_SHARE_PIECE_CHARS // 2 for n in h.nodes if n.step_index == 1)


@pytest.mark.slow
@pytest.mark.parametrize("subset", ["gsm8k", "math"])
def test_every_processbench_seat_is_within_the_share_when_the_trace_allows(subset: str) -> None:
    path = PB / f"{subset}.json"
    if not path.is_file():
        pytest.skip(f"{path} is not present on this machine")
    cut = short = 0
    for row in json.loads(path.read_text()):
        h, report = decompose_offline_report(TraceInput(problem=row["problem"], steps=row["steps"]))
        assert report.ok, (row["id"], report.failed)
        limit = share_limit(h.document, h.nodes)
        shares = _seat_shares(h)
        problem = privacy_problem(h.document, h.nodes)
        if limit is None:
            short += 1  # the node refuses these: one seat would read more than the share
            assert max(shares) <= MAX_SEGMENT_SHARE or problem is not None, row["id"]
            continue
        assert max(shares) <= MAX_SEGMENT_SHARE and problem is None, (row["id"], max(shares))
        cut += any("of the thinking" in r for r in report.repairs)
    assert cut > 0  # the repair really ran on these sets
