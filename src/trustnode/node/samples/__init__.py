"""Sample traces written for the demo: sound and flawed, with the verdict each should get."""

from __future__ import annotations

from importlib import resources
from typing import Any

from pydantic import BaseModel

from trustnode.models.trace import TraceInput


class Sample(BaseModel):
    name: str
    description: str
    expected_verdict: str
    flawed_phrases: list[str]
    trace: TraceInput

    def payload(self) -> dict[str, Any]:
        return self.trace.model_dump(exclude_none=True)


def load_samples() -> list[Sample]:
    files = sorted(
        (p for p in resources.files(__package__).iterdir() if p.name.endswith(".json")), key=lambda p: p.name
    )
    return [Sample.model_validate_json(p.read_text()) for p in files]
