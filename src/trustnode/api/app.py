"""The node's REST API: providers submit traces; anyone reads on-chain outcomes.

Errors always come back as `{"error": <message>, "fields": [...]}` with the right status,
naming the offending field, so a client never has to guess what was wrong.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI, Header, Request, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from trustnode.api.auth import authenticate
from trustnode.api.public import register_public_routes
from trustnode.api.views import TraceAccepted, TraceView, trace_view
from trustnode.api.web import register_web
from trustnode.models.trace import TraceInput
from trustnode.node.context import NodeContext
from trustnode.node.jobs import JobNotFoundError


class ErrorBody(BaseModel):
    error: str
    fields: list[dict[str, str]] = []


def _error(status_code: int, message: str, fields: list[dict[str, str]] | None = None) -> JSONResponse:
    return JSONResponse(
        status_code=status_code, content=ErrorBody(error=message, fields=fields or []).model_dump()
    )


def _field_errors(errors: list[Any]) -> list[dict[str, str]]:
    out = []
    for e in errors:
        loc = [str(p) for p in e.get("loc", ()) if p not in ("body",)]
        out.append({"field": ".".join(loc) or "(body)", "message": str(e.get("msg", "invalid"))})
    return out


def create_app(ctx: NodeContext) -> FastAPI:
    """Build the app around a node context (settings, job queue, chain access)."""
    app = FastAPI(
        title="trustnode", version="0.1.0", description="Decentralized auditing of LLM reasoning traces."
    )
    app.state.ctx = ctx
    limit = ctx.settings.api.max_body_bytes

    @app.middleware("http")
    async def body_limit(request: Request, call_next: Any) -> Any:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            return _error(413, f"request body of {declared} bytes exceeds the limit of {limit} bytes")
        if request.method in ("POST", "PUT", "PATCH"):
            body = await request.body()
            if len(body) > limit:
                return _error(413, f"request body of {len(body)} bytes exceeds the limit of {limit} bytes")
        return await call_next(request)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        resp = _error(exc.status_code, str(exc.detail))
        for k, v in (exc.headers or {}).items():
            resp.headers[k] = v
        return resp

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        fields = _field_errors(list(exc.errors()))
        names = ", ".join(f["field"] for f in fields)
        return _error(422, f"invalid request: {names}", fields)

    @app.post(
        "/v1/traces",
        status_code=status.HTTP_202_ACCEPTED,
        response_model=TraceAccepted,
        responses={401: {"model": ErrorBody}, 413: {"model": ErrorBody}, 422: {"model": ErrorBody}},
    )
    async def submit_trace(
        request: Request, idempotency_key: str | None = Header(default=None, max_length=128)
    ) -> Any:
        """Queue a reasoning trace for auditing; returns its id at once (the audit runs in the background)."""
        provider = await authenticate(request, ctx.settings.api)
        raw = await request.body()
        try:
            payload = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return _error(400, f"body is not valid JSON: {exc}")
        if not isinstance(payload, dict):
            return _error(
                422,
                "invalid request: the body must be a JSON object",
                [{"field": "(body)", "message": "not an object"}],
            )
        try:
            trace = TraceInput.model_validate(payload)
        except ValidationError as exc:
            fields = _field_errors(list(exc.errors()))
            return _error(422, "invalid trace: " + ", ".join(f["field"] for f in fields), fields)
        job, created = ctx.jobs.submit(trace, provider, idempotency_key)
        ctx.notify_new_job()
        return JSONResponse(
            status_code=202 if created else 200,
            content=TraceAccepted(trace_id=job.id, status=job.status, stage=job.stage).model_dump(
                mode="json"
            ),
            headers={"Location": f"/v1/traces/{job.id}"},
        )

    @app.get("/v1/traces/{trace_id}", response_model=TraceView, responses={404: {"model": ErrorBody}})
    async def get_trace(trace_id: str, request: Request) -> Any:
        """Status, session id and transactions of a trace; the HDAG only to its own provider."""
        try:
            job = ctx.jobs.get(trace_id)
        except JobNotFoundError:
            return _error(404, f"no trace with id {trace_id!r}")
        has_credentials = any(
            h in request.headers for h in ("authorization", "x-api-key", "x-signer", "x-signature")
        )
        provider = await authenticate(request, ctx.settings.api) if has_credentials else None
        return trace_view(job, include_hdag=provider == job.provider)

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        """Liveness plus what this node can reach."""
        return ctx.health()

    register_public_routes(app, ctx)
    register_web(app, ctx)
    return app
