"""Request bodies are checked before any handler sees them: size first, then JSON nesting.

Pure ASGI, so an oversize body is refused while it streams in (never buffered past the limit,
declared length or not), and a hostile nesting depth is refused before a recursive parser
runs. The accepted body is replayed to the app unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from trustnode.api.limits import MAX_JSON_DEPTH, json_depth_exceeds

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_FORM = b"application/x-www-form-urlencoded"


def _header(scope: Scope, name: bytes) -> bytes | None:
    for k, v in scope.get("headers", []):
        if k.lower() == name:
            return bytes(v)
    return None


async def _send_error(send: Send, status: int, message: str, field: str = "(body)") -> None:
    body = json.dumps({"error": message, "fields": [{"field": field, "message": message}]}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BodyGuard:
    """Refuse bodies over `max_bytes` (413) and JSON nested deeper than MAX_JSON_DEPTH (422)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_bytes
        declared = _header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _send_error(
                send, 413, f"request body of {int(declared)} bytes exceeds the limit of {limit} bytes"
            )
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await _send_error(send, 413, f"request body exceeds the limit of {limit} bytes")
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        ctype = (_header(scope, b"content-type") or b"").split(b";")[0].strip().lower()
        if body and ctype != _FORM and json_depth_exceeds(body):
            await _send_error(
                send, 422, f"the JSON body is nested deeper than {MAX_JSON_DEPTH} levels", field="(body)"
            )
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
