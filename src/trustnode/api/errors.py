"""One error shape for every API answer, and one rule for what a dependency failure becomes.

Every error is `{"error": <message>, "fields": [{"field", "message"}, ...]}`. Client mistakes
are 4xx naming what is wrong; a dependency that is down (chain, IPFS, a deployment file that
is missing) is 503 saying which; nothing else should ever happen, and if it does the client
still gets the JSON body (500) and the details stay in the server log. Messages pass through
`public_text`, which removes credentials (RPC and IPFS URLs often embed an API key).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from web3.exceptions import Web3Exception

from trustnode.chain.accounts import KeyConfigError
from trustnode.chain.errors import ChainError, redact
from trustnode.config import Settings
from trustnode.storage.errors import StorageError

log = logging.getLogger(__name__)


class FieldError(BaseModel):
    field: str = Field(description="Dotted path of the offending field, or `(body)` for the whole body.")
    message: str


class ErrorBody(BaseModel):
    """The body of every error response."""

    error: str = Field(description="What went wrong and, where it helps, what to do.")
    fields: list[FieldError] = Field(default_factory=list, description="Per-field problems, if any.")


_DESCRIPTIONS = {
    400: "Malformed request (e.g. the body is not JSON).",
    401: "Missing or invalid credentials.",
    403: "Valid credentials that may not do this.",
    404: "No such resource.",
    409: "Conflicts with an earlier request (replayed signature, reused Idempotency-Key).",
    413: "Request body larger than `api.max_body_bytes`.",
    422: "Invalid input; `fields` names each problem.",
    429: "Too many open requests from this client; see the message.",
    503: "A dependency (chain, IPFS, deployment) is not available; retry later.",
}


def responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries for these error codes (all share `ErrorBody`)."""
    return {code: {"model": ErrorBody, "description": _DESCRIPTIONS[code]} for code in codes}


def error_response(
    status_code: int,
    message: str,
    fields: list[FieldError] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = ErrorBody(error=message, fields=fields or [])
    return JSONResponse(status_code=status_code, content=body.model_dump(), headers=headers)


class APIError(Exception):
    """Raised by handlers and dependencies; becomes `error_response(status, message)`."""

    def __init__(
        self,
        status_code: int,
        message: str,
        fields: list[FieldError] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message
        self.fields = fields or []
        self.headers = headers


def secret_urls(settings: Settings) -> list[str]:
    """Configured URLs whose credentials must never reach public output."""
    urls = [settings.chain.rpc_url, settings.ipfs.api_url, settings.llm.base_url]
    urls.append(settings.decomposer.llm.base_url)
    return [u for u in urls if u]


def public_text(text: str, settings: Settings, *extra_urls: str | None) -> str:
    """`text` fit for a public page or API answer: every URL and configured secret redacted."""
    return redact(text, *secret_urls(settings), *extra_urls)


def unavailable(exc: BaseException) -> str | None:
    """Which dependency `exc` says is down ('the chain', 'IPFS'), or None if it is not an outage."""
    if isinstance(exc, StorageError):
        return "IPFS"
    if isinstance(exc, ChainError | KeyConfigError | Web3Exception):
        return "the chain"
    if isinstance(exc, OSError):  # requests/httpx transport errors, a vanished deployment file
        return "the chain"
    return None


def dependency_error(exc: BaseException, settings: Settings, what: str = "") -> APIError | None:
    """A 503 APIError for an outage of the chain or IPFS (credentials removed), else None."""
    dependency = unavailable(exc)
    if dependency is None:
        return None
    subject = f"{what} cannot be read: " if what else ""
    detail = public_text(str(exc) or type(exc).__name__, settings)
    return APIError(503, f"{subject}{dependency} is not available: {detail}")


def install_error_handlers(app: Any, settings: Settings) -> None:
    """JSON bodies for APIError, outages (503) and anything unexpected (500, logged)."""

    @app.exception_handler(APIError)
    async def api_error(_: Request, exc: APIError) -> JSONResponse:
        return error_response(exc.status_code, exc.message, exc.fields, exc.headers)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        outage = dependency_error(exc, settings)
        if outage is not None:
            return error_response(outage.status_code, outage.message)
        log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
        return error_response(500, "internal error: the node's log has the details")
