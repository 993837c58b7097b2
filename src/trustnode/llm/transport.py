"""HTTP to one OpenAI-compatible endpoint: bounded retries for outages, none for refusals.

An *outage* (connection refused, timeout, 429, 502-504, or a 500 that does not blame the
request) is retried with exponential backoff that honours `Retry-After`. A *refusal* (any
other 4xx, or a 500 whose body says what is wrong with the request, as llama.cpp's server
does when it cannot honour `response_format`) is raised at once as `LLMRequestError`:
sending the same request again cannot help, and counting it as an outage would hold a
trace for minutes.
"""

from __future__ import annotations

import email.utils
import logging
import random
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from trustnode.llm.errors import LLMError, LLMRequestError, LLMUnavailableError

log = logging.getLogger(__name__)

# Words by which a 500 answer blames the request rather than the server.
_BLAMES_REQUEST = re.compile(
    r"response_format|json_schema|\bschema\b|grammar|not supported|unsupported|invalid|validation|"
    r"must be|is required|exceeds?\b|context (?:window|length)|too (?:long|many)|unknown|unexpected|"
    r"\bnot an?\b[^.\n]{0,40}\brequest\b|no responder",
    re.IGNORECASE,
)
_OUTAGE_STATUSES = frozenset({408, 425, 429, 502, 503, 504})


def retry_after_seconds(value: str | None) -> float | None:
    """Parse Retry-After (delta-seconds or HTTP-date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _error_text(resp: httpx.Response) -> str:
    """The server's error message (OpenAI's `{"error": {"message": ...}}`), else the body."""
    try:
        data = resp.json()
    except ValueError:
        return resp.text[:500]
    if isinstance(data, dict):
        err = data.get("error", data.get("detail"))
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:500]
        if err:
            return str(err)[:500]
    return resp.text[:500]


def is_refusal(status: int, message: str) -> bool:
    """True when the answer says the request itself is at fault (so never retry it)."""
    if status in _OUTAGE_STATUSES or status >= 501:
        return False
    if 400 <= status < 500:
        return True
    return status == 500 and bool(_BLAMES_REQUEST.search(message))


class Transport:
    """One pooled httpx client, a concurrency bound and the retry policy."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str,
        timeout_s: float,
        max_retries: int,
        concurrency: int,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 20.0,
        retry_after_max_s: float = 120.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self._backoff_base = backoff_base_s
        self._backoff_max = backoff_max_s
        self._retry_after_max = retry_after_max_s
        self._sem = threading.BoundedSemaphore(concurrency)
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = httpx.Client(
            timeout=httpx.Timeout(timeout_s),
            headers=headers,
            limits=httpx.Limits(max_connections=concurrency + 2),
        )

    def close(self) -> None:
        self._http.close()

    def _backoff(self, attempt: int) -> float:
        cap = min(self._backoff_max, self._backoff_base * (2**attempt))
        return cap * (0.5 + random.random() / 2)

    def request(
        self,
        method: str,
        path: str,
        payload: dict[str, Any] | None,
        *,
        max_retries: int | None = None,
        on_retry: Callable[[], None] | None = None,
    ) -> tuple[dict[str, Any], float]:
        """(JSON object body, seconds the answered attempt took); raises LLMError subclasses."""
        url = self.base_url + path
        attempts = (self.max_retries if max_retries is None else max_retries) + 1
        last = "no attempt made"
        last_status: int | None = None
        for attempt in range(attempts):
            delay = self._backoff(attempt)
            with self._sem:
                t0 = time.monotonic()
                try:
                    resp: httpx.Response | None = self._http.request(method, url, json=payload)
                except httpx.TimeoutException:
                    last, last_status, resp = f"timed out after {self.timeout_s:g}s", None, None
                except httpx.TransportError as exc:
                    last, last_status, resp = f"transport error: {exc}", None, None
                elapsed = time.monotonic() - t0
            if resp is not None:
                status = last_status = resp.status_code
                if status == 200:
                    try:
                        data = resp.json()
                    except ValueError:
                        data = None
                    if not isinstance(data, dict):
                        raise LLMRequestError(
                            f"{url} answered HTTP 200 with a body that is not a JSON object; is "
                            "base_url the /v1 root of an OpenAI-compatible server?",
                            status=200,
                            body=resp.text[:300],
                        )
                    return data, elapsed
                message = _error_text(resp)
                if status in (401, 403):
                    raise LLMError(f"the LLM endpoint rejected our credentials (HTTP {status}): {message}")
                if status == 404:
                    raise LLMRequestError(
                        f"HTTP 404 from {url}: {message} (base_url should be the API root, e.g. "
                        "http://127.0.0.1:8000/v1, and the model must be one the server serves)",
                        status=status,
                        body=message,
                    )
                if is_refusal(status, message):
                    raise LLMRequestError(
                        f"the server refused the request (HTTP {status}): {message}",
                        status=status,
                        body=message,
                    )
                last = f"HTTP {status}: {message[:300]}"
                ra = retry_after_seconds(resp.headers.get("Retry-After"))
                if ra is not None:
                    delay = min(ra, self._retry_after_max)
            if attempt + 1 < attempts:
                if on_retry is not None:
                    on_retry()
                log.info("LLM request failed (%s); retry %d in %.2fs", last, attempt + 1, delay)
                time.sleep(delay)
        raise LLMUnavailableError(
            f"LLM endpoint {self.base_url} unavailable after {attempts} attempts: {last}",
            attempts=attempts,
            last_status=last_status,
        )
