"""Fixtures for LLM client tests: settings pointing at a fresh fake server."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from trustnode.llm.settings import LLMSettings


class Answer(BaseModel):
    """The small schema most client tests ask for."""

    verdict: str
    score: int


def make_settings(base_url: str, **overrides: object) -> LLMSettings:
    values: dict[str, object] = {
        "base_url": base_url,
        "model": "fake-model",
        "timeout_s": 5.0,
        "max_retries": 3,
        "repair_retries": 2,
        "concurrency": 4,
    }
    values.update(overrides)
    return LLMSettings(**values)  # type: ignore[arg-type]


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "llm-cache"
