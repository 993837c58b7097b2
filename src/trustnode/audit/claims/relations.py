"""Numeric comparisons: `a < b`, `a ≥ b`, `a ≠ b` and chains `0 < 1/3 < 1`.

Both sides must be complete numeric expressions (the same precision rules as equality
chains decide what is complete). A comparison whose sides differ by less than a written
value's rounding unit is left undecided: "2/3 < 0.67" is true, but a writer comparing a
rounded value may mean the exact one.
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy

from trustnode.audit.claims.chains import left_partial, right_partial, split_runs
from trustnode.audit.claims.check import format_value, to_rational
from trustnode.audit.claims.evaluate import Unparseable, evaluate
from trustnode.audit.claims.model import T, Tok
from trustnode.audit.claims.words import RELATIONS
from trustnode.models.audit import CheckedClaim, ClaimStatus

_HOLDS = {
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    "\u2264": lambda a, b: a <= b,
    "\u2265": lambda a, b: a >= b,
    "\u2260": lambda a, b: a != b,
}


def _unit(toks: list[Tok]) -> sympy.Rational:
    """The largest rounding unit of the decimals written on one side."""
    unit = sympy.Integer(0)
    for t in toks:
        if t.kind is T.NUM and (t.decimals or t.ellipsis) and t.decimals < 30:
            unit = max(unit, sympy.Rational(1, 10**t.decimals) * t.scale)
    return unit


def _value(toks: list[Tok], variables: Mapping[str, sympy.Expr]) -> sympy.Expr | None:
    if any(t.kind is T.EQ for t in toks):
        return None
    try:
        v = evaluate(toks, variables)
    except (Unparseable, KeyError, ValueError, TypeError, ZeroDivisionError, OverflowError):
        return None
    return v if v.is_real else None


def relation_claims(norm: str, toks: list[Tok], variables: Mapping[str, sympy.Expr]) -> list[CheckedClaim]:
    """Every stated comparison between two numeric expressions, decided."""
    runs = split_runs(toks)
    claims: list[CheckedClaim] = []
    for (r1, b1, a1), (r2, b2, a2) in zip(runs, runs[1:], strict=False):
        if a1 is None or a1 is not b2 or a1.kind is not T.BREAK or a1.text not in RELATIONS:
            continue
        if a1.conditional or a1.reworked:
            continue
        if not (b1 is not None and b1.text in RELATIONS) and left_partial(r1, b1):
            continue  # ("0 < 1/3 < 1": a comparison next to another one is complete)
        if not (a2 is not None and a2.text in RELATIONS) and right_partial(r2, a2):
            continue
        va, vb = _value(r1, variables), _value(r2, variables)
        if va is None or vb is None:
            continue
        ra, rb = to_rational(va), to_rational(vb)
        if abs(ra - rb) <= max(_unit(r1), _unit(r2)) / 2:
            continue
        holds = bool(_HOLDS[a1.text](ra, rb))
        left = " ".join(norm[r1[0].start : r1[-1].end].split())
        right = " ".join(norm[r2[0].start : r2[-1].end].split())
        claims.append(
            CheckedClaim(
                text=f"{left} {a1.text} {right}",
                expression=left,
                found=f"{a1.text} {right}",
                correct=f"{format_value(va)} vs {format_value(vb)}",
                status=ClaimStatus.HOLDS if holds else ClaimStatus.WRONG,
                tolerance="comparison",
            )
        )
    return claims
