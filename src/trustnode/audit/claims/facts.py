"""What a text states for later texts to use: functions, definitions, equations."""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy

from trustnode.audit.claims.evaluate import Function
from trustnode.audit.claims.statements import Statement


@dataclass(frozen=True)
class Equation:
    """An equation stated in a text, as `expr = 0`, with its one symbol when it has one."""

    expr: sympy.Expr
    text: str
    var: str | None
    start: int
    trivial: bool  # "x = 3": a value, not an equation to solve
    exact: bool  # no decimal literal in it (a decimal may be rounded)


@dataclass
class Facts:
    """What a text (and the texts before it) defined: for the claims that come later."""

    functions: dict[str, Function] = field(default_factory=dict)
    definitions: dict[str, sympy.Expr] = field(default_factory=dict)
    equations: list[Equation] = field(default_factory=list)
    dropped: set[str] = field(default_factory=set)  # names defined twice, differently

    def copy(self) -> Facts:
        return Facts(dict(self.functions), dict(self.definitions), list(self.equations), set(self.dropped))


def equation_of(stmt: Statement) -> Equation | None:
    """A stated two-sided equality with a symbol, as an `Equation` (None otherwise)."""
    if stmt.tested or len(stmt.sides) != 2:
        return None
    a, b = stmt.sides
    if a.value is None or b.value is None or a.opaque or b.opaque or a.application:
        return None
    expr = a.value - b.value
    syms = [s for s in expr.free_symbols if isinstance(s, sympy.Symbol)]
    if not syms:
        return None
    var = syms[0].name if len(syms) == 1 else None
    trivial = bool(a.lone_symbol and not b.value.free_symbols)
    exact = not any(t.decimals for s in stmt.sides for t in s.toks if t.value is not None)
    return Equation(expr, f"{a.text} = {b.text}", var, stmt.start, trivial, exact)
