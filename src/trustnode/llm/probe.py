"""The start-up probe: is this URL an LLM endpoint this node can use, and how?

A node calls `client.probe(role)` once at start-up, before it accepts work, so that a
wrong endpoint is refused with a reason instead of failing trace after trace:
- nothing listens there: `LLMUnavailableError`;
- it answers, but not as an OpenAI-compatible chat endpoint (404, HTML, no `choices`), the
  credentials are refused, or it refuses a small JSON request of the given role (for
  example the judge's test server asked to decompose): `LLMEndpointError`.
It also settles the output mode (json_schema, json_object or text) for the endpoint, so
the first real request does not pay for the detection.

Test servers that stand in for a model answer only their own role's probe (see
`answers_probe`), while a real model answers any.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError

from trustnode.llm.errors import LLMEndpointError, LLMError, LLMRequestError, LLMUnavailableError
from trustnode.llm.jsonextract import JSONExtractionError, extract_json
from trustnode.llm.settings import OutputMode

if TYPE_CHECKING:
    from trustnode.llm.client import LLMClient

PROBE_PREFIX = "trustnode_probe"
PROBE_MAX_TOKENS = 48


class ProbeAnswer(BaseModel):
    """What the probe asks for: a trivially small JSON object."""

    ok: bool


class ProbeReport(BaseModel):
    """What the probe found."""

    base_url: str
    model: str
    role: str | None
    served_models: list[str] = Field(description="Ids from GET /models (empty if the server lists none).")
    model_listed: bool | None = Field(description="The configured model is among them (None: no list).")
    output_mode: OutputMode
    latency_s: float
    answer: str = Field(description="The start of the model's answer.")
    answer_valid: bool = Field(description="The answer was the requested JSON object.")

    def summary(self) -> str:
        listed = "" if self.model_listed is not False else f" (not among {', '.join(self.served_models)})"
        valid = "valid JSON" if self.answer_valid else "an answer that was not the JSON asked for"
        return (
            f"{self.base_url}: model {self.model}{listed} answered {valid} in {self.latency_s:.2f}s; "
            f"answers are held to the schema by {self.output_mode}"
        )


def probe_name(role: str | None) -> str:
    """The schema name of the probe request for `role` (e.g. trustnode_probe_judge)."""
    return f"{PROBE_PREFIX}_{role}" if role else PROBE_PREFIX


def answers_probe(schema_name: str, role: str) -> dict[str, Any] | None:
    """For stand-in responders: the probe answer if `schema_name` probes `role`, else None."""
    return {"ok": True} if schema_name == probe_name(role) else None


def probe(client: LLMClient, role: str | None = None) -> ProbeReport:
    """Probe `client`'s endpoint (see the module docstring); `role` names the caller's use."""
    served: list[str] = []
    listed: bool | None = None
    try:
        served = client.list_models()
        listed = client.model in served if served else None
    except LLMRequestError:
        pass  # some servers have no /models; the chat request below decides
    except LLMUnavailableError:
        raise
    except LLMError as exc:
        raise LLMEndpointError(f"{client.base_url}: {exc}") from exc
    name = probe_name(role)
    messages = [
        {"role": "system", "content": "You answer with JSON only."},
        {"role": "user", "content": 'Reply with the JSON object {"ok": true} and nothing else.'},
    ]
    schema = ProbeAnswer.model_json_schema()
    t0 = time.monotonic()
    try:
        answer = client.chat_turn(messages, schema, name, 0.0, client.settings.seed, None, PROBE_MAX_TOKENS)
    except LLMUnavailableError:
        raise
    except LLMError as exc:
        what = f"a {role} request" if role else "a small JSON request"
        raise LLMEndpointError(
            f"{client.base_url} is not an LLM endpoint this node can use for {role or 'this role'}: it "
            f"refused {what} ({exc}). Check base_url and model; a test server that stands in for "
            "one role answers only that role."
        ) from exc
    try:
        ProbeAnswer.model_validate(extract_json(answer.content))
        valid = True
    except (JSONExtractionError, ValidationError):
        valid = False
    mode = client.output_mode
    assert mode is not None  # chat_turn recorded or was pinned to one
    return ProbeReport(
        base_url=client.base_url,
        model=client.model,
        role=role,
        served_models=served,
        model_listed=listed,
        output_mode=mode,
        latency_s=round(time.monotonic() - t0, 3),
        answer=answer.content[:200],
        answer_valid=valid,
    )
