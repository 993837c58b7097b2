"""Stage 4 of claim extraction: one side's tokens -> an exact sympy value.

A recursive-descent parser over the tokens (never `eval`, never `sympify` of text),
with bounds on nesting, exponents and the size of powers, so hostile input is refused
rather than computed.
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy

from trustnode.audit.claims.chains import MAX_SEGMENT_TOKENS
from trustnode.audit.claims.tokens import MAX_DEPTH, T, Tok

MAX_POWER_DIGITS = 400


class Unparseable(Exception):
    """A side that is not a well-formed numeric expression."""


class _Parser:
    """Recursive descent over one side's tokens, producing an exact sympy value."""

    def __init__(
        self,
        toks: list[Tok],
        variables: Mapping[str, sympy.Expr],
        percent_as_fraction: bool,
        override: Mapping[int, sympy.Expr] | None = None,
    ) -> None:
        self.toks = toks
        self.i = 0
        self.depth = 0
        self.vars = variables
        self.pct = percent_as_fraction
        self.override = override or {}

    def parse(self) -> sympy.Expr:
        if not self.toks:
            raise Unparseable("empty")
        v = self.expr()
        if self.i != len(self.toks):
            raise Unparseable(f"unexpected {self.toks[self.i].text!r}")
        return v

    def peek(self) -> Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def expr(self) -> sympy.Expr:
        v = self.term()
        while (t := self.peek()) is not None and t.kind is T.OP and t.text in "+-":
            self.i += 1
            r = self.term()
            v = v + r if t.text == "+" else v - r
        return v

    def term(self) -> sympy.Expr:
        v = self.unary()
        divisions = 0
        while (t := self.peek()) is not None:
            if t.kind is T.OP and t.text in "*/":
                if t.text == "/":
                    divisions += 1
                    if divisions > 1:  # "1 1/2 / 1/2": fractions written inline, grouping unknown
                        raise Unparseable("ambiguous chain of divisions")
                self.i += 1
                r = self.unary()
                if t.text == "*":
                    v = v * r
                else:
                    if r == 0:
                        raise Unparseable("division by zero")
                    v = v / r
            elif t.kind in (T.LP, T.FUNC) and self.i > 0 and self.toks[self.i - 1].kind in (T.RP, T.NUM):
                v = v * self.unary()  # implicit product: "2(3)", "(2)(3)"
            else:
                break
        return v

    def unary(self) -> sympy.Expr:
        t = self.peek()
        if t is not None and t.kind is T.OP and t.text in "+-":
            self.i += 1
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise Unparseable("nested too deeply")
            v = self.unary()
            self.depth -= 1
            return -v if t.text == "-" else v
        return self.power()

    def power(self) -> sympy.Expr:
        base = self.atom()
        t = self.peek()
        if t is not None and t.kind is T.OP and t.text == "^":
            self.i += 1
            exp = self.unary()
            return safe_pow(base, exp)
        return base

    def atom(self) -> sympy.Expr:
        t = self.peek()
        if t is None:
            raise Unparseable("missing operand")
        self.i += 1
        if t.kind is T.NUM:
            assert t.value is not None
            v: sympy.Expr = self.override.get(id(t), t.value)
            scale = t.scale
            if t.percent and not self.pct:
                scale = scale * 100
            return v * scale
        if t.kind is T.VAR:
            return self.vars[t.text]
        if t.kind is T.LP:
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise Unparseable("nested too deeply")
            v = self.expr()
            self.depth -= 1
            close = self.peek()
            if close is None or close.kind is not T.RP:
                raise Unparseable("unclosed bracket")
            self.i += 1
            return v
        if t.kind is T.FUNC:
            nxt = self.peek()
            if nxt is None or nxt.kind is not T.LP:
                raise Unparseable("sqrt without argument")
            arg = self.atom()
            if arg.is_negative:
                raise Unparseable("square root of a negative number")
            return sympy.sqrt(arg)
        raise Unparseable(f"unexpected {t.text!r}")


def safe_pow(base: sympy.Expr, exp: sympy.Expr) -> sympy.Expr:
    if not exp.is_Rational:
        raise Unparseable("irrational exponent")
    exp_r = sympy.Rational(exp)
    if exp_r.q > 12 or abs(exp_r) > 10_000:
        raise Unparseable("exponent out of range")
    if base == 0 and exp_r <= 0:
        raise Unparseable("zero to a non-positive power")
    mag = sympy.Abs(base)
    if mag.is_Rational and mag != 0:
        num, den = sympy.Rational(mag).p, sympy.Rational(mag).q
        digits = (len(str(num)) + len(str(den))) * abs(exp_r)
        if digits > MAX_POWER_DIGITS:
            raise Unparseable("power too large")
    elif not mag.is_Rational and abs(exp_r) > 64:
        raise Unparseable("power of an irrational too large")
    if base.is_negative and exp_r.q != 1:
        raise Unparseable("fractional power of a negative number")
    return sympy.Pow(base, exp_r)


def evaluate(
    toks: list[Tok],
    variables: Mapping[str, sympy.Expr],
    percent_as_fraction: bool = True,
    override: Mapping[int, sympy.Expr] | None = None,
) -> sympy.Expr:
    """Exact value of one side; raises Unparseable."""
    if len(toks) > MAX_SEGMENT_TOKENS:
        raise Unparseable("too long")
    return _Parser(toks, variables, percent_as_fraction, override).parse()
