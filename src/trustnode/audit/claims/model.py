"""The token: what every stage after normalisation reads."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import sympy

ONE = sympy.Integer(1)


class T(StrEnum):
    NUM = "num"
    VAR = "var"  # a name bound to a value by an earlier segment ("A = -14")
    SYM = "sym"  # symbolic mode: a free symbol or a function name ("x", "a_1", "f'")
    OP = "op"
    LP = "lp"
    RP = "rp"
    EQ = "eq"
    FUNC = "func"
    BREAK = "break"


@dataclass
class Tok:
    kind: T
    text: str
    start: int
    end: int
    space_before: bool = False
    # NUM
    value: sympy.Expr | None = None
    decimals: int = 0
    scale: sympy.Expr = ONE
    percent: bool = False
    ellipsis: bool = False
    attached: bool = False  # digits glued to letters ("2x", "3rd"): not a number
    # EQ (and relations)
    approx: bool = False
    conditional: bool = False  # inside "if ...", "suppose ...", a question, or rejected: not a claim
    reworked: bool = False  # "E, which simplifies to ...": an equation worked on, not a stated value
    # BREAK: a word not glued to a number or operator before it ("so X", not ".75X" or "- X")
    standalone: bool = True
    after_operator: bool = False  # "+ his 1 teacher": a word inside a longer expression
    # SYM: a function applied to "(...)" ("f(x)"); FUNC ∑ ∏ ∫ ∂: variable and bounds
    apply: bool = False
    var: str = ""
    lower: str = ""
    upper: str = ""
