"""The fake OpenAI-compatible server itself: real HTTP, recording, lifetime, standalone mode."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import httpx
import pytest

from trustnode.llm.client import LLMClient
from trustnode.llm.fake_server import FakeOpenAIServer, Reply, load_responder

from .conftest import make_settings


def _chat(base_url: str, content: str = "hi", **extra: Any) -> httpx.Response:
    body = {"model": "m", "messages": [{"role": "user", "content": content}], **extra}
    return httpx.post(base_url + "/chat/completions", json=body, timeout=5)


def test_script_order_recording_and_usage() -> None:
    seen: list[Any] = []

    def dyn(req: dict[str, Any]) -> dict[str, Any]:
        seen.append(req["messages"][-1]["content"])
        return {"dynamic": True}

    with FakeOpenAIServer([{"a": 1}, "raw text", dyn, Reply.http_error(500, "boom")]) as srv:
        r1, r2, r3, r4, r5 = (_chat(srv.base_url, f"m{i}") for i in range(5))
        models = httpx.get(srv.base_url + "/models", timeout=5).json()
    assert json.loads(r1.json()["choices"][0]["message"]["content"]) == {"a": 1}
    assert r2.json()["choices"][0]["message"]["content"] == "raw text"
    assert json.loads(r3.json()["choices"][0]["message"]["content"]) == {"dynamic": True}
    assert seen == ["m2"]
    assert r4.status_code == 500 and r4.json()["error"]["message"] == "boom"
    assert r5.status_code == 500 and "exhausted" in r5.json()["error"]["message"]
    assert r1.json()["usage"]["prompt_tokens"] >= 1
    assert [r.body["messages"][0]["content"] for r in srv.chat_requests] == ["m0", "m1", "m2", "m3", "m4"]
    assert models["data"][0]["id"] == "fake-model"


def test_rejects_response_format_and_bad_requests() -> None:
    with FakeOpenAIServer(responder=lambda req: {"ok": 1}, reject_response_format=True) as srv:
        rej = _chat(srv.base_url, response_format={"type": "json_object"})
        ok = _chat(srv.base_url)
        bad = httpx.post(srv.base_url + "/chat/completions", content=b"{nope", timeout=5)
        missing = httpx.post(srv.base_url + "/chat/completions", json={"model": "m"}, timeout=5)
        nowhere = httpx.post(srv.base_url + "/nowhere", json={}, timeout=5)
    assert rej.status_code == 400 and "response_format" in rej.json()["error"]["message"]
    assert ok.status_code == 200
    assert bad.status_code == 400 and missing.status_code == 400 and nowhere.status_code == 404


def test_retry_after_header_is_sent() -> None:
    with FakeOpenAIServer([Reply.rate_limited(7)]) as srv:
        r = _chat(srv.base_url)
    assert r.status_code == 429 and r.headers["Retry-After"] == "7"


def test_broken_responder_gives_500_and_server_survives() -> None:
    def broken(req: dict[str, Any]) -> Any:
        raise RuntimeError("oops")

    with FakeOpenAIServer([broken, {"fine": True}]) as srv:
        assert _chat(srv.base_url).status_code == 500
        assert _chat(srv.base_url).status_code == 200


def test_bounded_lifetime_stops_by_itself() -> None:
    srv = FakeOpenAIServer(responder=lambda req: {"x": 1}, lifetime_s=0.5).start()
    assert _chat(srv.base_url).status_code == 200
    time.sleep(1.0)
    with pytest.raises(httpx.TransportError):
        _chat(srv.base_url)


def test_load_responder_errors() -> None:
    assert callable(load_responder("trustnode.llm.fake_server:echo_responder"))
    with pytest.raises(ValueError):
        load_responder("no_colon")
    with pytest.raises(AttributeError):
        load_responder("trustnode.llm.fake_server:missing")


def test_standalone_process_serves_a_client() -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "trustnode.llm.fake_server",
            "--port",
            "0",
            "--responder",
            "trustnode.llm.fake_server:echo_responder",
            "--lifetime",
            "60",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        from pydantic import BaseModel

        class Echo(BaseModel):
            echo: str

        with LLMClient(make_settings(info["base_url"])) as client:
            out = client.complete_json([{"role": "user", "content": "ping 42"}], Echo)
        assert out.echo == "ping 42"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert proc.returncode == 0


def test_route_by_schema_dispatches_on_the_requested_name() -> None:
    from pydantic import BaseModel

    from trustnode.llm.fake_server import requested_schema_name, route_by_schema

    class A(BaseModel):
        who: str

    responder = route_by_schema(
        {"hdag_": lambda req: {"who": "hdag"}, "judge_": lambda req: {"who": "judge"}},
        default=lambda req: {"who": "default"},
    )
    for reject in (False, True):  # structured output, and the JSON-instruction fallback
        with FakeOpenAIServer(responder=responder, reject_response_format=reject) as srv:
            with LLMClient(make_settings(srv.base_url)) as client:
                got = [
                    client.complete_json([{"role": "user", "content": "x"}], A, name=n).who
                    for n in ("hdag_single", "judge_findings", "other")
                ]
            assert got == ["hdag", "judge", "default"]
            names = [
                requested_schema_name(r.body)
                for r in srv.chat_requests
                if r.body.get("response_format") is None
            ]
            assert names == ([] if not reject else ["hdag_single", "judge_findings", "other"])
    strict = route_by_schema({"hdag_": lambda req: {"who": "hdag"}})
    reply = strict({"messages": [], "response_format": {"json_schema": {"name": "nope"}}})
    assert isinstance(reply, Reply) and reply.status == 400


def test_standalone_process_with_routes() -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "trustnode.llm.fake_server",
            "--port",
            "0",
            "--lifetime",
            "60",
            "--route",
            "hdag_=trustnode.hdag.fake_responder:respond",
            "--route",
            "echo=trustnode.llm.fake_server:echo_responder",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        from trustnode.hdag import decompose
        from trustnode.models.trace import TraceInput

        with LLMClient(make_settings(info["base_url"])) as client:
            h, report = decompose(
                TraceInput(problem="What is 2 + 2?", thinking="We add. 2 + 2 = 4."),
                mode="llm-single",
                client=client,
            )
        assert report.ok and h.metadata.llm_calls == 1
    finally:
        proc.terminate()
        proc.wait(timeout=10)
