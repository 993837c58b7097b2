"""Responders of the fake server: how a stand-in picks its answer for a request.

A responder maps a chat request (parsed JSON) to a reply: a dict, a pydantic model, raw
text, or a `fake_server.Reply`. Requests name their task by the schema name the client
asked for, so one server can play several roles (`route_by_schema`).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

Responder = Callable[[dict[str, Any]], Any]


_NAMED = re.compile(r'JSON value named "([A-Za-z0-9_.\-]+)"')


def requested_schema_name(request: dict[str, Any]) -> str:
    """The schema name an LLMClient asked for: from `response_format`, or from the JSON
    instruction it adds on servers without structured output ("" when neither is there)."""
    rf = request.get("response_format")
    if isinstance(rf, dict):
        js = rf.get("json_schema")
        if isinstance(js, dict) and js.get("name"):
            return str(js["name"])
    for m in request.get("messages", []):
        if isinstance(m, dict) and m.get("role") == "system":
            found = _NAMED.search(str(m.get("content", "")))
            if found:
                return found.group(1)
    return ""


def route_by_schema(routes: dict[str, Responder], default: Responder | None = None) -> Responder:
    """One responder that dispatches on the requested schema name's prefix (longest first),
    so a single fake server can play the HDAG decomposer and the LLM judge at once."""
    ordered = sorted(routes.items(), key=lambda kv: -len(kv[0]))

    def dispatch(request: dict[str, Any]) -> Any:
        name = requested_schema_name(request)
        for prefix, responder in ordered:
            if name.startswith(prefix):
                return responder(request)
        if default is not None:
            return default(request)
        from trustnode.llm.fake_server import Reply  # the server imports this module

        return Reply.http_error(400, f"fake server: no responder for schema {name!r}")

    return dispatch


def echo_responder(request: dict[str, Any]) -> dict[str, Any]:
    """A minimal built-in responder: echoes the last user message as JSON (smoke tests)."""
    users = [m for m in request.get("messages", []) if isinstance(m, dict) and m.get("role") == "user"]
    return {"echo": str(users[-1].get("content", "")) if users else "", "model": request.get("model")}


def load_responder(spec: str) -> Responder:
    """Import `package.module:function`."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValueError(f"responder must look like 'package.module:function', got {spec!r}")
    func = getattr(importlib.import_module(module_name), attr)
    if not callable(func):
        raise TypeError(f"{spec} is not callable")
    return func  # type: ignore[no-any-return]
