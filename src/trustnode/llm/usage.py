"""What LLM calls cost and how often the model's answers needed help.

A *request* is one `complete_json` call (one question for the model, e.g. one judge
finding call); it may take several HTTP *calls* (repair turns) or none (a cache hit).
The evaluation harness and the node's metrics read these counters.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class LLMUsage(BaseModel):
    """Counters of one trace (or of a whole client); `add` sums them field by field."""

    requests: int = Field(default=0, description="complete_json calls, cache hits included.")
    calls: int = Field(default=0, description="HTTP chat completions the endpoint answered.")
    prompt_tokens: int = Field(default=0, description="As reported by the endpoint.")
    completion_tokens: int = Field(default=0, description="As reported by the endpoint.")
    latency_s: float = Field(default=0.0, description="Wall seconds spent in answered calls.")
    cache_hits: int = Field(default=0, description="Requests answered from the on-disk cache.")
    parse_failures: int = Field(
        default=0, description="Answers that were not one schema-valid JSON document."
    )
    repairs: int = Field(default=0, description="Repair turns sent (the model sees its error).")
    repaired: int = Field(default=0, description="Requests that got a valid answer only after a repair.")
    failed: int = Field(default=0, description="Requests with no valid answer after every repair turn.")
    rejected: int = Field(default=0, description="Requests the server refused (an error, not an outage).")
    retries: int = Field(default=0, description="Resends after an outage (429, 502-504, timeouts).")

    def add(self, other: LLMUsage) -> None:
        for field in type(self).model_fields:
            setattr(self, field, getattr(self, field) + getattr(other, field))

    def minus(self, before: LLMUsage) -> LLMUsage:
        """The usage accrued since `before` (a snapshot of the same counters)."""
        return LLMUsage(**{f: getattr(self, f) - getattr(before, f) for f in type(self).model_fields})

    @property
    def mean_latency_s(self) -> float | None:
        """Mean seconds per answered call."""
        return self.latency_s / self.calls if self.calls else None
