"""Property test: whatever (schema-valid) answers the model gives, the pipeline returns a
valid HDAG of the real trace text, or nothing (never a half-valid one). Real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trustnode.config import LLMSettings
from trustnode.hdag import decompose
from trustnode.llm.client import LLMClient
from trustnode.llm.fake_server import FakeOpenAIServer, Reply, requested_schema_name
from trustnode.models.enums import AuditorType, Complexity, Level, Relationship, Strength
from trustnode.models.trace import TraceInput

TRACE = TraceInput(
    problem="Ann has 12 apples and buys 30 more. How many apples does she have?",
    steps=["We add the two amounts.", "She has 12 + 30 = 42 apples. That is a lot.", "So the answer is 42."],
)
DOC = TRACE.to_document()
QUOTES = [
    "We add the two amounts.",
    "She has 12 + 30 = 42 apples.",
    "That is a lot.",
    "So the answer is 42.",
    "42 apples. That is",
    "Ann has 12 apples",
    "two amounts.\n\nShe has",
]
IDS = ["G1", "G2", "S1", "T1", "ST1", "ST2", "O1", "O2", "Z7", ""]

text = st.one_of(st.sampled_from(QUOTES), st.text(max_size=30))
node = st.fixed_dictionaries(
    {
        "id": st.sampled_from(IDS),
        "level": st.sampled_from([lv.value for lv in Level]),
        "paragraph": st.sampled_from(["P1", "P2", "P3", "P9", ""]),
        "text": text,
        "type": st.sampled_from(["inference", "calculation", ""]),
        "summary": st.text(max_size=20),
        "complexity": st.sampled_from([c.value for c in Complexity]),
        "primary_auditor": st.sampled_from([a.value for a in AuditorType]),
        "secondary_auditors": st.lists(st.sampled_from([a.value for a in AuditorType]), max_size=3),
    }
)
edge = st.fixed_dictionaries(
    {
        "from": st.sampled_from(IDS),
        "to": st.sampled_from(IDS),
        "relationship": st.sampled_from([r.value for r in Relationship]),
        "strength": st.sampled_from([s.value for s in Strength]),
        "confidence": st.floats(0, 1),
    }
)
graph = st.fixed_dictionaries({"nodes": st.lists(node, max_size=8), "edges": st.lists(edge, max_size=12)})
answers = st.fixed_dictionaries(
    {
        "hdag_levels": st.fixed_dictionaries(
            {
                "blocks": st.lists(
                    st.fixed_dictionaries(
                        {
                            "level": st.sampled_from([lv.value for lv in Level]),
                            "paragraph": st.sampled_from(["P1", "P2", "P3"]),
                            "text": text,
                        }
                    ),
                    max_size=5,
                )
            }
        ),
        "hdag_segments": st.builds(lambda g: {"segments": g["nodes"]}, graph),
        "hdag_relations": st.builds(lambda g: {"edges": g["edges"]}, graph),
        "hdag_auditors": st.fixed_dictionaries(
            {
                "assignments": st.lists(
                    st.fixed_dictionaries(
                        {
                            "id": st.sampled_from(IDS),
                            "primary_auditor": st.sampled_from([a.value for a in AuditorType]),
                            "secondary_auditors": st.lists(
                                st.sampled_from([a.value for a in AuditorType]), max_size=2
                            ),
                            "complexity": st.sampled_from([c.value for c in Complexity]),
                        }
                    ),
                    max_size=6,
                )
            }
        ),
        "hdag_refine": graph,
        "hdag_single": graph,
    }
)


class _Box:
    current: dict[str, Any] = {}


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    def responder(request: dict[str, Any]) -> Any:
        name = requested_schema_name(request)
        return _Box.current.get(name, Reply.http_error(400, f"unexpected {name}"))

    with FakeOpenAIServer(responder=responder, lifetime_s=600) as srv:
        yield srv


def _check(h: Any, report: Any) -> None:
    assert report.ok, (report.failed, report.repairs)
    assert report.completeness == 1.0
    for n in h.nodes:
        assert DOC.text[n.span.start : n.span.end] == n.content
        if n.step_index is not None:
            s = DOC.steps[n.step_index]
            assert s.start <= n.span.start and n.span.end <= s.end


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(ans=answers, mode=st.sampled_from(["llm-single", "llm-five-step"]))
def test_any_schema_valid_answers_give_a_valid_hdag(
    server: FakeOpenAIServer, ans: dict[str, Any], mode: str
) -> None:
    _Box.current = ans
    client = LLMClient(LLMSettings(base_url=server.base_url, model="fake", max_retries=0, repair_retries=0))
    with client:
        h, report = decompose(TRACE, mode=mode, client=client)  # type: ignore[arg-type]
    _check(h, report)
