"""Symbolic statements in a text: the equalities that mention a symbol, parsed.

The symbolic tokenizer's stream is cut into runs of math tokens (words end a run); a
run with equality signs becomes a `Statement` whose sides are sympy expressions. What
each statement means (an identity to check, an equation to solve, a definition) is
decided by `algebra`; this module only reads, with the same precision-first rules as
the arithmetic chains: a side that may be part of something longer is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from trustnode.audit.claims.evaluate import Scope, Unparseable, evaluate_symbolic
from trustnode.audit.claims.model import T, Tok
from trustnode.audit.claims.words import (
    CLOSE_MATH,
    FUNCTION_WORDS,
    IMPLIES,
    JUXTAPOSED,
    LEFT_JOIN_WORDS,
    OPEN_MATH,
    PARTIAL_MARKS,
    RIGHT_JOIN_WORDS,
    SAFE_RIGHT_ATTACHED,
)

MAX_STATEMENT_TOKENS = 400
_MATH = (T.NUM, T.SYM, T.VAR, T.OP, T.LP, T.RP, T.EQ, T.FUNC)
_OPERAND_END = (T.NUM, T.SYM, T.VAR, T.RP)
_OPERAND_START = (T.NUM, T.SYM, T.VAR, T.LP, T.FUNC)


@dataclass
class Side:
    """One side: its tokens, its text in the normalised string and its value (None: unread)."""

    toks: list[Tok]
    text: str
    value: sympy.Expr | None

    @property
    def symbols(self) -> frozenset[str]:
        if self.value is None:
            return frozenset()
        return frozenset(s.name for s in self.value.free_symbols if isinstance(s, sympy.Symbol))

    @property
    def lone_symbol(self) -> str | None:
        """ "y" in "y = 3x + 1": a side that only names something."""
        ts = self.toks
        if len(ts) == 1 and ts[0].kind is T.SYM and ts[0].text != "\u03c0":
            return ts[0].text
        return None

    @property
    def application(self) -> tuple[str, list[Tok]] | None:
        """ "f(x)" or "f'(x)": a function name applied to a bracketed argument."""
        ts = self.toks
        if (
            len(ts) >= 3
            and ts[0].kind is T.SYM
            and ts[0].apply
            and ts[1].kind is T.LP
            and ts[-1].kind is T.RP
        ):
            return ts[0].text, ts[2:-1]
        return None

    @property
    def calculus(self) -> bool:
        return any(t.kind is T.FUNC and t.text in ("deriv", "int", "sum", "prod") for t in self.toks)

    @property
    def opaque(self) -> bool:
        """Holds a function nobody defined ("g(x)" with no "g(x) = ..." before)."""
        return self.value is not None and bool(self.value.atoms(sympy.Function) - _KNOWN_FUNCS(self.value))


def _KNOWN_FUNCS(v: sympy.Expr) -> set[sympy.Basic]:  # noqa: N802 - reads like the set it is
    return {
        f
        for f in v.atoms(sympy.Function)
        if isinstance(f, (sympy.sin, sympy.cos, sympy.tan, sympy.log, sympy.exp))
    }


@dataclass
class Statement:
    """`s0 = s1 = ... = sn` with at least one symbol somewhere; `start` orders statements."""

    sides: list[Side]
    approx: list[bool]  # approx[i]: the sign between sides i and i+1 is "≈"
    start: int
    end: int
    first: int  # token index range [first, last) in the stream it was read from
    last: int
    tested: bool  # inside a condition, a test, a question, or rejected: considered, not stated
    reworked: bool  # "E, which simplifies to ...": an equation, never an identity claim
    lead: str  # the word before the statement (lower case), "" at a boundary
    follows_implication: bool  # "⇒", "so", "gives" ... right before it

    @property
    def symbolic(self) -> bool:
        return any(s.symbols for s in self.sides)


_LINK_WORDS = frozenset(
    {IMPLIES, "so", "thus", "hence", "therefore", "gives", "get", "yields", "becomes", "then", "implies",
     "obtain", "have", "solving", "simplifies", "simplifying", "to", "is", "or", "and", ":", ","}
)  # fmt: skip


def _runs(toks: list[Tok]) -> list[tuple[int, int]]:
    """[start, end) token index ranges of maximal math runs (implicit products stay inside)."""
    out: list[tuple[int, int]] = []
    i, n = 0, len(toks)
    while i < n:
        if toks[i].kind not in _MATH or (toks[i].kind is T.NUM and toks[i].attached):
            i += 1
            continue
        j = i + 1
        while j < n and toks[j].kind in _MATH and not (toks[j].kind is T.NUM and toks[j].attached):
            prev, t = toks[j - 1], toks[j]
            if prev.kind is T.NUM and t.kind is T.NUM:
                break  # "1 1/2" and "3 4": two numbers side by side are never one expression
            j += 1
        out.append((i, j))
        i = j
    return out


def _left_partial(side: list[Tok], before: Tok | None) -> bool:
    if not side:
        return True
    if side[0].kind is T.OP and side[0].text != "-":
        return True
    if before is None:
        return False
    w = before.text.lower()
    if before.kind is T.NUM and before.attached:
        return True
    if w in PARTIAL_MARKS and w != IMPLIES:
        return True
    return w in LEFT_JOIN_WORDS or w in FUNCTION_WORDS or w == JUXTAPOSED


def _right_partial(side: list[Tok], after: Tok | None) -> bool:
    if not side or side[-1].kind in (T.OP, T.LP, T.FUNC):
        return True
    if after is None:
        return False
    w = after.text.lower()
    if not after.space_before and after.text not in SAFE_RIGHT_ATTACHED:
        return True
    if w in PARTIAL_MARKS and w not in (IMPLIES, "^", "_", "&"):
        return True
    return w in RIGHT_JOIN_WORDS or w in FUNCTION_WORDS


def _text(norm: str, toks: list[Tok]) -> str:
    if not toks:
        return ""
    raw = norm[toks[0].start : toks[-1].end]
    return " ".join(raw.replace(OPEN_MATH, " ").replace(CLOSE_MATH, " ").replace("$", " ").split())


def parse_sides(stmt: Statement, scope: Scope) -> None:
    """Give each side its value under `scope` (None when it does not parse)."""
    for side in stmt.sides:
        try:
            side.value = evaluate_symbolic(side.toks, scope) if side.toks else None
        except (
            Unparseable,
            ValueError,
            TypeError,
            ZeroDivisionError,
            OverflowError,
            RecursionError,
            KeyError,
        ):
            side.value = None


def read_statements(norm: str, toks: list[Tok]) -> list[Statement]:
    """Every run with an equality sign, in reading order (sides not parsed yet)."""
    out: list[Statement] = []
    for a, b in _runs(toks):
        run = toks[a:b]
        if not any(t.kind is T.EQ for t in run) or len(run) > MAX_STATEMENT_TOKENS:
            continue
        parts: list[list[Tok]] = [[]]
        eqs: list[Tok] = []
        for t in run:
            if t.kind is T.EQ:
                eqs.append(t)
                parts.append([])
            else:
                parts[-1].append(t)
        before = toks[a - 1] if a > 0 else None
        after = toks[b] if b < len(toks) else None
        lo = 1 if _left_partial(parts[0], before) else 0
        hi = len(parts) - 1 if _right_partial(parts[-1], after) else len(parts)
        if hi - lo < 2:
            continue
        sides = [Side(p, _text(norm, p), None) for p in parts[lo:hi]]
        lead = before.text.lower() if before is not None and before.kind is T.BREAK else ""
        out.append(
            Statement(
                sides=sides,
                approx=[e.approx for e in eqs[lo : hi - 1]],
                start=run[0].start,
                end=run[-1].end,
                first=a,
                last=b,
                tested=any(e.conditional for e in eqs),
                reworked=any(e.reworked for e in eqs),
                lead=lead,
                follows_implication=lead in _LINK_WORDS,
            )
        )
    return out


def read_expressions(norm: str, toks: list[Tok]) -> list[tuple[int, int, Side]]:
    """Runs without an equality sign that mention a symbol: (first, last, side)."""
    out: list[tuple[int, int, Side]] = []
    for a, b in _runs(toks):
        run = toks[a:b]
        if any(t.kind is T.EQ for t in run) or not any(t.kind is T.SYM for t in run):
            continue
        if len(run) < 3 or len(run) > MAX_STATEMENT_TOKENS:
            continue
        out.append((a, b, Side(run, _text(norm, run), None)))
    return out


def symbol_names(stmt: Statement) -> frozenset[str]:
    names: set[str] = set()
    for s in stmt.sides:
        names |= s.symbols
    return frozenset(names)
