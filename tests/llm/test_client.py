"""LLMClient against the fake OpenAI-compatible server over real HTTP."""

from __future__ import annotations

import json
import threading
import time
from email.utils import formatdate
from pathlib import Path
from typing import Any

import pytest

from trustnode.llm.client import LLMClient
from trustnode.llm.errors import LLMError, LLMInvalidOutputError, LLMUnavailableError
from trustnode.llm.fake_server import FakeOpenAIServer, Reply
from trustnode.llm.transport import retry_after_seconds as _retry_after_seconds

from .conftest import Answer, make_settings

MESSAGES = [
    {"role": "system", "content": "You grade answers."},
    {"role": "user", "content": "Grade: 2 + 2 = 4"},
]


def _client(srv: FakeOpenAIServer, cache_dir: Path | None = None, **overrides: object) -> LLMClient:
    return LLMClient(make_settings(srv.base_url, **overrides), cache_dir, backoff_base_s=0.01)


def test_structured_output_request_and_parse() -> None:
    with FakeOpenAIServer([Reply.json({"verdict": "PASS", "score": 3})]) as srv, _client(srv) as client:
        out = client.complete_json(MESSAGES, Answer, trace_id="t1", name="grade", seed=11)
    assert out == Answer(verdict="PASS", score=3)
    (req,) = srv.chat_requests
    body = req.body
    assert body["model"] == "fake-model"
    assert body["messages"] == MESSAGES
    assert body["temperature"] == 0.0
    assert body["seed"] == 11
    rf = body["response_format"]
    assert rf["type"] == "json_schema"
    assert rf["json_schema"]["name"] == "grade"
    assert rf["json_schema"]["schema"]["required"] == ["verdict", "score"]
    assert req.headers["Authorization"] == "Bearer not-needed"
    usage = client.usage("t1")
    assert usage.calls == 1 and usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert client.usage("other").calls == 0


def test_default_seed_comes_from_settings() -> None:
    with (
        FakeOpenAIServer([Reply.json({"verdict": "PASS", "score": 1})]) as srv,
        _client(srv, seed=99) as client,
    ):
        client.complete_json(MESSAGES, Answer)
    assert srv.chat_requests[0].body["seed"] == 99


def test_fallback_when_server_rejects_response_format() -> None:
    script = [
        Reply.text('```json\n{"verdict": "FAIL", "score": 0}\n```'),
        Reply.json({"verdict": "PASS", "score": 2}),
    ]
    with FakeOpenAIServer(script, reject_response_format=True) as srv, _client(srv) as client:
        assert client.output_mode is None
        first = client.complete_json(MESSAGES, Answer, name="grade", trace_id="t")
        assert client.output_mode == "text" and not client.structured_output
        second = client.complete_json([{"role": "user", "content": "again"}], Answer)
        usage = client.usage("t")
    assert first == Answer(verdict="FAIL", score=0)
    assert second == Answer(verdict="PASS", score=2)
    reqs = srv.chat_requests
    # detection: json_schema refused, json_object refused, text answered; then text only
    assert [r.body.get("response_format", {}).get("type") for r in reqs] == [
        "json_schema",
        "json_object",
        None,
        None,
    ]
    assert usage.calls == 1 and usage.rejected == 0 and usage.retries == 0
    system = reqs[2].body["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("You grade answers.")
    assert '"verdict"' in system["content"] and "grade" in system["content"]
    # with no system message the schema instruction becomes one
    assert reqs[3].body["messages"][0]["role"] == "system"


def test_structured_disabled_in_settings_sends_no_response_format() -> None:
    srv = FakeOpenAIServer([Reply.text('{"verdict": "PASS", "score": 5}')])
    with srv, _client(srv, output_mode="text") as client:
        assert client.complete_json(MESSAGES, Answer).score == 5
    assert "response_format" not in srv.chat_requests[0].body


def test_malformed_json_is_repaired_with_the_error_shown() -> None:
    script = [Reply.text('{"verdict": "PASS", "score": 3'), Reply.json({"verdict": "PASS", "score": 3})]
    with FakeOpenAIServer(script) as srv, _client(srv) as client:
        out = client.complete_json(MESSAGES, Answer, trace_id="t")
        usage = client.usage("t")
    assert out.score == 3
    second = srv.chat_requests[1].body["messages"]
    assert second[: len(MESSAGES)] == MESSAGES
    assert second[-2] == {"role": "assistant", "content": '{"verdict": "PASS", "score": 3'}
    assert second[-1]["role"] == "user" and "JSON" in second[-1]["content"]
    assert usage.calls == 2 and usage.repairs == 1


def test_missing_field_is_repaired_and_named() -> None:
    script = [Reply.json({"verdict": "PASS"}), Reply.json({"verdict": "PASS", "score": 1})]
    with FakeOpenAIServer(script) as srv, _client(srv) as client:
        assert client.complete_json(MESSAGES, Answer).score == 1
    repair = srv.chat_requests[1].body["messages"][-1]["content"]
    assert "score" in repair and "Field required" in repair


def test_never_valid_output_raises_after_bounded_retries_and_caches_nothing(cache_dir: Path) -> None:
    script = [Reply.text("not json at all")] * 10
    srv = FakeOpenAIServer(script)
    with (
        srv,
        _client(srv, cache_dir, repair_retries=2) as client,
        pytest.raises(LLMInvalidOutputError) as info,
    ):
        client.complete_json(MESSAGES, Answer)
    assert len(srv.chat_requests) == 3
    assert info.value.attempts == 3
    assert info.value.raw_output == "not json at all"
    assert "must start with the JSON document" in info.value.validation_error
    assert not list(cache_dir.rglob("*.json"))


def test_429_honours_retry_after() -> None:
    script = [Reply.rate_limited(1.0), Reply.json({"verdict": "PASS", "score": 4})]
    with FakeOpenAIServer(script) as srv, _client(srv) as client:
        t0 = time.monotonic()
        out = client.complete_json(MESSAGES, Answer, trace_id="r")
        elapsed = time.monotonic() - t0
        usage = client.usage("r")
    assert out.score == 4
    reqs = srv.chat_requests
    assert len(reqs) == 2
    assert reqs[1].at - reqs[0].at >= 0.95
    assert elapsed >= 0.95
    assert usage.retries == 1 and usage.calls == 1


def test_5xx_is_retried_then_gives_up() -> None:
    srv = FakeOpenAIServer([Reply.http_error(503)] * 5)
    with srv, _client(srv, max_retries=2) as client, pytest.raises(LLMUnavailableError) as info:
        client.complete_json(MESSAGES, Answer)
    assert len(srv.chat_requests) == 3
    assert info.value.attempts == 3 and info.value.last_status == 503


def test_timeout_is_retried() -> None:
    script = [Reply.slow(3.0, {"verdict": "PASS", "score": 9}), Reply.json({"verdict": "FAIL", "score": 1})]
    with FakeOpenAIServer(script) as srv, _client(srv, timeout_s=0.5) as client:
        t0 = time.monotonic()
        out = client.complete_json(MESSAGES, Answer)
        assert time.monotonic() - t0 < 2.5
    assert out == Answer(verdict="FAIL", score=1)
    assert len(srv.chat_requests) == 2


def test_timeout_without_retries_is_unavailable() -> None:
    srv = FakeOpenAIServer([Reply.slow(3.0, {"verdict": "PASS", "score": 9})])
    with (
        srv,
        _client(srv, timeout_s=0.3, max_retries=0) as client,
        pytest.raises(LLMUnavailableError) as info,
    ):
        client.complete_json(MESSAGES, Answer)
    assert "timed out" in str(info.value)


def test_connection_refused_is_unavailable() -> None:
    srv = FakeOpenAIServer()
    url = srv.base_url
    srv.stop()  # never started: the port is closed
    client = LLMClient(make_settings(url, max_retries=1), backoff_base_s=0.01)
    with pytest.raises(LLMUnavailableError):
        client.complete_json(MESSAGES, Answer)


def test_auth_error_is_not_retried() -> None:
    srv = FakeOpenAIServer([Reply.http_error(401, "bad key")] * 3)
    with srv, _client(srv) as client, pytest.raises(LLMError) as info:
        client.complete_json(MESSAGES, Answer)
    assert not isinstance(info.value, LLMUnavailableError)
    assert len(srv.chat_requests) == 1


def test_no_base_url_is_a_clear_error() -> None:
    from trustnode.llm.settings import LLMSettings

    with pytest.raises(LLMError, match="base_url"):
        LLMClient(LLMSettings())


def test_disk_cache_hits_and_keys(cache_dir: Path) -> None:
    script = [Reply.json({"verdict": "PASS", "score": 1}), Reply.json({"verdict": "PASS", "score": 2})]
    with FakeOpenAIServer(script) as srv:
        with _client(srv, cache_dir) as client:
            a = client.complete_json(MESSAGES, Answer, trace_id="x")
            b = client.complete_json(MESSAGES, Answer, trace_id="x")
            c = client.complete_json(MESSAGES, Answer, trace_id="x", temperature=0.5)
            usage = client.usage("x")
        # a new client (new process in real life) reads the same cache
        with _client(srv, cache_dir) as again:
            d = again.complete_json(MESSAGES, Answer)
            assert again.usage().cache_hits == 1 and again.usage().calls == 0
    assert a == b == d and a.score == 1 and c.score == 2
    assert len(srv.chat_requests) == 2
    assert usage.calls == 2 and usage.cache_hits == 1


def test_concurrency_bound_across_threads() -> None:
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def responder(request: dict[str, Any]) -> Reply:
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.2)
        with lock:
            state["now"] -= 1
        n = json.loads(json.dumps(request["messages"][-1]["content"]))
        return Reply.json({"verdict": "PASS", "score": int(n)})

    results: list[int] = []
    with FakeOpenAIServer(responder=responder) as srv, _client(srv, concurrency=2) as client:

        def work(i: int) -> None:
            out = client.complete_json([{"role": "user", "content": str(i)}], Answer, trace_id=f"t{i % 2}")
            with lock:
                results.append(out.score)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert client.usage("t0").calls == 3 and client.usage("t1").calls == 3
        assert client.usage().calls == 6
    assert sorted(results) == list(range(6))
    assert state["max"] == 2


def test_list_models() -> None:
    with FakeOpenAIServer(model="m-1") as srv, _client(srv) as client:
        assert client.list_models() == ["m-1"]


def test_retry_after_parsing() -> None:
    assert _retry_after_seconds("2") == 2.0
    assert _retry_after_seconds("0.5") == 0.5
    assert _retry_after_seconds(None) is None
    assert _retry_after_seconds("soon") is None
    later = _retry_after_seconds(formatdate(time.time() + 30, usegmt=True))
    assert later is not None and 25 <= later <= 31


def test_max_tokens_is_sent_and_part_of_the_cache_key(cache_dir: Path) -> None:
    script = [Reply.json({"verdict": "PASS", "score": 1}), Reply.json({"verdict": "PASS", "score": 2})]
    with FakeOpenAIServer(script) as srv, _client(srv, cache_dir) as client:
        a = client.complete_json(MESSAGES, Answer, max_tokens=256)
        b = client.complete_json(MESSAGES, Answer)
    assert (a.score, b.score) == (1, 2)
    assert srv.chat_requests[0].body["max_tokens"] == 256
    assert srv.chat_requests[1].body["max_tokens"] == 2048  # every answer is bounded (the setting)


def test_schema_name_must_be_acceptable_to_openai() -> None:
    with FakeOpenAIServer() as srv, _client(srv) as client:
        with pytest.raises(LLMError, match="schema name"):
            client.complete_json(MESSAGES, Answer, name="bad name!")
        with pytest.raises(LLMError, match="no messages"):
            client.complete_json([], Answer)
    assert srv.chat_requests == []
