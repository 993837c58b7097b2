"""Segmentation and the routing rules of the offline decomposer."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustnode.hdag import decompose
from trustnode.hdag.rules import classify, is_checkable, quantities, summarize
from trustnode.hdag.text import (
    MAX_SEGMENT_CHARS,
    MAX_TEXT_CHARS,
    TextTooLongError,
    paragraphs,
    protected_regions,
    scan_protected,
    split_units,
)
from trustnode.models.enums import AuditorType, Level
from trustnode.models.trace import TraceInput


def _units(text: str) -> list[str]:
    return [text[s:e] for s, e in split_units(text)]


def test_sentences_lists_and_abbreviations() -> None:
    text = "First, e.g. apples cost 2.50 each. Then we pay.\n\n1. One item.\n2. Two items: $x = 3.5$ here.\n- done"
    assert _units(text) == [
        "First, e.g. apples cost 2.50 each.",
        "Then we pay.",
        "1. One item.",
        "2. Two items: $x = 3.5$ here.",
        "- done",
    ]


def test_formulas_are_never_cut_and_display_math_stays_with_its_intro() -> None:
    text = (
        "Expanding, we get:\n\\[\n117y - 351 = 92. Then\n\\]\n\\[\n92y = -1732.\n\\]\n"
        "So y is negative. Inline \\( a. B \\) stays whole."
    )
    units = _units(text)
    assert units[0] == "Expanding, we get:\n\\[\n117y - 351 = 92. Then\n\\]\n\\[\n92y = -1732.\n\\]"
    assert units[1] == "So y is negative."
    assert units[2] == "Inline \\( a. B \\) stays whole."


def test_units_cover_every_non_space_character_once() -> None:
    text = "  a.  B? c!\n\n. x  \n- \n\nEnd"
    spans = split_units(text, offset=10)
    covered = "".join(text[s - 10 : e - 10] for s, e in spans)
    assert "".join(covered.split()) == "".join(text.split())
    assert all(b[0] >= a[1] for a, b in zip(spans, spans[1:], strict=False))


def test_paragraphs_keep_display_math() -> None:
    text = "One.\n\n$$\na\n\nb\n$$\n\nTwo."
    assert [text[s:e] for s, e in paragraphs(text)] == ["One.", "$$\na\n\nb\n$$", "Two."]


@pytest.mark.parametrize(
    "text",
    [
        "She has 12 + 30 = 42 apples.",
        "Since there were 18, \\(1/3 \\times 18 = 6\\) are taken back.",
        "\\frac{32}{135} + \\frac{20}{99} = \\frac{652}{1485}",
        "Half of it is 48/2 = <<48/2=24>>24 clips.",
        "3 times 4 is 12.",
        "The total is 42 = 12 + 30.",
        "5 \u00d7 7 = 35",
        "the daily cost is: \\[ \\$4.40 \\times 2 = \\$8.80 \\]",
        "the area is \\( 100 - 66 = \\boxed{34} \\).",
        "Total infected on Day 2: 60 (previous) + 300 (new) = 360.",
        "then \\( C = 7(3.5) = 24.5 \\)",
        "$(12\\cdot 12)^2=144^2$.",
        "he will be 5 years older (since \\(24 - 19 = 5\\)).",
        "\\(\\frac{1}{2} \\pi (4x)^2 = 8 \\pi x^2\\)",  # an identity the algebra tier decides
    ],
)
def test_checkable_arithmetic(text: str) -> None:
    assert is_checkable(text)
    cls = classify(text)
    assert (cls.level, cls.primary) == (Level.OPERATION, AuditorType.T_AUTO)


@pytest.mark.parametrize(
    "text",
    [
        "x + 5 = 8",
        "Let y = x^2 - 2x.",
        "92y = 92 - 1824",
        "There are 3 cats and 4 dogs.",
        "Step 2 = next",
        "Squaring both sides: \\[ x^2 + 64 = 64 \\]",
        "\\[ b^2 - 4\\sqrt{277}b + 277 + 256 = 1104 \\]",
    ],
)
def test_not_checkable(text: str) -> None:
    assert not is_checkable(text)


@pytest.mark.parametrize(
    ("text", "level", "kind"),
    [
        ("To solve this, we will first find the total cost.", Level.STRATEGY, "approach_description"),
        ("Let's break the problem into steps.", Level.STRATEGY, "approach_description"),
        ("We need to find how many apples remain.", Level.GOAL, "objective_restatement"),
        ("Let x be the number of apples.", Level.TACTIC, "definition"),
        ("Recall that the area of a circle is pi r^2.", Level.TACTIC, "setup"),
        ("Therefore the answer is \\boxed{30}.", Level.STEP, "conclusion"),
        ("The flamingos were painted white.", Level.STEP, "inference"),
    ],
)
def test_levels(text: str, level: Level, kind: str) -> None:
    cls = classify(text)
    assert (cls.level, cls.type) == (level, kind)
    assert cls.primary is AuditorType.T_LLM


def test_high_stakes_routes_ambiguous_segments_to_humans() -> None:
    hedged = "The patient might tolerate a higher dose."
    assert classify(hedged).primary is AuditorType.T_LLM
    hs = classify(hedged, high_stakes=True)
    assert hs.primary is AuditorType.T_HUMAN and AuditorType.T_LLM in hs.secondary
    calc = classify("The dose is 5 * 70 = 350 mg for this patient.", high_stakes=True)
    assert calc.primary is AuditorType.T_AUTO and AuditorType.T_HUMAN in calc.secondary
    plain = classify("The sum of the angles is known.", high_stakes=True)
    assert plain.primary is AuditorType.T_LLM


def test_summary_has_three_to_five_words() -> None:
    for text in ["\\(1+1=2\\)", "Ann buys thirty more apples at the market today.", "x"]:
        words = summarize(text, "calculation").split()
        assert 3 <= len(words) <= 5


def test_quantities() -> None:
    q = quantities("So, they have \\(18 - 6 = 12\\) flamingos left, see step 2.")
    assert q.results == {"12"} and "18" in q.numbers and q.backref and q.step_refs == (2,)
    q2 = quantities("Let \\( y = x^2 - 2x \\).")
    assert "y" in q2.defines and {"x", "y"} <= q2.variables


# -- linear-time scanning and the length caps ------------------------------------------------

# The regex the scanner replaced: the same regions, but quadratic on an unclosed opener.
_ORACLE = re.compile(
    r"```.*?```|\$\$.+?\$\$|\\\[.+?\\\]|\\begin\{([A-Za-z*]+)\}.*?\\end\{\1\}|\\\(.+?\\\)"
    r"|(?<![\\$])\$(?!\$)[^$\n]+?(?<!\\)\$",
    re.DOTALL,
)
_PIECES = st.sampled_from(
    ["$", "$$", "\\[", "\\]", "\\(", "\\)", "```", "\\begin{a}", "\\end{a}", "\\end{b}", "x", " ", "\n", "\\"]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=40))
def test_scanner_finds_exactly_the_regions_of_the_old_pattern(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert protected_regions(text) == [(m.start(), m.end()) for m in _ORACLE.finditer(text)]


@pytest.mark.parametrize("opener", ["\\[", "\\(", "$$", "```", "\\begin{a}", "$"])
def test_unclosed_openers_cost_linear_work(opener: str) -> None:
    # the old pattern rescanned to the end from every opener (0.2 s for 10k characters of
    # "\\[", 12.9 s for 180k of "\\begin{a}"); the scanner searches each missing closer once
    for n in (1_000, 10_000, 100_000):
        text = opener * n
        regions, stats = scan_protected(text)
        assert stats.openings <= len(text)
        assert stats.searches <= 2 + len(regions)


def test_text_longer_than_the_cap_is_refused() -> None:
    with pytest.raises(TextTooLongError, match="longer than the limit"):
        split_units("a" * (MAX_TEXT_CHARS + 1))
    assert split_units("a. " * 10)  # short text is fine


def test_the_offline_decomposer_cuts_long_steps() -> None:
    step = " ".join(f"word{i}" for i in range(2_000))  # one 16,000-character sentence
    h, report = decompose(TraceInput(problem="Count the words.", steps=["Start.", step]), mode="offline")
    assert report.ok and report.completeness == 1.0
    parts = [n for n in h.nodes if n.step_index == 1]
    assert len(parts) >= 8 and all(len(n.content) <= MAX_SEGMENT_CHARS for n in parts)
    assert " ".join(n.content for n in parts) == step
