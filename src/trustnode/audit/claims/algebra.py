"""Deciding symbolic equalities exactly, within bounded work.

Two rational expressions are equal when the numerator of their difference expands to
zero; before expanding, the size of the expansion is bounded from the expression tree,
so `(x+y+z)^24` is refused rather than computed. A difference that does not vanish is
shown at a small rational point, which also gives the evidence a witness. A symbol `i`
that only makes the claim hold as the imaginary unit is read as one. Expressions with
sin, cos, log ... are compared numerically at fixed points with 50 digits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

import sympy

MAX_EXPANSION_TERMS = 4000
MAX_SYMBOLS = 4
MAX_DEGREE = 30
# Fixed evaluation points (deterministic evidence on every node): small and distinct per symbol.
_POINTS = [sympy.Rational(p, q) for p, q in ((2, 1), (3, 1), (-5, 2), (7, 3), (-11, 4), (13, 5), (17, 7))]
_NUMERIC_ZERO = sympy.Float("1e-40", 60)
_NUMERIC_NONZERO = sympy.Float("1e-12", 60)


class Verdict(StrEnum):
    HOLDS = "holds"
    WRONG = "wrong"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    witness: str = ""  # where a wrong identity fails: "at x = 2: 3 vs 5"


def expansion_size(e: sympy.Expr) -> int:
    """An upper bound on the number of terms `expand(e)` can produce."""
    if e.is_Atom:
        return 1
    if e.is_Add:
        return min(MAX_EXPANSION_TERMS + 1, sum(expansion_size(a) for a in e.args))
    if e.is_Mul:
        n = 1
        for a in e.args:
            n *= expansion_size(a)
            if n > MAX_EXPANSION_TERMS:
                return MAX_EXPANSION_TERMS + 1
        return n
    if e.is_Pow:
        base, exp = e.args
        if exp.is_Integer and exp > 0:
            k = expansion_size(base)
            if k == 1:
                return 1
            # multinomial bound: C(n + k - 1, k - 1) terms for (t1 + ... + tk)^n
            return int(min(MAX_EXPANSION_TERMS + 1, sympy.binomial(int(exp) + k - 1, k - 1)))
        return expansion_size(base)
    return sum(expansion_size(a) for a in e.args) or 1


def rational_in_symbols(e: sympy.Expr) -> bool:
    """Built from symbols and algebraic numbers by + - * / and integer powers only."""
    for node in sympy.preorder_traversal(e):
        if isinstance(node, (sympy.Function, sympy.Integral, sympy.Derivative)):
            return False
        if node.is_Pow and node.args[0].free_symbols and not node.args[1].is_Integer:
            return False
    return True


def _value_at(e: sympy.Expr, point: dict[sympy.Symbol, sympy.Expr]) -> sympy.Expr | None:
    try:
        v = e.xreplace(point)
    except (ZeroDivisionError, ValueError, TypeError):
        return None
    if v.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        return None
    return v


def _points(syms: list[sympy.Symbol], k: int) -> dict[sympy.Symbol, sympy.Expr]:
    return {s: _POINTS[(k + 2 * j) % len(_POINTS)] for j, s in enumerate(syms)}


def _nonzero_at(diff: sympy.Expr, syms: list[sympy.Symbol]) -> str | None:
    """A point where `diff` is certainly not zero, as text, or None."""
    for k in range(len(_POINTS)):
        pt = _points(syms, k)
        v = _value_at(diff, pt)
        if v is None:
            continue
        n = sympy.N(v, 50)
        if n.is_number and abs(n) > _NUMERIC_NONZERO:
            where = ", ".join(f"{s} = {pt[s]}" for s in syms)
            return f"at {where} the sides differ by {sympy.N(v, 6)}"
    return None


def _exact_zero(diff: sympy.Expr) -> bool | None:
    """Is the rational expression identically zero? None when too large to decide."""
    if expansion_size(diff) > MAX_EXPANSION_TERMS:
        return None
    if diff.is_polynomial():
        return bool(sympy.expand(diff) == 0)
    num, _den = sympy.fraction(sympy.together(diff))
    if expansion_size(num) > MAX_EXPANSION_TERMS:
        return None
    return bool(sympy.expand(num) == 0)


def _numeric_zero(diff: sympy.Expr, syms: list[sympy.Symbol]) -> bool:
    seen = 0
    for k in range(4):
        v = _value_at(diff, _points(syms, k))
        if v is None:
            continue
        n = sympy.N(v, 50)
        if not n.is_number or abs(n) > _NUMERIC_ZERO:
            return False
        seen += 1
    return seen >= 3


def decide_equal(a: sympy.Expr, b: sympy.Expr) -> Decision:
    """Is `a = b` an identity in its symbols?"""
    diff = a - b
    syms = sorted(diff.free_symbols, key=lambda s: s.name)  # type: ignore[attr-defined]
    if len(syms) > MAX_SYMBOLS:
        return Decision(Verdict.UNKNOWN)
    if rational_in_symbols(diff):
        zero = _exact_zero(diff)
        if zero is None:
            return Decision(Verdict.UNKNOWN)
        if zero:
            return Decision(Verdict.HOLDS)
        i = sympy.Symbol("i")
        if i in diff.free_symbols and _exact_zero(diff.xreplace({i: sympy.I})):
            return Decision(Verdict.HOLDS)  # "i" is the imaginary unit here
    elif _numeric_zero(diff, syms):
        return Decision(Verdict.HOLDS)
    witness = _nonzero_at(diff, syms)
    if witness is None:
        return Decision(Verdict.UNKNOWN)
    return Decision(Verdict.WRONG, witness)


_SCALES = (sympy.Integer(10) ** 8, sympy.Integer(10) ** 16)
_GENERIC = [sympy.Rational(p, q) for p, q in ((7, 3), (-11, 5), (13, 4), (17, 6))]


def _log10(v: sympy.Expr) -> float | None:
    if v.is_Rational:
        p, q = sympy.Rational(v).p, sympy.Rational(v).q
        return None if p == 0 else math.log10(abs(p)) - math.log10(q)
    n = sympy.N(v, 30)
    if not n.is_number or n == 0 or not n.is_real:
        return None
    return math.log10(abs(float(n)))


def rational_degree(e: sympy.Expr, syms: list[sympy.Symbol]) -> int | None:
    """Degree of a rational function (numerator's minus denominator's), read from its growth.

    f(T p) ~ c T^d for a generic point p: d is the slope of log|f| between two large scales.
    Exact values at two points instead of `cancel`, which can take long on large input.
    """
    if not rational_in_symbols(e):
        return None
    if not syms:
        return 0
    logs = []
    for scale in _SCALES:
        pt = {s: scale * _GENERIC[k % len(_GENERIC)] for k, s in enumerate(syms)}
        v = _value_at(e, pt)
        lg = _log10(v) if v is not None else None
        if lg is None:
            return None
        logs.append(lg)
    d = (logs[1] - logs[0]) / 8
    if abs(d - round(d)) > 0.05:
        return None
    return int(round(d))


def leading_part_kept(a: sympy.Expr, b: sympy.Expr) -> bool:
    """Do both sides have the same degree, with a difference of lower degree?

    Rewriting an expression keeps its highest-degree part; a slip changes a lower term.
    An equation to solve, or a substitution of known values, usually changes the top part.
    """
    syms = sorted(a.free_symbols | b.free_symbols, key=lambda s: s.name)  # type: ignore[attr-defined]
    da, db = rational_degree(a, syms), rational_degree(b, syms)
    if da is None or db is None or da != db:
        return False
    dd = rational_degree(a - b, syms)
    return dd is not None and dd < da


def _has_sum_inside(e: sympy.Expr) -> bool:
    """A product or power with a sum inside: the unexpanded form."""
    for node in sympy.preorder_traversal(e):
        if node.is_Mul and any(arg.is_Add for arg in node.args):
            return True
        if node.is_Pow and node.args[0].is_Add and node.args[1].is_Integer and node.args[1] > 1:
            return True
    return False


def is_expanded(e: sympy.Expr) -> bool:
    return bool(e.is_Add) and not _has_sum_inside(e)


def factored(e: sympy.Expr) -> bool:
    """A product of at least two different non-constant factors, one of them a sum."""
    if not e.is_Mul:
        return False
    factors = [f for f in e.args if f.free_symbols]
    bases = {f.args[0] if f.is_Pow else f for f in factors}
    return len(bases) >= 2 and any(b.is_Add for b in bases)
