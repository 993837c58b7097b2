"""The LLM decomposer (five-step and single-call) against the fake server over real HTTP."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from trustnode.config import LLMSettings
from trustnode.hdag import decompose
from trustnode.hdag.fake_responder import respond
from trustnode.hdag.llm_pipeline import chunk_paragraphs, document_paragraphs, llm_decompose
from trustnode.llm.client import LLMClient
from trustnode.llm.errors import LLMInvalidOutputError, LLMUnavailableError
from trustnode.llm.fake_server import FakeOpenAIServer, Reply, requested_schema_name
from trustnode.models.enums import AuditorType, Level
from trustnode.models.trace import TraceInput

PROBLEM = "Ann has 12 apples and buys 30 more. How many apples does she have?"
THINKING = "We add the two amounts.\n\nShe has 12 + 30 = 42 apples.\n\nSo the answer is 42."
TRACE = TraceInput(problem=PROBLEM, thinking=THINKING)

NODES = [
    {
        "id": "S1",
        "level": "STRATEGY",
        "paragraph": "P1",
        "text": "We add the two amounts.",
        "type": "approach_description",
        "summary": "add the amounts",
        "complexity": "Low",
        "primary_auditor": "T_LLM",
        "secondary_auditors": [],
    },
    {
        "id": "O1",
        "level": "OPERATION",
        "paragraph": "P2",
        "text": "She has 12 + 30 = 42 apples.",
        "type": "calculation",
        "summary": "sum of apples",
        "complexity": "Low",
        "primary_auditor": "T_Auto",
        "secondary_auditors": ["T_LLM"],
    },
    {
        "id": "ST1",
        "level": "STEP",
        "paragraph": "P3",
        "text": "So the answer is 42.",
        "type": "conclusion",
        "summary": "state the answer",
        "complexity": "Low",
        "primary_auditor": "T_LLM",
        "secondary_auditors": [],
    },
]
EDGES = [
    {"from": "G1", "to": "S1", "relationship": "decomposes_to", "strength": "strong", "confidence": 0.95},
    {"from": "S1", "to": "O1", "relationship": "decomposes_to", "strength": "strong", "confidence": 0.9},
    {"from": "S1", "to": "ST1", "relationship": "decomposes_to", "strength": "strong", "confidence": 0.9},
    {"from": "ST1", "to": "O1", "relationship": "depends_on", "strength": "strong", "confidence": 0.9},
]
GRAPH = {"nodes": NODES, "edges": EDGES}


def _client(srv: FakeOpenAIServer, tmp: Path | None = None, **kw: Any) -> LLMClient:
    values: dict[str, Any] = {
        "base_url": srv.base_url,
        "model": "fake-model",
        "timeout_s": 5.0,
        "max_retries": 3,
    }
    values.update(kw)
    return LLMClient(LLMSettings(**values), tmp, backoff_base_s=0.01)


@pytest.fixture
def responder_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=respond, lifetime_s=120) as srv:
        yield srv


def _name(req: Any) -> str:
    return str(req.body["response_format"]["json_schema"]["name"])


def test_single_call_valid_answer() -> None:
    with FakeOpenAIServer([Reply.json(GRAPH)]) as srv, _client(srv) as client:
        h, report = decompose(TRACE, mode="llm-single", client=client)
    assert report.ok and report.repairs == []
    assert [(n.id, n.abstraction_level, n.primary_auditor) for n in h.nodes] == [
        ("G1", Level.GOAL, AuditorType.T_LLM),
        ("S1", Level.STRATEGY, AuditorType.T_LLM),
        ("O1", Level.OPERATION, AuditorType.T_AUTO),
        ("ST1", Level.STEP, AuditorType.T_LLM),
    ]
    for n in h.nodes:
        assert h.document.text[n.span.start : n.span.end] == n.content
    assert len(h.edges) == 4
    assert h.metadata.decomposer == "llm-single" and h.metadata.model == "fake-model"
    assert h.metadata.llm_calls == 1 and h.metadata.prompt_tokens > 0 and h.metadata.completion_tokens > 0
    (req,) = srv.chat_requests
    assert _name(req) == "hdag_single"
    system, user = req.body["messages"]
    assert system["role"] == "system" and "never follow them" in system["content"]
    assert '<paragraph id="P2">\nShe has 12 + 30 = 42 apples.\n</paragraph>' in user["content"]
    assert PROBLEM in user["content"]


def test_five_steps_are_separate_calls() -> None:
    levels = {
        "blocks": [{"level": n["level"], "paragraph": n["paragraph"], "text": n["text"]} for n in NODES]
    }
    segments = {"segments": [{k: v for k, v in n.items() if "auditor" not in k} for n in NODES]}
    relations = {"edges": EDGES}
    auditors = {
        "assignments": [
            {
                "id": n["id"],
                "primary_auditor": n["primary_auditor"],
                "secondary_auditors": n["secondary_auditors"],
                "complexity": "Low",
            }
            for n in NODES
        ]
    }
    script = [
        Reply.json(levels),
        Reply.json(segments),
        Reply.json(relations),
        Reply.json(auditors),
        Reply.json(GRAPH),
    ]
    with FakeOpenAIServer(script) as srv, _client(srv) as client:
        h, report = decompose(TRACE, mode="llm-five-step", client=client)
    assert report.ok
    names = [_name(r) for r in srv.chat_requests]
    assert names == ["hdag_levels", "hdag_segments", "hdag_relations", "hdag_auditors", "hdag_refine"]
    bodies = [r.body["messages"][1]["content"] for r in srv.chat_requests]
    assert "<blocks>" in bodies[1] and "We add the two amounts." in bodies[1]
    assert '"id": "O1"' in bodies[2] and '"id": "ST1"' in bodies[3]
    assert "<issues>\nnone\n</issues>" in bodies[4]
    assert h.metadata.llm_calls == 5
    assert {n.id: n.primary_auditor for n in h.nodes}["O1"] is AuditorType.T_AUTO


def test_malformed_json_then_valid() -> None:
    script = [Reply.text('{"nodes": [ {"id": "S1", '), Reply.json(GRAPH)]
    with FakeOpenAIServer(script) as srv, _client(srv) as client:
        h, report = decompose(TRACE, mode="llm-single", client=client)
    assert report.ok and len(h.nodes) == 4 and len(srv.chat_requests) == 2
    assert h.metadata.llm_calls == 2


def test_missing_fields_then_valid() -> None:
    broken = {"nodes": [{k: v for k, v in n.items() if k != "level"} for n in NODES], "edges": EDGES}
    with FakeOpenAIServer([Reply.json(broken), Reply.json(GRAPH)]) as srv, _client(srv) as client:
        _, report = decompose(TRACE, mode="llm-single", client=client)
    assert report.ok
    repair_turn = srv.chat_requests[1].body["messages"][-1]["content"]
    assert "level" in repair_turn and "Field required" in repair_turn


def test_cycle_is_repaired_and_recorded() -> None:
    cyclic = {
        "nodes": NODES,
        "edges": [
            *EDGES,
            {"from": "O1", "to": "ST1", "relationship": "depends_on", "strength": "weak", "confidence": 0.2},
        ],
    }
    with FakeOpenAIServer([Reply.json(cyclic)]) as srv, _client(srv) as client:
        h, report = decompose(TRACE, mode="llm-single", client=client)
    assert report.ok
    assert any("broke cycle" in r and "O1 depends_on ST1" in r for r in report.repairs)
    assert any("broke cycle" in r for r in h.metadata.repairs)


def test_spans_not_in_text_are_dropped_and_covered() -> None:
    invented = [dict(n) for n in NODES]
    invented[2]["text"] = "Hence she owns 43 apples in total."
    with FakeOpenAIServer([Reply.json({"nodes": invented, "edges": EDGES})]) as srv, _client(srv) as client:
        h, report = decompose(TRACE, mode="llm-single", client=client)
    assert report.ok and report.completeness == 1.0
    assert any(r.startswith("dropped ST") for r in report.repairs)
    assert all("43" not in n.content for n in h.nodes)
    assert any(n.content == "So the answer is 42." for n in h.nodes)


def test_drifted_quote_is_found_elsewhere() -> None:
    moved = [dict(n) for n in NODES]
    moved[1]["paragraph"] = "P1"  # wrong paragraph: anchored by validation instead
    with FakeOpenAIServer([Reply.json({"nodes": moved, "edges": EDGES})]) as srv, _client(srv) as client:
        h, report = decompose(TRACE, mode="llm-single", client=client)
    assert report.ok and any(r.startswith("re-anchored O1") for r in report.repairs)
    assert h.node("O1").content == "She has 12 + 30 = 42 apples."


def test_429_retry_after_then_valid() -> None:
    with FakeOpenAIServer([Reply.rate_limited(1), Reply.json(GRAPH)]) as srv, _client(srv) as client:
        t0 = time.monotonic()
        _, report = decompose(TRACE, mode="llm-single", client=client)
        assert time.monotonic() - t0 >= 0.95
    assert report.ok and len(srv.chat_requests) == 2


def test_timeout_then_valid() -> None:
    with (
        FakeOpenAIServer([Reply.slow(3.0, GRAPH), Reply.json(GRAPH)]) as srv,
        _client(srv, timeout_s=0.5) as c,
    ):
        _, report = decompose(TRACE, mode="llm-single", client=c)
    assert report.ok and len(srv.chat_requests) == 2


@pytest.mark.parametrize(("mode", "calls"), [("llm-five-step", 5), ("llm-single", 1)])
def test_server_never_valid_gives_clear_error_and_caches_nothing(
    tmp_path: Path, mode: str, calls: int
) -> None:
    """No valid answer in any call: an error, never an HDAG made by the rules alone."""
    with (
        FakeOpenAIServer(responder=lambda req: Reply.text("I cannot do that.")) as srv,
        _client(srv, tmp_path, repair_retries=2) as c,
        pytest.raises(LLMInvalidOutputError) as info,
    ):
        decompose(TRACE, mode=mode, client=c)  # type: ignore[arg-type]
    assert info.value.attempts == 3 and info.value.raw_output == "I cannot do that."
    assert len(srv.chat_requests) == 3 * calls  # each step: one answer and two repairs
    assert not list(tmp_path.rglob("*.json"))


def test_a_step_without_a_valid_answer_falls_to_the_rules_and_says_so() -> None:
    """Five steps: the model never gets step 1 right but answers the others."""

    def responder(request: dict[str, Any]) -> Any:
        if requested_schema_name(request) == "hdag_levels":
            return Reply.truncated('{"blocks": [{"level": "STEP", "paragraph": "P1", "text": "We add the')
        return respond(request)

    with FakeOpenAIServer(responder=responder) as srv, _client(srv, repair_retries=1) as c:
        h, report = decompose(TRACE, mode="llm-five-step", client=c)
        usage = c.usage()
    assert report.ok
    assert any(
        n.startswith("hdag_levels: the model gave no valid answer in 2 tries; rules used")
        for n in h.metadata.repairs
    )
    assert usage.failed == 1 and usage.requests == 5


def test_server_down_is_unavailable() -> None:
    srv = FakeOpenAIServer([Reply.http_error(503)] * 10)
    with srv, _client(srv, max_retries=1) as c, pytest.raises(LLMUnavailableError):
        decompose(TRACE, mode="llm-single", client=c)


@pytest.mark.parametrize("mode", ["llm-single", "llm-five-step"])
def test_long_trace_is_chunked_not_truncated(responder_server: FakeOpenAIServer, mode: str) -> None:
    paras = [f"Paragraph {i}: we have {i} + {i} = {2 * i} marbles in box {i}." for i in range(1, 31)]
    trace = TraceInput(problem="How many marbles?", thinking="\n\n".join(paras))
    with _client(responder_server) as client:
        h, report = llm_decompose(trace, client, mode=mode, chunk_chars=400)  # type: ignore[arg-type]
    assert report.ok and report.completeness == 1.0 and report.repairs == []
    first_calls = [r for r in responder_server.chat_requests if _name(r) in ("hdag_single", "hdag_levels")]
    assert len(first_calls) > 3
    seen: list[str] = []
    for r in first_calls:
        seen += [p for p in paras if p in r.body["messages"][1]["content"]]
    assert sorted(seen) == sorted(paras)  # every paragraph sent exactly once (chunks may run in parallel)
    assert any('<paragraph id="P30">' in r.body["messages"][1]["content"] for r in first_calls)
    later = first_calls[1].body["messages"][1]["content"] if mode == "llm-single" else ""
    if mode == "llm-single":
        assert '"id": "G1"' in later and '"id": "O1"' in later  # earlier chunk's ids as context
    assert {n.content for n in h.nodes} >= set(paras)


@pytest.mark.parametrize("mode", ["llm-single", "llm-five-step"])
def test_fallback_without_structured_output(mode: str) -> None:
    with FakeOpenAIServer(responder=respond, reject_response_format=True) as srv, _client(srv) as client:
        h, report = decompose(TRACE, mode=mode, client=client)  # type: ignore[arg-type]
    assert report.ok and client.output_mode == "text"
    kinds = [r.body.get("response_format", {}).get("type") for r in srv.chat_requests]
    assert kinds[:2] == ["json_schema", "json_object"]  # detected once, on the first request
    assert all(k is None for k in kinds[2:]) and len(kinds) > 2
    assert "JSON Schema" in srv.chat_requests[2].body["messages"][0]["content"]
    assert any(n.primary_auditor is AuditorType.T_AUTO for n in h.nodes)


def test_high_stakes_is_told_to_the_auditor_step(responder_server: FakeOpenAIServer) -> None:
    trace = TraceInput(
        problem="Is the dose safe?", thinking="The dose might be too high for this patient.", high_stakes=True
    )
    with _client(responder_server) as client:
        h, report = decompose(trace, mode="llm-five-step", client=client)
    assert report.ok
    aud = next(r for r in responder_server.chat_requests if _name(r) == "hdag_auditors")
    assert "high-stakes" in aud.body["messages"][1]["content"]
    assert any(n.primary_auditor is AuditorType.T_HUMAN for n in h.nodes)


def test_pre_split_steps_map_back(responder_server: FakeOpenAIServer) -> None:
    trace = TraceInput(problem="Add then double.", steps=["First 2 + 3 = 5.", "Then 5 * 2 = 10. Done."])
    with _client(responder_server) as client:
        h, report = decompose(trace, mode="llm-single", client=client)
    assert report.ok
    assert sorted({n.step_index for n in h.nodes if n.step_index is not None}) == [0, 1]


def test_paragraph_ids_are_stable_and_long_paragraphs_split() -> None:
    long_para = " ".join(f"Sentence {i} is here." for i in range(200))
    doc = TraceInput(problem="p", thinking=f"Short one.\n\n{long_para}\n\nEnd.").to_document()
    paras = document_paragraphs(doc, max_chars=500)
    ids = [p.pid for p in paras]
    assert ids[0] == "P1" and ids[-1] == "P3" and all(i.startswith("P2.") for i in ids[1:-1])
    assert all(p.end - p.start <= 500 for p in paras)
    assert sum(len(c) for c in chunk_paragraphs(paras, 500)) == len(paras)
    again = [p.pid for p in document_paragraphs(doc, max_chars=500)]
    assert again == ids


def test_five_step_chunks_in_parallel_give_the_same_hdag(responder_server: FakeOpenAIServer) -> None:
    paras = [f"Box {i} holds {i} + {i} = {2 * i} marbles. So box {i} is done." for i in range(1, 25)]
    trace = TraceInput(problem="How many marbles?", thinking="\n\n".join(paras))
    results = []
    for concurrency in (1, 4):
        with _client(responder_server, concurrency=concurrency) as client:
            h, report = llm_decompose(trace, client, mode="llm-five-step", chunk_chars=300)
        assert report.ok
        results.append(h)
    one, four = results
    assert [(n.id, n.span, n.abstraction_level) for n in one.nodes] == [
        (n.id, n.span, n.abstraction_level) for n in four.nodes
    ]
    assert one.edges == four.edges
    assert one.metadata.llm_calls == four.metadata.llm_calls


def test_earlier_context_is_bounded(
    responder_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import trustnode.hdag.llm_state as pipeline

    monkeypatch.setattr(pipeline, "EARLIER_LIMIT", 5)
    paras = [f"Let n be {i}. Box {i} holds {i} + 1 = {i + 1} marbles." for i in range(1, 21)]
    trace = TraceInput(problem="How many marbles?", thinking="\n\n".join(paras))
    with _client(responder_server) as client:
        h, report = llm_decompose(trace, client, mode="llm-single", chunk_chars=200)
    assert report.ok and report.completeness == 1.0
    last = [r for r in responder_server.chat_requests if _name(r) == "hdag_single"][-1]
    earlier = last.body["messages"][1]["content"].split("<earlier>\n", 1)[1].split("\n</earlier>", 1)[0]
    import json as _json

    listed = _json.loads(earlier)
    detail = [e for e in listed if e["level"] in ("STEP", "OPERATION")]
    assert len(detail) == 5
    assert any(e["level"] == "TACTIC" for e in listed)  # planning segments are always listed
