"""Segments are hostile input: no text may crash the checker or hang it."""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trustnode.audit.claims import extract_claims
from trustnode.models.audit import ClaimStatus

PIECES = st.sampled_from(
    [
        "1", "2", "0", "12", "3.5", "0.333...", "1,000", "99999999999", "-", "+", "*", "/", "^", "**", "=",
        "\u2248", "(", ")", "[", "]", "{", "}", "%", "$", " ", " ", "\n", "x", "A", "B", "of", "if", "then",
        "hours", "\\frac{", "\\sqrt{", "\\times", "\\cdot", "\\(", "\\)", "<<", ">>", "...", "\u2013", ":",
        "approximately", "\u00b2", "\u221a", "\u0663", "e", "sqrt(", ".", ",", "<=", "=>", "!",
    ]
)  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECES, min_size=1, max_size=60))
def test_any_text_yields_well_formed_claims(pieces: list[str]) -> None:
    text = "".join(pieces)
    t0 = time.perf_counter()
    ext = extract_claims(text, {"A": 3}, annotations="check")  # type: ignore[dict-item]
    assert time.perf_counter() - t0 < 5.0
    for c in ext.claims:
        assert c.status in (ClaimStatus.HOLDS, ClaimStatus.WRONG)
        assert c.text and c.found


@settings(max_examples=200, deadline=None)
@given(st.integers(-(10**6), 10**6), st.integers(-(10**6), 10**6), st.sampled_from(["+", "-", "*"]))
def test_every_true_integer_equation_holds_and_every_false_one_is_caught(a: int, b: int, op: str) -> None:
    value = {"+": a + b, "-": a - b, "*": a * b}[op]
    text = f"So we get {a} {op} {b} = {value}."
    # a negative left operand right after a word is read as a unary minus: still a claim
    ext = extract_claims(text)
    assert [c.status for c in ext.claims] == [ClaimStatus.HOLDS]
    bad = extract_claims(f"So we get {a} {op} {b} = {value + 1}.")
    assert [c.status for c in bad.claims] == [ClaimStatus.WRONG]
    assert bad.claims[0].correct == str(value)
