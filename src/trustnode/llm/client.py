"""A robust client for OpenAI-compatible chat endpoints (OpenAI, vLLM, Ollama, llama.cpp).

One instance is shared across threads. Every call is bounded: a semaphore caps in-flight
requests, transient failures (429, 5xx, timeouts, refused connections) are retried with
exponential backoff that honours `Retry-After`, and invalid answers get a bounded number
of repair turns in which the model sees its own output and the validation error. Valid
results are cached on disk, keyed by everything that can change the answer.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import re
import threading
import time
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from trustnode.llm.cache import DiskCache, cache_key
from trustnode.llm.errors import LLMError, LLMInvalidOutputError, LLMUnavailableError
from trustnode.llm.jsonextract import JSONExtractionError, extract_json
from trustnode.llm.settings import LLMSettings

T = TypeVar("T", bound=BaseModel)

log = logging.getLogger(__name__)

_MAX_ERROR_CHARS = 2000
_SCHEMA_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
CACHE_FORMAT = 1


def _prompt(name: str) -> Template:
    text = resources.files("trustnode.llm").joinpath("prompts", name).read_text(encoding="utf-8")
    return Template(text.strip())


class LLMUsage(BaseModel):
    """What a trace (or the whole client) cost: answered calls, tokens, cache hits."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    repairs: int = 0
    retries: int = 0

    def add(self, other: LLMUsage) -> None:
        for field in type(self).model_fields:
            setattr(self, field, getattr(self, field) + getattr(other, field))


class _StructuredRejected(Exception):
    """The server refused `response_format`; the caller retries with JSON extraction."""


def _retry_after_seconds(value: str | None) -> float | None:
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


class LLMClient:
    """Thread-safe, cached, retrying JSON-output client for one OpenAI-compatible endpoint.

    `cache_dir` wins over `settings.cache_dir`; with neither, nothing is cached on disk.
    """

    def __init__(
        self,
        settings: LLMSettings,
        cache_dir: Path | None = None,
        *,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 20.0,
        retry_after_max_s: float = 120.0,
    ) -> None:
        if not settings.base_url:
            raise LLMError("no LLM endpoint configured: set llm.base_url (TRUSTNODE_LLM__BASE_URL)")
        self.settings = settings
        self.base_url = settings.base_url.rstrip("/")
        self.model = settings.model
        self._backoff_base = backoff_base_s
        self._backoff_max = backoff_max_s
        self._retry_after_max = retry_after_max_s
        root = cache_dir if cache_dir is not None else settings.cache_dir
        self.cache: DiskCache | None = DiskCache(root) if root is not None else None
        self._structured = settings.structured_output
        self._sem = threading.BoundedSemaphore(settings.concurrency)
        self._lock = threading.Lock()
        self._usage: dict[str | None, LLMUsage] = {}
        self._total = LLMUsage()
        headers = {"Content-Type": "application/json"}
        key = settings.api_key.get_secret_value()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._http = httpx.Client(
            timeout=httpx.Timeout(settings.timeout_s),
            headers=headers,
            limits=httpx.Limits(max_connections=settings.concurrency + 2),
        )

    # ----------------------------------------------------------------- lifecycle
    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def structured_output(self) -> bool:
        """Whether the next call will ask for `response_format` (false after a rejection)."""
        return self._structured

    # ----------------------------------------------------------------- accounting
    def _account(self, trace_id: str | None, **delta: int) -> None:
        step = LLMUsage(**delta)
        with self._lock:
            self._usage.setdefault(trace_id, LLMUsage()).add(step)
            self._total.add(step)

    def usage(self, trace_id: str | None = None) -> LLMUsage:
        """Usage of one trace; with no trace id, the client's total over all traces."""
        with self._lock:
            src = self._total if trace_id is None else self._usage.get(trace_id, LLMUsage())
            return src.model_copy()

    # ----------------------------------------------------------------- public API
    def list_models(self) -> list[str]:
        """Model ids the endpoint serves (a cheap reachability probe)."""
        data = self._request("GET", "/models", None, trace_id=None)
        return [str(m.get("id")) for m in data.get("data", []) if isinstance(m, dict)]

    def complete_json(
        self,
        messages: list[dict[str, str]],
        schema: type[T],
        *,
        trace_id: str | None = None,
        temperature: float = 0.0,
        seed: int | None = None,
        name: str = "response",
        use_cache: bool = True,
        max_tokens: int | None = None,
    ) -> T:
        """Ask for one JSON answer validating against `schema` and return it parsed.

        `name` names the schema for the server (and the repair prompt); `max_tokens`
        caps the answer when given (some servers default to short answers).
        """
        if not messages:
            raise LLMError("no messages to send")
        if not _SCHEMA_NAME.match(name):
            raise LLMError(f"schema name {name!r} must match [A-Za-z0-9_-]{{1,64}} (an OpenAI requirement)")
        seed = self.settings.seed if seed is None else seed
        json_schema = schema.model_json_schema()
        key = cache_key(
            {
                "v": CACHE_FORMAT,
                "model": self.model,
                "messages": messages,
                "temperature": temperature,
                "seed": seed,
                "name": name,
                "schema": json_schema,
                "max_tokens": max_tokens,
            }
        )
        if use_cache and self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None and "value" in hit:
                try:
                    value = schema.model_validate(hit["value"])
                except ValidationError:
                    log.warning("ignoring a cache entry that no longer validates: %s", key)
                else:
                    self._account(trace_id, cache_hits=1)
                    return value

        convo: list[dict[str, str]] = [dict(m) for m in messages]
        if not self._structured:
            convo = self._with_schema_instruction(convo, json_schema, name)
        repair_tpl = _prompt("repair.md")
        last_raw = ""
        last_err = ""
        answers = 0
        for turn in range(self.settings.repair_retries + 1):
            if turn:
                self._account(trace_id, repairs=1)
            try:
                raw = self._chat(convo, json_schema, name, temperature, seed, trace_id, max_tokens)
            except _StructuredRejected:
                log.info("server rejected response_format; falling back to JSON extraction")
                self._structured = False
                convo = self._with_schema_instruction(convo, json_schema, name)
                raw = self._chat(convo, json_schema, name, temperature, seed, trace_id, max_tokens)
            answers += 1
            try:
                value = schema.model_validate(extract_json(raw))
            except (JSONExtractionError, ValidationError) as exc:
                last_raw = raw
                last_err = str(exc)[:_MAX_ERROR_CHARS]
                convo = [
                    *convo,
                    {"role": "assistant", "content": raw},
                    {"role": "user", "content": repair_tpl.substitute(error=last_err, name=name)},
                ]
                continue
            if use_cache and self.cache is not None:
                self.cache.put(
                    key, {"model": self.model, "name": name, "value": value.model_dump(mode="json")}
                )
            return value
        raise LLMInvalidOutputError(
            f"model {self.model!r} gave no valid {name!r}",
            raw_output=last_raw,
            validation_error=last_err,
            attempts=answers,
        )

    # ----------------------------------------------------------------- internals
    @staticmethod
    def _with_schema_instruction(
        convo: list[dict[str, str]], json_schema: dict[str, Any], name: str
    ) -> list[dict[str, str]]:
        text = _prompt("json_fallback.md").substitute(
            name=name, schema=json.dumps(json_schema, ensure_ascii=False, separators=(",", ":"))
        )
        if any(text in m.get("content", "") for m in convo if m.get("role") == "system"):
            return convo
        out = [dict(m) for m in convo]
        if out and out[0].get("role") == "system":
            out[0]["content"] = f"{out[0]['content']}\n\n{text}"
        else:
            out.insert(0, {"role": "system", "content": text})
        return out

    def _chat(
        self,
        convo: list[dict[str, str]],
        json_schema: dict[str, Any],
        name: str,
        temperature: float,
        seed: int,
        trace_id: str | None,
        max_tokens: int | None = None,
    ) -> str:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": convo,
            "temperature": temperature,
            "seed": seed,
        }
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        structured = self._structured
        if structured:
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": json_schema, "strict": False},
            }
        data = self._request("POST", "/chat/completions", payload, trace_id=trace_id, structured=structured)
        usage = data.get("usage") or {}
        try:
            message = data["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            message = {}
        content = message.get("content") if isinstance(message, dict) else None
        if content is None and isinstance(message, dict) and message.get("refusal"):
            content = f"(refused: {message['refusal']})"
        content = content if isinstance(content, str) else ""
        self._account(
            trace_id,
            calls=1,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )
        return content

    def _backoff(self, attempt: int) -> float:
        cap = min(self._backoff_max, self._backoff_base * (2**attempt))
        return cap * (0.5 + random.random() / 2)

    def _request(
        self,
        method: str,
        path: str,
        payload: dict[str, Any] | None,
        *,
        trace_id: str | None,
        structured: bool = False,
    ) -> dict[str, Any]:
        url = self.base_url + path
        attempts = self.settings.max_retries + 1
        last = "no attempt made"
        last_status: int | None = None
        for attempt in range(attempts):
            delay = self._backoff(attempt)
            with self._sem:
                try:
                    resp = self._http.request(method, url, json=payload)
                except httpx.TimeoutException:
                    last, last_status = f"timed out after {self.settings.timeout_s:g}s", None
                    resp = None
                except httpx.TransportError as exc:
                    last, last_status = f"transport error: {exc}", None
                    resp = None
            if resp is not None:
                status = resp.status_code
                last_status = status
                if status == 200:
                    try:
                        data = resp.json()
                    except ValueError:
                        last = "HTTP 200 with a body that is not JSON"
                    else:
                        if isinstance(data, dict):
                            return data
                        last = "HTTP 200 with a JSON body that is not an object"
                elif status == 429 or status >= 500:
                    last = f"HTTP {status}: {resp.text[:300]}"
                    ra = _retry_after_seconds(resp.headers.get("Retry-After"))
                    if ra is not None:
                        delay = min(ra, self._retry_after_max)
                elif structured and status in (400, 415, 422):
                    raise _StructuredRejected(resp.text[:300])
                elif status in (401, 403):
                    raise LLMError(f"the LLM endpoint rejected our credentials (HTTP {status})")
                else:
                    raise LLMError(f"HTTP {status} from {url}: {resp.text[:500]}")
            if attempt + 1 < attempts:
                self._account(trace_id, retries=1)
                log.info("LLM request failed (%s); retry %d in %.2fs", last, attempt + 1, delay)
                time.sleep(delay)
        raise LLMUnavailableError(
            f"LLM endpoint {self.base_url} unavailable after {attempts} attempts: {last}",
            attempts=attempts,
            last_status=last_status,
        )
