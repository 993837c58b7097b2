"""Segments are hostile input: no text may crash the checker or hang it."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trustnode.audit.claims import context_from, extract_claims, has_decidable_claim
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
    text = "".join(pieces)  # a hang fails through the suite's timeout, not a wall-clock bound
    ext = extract_claims(text, {"A": 3}, annotations="check")  # type: ignore[dict-item]
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


SYMBOLIC = st.sampled_from(
    [
        "x", "y", "a_1", "f(x)", "f'(x)", "2x", "ax", "^", "^{24}", "=", " = ", "+", "-", "*", "/", "(", ")",
        "\\frac{d}{dx}", "\\int", " dx", "\\sum_{k=1}^{", "}", "{", "k", "\\prod_{i=1}^{3}", "\\sqrt{",
        "\\sin", "\\pi", "!", "3", "0", "100", " is a root", " of ", "so ", ". ", "\\Rightarrow ", "\\(",
        "\\)", "\\[", "\\]", "Let ", "solving gives ", " both sides ", "\\lfloor", "\\rfloor", "<", "\\geq",
    ]
)  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(SYMBOLIC, min_size=1, max_size=50), st.lists(SYMBOLIC, max_size=30))
def test_any_algebra_yields_well_formed_claims(pieces: list[str], parent: list[str]) -> None:
    ctx = context_from(["".join(parent)])
    ext = extract_claims("".join(pieces), ctx.bindings, facts=ctx.facts)
    assert has_decidable_claim("".join(pieces)) == bool(extract_claims("".join(pieces)).claims)
    for c in ext.claims:
        assert c.status in (ClaimStatus.HOLDS, ClaimStatus.WRONG) and c.text
