"""The start-up probe: a wrong endpoint is refused with a reason (issue 13 item 10)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from trustnode.audit.llm_judge import arithmetic_judge_responder
from trustnode.hdag.fake_responder import respond as hdag_responder
from trustnode.llm.client import LLMClient
from trustnode.llm.errors import LLMEndpointError, LLMUnavailableError
from trustnode.llm.fake_server import FakeOpenAIServer, Reply

from .conftest import make_settings


def _client(url: str, **overrides: object) -> LLMClient:
    return LLMClient(make_settings(url, **overrides), backoff_base_s=0.01)


def test_a_general_model_passes_and_the_mode_is_settled() -> None:
    srv = FakeOpenAIServer([Reply.json({"ok": True})], response_formats=["json_object"], model="m-1")
    with srv, _client(srv.base_url, model="m-1") as client:
        report = client.probe("judge")
        assert client.output_mode == "json_object"
    assert report.output_mode == "json_object" and report.answer_valid
    assert report.served_models == ["m-1"] and report.model_listed is True
    names = [r.body["response_format"]["type"] for r in srv.chat_requests]
    assert names == ["json_schema", "json_object"]
    assert srv.chat_requests[-1].body["max_tokens"] <= 64
    assert "json_object" in report.summary()


def test_the_judges_test_server_is_refused_as_a_decomposer() -> None:
    """The case of issue 13 item 10: the decomposer pointed at the judge's endpoint."""
    with FakeOpenAIServer(responder=arithmetic_judge_responder) as srv:
        with _client(srv.base_url) as judge_client:
            assert judge_client.probe("judge").answer_valid
        with _client(srv.base_url) as dec_client, pytest.raises(LLMEndpointError) as info:
            dec_client.probe("decomposer")
    assert "not an LLM endpoint this node can use for decomposer" in str(info.value)
    assert "not an LLM-judge request" in str(info.value)


def test_the_decomposers_test_server_answers_only_its_role() -> None:
    with FakeOpenAIServer(responder=hdag_responder) as srv:
        with _client(srv.base_url) as client:
            assert client.probe("decomposer").answer_valid
        with _client(srv.base_url) as client, pytest.raises(LLMEndpointError):
            client.probe("judge")


class _NotAnLLM(BaseHTTPRequestHandler):
    """A web server that is not an LLM endpoint (e.g. the node's own API)."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return

    def _answer(self) -> None:
        body = b"<html><body>trustnode</body></html>"
        status = 404 if self.path.startswith("/v1/") else 200
        self.send_response(status)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer()


@pytest.fixture
def web_server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _NotAnLLM)
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_web_server_that_is_not_an_llm_is_refused(web_server: str) -> None:
    with _client(web_server + "/v1") as client, pytest.raises(LLMEndpointError, match="HTTP 404"):
        client.probe("judge")
    with _client(web_server) as client, pytest.raises(LLMEndpointError, match="not a JSON object"):
        client.probe()  # the root answers 200 with HTML


def test_nothing_listening_is_unavailable() -> None:
    srv = FakeOpenAIServer()
    url = srv.base_url
    srv.stop()
    with _client(url, max_retries=0) as client, pytest.raises(LLMUnavailableError):
        client.probe("judge")
