"""A real OpenAI-compatible HTTP server with scripted answers, for tests and demos.

It binds 127.0.0.1 on a free port, serves `/v1/chat/completions` and `/v1/models` from a
background thread, records every request it receives (tests assert what was sent), and
stops by itself after `lifetime_s`. Answers come from a script consumed in order (JSON,
raw text, HTTP errors with Retry-After, slow answers) and then from a responder callable.

Standalone (the demo's LLM auditor talks to it):
    python -m trustnode.llm.fake_server --port 8011 --responder package.module:func
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import BaseModel

from trustnode.llm.responders import (
    Responder,
    echo_responder,
    load_responder,
    requested_schema_name,
    route_by_schema,
)


@dataclass(frozen=True)
class Reply:
    """One scripted answer: assistant `content` (status 200) or an HTTP error."""

    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    error: str = "scripted error"
    finish_reason: str = "stop"

    @classmethod
    def json(cls, value: Any, *, delay_s: float = 0.0) -> Reply:
        """Content that is the JSON text of `value` (a dict, list or pydantic model)."""
        if isinstance(value, BaseModel):
            return cls(content=value.model_dump_json(by_alias=True), delay_s=delay_s)
        return cls(content=json.dumps(value, ensure_ascii=False), delay_s=delay_s)

    @classmethod
    def text(cls, content: str, *, delay_s: float = 0.0) -> Reply:
        """Raw content, e.g. malformed JSON or JSON wrapped in prose."""
        return cls(content=content, delay_s=delay_s)

    @classmethod
    def truncated(cls, content: str) -> Reply:
        """An answer cut off by max_tokens (finish_reason "length")."""
        return cls(content=content, finish_reason="length")

    @classmethod
    def http_error(
        cls, status: int, message: str = "scripted error", *, retry_after: float | None = None
    ) -> Reply:
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
        return cls(status=status, headers=headers, error=message)

    @classmethod
    def rate_limited(cls, retry_after: float) -> Reply:
        return cls.http_error(429, "rate limited", retry_after=retry_after)

    @classmethod
    def slow(cls, delay_s: float, value: Any = None) -> Reply:
        """An answer that only arrives after `delay_s` (longer than the client timeout)."""
        if isinstance(value, str):
            return cls.text(value, delay_s=delay_s)
        return cls.json(value if value is not None else {}, delay_s=delay_s)


ScriptItem = Reply | str | dict[str, Any] | list[Any] | BaseModel | Responder


@dataclass
class RecordedRequest:
    """What the server received: method, path, headers and parsed JSON body."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float


def as_reply(value: Any) -> Reply:
    """Normalise a responder or script value into a `Reply`."""
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply.text(value)
    if isinstance(value, BaseModel | dict | list):
        return Reply.json(value)
    raise TypeError(f"cannot turn {type(value).__name__} into a fake LLM reply")


def _count_tokens(text: str) -> int:
    """Deterministic token estimate (about four characters per token)."""
    return max(1, math.ceil(len(text) / 4)) if text else 0


class FakeOpenAIServer:
    """Scripted OpenAI-compatible server on 127.0.0.1; use as a context manager."""

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        *,
        responder: Responder | None = None,
        reject_response_format: bool = False,
        response_formats: Iterable[str] = ("json_schema", "json_object"),
        reject_status: int = 400,
        model: str = "fake-model",
        host: str = "127.0.0.1",
        port: int = 0,
        lifetime_s: float = 300.0,
    ) -> None:
        self._script: list[ScriptItem] = list(script)
        self.responder = responder
        self.response_formats = frozenset(() if reject_response_format else response_formats)
        self.reject_status = reject_status
        self.model = model
        self.lifetime_s = lifetime_s
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._counter = 0
        self._httpd = ThreadingHTTPServer((host, port), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None

    # ----------------------------------------------------------------- lifecycle
    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True, name="fake-llm"
        )
        self._thread.start()
        self._timer = threading.Timer(self.lifetime_s, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        if self._timer is not None and self._timer is not threading.current_thread():
            self._timer.cancel()
        if self._thread is not None:
            self._httpd.shutdown()  # only returns once serve_forever has been running
        self._httpd.server_close()

    def wait(self) -> None:
        """Block until the server stops (lifetime reached or `stop()` called)."""
        self._stop.wait()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----------------------------------------------------------------- scripting
    def push(self, *items: ScriptItem) -> None:
        """Append answers to the script while the server runs."""
        with self._lock:
            self._script.extend(items)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            item: ScriptItem | None = self._script.pop(0) if self._script else None
        if item is None:
            if self.responder is None:
                return Reply.http_error(500, "fake server: script exhausted and no responder")
            return as_reply(self.responder(body))
        if callable(item) and not isinstance(item, BaseModel):
            return as_reply(item(body))
        return as_reply(item)

    def _completion(self, body: dict[str, Any], content: str, finish_reason: str = "stop") -> dict[str, Any]:
        with self._lock:
            self._counter += 1
            n = self._counter
        prompt = "".join(str(m.get("content", "")) for m in body.get("messages", []) if isinstance(m, dict))
        pt, ct = _count_tokens(prompt), _count_tokens(content)
        return {
            "id": f"chatcmpl-fake-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
        }

    # ----------------------------------------------------------------- HTTP
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    return

            def _record(self, body: Any) -> None:
                with server._lock:
                    server.requests.append(
                        RecordedRequest(
                            self.command, self.path, dict(self.headers.items()), body, time.time()
                        )
                    )

            def do_GET(self) -> None:
                self._record(None)
                if self.path.rstrip("/") in ("/v1/models", "/models"):
                    self._send(
                        200,
                        {
                            "object": "list",
                            "data": [{"id": server.model, "object": "model", "owned_by": "fake"}],
                        },
                    )
                elif self.path.rstrip("/") in ("/health", "/v1/health"):
                    self._send(200, {"status": "ok"})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"null")
                except ValueError:
                    self._record(raw.decode("utf-8", "replace"))
                    self._send(400, {"error": {"message": "request body is not JSON"}})
                    return
                self._record(body)
                if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                    self._send(400, {"error": {"message": "'messages' is required"}})
                    return
                rf = body.get("response_format")
                kind = rf.get("type") if isinstance(rf, dict) else None
                if kind not in (None, "text") and kind not in server.response_formats:
                    self._send(
                        server.reject_status,
                        {
                            "error": {
                                "message": f"1 validation error: response_format.type: input should be one of "
                                f"{sorted(server.response_formats | {'text'})}, got {kind!r}",
                                "type": "invalid_request_error",
                                "param": "response_format",
                            }
                        },
                    )
                    return
                try:
                    reply = server._next_reply(body)
                except ValueError as exc:  # the responder does not serve this kind of request
                    self._send(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})
                    return
                except Exception as exc:  # a broken responder must not kill the server
                    self._send(500, {"error": {"message": f"responder failed: {exc!r}"}})
                    return
                if reply.delay_s > 0 and server._stop.wait(reply.delay_s):
                    return
                if reply.status != 200:
                    self._send(reply.status, {"error": {"message": reply.error}}, reply.headers)
                    return
                self._send(
                    200, server._completion(body, reply.content or "", reply.finish_reason), reply.headers
                )

        return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible server on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--responder", help="package.module:function (request json -> reply)")
    parser.add_argument(
        "--route",
        action="append",
        default=[],
        metavar="PREFIX=module:func",
        help="answer requests whose schema name starts with PREFIX with this responder (repeatable)",
    )
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--lifetime", type=float, default=3600.0, help="seconds before it stops by itself")
    parser.add_argument("--reject-response-format", action="store_true")
    parser.add_argument(
        "--formats",
        default="json_schema,json_object",
        help="response_format types it accepts (comma-separated; empty: none), like a given server",
    )
    args = parser.parse_args(argv)
    if not args.responder and not args.route:
        parser.error("give --responder or at least one --route")
    default = load_responder(args.responder) if args.responder else None
    responder = default
    if args.route:
        routes: dict[str, Responder] = {}
        for spec in args.route:
            prefix, sep, target = spec.partition("=")
            if not sep or not target:
                parser.error(f"--route must look like PREFIX=module:func, got {spec!r}")
            routes[prefix] = load_responder(target)
        responder = route_by_schema(routes, default)
    srv = FakeOpenAIServer(
        responder=responder,
        reject_response_format=args.reject_response_format,
        response_formats=[f for f in args.formats.split(",") if f],
        model=args.model,
        port=args.port,
        lifetime_s=args.lifetime,
    )
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=srv.stop, daemon=True).start())
    srv.start()
    print(json.dumps({"base_url": srv.base_url, "port": srv.port}), flush=True)
    try:
        srv.wait()
    except KeyboardInterrupt:
        srv.stop()
    return 0


__all__ = [
    "FakeOpenAIServer",
    "RecordedRequest",
    "Reply",
    "Responder",
    "as_reply",
    "echo_responder",
    "load_responder",
    "requested_schema_name",
    "route_by_schema",
]


if __name__ == "__main__":
    sys.exit(main())
