"""The node's REST API: providers submit traces; anyone reads on-chain outcomes.

Errors always come back as `{"error": <message>, "fields": [...]}` with the right status,
naming the offending field, so a client never has to guess what was wrong; `/openapi.json`
documents every body, credential and error response.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from trustnode.api.auth import SECURITY_SCHEMES, Authenticator
from trustnode.api.bundles import PublicQueries
from trustnode.api.errors import FieldError, error_response, install_error_handlers
from trustnode.api.health import Health, HealthChecker
from trustnode.api.middleware import BodyGuard
from trustnode.api.once import UsedOnce, used_once_path
from trustnode.api.public import public_router
from trustnode.api.traces import traces_router
from trustnode.api.web import register_web
from trustnode.node.context import NodeContext

_NOT_AN_OBJECT = {"model_attributes_type", "dict_type", "model_type"}


def _field_errors(errors: list[Any]) -> list[FieldError]:
    out = []
    for e in errors:
        loc = [str(p) for p in e.get("loc", ()) if p != "body"]
        out.append(FieldError(field=".".join(loc) or "(body)", message=str(e.get("msg", "invalid"))))
    return out


def _validation_response(exc: RequestValidationError, path: str = "/v1/traces") -> JSONResponse:
    errors = list(exc.errors())
    if any(e.get("type") == "json_invalid" for e in errors):
        detail = next(
            str(e.get("ctx", {}).get("error", e.get("msg")))
            for e in errors
            if e.get("type") == "json_invalid"
        )
        return error_response(400, f"body is not valid JSON: {detail}")
    if any(tuple(e.get("loc", ())) == ("body",) and e.get("type") in _NOT_AN_OBJECT for e in errors):
        fields = [FieldError(field="(body)", message="not an object")]
        return error_response(422, "invalid request: the body must be a JSON object", fields)
    fields = _field_errors(errors)
    in_body = all(e.get("loc", ("",))[0] == "body" for e in errors)
    what = "invalid trace" if in_body and path.startswith("/v1/traces") else "invalid request"
    return error_response(422, f"{what}: " + ", ".join(f"{f.field} ({f.message})" for f in fields), fields)


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema plus the credential schemes the provider routes name."""
    if app.openapi_schema is None:
        schema = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        schema.setdefault("components", {})["securitySchemes"] = SECURITY_SCHEMES
        app.openapi_schema = schema
    return app.openapi_schema


def create_app(ctx: NodeContext) -> FastAPI:
    """Build the app around a node context (settings, job queue, chain access)."""
    settings = ctx.settings
    app = FastAPI(
        title="trustnode",
        version="0.1.0",
        description="Decentralized auditing of LLM reasoning traces. Errors share one body: "
        "`{error, fields}`.",
    )
    app.state.ctx = ctx
    used = UsedOnce(used_once_path(settings))
    app.state.used_once = used
    auth = Authenticator(settings.api, used)
    app.add_middleware(BodyGuard, max_bytes=settings.api.max_body_bytes)
    install_error_handlers(app, settings)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error_response(exc.status_code, str(exc.detail), headers=dict(exc.headers or {}))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _validation_response(exc, request.url.path)

    health = HealthChecker(ctx)
    app.state.health = health

    @app.get(
        "/healthz",
        response_model=Health,
        responses={503: {"model": Health, "description": "A dependency is down: see each check."}},
        tags=["node"],
    )
    async def healthz() -> JSONResponse:
        """What this node can reach: the chain (live and producing blocks), IPFS, the job queue."""
        report = await health.check()
        return JSONResponse(report.model_dump(mode="json"), status_code=200 if report.status == "ok" else 503)

    queries = PublicQueries(ctx)
    app.state.queries = queries
    app.include_router(traces_router(ctx, auth))
    app.include_router(public_router(queries, settings))
    if settings.canary_operator.enabled:  # this node writes, commits and reveals gold canaries
        from trustnode.api.canary_operator import canary_router
        from trustnode.node.canary_operator import CanaryOperator

        operator = CanaryOperator.for_node(ctx)
        app.state.canary_operator = operator
        app.include_router(canary_router(operator, auth))
    register_web(app, ctx, used)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app
