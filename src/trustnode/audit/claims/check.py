"""Stage 5 of claim extraction: decide each link of a chain.

Values are exact sympy numbers. A written value may be rounded: a literal with d
decimals (or a percentage, or "..." truncation) holds when the exact value rounded to
nearest, or truncated ("0.6944..."), at its last written place equals it; a whole
number may also be the floor or ceiling ("25/3 = 8 buses"). An explicit approximation
("≈", "approximately", "about") also allows 1% relative error; decimals with two or
more places inside an expression may be rounded inputs, whose effect is bounded by
perturbing each by one unit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

import sympy

from trustnode.audit.claims.chains import Chain, Side
from trustnode.audit.claims.evaluate import Unparseable, evaluate
from trustnode.audit.claims.model import T, Tok
from trustnode.audit.claims.numbers import plain_int
from trustnode.models.audit import CheckedClaim, ClaimStatus


class Tolerance(StrEnum):
    EXACT = "exact"
    ROUNDED = "rounded"
    TRUNCATED = "truncated"
    APPROXIMATE = "approximate"
    PROPAGATED = "propagated"


def to_rational(x: sympy.Expr) -> sympy.Rational:
    """An exact rational, or a 60-digit rational approximation of an irrational."""
    if x.is_Rational:
        return sympy.Rational(x)
    return sympy.Rational(str(sympy.N(x, 60)))


def _unit(tok: Tok, percent_as_fraction: bool) -> sympy.Rational:
    scale = tok.scale if (percent_as_fraction or not tok.percent) else tok.scale * 100
    return sympy.Rational(1, 10**tok.decimals) * scale


def _rounded_inputs(toks: list[Tok]) -> list[Tok]:
    """Decimals inside an expression that may themselves be rounded (two or more places, or '...')."""
    return [t for t in toks if t.kind is T.NUM and (t.decimals >= 2 or t.ellipsis)]


def _propagation(
    side: Side, value: sympy.Expr, variables: Mapping[str, sympy.Expr], pct: bool
) -> sympy.Rational:
    """Bound on how much one-unit changes of rounded inputs move the side's value."""
    if side.literal is not None:
        return sympy.Integer(0)
    bound = sympy.Integer(0)
    for t in _rounded_inputs(side.toks):
        assert t.value is not None
        u = sympy.Rational(1, 10**t.decimals)
        try:
            moved = evaluate(side.toks, variables, pct, {id(t): t.value + u})
        except Unparseable:
            return sympy.Integer(-1)
        bound += abs(to_rational(moved) - to_rational(value))
    return bound


def format_value(v: sympy.Expr) -> str:
    if v.is_Integer:
        return str(v)
    if v.is_Rational:
        r = sympy.Rational(v)
        q = r.q
        while q % 2 == 0:
            q //= 2
        while q % 5 == 0:
            q //= 5
        if q == 1:  # terminating decimal
            s = str(sympy.N(r, 40))
            s = s.rstrip("0").rstrip(".") if "." in s else s
            return s
        return f"{r} (\u2248 {sympy.N(r, 12)})"
    return f"{v} (\u2248 {sympy.N(v, 12)})"


@dataclass
class ChainCheck:
    claims: list[CheckedClaim]
    last_value: sympy.Expr | None


def pair_holds(
    a: Side,
    va: sympy.Expr,
    b: Side,
    vb: sympy.Expr,
    approx: bool,
    variables: Mapping[str, sympy.Expr],
    pct: bool,
    counts: bool = True,
) -> tuple[bool, Tolerance]:
    """Does `a = b` hold as written? `counts`: a whole number may be a floor or a ceiling."""
    if va.is_Rational and vb.is_Rational:
        if va == vb:
            return True, Tolerance.EXACT
    elif is_zero(va - vb):
        return True, Tolerance.EXACT
    ra, rb = to_rational(va), to_rational(vb)
    diff = abs(ra - rb)
    prop = _propagation(a, va, variables, pct) + _propagation(b, vb, variables, pct)
    if prop < 0:
        return False, Tolerance.EXACT
    lit_unit = sympy.Integer(0)
    # a written value may be rounded or truncated at its last place: try each literal side
    # as the stated one and the other side as the exact value
    for stated, exact, side in ((rb, ra, b), (ra, rb, a)):
        lit = side.literal
        if lit is None:
            continue
        u = _unit(lit, pct)
        lit_unit = max(lit_unit, u)
        if lit.decimals == 0 and not lit.percent and lit.scale == 1 and counts:
            if diff < u + prop:  # whole numbers: floor, ceiling or rounding ("25/3 = 8 buses")
                return True, Tolerance.ROUNDED
            continue
        if diff <= u / 2 + prop:
            return True, Tolerance.ROUNDED
        if _truncate(exact, u) == stated:
            return True, Tolerance.TRUNCATED
    if prop > 0 and diff <= prop:
        return True, Tolerance.PROPAGATED
    if approx:
        ref = max(abs(to_rational(va)), abs(to_rational(vb)))
        if diff <= ref / 100 or (lit_unit > 0 and diff < lit_unit * 5):
            return True, Tolerance.APPROXIMATE
    return False, Tolerance.EXACT


def is_zero(x: sympy.Expr) -> bool:
    """Is an irrational difference zero? Sympy's canonical form first, then 60 digits.

    (`simplify` can run for minutes on hostile input; a difference below 1e-45 at 60
    significant digits is zero for every expression this parser can build.)
    """
    if x == 0:
        return True
    d = sympy.N(x, 60)
    return bool(d.is_number and abs(d) < sympy.Float("1e-45", 60))


def _truncate(x: sympy.Rational, unit: sympy.Rational) -> sympy.Rational:
    """x cut (toward zero) to a multiple of unit: what "0.6944..." writes."""
    q = abs(x) / unit
    t = sympy.Integer(q.p // q.q) * unit
    return t if x >= 0 else -t


def _side_text(text: str, side: Side) -> str:
    raw = text[side.start : side.end]
    for sym in "$\u20ac\u00a3\u00a5\u00a2\u00b0\u27e6\u27e7":  # transparent symbols, as in the tokenizer
        raw = raw.replace(sym, " " if sym in "$\u27e6\u27e7" else "")
    return " ".join(raw.split())


_ROUNDING_WORDS = re.compile(
    r"\b(?:round\w*|whole|nearest|integer|can'?t|cannot|full|complete|at (?:least|most)|remainder|approx\w*)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?\n]")
_NEXT_WORD = re.compile(r"\s*([A-Za-z]+)")
_REMAINDER = re.compile(r"\s*(?:,\s*)?(?:with\s+)?(?:a\s+)?(?:remainder|rem\.?|R)(?:\s+of)?\s+(\d{1,30})\b")
_NOT_COUNTED = frozenset({"with", "and", "or", "so", "then", "which", "is", "as", "but", "because", "since"})


def _counts(text: str, chain: Chain) -> bool:
    """May a whole number in this chain be a count rounded up or down ("25/3 = 8 buses")?

    Only when a noun follows the chain or its sentence speaks of rounding or whole units;
    "1/(5/2) = 1" in a formula is exact or wrong.
    """
    end = chain.sides[-1].end
    m = _NEXT_WORD.match(text, end)
    if m and m.group(1).lower() not in _NOT_COUNTED:
        return True
    start = chain.sides[0].start
    lo = max(0, start - 300)
    prev = [x.end() for x in _SENTENCE_END.finditer(text, lo, start)]
    nxt = _SENTENCE_END.search(text, end, end + 300)
    sentence = text[prev[-1] if prev else lo : nxt.start() if nxt else end + 300]
    return _ROUNDING_WORDS.search(sentence) is not None


def remainder_claim(chain: Chain, text: str, variables: Mapping[str, sympy.Expr]) -> CheckedClaim | None:
    """ "1529 ÷ 6 = 255 with a remainder of 4": a = b*q + r with 0 <= r < b, exactly."""
    if len(chain.sides) != 2 or chain.sides[1].literal is None:
        return None
    ts = chain.sides[0].toks
    if (
        len(ts) != 3
        or ts[1].kind is not T.OP
        or ts[1].text != "/"
        or not (plain_int(ts[0]) and plain_int(ts[2]))
    ):
        return None
    m = _REMAINDER.match(text, chain.sides[-1].end)
    if m is None or not plain_int(chain.sides[1].literal):
        return None
    a, b, q = (int(t.value or 0) for t in (ts[0], ts[2], chain.sides[1].literal))
    r = int(m.group(1))
    if b == 0:
        return None
    qq, rr = divmod(a, b)
    return CheckedClaim(
        text=f"{_side_text(text, chain.sides[0])} = {q} remainder {r}",
        expression=_side_text(text, chain.sides[0]),
        found=f"{q} remainder {r}",
        correct=f"{qq} remainder {rr}",
        status=ClaimStatus.HOLDS if (q, r) == (qq, rr) else ClaimStatus.WRONG,
        tolerance="remainder",
    )


def check_chain(chain: Chain, text: str, variables: Mapping[str, sympy.Expr]) -> ChainCheck:
    """Check consecutive sides of one chain; sides that do not parse split it."""
    values: list[sympy.Expr | None] = []
    for side in chain.sides:
        try:
            values.append(evaluate(side.toks, variables))
        except (Unparseable, KeyError, ValueError, TypeError, ZeroDivisionError, OverflowError):
            values.append(None)
    claims: list[CheckedClaim] = []
    rem = remainder_claim(chain, text, variables)
    if rem is not None:
        return ChainCheck(claims=[rem], last_value=values[-1])
    counts = _counts(text, chain)
    prev: int | None = None  # the last side that parsed: a = (garbled) = c still claims a = c
    for i in range(len(chain.sides)):
        if values[i] is None:
            continue
        if prev is None:
            prev = i
            continue
        a, b = chain.sides[prev], chain.sides[i]
        va, vb = values[prev], values[i]
        prev = i
        assert va is not None and vb is not None
        if lone_var(a):
            continue  # "X = 26" names a value; it is not computed from X's earlier meaning
        if va != vb and _continues(b, va):
            continue  # "3/2 = 1.50 + 3.00 = 4.50": a running total written as one chain
        if a.literal is not None and b.literal is not None:
            if a.literal.percent == b.literal.percent and va == vb:
                continue  # "5 = 5" restates a value: nothing was computed between the two sides
            if plain_int(a.literal) and plain_int(b.literal):
                continue  # "= 101 = 10": two bare whole numbers claim nothing computable
        approx = any(e.approx for e in chain.eqs[chain.sides.index(a) : i])
        holds, tol = pair_holds(a, va, b, vb, approx, variables, True, counts)
        has_pct = any(t.kind is T.NUM and t.percent for t in a.toks + b.toks)
        if not holds and has_pct:
            # "(20/80) * 100 = 25%": the percent sign used as a label
            try:
                va2 = evaluate(a.toks, variables, percent_as_fraction=False)
                vb2 = evaluate(b.toks, variables, percent_as_fraction=False)
                holds, tol = pair_holds(a, va2, b, vb2, approx, variables, False, counts)
            except (Unparseable, KeyError, ZeroDivisionError):
                pass
        if not holds and has_pct and _percent_mixed_with_sum(a.toks + b.toks):
            continue  # "50 + 10% = 55": percent-of-base notation, not arithmetic we can read
        # the stated value is the bare number when only one side is one ("194 = 11 * 17 + 9")
        computed, stated, value = (b, a, vb) if a.literal is not None and b.literal is None else (a, b, va)
        claims.append(
            CheckedClaim(
                text=f"{_side_text(text, a)} {chain.eqs[i - 1].text} {_side_text(text, b)}",
                expression=_side_text(text, computed),
                found=_side_text(text, stated),
                correct=format_value(value),
                status=ClaimStatus.HOLDS if holds else ClaimStatus.WRONG,
                tolerance=tol.value,
            )
        )
    last = values[-1] if values else None
    return ChainCheck(claims=claims, last_value=last)


def _percent_mixed_with_sum(toks: list[Tok]) -> bool:
    for i, t in enumerate(toks):
        if t.kind is T.NUM and t.percent:
            near = toks[max(0, i - 1) : i + 2]
            if any(x.kind is T.OP and x.text in "+-" for x in near):
                return True
    return False


def _continues(side: Side, previous: sympy.Expr) -> bool:
    """Does the side start by adding to or taking from the previous value ("1.50 + 3.00")?"""
    ts = side.toks
    if len(ts) < 3 or ts[0].kind is not T.NUM or ts[1].kind is not T.OP or ts[1].text not in "+-*/":
        return False
    try:
        first = evaluate(ts[:1], {})
    except Unparseable:
        return False
    return bool(first == previous)


def lone_var(side: Side) -> bool:
    return len(side.toks) == 1 and side.toks[0].kind is T.VAR


def restated_name(chain: Chain) -> str | None:
    """`A = ... = v` where A was already bound: A now stands for the stated v."""
    first = chain.sides[0].toks
    if len(first) == 1 and first[0].kind is T.VAR:
        return first[0].text
    return None
