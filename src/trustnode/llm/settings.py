"""Settings of one OpenAI-compatible endpoint; the judge and the decomposer each have their own."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr

OutputMode = Literal["json_schema", "json_object", "text"]
"""How an answer is constrained to JSON, strongest first: OpenAI's `json_schema` response
format, llama.cpp's `json_object` with a `schema`, or plain text that must be the JSON."""

OUTPUT_MODES: tuple[OutputMode, ...] = ("json_schema", "json_object", "text")


class LLMSettings(BaseModel):
    """An OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp)."""

    base_url: str | None = Field(default=None, description="e.g. http://127.0.0.1:11434/v1; None: offline.")
    model: str = Field(default="gpt-4o-mini", description="Model name sent to the endpoint.")
    api_key: SecretStr = Field(default=SecretStr("not-needed"), description="Bearer key of the endpoint.")
    timeout_s: float = Field(default=60.0, gt=0, description="Per-request timeout.")
    max_retries: int = Field(
        default=4,
        ge=0,
        description="Retries on outages (429, 502-504, timeouts); never on a rejected request.",
    )
    repair_retries: int = Field(
        default=2, ge=0, description="Retries that show the model its invalid output."
    )
    concurrency: int = Field(default=4, ge=1, description="Requests in flight at once, per process.")
    output_mode: Literal["auto", "json_schema", "json_object", "text"] = Field(
        default="auto",
        description="auto: detect per endpoint (json_schema, then json_object with a schema, then text).",
    )
    max_tokens: int = Field(default=2048, ge=16, description="Upper bound on every answer's length.")
    seed: int = Field(default=7, description="Sampling seed sent with every request.")
    cache_dir: Path | None = Field(default=None, description="Default: <data_dir>/llm-cache.")
