"""Fixtures for the node's unit tests on the in-memory chain."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from trustnode.audit.llm_judge import arithmetic_judge_responder, judge_from_settings
from trustnode.config import Settings
from trustnode.llm.fake_server import FakeOpenAIServer


@pytest.fixture
def fake_llm() -> Iterator[FakeOpenAIServer]:
    """The offline stand-in model for the LLM judge, on loopback."""
    with FakeOpenAIServer(responder=arithmetic_judge_responder) as server:
        yield server


def judge_for(server: FakeOpenAIServer, data_dir: Path):  # type: ignore[no-untyped-def]
    settings = Settings(
        data_dir=data_dir,
        llm={"base_url": server.base_url, "model": "fake", "max_retries": 1, "repair_retries": 1},  # type: ignore[arg-type]
    )
    return judge_from_settings(settings)
