"""The algebra tier: symbolic claims found in a text and decided exactly.

What counts as a claim (precision first; an equation to solve is not a false identity):
- a link `A = B` of a chain of three or more sides whose two sides mention the same
  symbols (a rewriting: "(x+1)^2 = x^2 + 2x + 1 = ..."), and a two-sided factorisation
  ("x^3 - 4x^2 + 3 = (x - 1)(x^2 - 3x + 3)"); either is judged wrong only when the
  rewriting kept the highest-degree part and changed a lower one, which is how slips
  look (an equation or a substituted value changes the top part);
- d/dx of an expression, f'(x) for an f defined earlier, an antiderivative (checked by
  differentiating it), a definite integral, a sum or product with explicit bounds;
- "x = a is a root / solution of E" and "solving E gives x = a" (`solving`).
Definitions ("f(x) = ...", "y = ...") and equations are recorded for later claims and
later segments. Anything tested, asked or rejected (see `clauses`) claims nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import sympy

from trustnode.audit.claims.algebra import (
    Decision,
    Verdict,
    decide_equal,
    factored,
    is_expanded,
    leading_part_kept,
    rational_in_symbols,
)
from trustnode.audit.claims.evaluate import Function, Scope
from trustnode.audit.claims.facts import Facts, equation_of
from trustnode.audit.claims.model import T, Tok
from trustnode.audit.claims.statements import Side, Statement, parse_sides, read_statements
from trustnode.models.audit import CheckedClaim, ClaimStatus

MAX_STATEMENTS = 200  # per text: a text with more equalities than this is read this far
_WORTH = re.compile(r"[=\u2202\u222b\u2211\u220f]")
# A letter used as a symbol: next to an operator, after a digit, or a short product ("ax^2").
_LETTER_NEAR_MATH = re.compile(
    r"(?<![A-Za-z])[A-Za-z](?![A-Za-z])[ \t\u27e6\u27e7]*+[=+\-*/^()'\u2248]"
    r"|[=+\-*/^(\u2248][ \t\u27e6\u27e7]*+[A-Za-z\u03c0](?![A-Za-z])|\d[A-Za-z]|[A-Za-z]{2,3}\^"
    r"|[\u2202\u222b\u2211\u220f]"
)
_REWRITE_CUES = frozenset(
    {"factor", "factors", "factoring", "factorise", "factorize", "factorising", "factorizing",
     "factored", "factorised", "factorized", "factorization", "factorisation", "expand", "expanding",
     "expanded", "simplify", "simplifying", "simplified", "rewrite", "rewriting", "identity"}
)  # fmt: skip


def worth_reading(norm: str) -> bool:
    """A cheap look: an equality or a calculus sign, and a letter standing alone or after a digit."""
    return bool(_WORTH.search(norm)) and bool(_LETTER_NEAR_MATH.search(norm))


def claim(
    text: str, computed: str, found: str, correct: str, ok: bool, kind: str, note: str = ""
) -> CheckedClaim:
    return CheckedClaim(
        text=text,
        expression=computed,
        found=found,
        correct=correct,
        status=ClaimStatus.HOLDS if ok else ClaimStatus.WRONG,
        tolerance=kind,
        note=note,
    )


def _show(e: sympy.Expr) -> str:
    return str(e).replace("**", "^")


def _calculus_kind(side: Side) -> str | None:
    for t in side.toks:
        if t.kind is T.FUNC and t.text in ("deriv", "int", "sum", "prod"):
            if t.text == "int":
                return "antiderivative" if not (t.lower or t.upper) else "integral"
            return {"deriv": "derivative", "sum": "sum", "prod": "product"}[t.text]
    if side.toks and side.toks[0].kind is T.SYM and "'" in side.toks[0].text and side.toks[0].apply:
        return "derivative"
    return None


def _decide_calculus(kind: str, a: Side, b: Side) -> Decision:
    assert a.value is not None and b.value is not None
    if kind == "antiderivative":
        integral = a.value if isinstance(a.value, sympy.Integral) else b.value
        other = b.value if integral is a.value else a.value
        if not isinstance(integral, sympy.Integral):
            return Decision(Verdict.UNKNOWN)
        f, (x,) = integral.function, integral.variables
        return decide_equal(sympy.diff(other, x), f)  # "+ C" vanishes here
    return decide_equal(a.value, b.value)


def _definition(stmt: Statement, facts: Facts) -> None:
    """ "f(x) = body" and "y = body" (first link only) become known for what follows.

    A definition counts even inside a condition ("if f(x) = x^2, then f'(x) = 2x"). A
    name defined twice with different bodies is dropped: cases, not one object.
    """
    first = stmt.sides[0]
    app = first.application
    if app is not None:
        name, arg = app
        if "'" in name or len(arg) != 1 or arg[0].kind is not T.SYM:
            return
        param = sympy.Symbol(arg[0].text)
        # "f(x) = D^2 = x^4/4 - 8x^2": the body is the last side written in x
        bodies = [s.value for s in stmt.sides[1:] if s.value is not None and param in s.value.free_symbols]
        if not bodies:
            return
        fn = Function(param, bodies[-1])
        if name in facts.functions and facts.functions[name] != fn:
            facts.functions.pop(name)
            facts.dropped.add(name)
        elif name not in facts.dropped:
            facts.functions[name] = fn
        return
    sym = first.lone_symbol
    second = stmt.sides[1].value
    if sym is not None and second is not None and second.free_symbols - {sympy.Symbol(sym)}:
        if sym in facts.definitions and facts.definitions[sym] != second:
            facts.definitions.pop(sym)
            facts.dropped.add(sym)
        elif sym not in facts.dropped:
            facts.definitions[sym] = second


def _identity_intended(stmt: Statement, k: int, cue: bool) -> bool:
    a, b = stmt.sides[k].value, stmt.sides[k + 1].value
    assert a is not None and b is not None
    if not sympy.cancel(sympy.together(a)).free_symbols and not sympy.cancel(sympy.together(b)).free_symbols:
        return True  # "(36/175 w + ...)/(6/7 w) = ...": arithmetic written with a symbol that cancels
    if not leading_part_kept(a, b):
        return False
    if len(stmt.sides) >= 3:
        return True
    shaped = (factored(a) and is_expanded(b)) or (factored(b) and is_expanded(a))
    return shaped or (cue and (is_expanded(a) != is_expanded(b)))


def _defines(side: Side, scope: Scope) -> bool:
    """ "f(x)" with x a symbol names a function; "f(2)" or "f'(x)" for a known f computes."""
    app = side.application
    if app is None:
        return False
    name, arg = app
    known = name.rstrip("'") in scope.functions
    return not known or ("'" not in name and len(arg) == 1 and arg[0].kind is T.SYM)


def _pair(stmt: Statement, k: int, cue: bool, scope: Scope) -> CheckedClaim | None:
    a, b = stmt.sides[k], stmt.sides[k + 1]
    if a.value is None or b.value is None or a.opaque or b.opaque:
        return None
    sign = "\u2248" if stmt.approx[k] else "="
    text = f"{a.text} {sign} {b.text}"
    kind = _calculus_kind(a) or _calculus_kind(b)
    if kind is not None:
        computed, stated = (a, b) if _calculus_kind(a) else (b, a)
        assert computed.value is not None and stated.value is not None
        extra = stated.value.free_symbols - computed.value.free_symbols - {sympy.Symbol("C")}
        if stmt.approx[k] or extra or (computed.value.free_symbols and not stated.value.free_symbols):
            return None  # "f'(x) = 0" is an equation to solve; "= n(n+1)/2" a formula in n
        d = _decide_calculus(kind, a, b)
        if d.verdict is Verdict.UNKNOWN:
            return None
        return claim(text, a.text, b.text, _show(a.value), d.verdict is Verdict.HOLDS, kind, d.witness)
    if not (a.symbols or b.symbols) or a.symbols != b.symbols:
        return None
    if k == 0 and (a.lone_symbol or _defines(a, scope)):
        return None  # a definition, not a computation
    if b.lone_symbol or stmt.approx[k] or not rational_in_symbols(a.value - b.value):
        return None
    d = decide_equal(a.value, b.value)
    if d.verdict is Verdict.HOLDS:
        return claim(text, a.text, b.text, _show(a.value), True, "identity")
    if d.verdict is Verdict.WRONG and _identity_intended(stmt, k, cue):
        return claim(text, a.text, b.text, _show(sympy.expand(a.value)), False, "identity", d.witness)
    return None


def sentence_words(toks: list[Tok], first: int) -> set[str]:
    """Lower-case words of the sentence holding token `first`, up to it."""
    words: set[str] = set()
    for t in reversed(toks[:first]):
        if t.kind is T.BREAK and t.text in (".", "!", "?", "\n"):
            break
        if t.kind is T.BREAK:
            words.add(t.text.lower())
    return words


def read_symbolic(
    norm: str, toks: list[Tok], variables: Mapping[str, sympy.Expr], context: Facts, *, first: bool = False
) -> tuple[list[CheckedClaim], Facts, list[Statement]]:
    """Claims of one normalised text (tokenized in symbolic mode) and what it defines.

    `first`: stop at the first decided claim (the router only asks whether there is one).
    """
    from trustnode.audit.claims.solving import root_and_solution_claims

    facts = context.copy()
    facts.equations = []
    claims: list[CheckedClaim] = []
    stmts = read_statements(norm, toks)[:MAX_STATEMENTS]
    for stmt in stmts:
        scope = Scope(variables=variables, functions=facts.functions, definitions=facts.definitions)
        parse_sides(stmt, scope)
        if not stmt.tested and not stmt.reworked:
            cue = bool(sentence_words(toks, stmt.first) & _REWRITE_CUES)
            for k in range(len(stmt.sides) - 1):
                c = _pair(stmt, k, cue, scope)
                if c is not None:
                    claims.append(c)
                    if first:
                        return claims, facts, stmts
        _definition(stmt, facts)
        eq = equation_of(stmt)
        if eq is not None:
            facts.equations.append(eq)
    claims += root_and_solution_claims(toks, stmts, facts, context)
    facts.equations = context.equations + facts.equations
    return claims, facts, stmts
