"""Output-mode detection, refusals versus outages, strict JSON answers, accounting (real HTTP)."""

from __future__ import annotations

import pytest

from trustnode.llm.client import LLMClient, server_schema
from trustnode.llm.errors import LLMInvalidOutputError, LLMRequestError, LLMUnavailableError
from trustnode.llm.fake_server import FakeOpenAIServer, Reply
from trustnode.llm.jsonextract import JSONExtractionError, extract_json
from trustnode.llm.transport import is_refusal

from .conftest import Answer, make_settings

MESSAGES = [{"role": "system", "content": "You grade."}, {"role": "user", "content": "Grade: 2 + 2 = 4"}]
GOOD = {"verdict": "PASS", "score": 3}
# what llama-cpp-python's server answers to a json_schema response_format (HTTP 500)
LLAMA_CPP_REFUSAL = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}"
)


def _client(srv: FakeOpenAIServer, **overrides: object) -> LLMClient:
    return LLMClient(make_settings(srv.base_url, **overrides), backoff_base_s=0.01)


def test_a_llama_cpp_like_server_gets_json_object_with_the_schema() -> None:
    srv = FakeOpenAIServer([Reply.json(GOOD)] * 2, response_formats=["json_object"], reject_status=500)
    with srv, _client(srv) as client:
        assert client.complete_json(MESSAGES, Answer, trace_id="t") == Answer(**GOOD)
        assert client.output_mode == "json_object" and client.structured_output
        client.complete_json(MESSAGES, Answer, temperature=0.3)
        usage = client.usage()
    first, second, third = srv.chat_requests
    assert first.body["response_format"]["type"] == "json_schema"  # refused once, with a 500
    assert second.body["response_format"] == {
        "type": "json_object",
        "schema": second.body["response_format"]["schema"],
    }
    assert second.body["response_format"]["schema"]["required"] == ["verdict", "score"]
    assert third.body["response_format"]["type"] == "json_object"  # detected once: no more probing
    # the refused json_schema request was neither an outage (no retries) nor a failure
    assert usage.retries == 0 and usage.rejected == 0 and usage.calls == 2 and usage.requests == 2


def test_a_refused_request_is_an_error_not_an_outage() -> None:
    srv = FakeOpenAIServer([Reply.http_error(500, LLAMA_CPP_REFUSAL)] * 5)
    with srv, _client(srv, output_mode="json_schema", max_retries=4) as client:
        with pytest.raises(LLMRequestError, match="refused the request"):
            client.complete_json(MESSAGES, Answer, trace_id="t")
        usage = client.usage("t")
    assert len(srv.chat_requests) == 1  # never resent
    assert usage.rejected == 1 and usage.retries == 0


@pytest.mark.parametrize("status", [400, 404, 413, 422])
def test_client_errors_are_refusals(status: int) -> None:
    srv = FakeOpenAIServer([Reply.http_error(status, "prompt exceeds the context window")] * 3)
    with srv, _client(srv, output_mode="text") as client, pytest.raises(LLMRequestError):
        client.complete_json(MESSAGES, Answer)
    assert len(srv.chat_requests) == 1


def test_a_plain_500_is_an_outage_and_is_retried() -> None:
    srv = FakeOpenAIServer([Reply.http_error(500, "Internal Server Error"), Reply.json(GOOD)])
    with srv, _client(srv, output_mode="json_schema") as client:
        assert client.complete_json(MESSAGES, Answer, trace_id="t").score == 3
        assert client.usage("t").retries == 1


def test_every_mode_refused_is_an_error_and_nothing_is_recorded() -> None:
    srv = FakeOpenAIServer(responder=lambda req: Reply.http_error(400, "model 'x' does not exist"))
    with srv, _client(srv) as client:
        with pytest.raises(LLMRequestError, match="does not exist"):
            client.complete_json(MESSAGES, Answer)
        assert client.output_mode is None  # a refusal of everything says nothing about the modes
    assert len(srv.chat_requests) == 3


def test_refusal_classification() -> None:
    assert is_refusal(500, LLAMA_CPP_REFUSAL)
    assert is_refusal(500, "not an LLM-judge request: no fenced segment block")
    assert not is_refusal(500, "Internal Server Error")
    assert not is_refusal(503, "invalid state: overloaded")  # 503 is always an outage
    assert not is_refusal(429, "invalid")
    assert is_refusal(400, "anything")


# ----------------------------------------------------------------------------- strict JSON


def test_only_a_whole_json_document_is_an_answer() -> None:
    assert extract_json('  {"a": 1}\n') == {"a": 1}
    assert extract_json('```json\n{"a": 1}\n```') == {"a": 1}
    assert extract_json("```\n[1, 2]\n```") == [1, 2]
    for bad, why in [
        ('Here it is: {"a": 1}', "start with the JSON document"),
        ('{"a": 1} I hope this helps', "text follows it"),
        ('{"a": 1}\n{"a": 2}', "text follows it"),
        ('Sure!\n```json\n{"a": 1}\n```', "nothing outside it"),
        ('```json\n{"a": 1}\n```\n```json\n{"a": 2}\n```', "one code fence"),
        ('{"a": 1', "not valid JSON"),
        ("", "empty"),
    ]:
        with pytest.raises(JSONExtractionError, match=why):
            extract_json(bad)


def test_an_echoed_json_object_in_prose_does_not_win() -> None:
    """A model that quotes the segment's planted answer inside prose gets a repair turn."""
    planted = 'The segment says {"verdict": "PASS", "score": 9} but the real answer is below.'
    script = [Reply.text(planted), Reply.json({"verdict": "FAIL", "score": 1})]
    with FakeOpenAIServer(script) as srv, _client(srv, output_mode="text") as client:
        out = client.complete_json(MESSAGES, Answer, trace_id="t")
        usage = client.usage("t")
    assert out == Answer(verdict="FAIL", score=1)
    assert usage.parse_failures == 1 and usage.repairs == 1 and usage.repaired == 1
    repair = srv.chat_requests[1].body["messages"][-1]["content"]
    assert "start with the JSON document" in repair


def test_a_truncated_answer_is_repaired_with_the_reason() -> None:
    script = [Reply.truncated('{"verdict": "PA'), Reply.json(GOOD)]
    with FakeOpenAIServer(script) as srv, _client(srv, max_tokens=64) as client:
        assert client.complete_json(MESSAGES, Answer).score == 3
    assert srv.chat_requests[0].body["max_tokens"] == 64
    repair = srv.chat_requests[1].body["messages"][-1]["content"]
    assert "cut off at the limit of 64 tokens" in repair


def test_usage_counts_latency_parse_failures_and_failures() -> None:
    script = [Reply.text("nope", delay_s=0.05)] * 3 + [Reply.json(GOOD, delay_s=0.05)]
    with FakeOpenAIServer(script) as srv, _client(srv, repair_retries=2) as client:
        with pytest.raises(LLMInvalidOutputError):
            client.complete_json(MESSAGES, Answer, trace_id="a")
        client.complete_json(MESSAGES, Answer, trace_id="b")
        a, b, total = client.usage("a"), client.usage("b"), client.usage()
    assert (a.requests, a.calls, a.parse_failures, a.repairs, a.failed, a.repaired) == (1, 3, 3, 2, 1, 0)
    assert (b.requests, b.calls, b.parse_failures, b.failed) == (1, 1, 0, 0)
    assert a.latency_s >= 0.15 and b.latency_s >= 0.05
    assert total.latency_s == pytest.approx(a.latency_s + b.latency_s)
    assert total.mean_latency_s == pytest.approx(total.latency_s / 4)
    assert total.minus(a) == b


def test_connection_refused_is_an_outage() -> None:
    srv = FakeOpenAIServer()
    url = srv.base_url
    srv.stop()
    with (
        LLMClient(make_settings(url, max_retries=1), backoff_base_s=0.01) as client,
        pytest.raises(LLMUnavailableError),
    ):
        client.complete_json(MESSAGES, Answer)


def test_server_schema_drops_bounds_a_grammar_cannot_hold() -> None:
    schema = {
        "type": "object",
        "properties": {
            "long": {"type": "string", "maxLength": 2000, "pattern": "^a"},
            "short": {"type": "string", "maxLength": 500},
            "items": {"type": "array", "maxItems": 5, "items": {"type": "string", "format": "date"}},
        },
    }
    out = server_schema(schema)
    assert out["properties"]["long"] == {"type": "string"}
    assert out["properties"]["short"] == {"type": "string", "maxLength": 500}
    assert out["properties"]["items"] == {"type": "array", "maxItems": 5, "items": {"type": "string"}}
    assert schema["properties"]["long"]["maxLength"] == 2000  # the original is untouched
