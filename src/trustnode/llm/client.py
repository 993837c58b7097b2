"""A robust JSON-answer client for OpenAI-compatible chat endpoints (OpenAI, vLLM, Ollama, llama.cpp).

One instance is shared across threads. Every call is bounded: a semaphore caps requests
in flight, outages are retried with backoff (`transport.py`), refusals are not, every
answer is capped by `max_tokens`, and an invalid answer gets a bounded number of repair
turns in which the model sees its own output and the error. Valid results are cached on
disk, keyed by everything that can change the answer.

How the answer is held to the schema is detected once per client (one client serves one
endpoint, and a process keeps one client per endpoint, so this is once per endpoint): OpenAI's
`json_schema` response format, else llama.cpp's `json_object` with a `schema`, else plain
text with the schema in the prompt, where the whole answer must be the JSON document.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from trustnode.llm.cache import DiskCache, cache_key
from trustnode.llm.errors import LLMError, LLMInvalidOutputError, LLMRequestError
from trustnode.llm.jsonextract import JSONExtractionError, extract_json
from trustnode.llm.settings import OUTPUT_MODES, LLMSettings, OutputMode
from trustnode.llm.transport import Transport, retry_after_seconds
from trustnode.llm.usage import LLMUsage

T = TypeVar("T", bound=BaseModel)

log = logging.getLogger(__name__)

_MAX_ERROR_CHARS = 2000
_MAX_ECHO_CHARS = 3000
"""How much of an invalid answer the repair turn shows back: enough to see the mistake,
without doubling the prompt when a model ran on until max_tokens."""
_SCHEMA_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
CACHE_FORMAT = 1

__all__ = ["LLMClient", "LLMUsage", "retry_after_seconds"]


def _prompt(name: str) -> Template:
    text = resources.files("trustnode.llm").joinpath("prompts", name).read_text(encoding="utf-8")
    return Template(text.strip())


class ChatAnswer(BaseModel):
    """One chat answer: its text, and whether max_tokens cut it off."""

    content: str
    truncated: bool


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
        root = cache_dir if cache_dir is not None else settings.cache_dir
        self.cache: DiskCache | None = DiskCache(root) if root is not None else None
        self._detected: OutputMode | None = None  # what this endpoint turned out to support
        self._lock = threading.Lock()
        self._usage: dict[str | None, LLMUsage] = {}
        self._total = LLMUsage()
        self._http = Transport(
            self.base_url,
            api_key=settings.api_key.get_secret_value(),
            timeout_s=settings.timeout_s,
            max_retries=settings.max_retries,
            concurrency=settings.concurrency,
            backoff_base_s=backoff_base_s,
            backoff_max_s=backoff_max_s,
            retry_after_max_s=retry_after_max_s,
        )

    # ----------------------------------------------------------------- lifecycle
    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------- output mode
    @property
    def output_mode(self) -> OutputMode | None:
        """The mode in use: pinned by settings, or detected for this endpoint (None: not yet)."""
        if self.settings.output_mode != "auto":
            return self.settings.output_mode
        return self._detected

    @property
    def structured_output(self) -> bool:
        """Whether answers are constrained by the server (json_schema or json_object)."""
        return self.output_mode in ("json_schema", "json_object", None)

    def _record_mode(self, mode: OutputMode) -> None:
        if self._detected != mode:
            log.info("LLM endpoint %s: answers held to the schema by %s", self.base_url, mode)
        self._detected = mode

    # ----------------------------------------------------------------- accounting
    def _account(self, trace_id: str | None, **delta: Any) -> None:
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
        """Model ids the endpoint serves (a cheap reachability check)."""
        data, _ = self._http.request("GET", "/models", None)
        return [str(m.get("id")) for m in data.get("data", []) if isinstance(m, dict)]

    def probe(self, role: str | None = None) -> Any:
        """Check at start-up that the endpoint is an LLM this node can use; see `llm.probe`."""
        from trustnode.llm.probe import probe

        return probe(self, role)

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
        caps the answer (default: the `max_tokens` setting).
        """
        if not messages:
            raise LLMError("no messages to send")
        if not _SCHEMA_NAME.match(name):
            raise LLMError(f"schema name {name!r} must match [A-Za-z0-9_-]{{1,64}} (an OpenAI requirement)")
        seed = self.settings.seed if seed is None else seed
        max_tokens = self.settings.max_tokens if max_tokens is None else max_tokens
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
        self._account(trace_id, requests=1)
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
        repair_tpl = _prompt("repair.md")
        last_raw = ""
        last_err = ""
        answers = 0
        for turn in range(self.settings.repair_retries + 1):
            if turn:
                self._account(trace_id, repairs=1)
            answer = self.chat_turn(convo, json_schema, name, temperature, seed, trace_id, max_tokens)
            answers += 1
            try:
                value = schema.model_validate(extract_json(answer.content))
            except (JSONExtractionError, ValidationError) as exc:
                self._account(trace_id, parse_failures=1)
                last_raw = answer.content
                last_err = str(exc)[:_MAX_ERROR_CHARS]
                if answer.truncated:
                    last_err = (
                        f"the answer was cut off at the limit of {max_tokens} tokens before it was "
                        f"complete; give a shorter answer. ({last_err})"
                    )
                echo = answer.content
                if len(echo) > _MAX_ECHO_CHARS:
                    echo = echo[:_MAX_ECHO_CHARS] + " [... the rest of this answer is not shown]"
                convo = [
                    *convo,
                    {"role": "assistant", "content": echo},
                    {"role": "user", "content": repair_tpl.substitute(error=last_err, name=name)},
                ]
                continue
            if turn:
                self._account(trace_id, repaired=1)
            if use_cache and self.cache is not None:
                self.cache.put(
                    key, {"model": self.model, "name": name, "value": value.model_dump(mode="json")}
                )
            return value
        self._account(trace_id, failed=1)
        raise LLMInvalidOutputError(
            f"model {self.model!r} gave no valid {name!r}",
            raw_output=last_raw,
            validation_error=last_err,
            attempts=answers,
        )

    # ----------------------------------------------------------------- one chat turn
    def chat_turn(
        self,
        convo: list[dict[str, str]],
        json_schema: dict[str, Any],
        name: str,
        temperature: float,
        seed: int,
        trace_id: str | None,
        max_tokens: int,
    ) -> ChatAnswer:
        """One answered chat turn in the endpoint's output mode, detecting it on first use.

        While the mode is unknown, a refused request is sent again in the next weaker mode;
        the first mode that is answered is recorded for the endpoint. If every mode is
        refused, nothing is recorded and the refusal of the plainest request is raised.
        """
        known = self.output_mode
        modes: tuple[OutputMode, ...] = (known,) if known is not None else OUTPUT_MODES
        refusal: LLMRequestError | None = None
        for mode in modes:
            try:
                answer = self._send(convo, json_schema, name, temperature, seed, trace_id, max_tokens, mode)
            except LLMRequestError as exc:
                if known is None and mode != modes[-1]:
                    log.info(
                        "LLM endpoint %s refused %s output (%s); trying the next mode",
                        self.base_url,
                        mode,
                        exc,
                    )
                refusal = exc
                continue
            if known is None:
                self._record_mode(mode)
            return answer
        assert refusal is not None
        self._account(trace_id, rejected=1)
        raise refusal

    def _send(
        self,
        convo: list[dict[str, str]],
        json_schema: dict[str, Any],
        name: str,
        temperature: float,
        seed: int,
        trace_id: str | None,
        max_tokens: int,
        mode: OutputMode,
    ) -> ChatAnswer:
        messages = convo if mode != "text" else with_schema_instruction(convo, json_schema, name)
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": temperature,
            "seed": seed,
            "max_tokens": max_tokens,
        }
        if mode == "json_schema":
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": server_schema(json_schema), "strict": False},
            }
        elif mode == "json_object":
            payload["response_format"] = {"type": "json_object", "schema": server_schema(json_schema)}
        data, elapsed = self._http.request(
            "POST", "/chat/completions", payload, on_retry=lambda: self._account(trace_id, retries=1)
        )
        try:
            choice = data["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise LLMRequestError(
                f"{self.base_url}/chat/completions answered without a chat completion "
                f"(no choices[0].message): is this an OpenAI-compatible LLM endpoint? {str(data)[:200]}",
                status=200,
                body=str(data)[:300],
            ) from None
        content = message.get("content") if isinstance(message, dict) else None
        if content is None and isinstance(message, dict) and message.get("refusal"):
            content = f"(refused: {message['refusal']})"
        usage = data.get("usage") or {}
        self._account(
            trace_id,
            calls=1,
            latency_s=elapsed,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )
        finish = choice.get("finish_reason") if isinstance(choice, dict) else None
        return ChatAnswer(content=content if isinstance(content, str) else "", truncated=finish == "length")


_GRAMMAR_MAX_REPEAT = 600


def server_schema(node: Any) -> Any:
    """The schema as sent to the server: without patterns and without large bounds.

    llama.cpp compiles the schema into a grammar that unrolls length and count bounds (a
    maxLength of 2000 becomes 2000 nested optional rules); past a limit its server fails
    to parse the grammar and dies. Bounds up to _GRAMMAR_MAX_REPEAT are kept: they stop a
    small model from repeating text until max_tokens. Larger ones and patterns still hold:
    the client validates every answer against the full schema and sends a violation back
    through the repair turns.
    """
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for k, v in node.items():
            if k in ("pattern", "format"):
                continue
            if (
                k in ("maxLength", "minLength", "maxItems", "minItems")
                and isinstance(v, int)
                and v > _GRAMMAR_MAX_REPEAT
            ):
                continue
            out[k] = server_schema(v)
        return out
    if isinstance(node, list):
        return [server_schema(v) for v in node]
    return node


def with_schema_instruction(
    convo: list[dict[str, str]], json_schema: dict[str, Any], name: str
) -> list[dict[str, str]]:
    """The conversation with the schema and the "only JSON" rule added to its system message."""
    text = _prompt("json_fallback.md").substitute(
        name=name, schema=json.dumps(json_schema, ensure_ascii=False, separators=(",", ":"))
    )
    out = [dict(m) for m in convo]
    if out and out[0].get("role") == "system":
        out[0]["content"] = f"{out[0]['content']}\n\n{text}"
    else:
        out.insert(0, {"role": "system", "content": text})
    return out
