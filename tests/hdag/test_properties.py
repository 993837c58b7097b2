"""Property tests: arbitrary text never crashes the offline decomposer and always validates."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trustnode.hdag import decompose
from trustnode.hdag.text import split_units
from trustnode.hdag.validate import validate_hdag
from trustnode.models.trace import TraceInput

# Pieces that stress the segmenter: formulas, unbalanced delimiters, list markers, breaks.
PIECES = st.sampled_from(
    [
        "$",
        "$$",
        "\\[",
        "\\]",
        "\\(",
        "\\)",
        "\\begin{align}",
        "\\end{align}",
        "```",
        "\n",
        "\n\n",
        " ",
        ". ",
        "? ",
        "1. ",
        "- ",
        "e.g. ",
        "=",
        "+",
        "12",
        "3.5",
        "x",
        "Let ",
        "So ",
        "Therefore ",
        "\\frac{1}{2}",
        "<<4*5=20>>",
        "Step 2",
        "\u00d7",
        "é",
        "\t",
        "**",
        "#",
    ]
)
TEXT = st.one_of(
    st.text(min_size=1, max_size=300),
    st.lists(st.one_of(PIECES, st.text(max_size=8)), min_size=1, max_size=60).map("".join),
)


def _nonblank(s: str) -> bool:
    return bool(s.strip())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=TEXT.filter(_nonblank), thinking=TEXT.filter(_nonblank), output=TEXT, high=st.booleans())
def test_free_text_always_validates(problem: str, thinking: str, output: str, high: bool) -> None:
    trace = TraceInput(problem=problem, thinking=thinking, output=output, high_stakes=high)
    h, report = decompose(trace, mode="offline")
    assert report.ok, report.failed
    assert report.completeness == 1.0
    text = h.document.text
    assert all(text[n.span.start : n.span.end] == n.content for n in h.nodes)
    # validating again changes nothing
    again, second = validate_hdag(h, repair=False)
    assert second.ok and again.nodes == h.nodes


@settings(max_examples=100, deadline=None)
@given(problem=TEXT.filter(_nonblank), steps=st.lists(TEXT.filter(_nonblank), min_size=1, max_size=6))
def test_steps_always_validate_and_map(problem: str, steps: list[str]) -> None:
    h, report = decompose(TraceInput(problem=problem, steps=steps), mode="offline")
    assert report.ok, report.failed
    for n in h.nodes:
        if n.step_index is not None:
            s = h.document.steps[n.step_index]
            assert s.start <= n.span.start and n.span.end <= s.end


@settings(max_examples=200, deadline=None)
@given(text=TEXT)
def test_units_partition_non_space_text(text: str) -> None:
    spans = split_units(text)
    joined = "".join(text[s:e] for s, e in spans)
    assert "".join(joined.split()) == "".join(text.split())
    for (a0, a1), (b0, b1) in zip(spans, spans[1:], strict=False):
        assert a0 < a1 <= b0 < b1
