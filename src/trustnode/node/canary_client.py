"""The provider's client of a canary operator's API (issue 15, `CANARY-OPERATOR` design).

A provider never writes its own gold canaries: it asks an authorized operator for texts
(`POST /v1/canary/requests`), places them in its session, and after `openSession` reports where
they went (`POST /v1/canary/requests/{ticket}/placement`); the operator checks the placement
against the chain and commits. Every call has bounded timeouts; connection failures are retried
by httpx's transport (`connect_retries`) and an outage answer (timeout, 429, 502-504) a few times
with a short backoff, then `OperatorUnavailable` is raised. The pipeline treats that as an outage
like a chain or IPFS one: the job keeps everything, shows the reason and tries again later. Any
other 4xx/5xx is `OperatorRefused` with the operator's reason.
"""

from __future__ import annotations

import time
from typing import TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from trustnode.config import Settings
from trustnode.models.canary_operator import CanaryBatch, CanaryPlacement, CanaryReceipt, CanaryRequest

M = TypeVar("M", bound=BaseModel)

#: Answers that say "try again later", not "this request is wrong".
_OUTAGE = frozenset({408, 425, 429, 502, 503, 504})
#: A placement makes the operator send and wait for a transaction: allow it that long.
PLACEMENT_TIMEOUT_S = 60.0
SETTING = "canaries.operator_url (env TRUSTNODE_CANARIES__OPERATOR_URL)"


class OperatorError(Exception):
    """The canary operator did not give what was asked; `str()` says why."""


class OperatorUnavailable(OperatorError):
    """Not reachable, timed out, or busy: the same request may succeed later."""


class OperatorRefused(OperatorError):
    """The operator answered and said no (a failed check, a bad key, an invalid request)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(f"the canary operator refused ({status}): {reason}")
        self.status, self.reason = status, reason


class NoOperator(OperatorError):
    """The chain wants canaries and this node names no operator to get them from."""

    def __init__(self, rate_bps: int) -> None:
        super().__init__(
            f"the chain's canaryRateBps is {rate_bps}, so every session needs gold canaries from an "
            f"authorized canary operator, and {SETTING} is not set"
        )


def missing_operator(settings: Settings, rate_bps: int) -> str | None:
    """Why a provider must not start (None: it may): canaries wanted and no operator named."""
    if rate_bps > 0 and not settings.canaries.operator_url:
        return str(NoOperator(rate_bps))
    return None


class CanaryClient:
    """One pooled HTTP client to one operator. Thread-safe (httpx.Client is)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout_s: float = 10.0,
        connect_retries: int = 2,
        attempts: int = 3,
        backoff_s: float = 0.5,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.base_url = base_url.rstrip("/")
        self.attempts, self.backoff_s = max(1, attempts), backoff_s
        self._http = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 3.0)),
            transport=httpx.HTTPTransport(retries=connect_retries),
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> CanaryClient | None:
        s = settings.canaries
        return cls(s.operator_url, s.operator_api_key) if s.operator_url else None

    def close(self) -> None:
        self._http.close()

    def request(self, req: CanaryRequest) -> CanaryBatch:
        """Texts for `req.count` canaries shaped like the donors (their truths stay with the operator)."""
        return self._call("POST", "/v1/canary/requests", req, CanaryBatch)

    def place(self, ticket: str, placement: CanaryPlacement) -> CanaryReceipt:
        """Report where the ticket's canaries went; the receipt says committed (with the tx) or why
        not. Replaying an accepted placement returns the same receipt (the operator commits once)."""
        path = f"/v1/canary/requests/{quote(ticket, safe='')}/placement"
        return self._call("POST", path, placement, CanaryReceipt, timeout_s=PLACEMENT_TIMEOUT_S)

    def receipt(self, ticket: str) -> CanaryReceipt:
        return self._call("GET", f"/v1/canary/requests/{quote(ticket, safe='')}", None, CanaryReceipt)

    def _call(
        self,
        method: str,
        path: str,
        body: BaseModel | None,
        model: type[M],
        *,
        timeout_s: float | None = None,
    ) -> M:
        content = None if body is None else body.model_dump_json().encode()
        headers = {} if body is None else {"Content-Type": "application/json"}
        timeout = httpx.USE_CLIENT_DEFAULT if timeout_s is None else httpx.Timeout(timeout_s, connect=3.0)
        last = ""
        for attempt in range(self.attempts):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                resp = self._http.request(method, path, content=content, headers=headers, timeout=timeout)
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                continue
            if resp.status_code in _OUTAGE:
                last = f"HTTP {resp.status_code}: {_reason(resp)}"
                continue
            if resp.status_code >= 400:
                raise OperatorRefused(resp.status_code, _reason(resp))
            try:
                return model.model_validate_json(resp.content)
            except ValidationError as exc:
                raise OperatorRefused(resp.status_code, f"answer is not a {model.__name__}: {exc}") from exc
        raise OperatorUnavailable(
            f"the canary operator at {self.base_url} is unavailable after {self.attempts} attempts: {last}"
        )


def _reason(resp: httpx.Response) -> str:
    """The API's `{"error": ...}` (or FastAPI's `{"detail": ...}`), else the body, shortened."""
    try:
        data = resp.json()
    except ValueError:
        return resp.text[:300] or resp.reason_phrase
    said = (data.get("error") or data.get("detail")) if isinstance(data, dict) else None
    return str(said if said is not None else data)[:300]
