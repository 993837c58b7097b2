"""Settings of one OpenAI-compatible endpoint; the judge and the decomposer each have their own."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, SecretStr


class LLMSettings(BaseModel):
    """An OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp)."""

    base_url: str | None = Field(default=None, description="e.g. http://127.0.0.1:11434/v1; None: offline.")
    model: str = Field(default="gpt-4o-mini", description="Model name sent to the endpoint.")
    api_key: SecretStr = Field(default=SecretStr("not-needed"), description="Bearer key of the endpoint.")
    timeout_s: float = Field(default=60.0, gt=0, description="Per-request timeout.")
    max_retries: int = Field(default=4, ge=0, description="Retries on 429/5xx/timeouts.")
    repair_retries: int = Field(
        default=2, ge=0, description="Retries that show the model its invalid output."
    )
    concurrency: int = Field(default=4, ge=1, description="Requests in flight at once, per process.")
    structured_output: bool = Field(default=True, description="Ask for json_schema response_format.")
    seed: int = Field(default=7, description="Sampling seed sent with every request.")
    cache_dir: Path | None = Field(default=None, description="Default: <data_dir>/llm-cache.")
