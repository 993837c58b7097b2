"""Stage 4 of claim extraction: one side's tokens -> an exact sympy value.

A recursive-descent parser over the tokens (never `eval`, never `sympify` of text),
with bounds on nesting, exponents, factorials, the size of powers and the number of
terms of a sum, so hostile input is refused rather than computed. In symbolic mode it
also reads symbols, implicit products ("2x", "(x-1)(x+2)", "27 sqrt(3)"), function
definitions ("f(3)", "f'(x)"), d/dx, integrals and sums with explicit bounds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import sympy

from trustnode.audit.claims.chains import MAX_SEGMENT_TOKENS
from trustnode.audit.claims.model import T, Tok
from trustnode.audit.claims.tokens import tokenize
from trustnode.audit.claims.words import MAX_DEPTH

MAX_POWER_DIGITS = 400
MAX_SYMBOLIC_EXPONENT = 24  # (x+1)^24 is the largest power of a polynomial we expand
MAX_FACTORIAL = 300
MAX_SUM_TERMS = 2000
MAX_CALCULUS_DEGREE = 12


class Unparseable(Exception):
    """A side that is not a well-formed expression the checker can read."""


@dataclass(frozen=True)
class Function:
    """A function defined in the text: `f(x) = body`."""

    param: sympy.Symbol
    body: sympy.Expr


@dataclass
class Scope:
    """What symbolic parsing may use: names bound to values, defined functions and symbols."""

    variables: Mapping[str, sympy.Expr] = field(default_factory=dict)
    functions: Mapping[str, Function] = field(default_factory=dict)
    definitions: Mapping[str, sympy.Expr] = field(default_factory=dict)


def symbol(name: str) -> sympy.Expr:
    """The sympy object for a symbol token (π is the constant)."""
    return sympy.pi if name == "\u03c0" else sympy.Symbol(name)


_UNARY_FUNCS = {"sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "ln": sympy.log, "exp": sympy.exp}
_OPERAND_END = (T.RP, T.NUM, T.SYM, T.VAR)
_OPERAND_START = (T.LP, T.FUNC, T.SYM)


class _Parser:
    """Recursive descent over one side's tokens, producing an exact sympy expression."""

    def __init__(
        self,
        toks: list[Tok],
        scope: Scope,
        percent_as_fraction: bool,
        override: Mapping[int, sympy.Expr] | None,
        symbolic: bool,
    ) -> None:
        self.toks = toks
        self.i = 0
        self.depth = 0
        self.scope = scope
        self.pct = percent_as_fraction
        self.override = override or {}
        self.symbolic = symbolic

    def parse(self) -> sympy.Expr:
        if not self.toks:
            raise Unparseable("empty")
        v = self.expr()
        if self.i != len(self.toks):
            raise Unparseable(f"unexpected {self.toks[self.i].text!r}")
        return v

    def peek(self) -> Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise Unparseable("nested too deeply")

    def expr(self) -> sympy.Expr:
        v = self.term()
        while (t := self.peek()) is not None and t.kind is T.OP and t.text in "+-":
            self.i += 1
            r = self.term()
            v = v + r if t.text == "+" else v - r
        return v

    def _implicit(self, t: Tok) -> bool:
        prev = self.toks[self.i - 1] if self.i > 0 else None
        if prev is None:
            return False
        if self.symbolic:
            return prev.kind in _OPERAND_END and t.kind in _OPERAND_START
        pi = t.kind is T.NUM and t.text == "\u03c0"  # "2π", "π(1.5)^2"
        return (t.kind in (T.LP, T.FUNC) or pi) and prev.kind in (T.RP, T.NUM)

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
            elif self._implicit(t):
                v = v * self.power()  # implicit product: "2(3)", "(2)(3)", "2x", "27 sqrt(3)"
            else:
                break
        return v

    def unary(self) -> sympy.Expr:
        t = self.peek()
        if t is not None and t.kind is T.OP and t.text in "+-":
            self.i += 1
            self.nest()
            v = self.unary()
            self.depth -= 1
            return -v if t.text == "-" else v
        return self.power()

    def power(self) -> sympy.Expr:
        base = self.atom()
        while (t := self.peek()) is not None and t.kind is T.OP and t.text == "!":
            self.i += 1
            base = _factorial(base)
        t = self.peek()
        if t is not None and t.kind is T.OP and t.text == "^":
            self.i += 1
            exp = self.unary()
            return safe_pow(base, exp)
        return base

    def group(self) -> sympy.Expr:
        """A bracketed argument: "(...)"."""
        t = self.peek()
        if t is None or t.kind is not T.LP:
            raise Unparseable("expected a bracketed argument")
        return self.atom()

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
            return self.scope.variables[t.text]
        if t.kind is T.LP:
            self.nest()
            v = self.expr()
            self.depth -= 1
            close = self.peek()
            if close is None or close.kind is not T.RP:
                raise Unparseable("unclosed bracket")
            self.i += 1
            return v
        if t.kind is T.SYM and self.symbolic:
            return self.symbol_atom(t)
        if t.kind is T.FUNC:
            return self.function(t)
        raise Unparseable(f"unexpected {t.text!r}")

    def symbol_atom(self, t: Tok) -> sympy.Expr:
        if not t.apply:
            return symbol(t.text)
        arg = self.group()
        name, primes = t.text.rstrip("'"), len(t.text) - len(t.text.rstrip("'"))
        fn = self.scope.functions.get(name)
        if fn is None:
            return sympy.Function(t.text)(arg)  # an unknown function: only a name to define
        body = fn.body
        for _ in range(primes):
            body = sympy.diff(body, fn.param)
        return body.xreplace({fn.param: arg})

    def function(self, t: Tok) -> sympy.Expr:
        name = t.text
        if name == "sqrt":
            arg = self.group()
            if arg.is_negative:
                raise Unparseable("square root of a negative number")
            return sympy.sqrt(arg)
        if name in ("floor", "ceil"):
            arg = self.group()
            if not arg.is_real or (arg.free_symbols and not self.symbolic):
                raise Unparseable("floor of a non-real value")
            return sympy.floor(arg) if name == "floor" else sympy.ceiling(arg)
        if not self.symbolic:
            raise Unparseable(f"{name} outside symbolic mode")
        if name in _UNARY_FUNCS:
            return _UNARY_FUNCS[name](self.operand())
        if name == "binom":
            n, k = self.group(), self.group()
            if not (n.is_Integer and k.is_Integer and 0 <= k <= n <= 10_000):
                raise Unparseable("binomial out of range")
            return sympy.binomial(n, k)
        if name == "deriv":
            arg = self.operand()
            if isinstance(arg, sympy.Symbol) and arg.name in self.scope.definitions:
                arg = self.scope.definitions[arg.name]  # dy/dx with y defined earlier
            return sympy.diff(arg, sympy.Symbol(t.var))
        if name in ("sum", "prod"):
            return self.big_operator(t)
        if name == "int":
            return self.integral(t)
        raise Unparseable(f"unknown function {name!r}")

    def operand(self) -> sympy.Expr:
        """What d/dx or sin applies to: "(...)^2", or a product up to the next + or -."""
        p = self.peek()
        if p is not None and p.kind is T.LP:
            return self.power()
        v = self.term()
        nxt = self.peek()
        if nxt is not None and nxt.kind is T.OP and nxt.text in "+-":
            raise Unparseable("where the argument ends is ambiguous")
        return v

    def bound(self, text: str) -> sympy.Expr:
        toks = tokenize(text, self.scope.variables, symbolic=True)
        return _Parser(toks, self.scope, True, None, True).parse()

    def big_operator(self, t: Tok) -> sympy.Expr:
        var = sympy.Symbol(t.var)
        lo, hi = self.bound(t.lower), self.bound(t.upper)
        body = self.term()
        nxt = self.peek()
        if nxt is not None and nxt.kind is T.OP and nxt.text in "+-":
            raise Unparseable("where the summand ends is ambiguous")
        if any("_" in s.name for s in body.free_symbols if isinstance(s, sympy.Symbol)):
            raise Unparseable("an indexed summand (x_i) is not a sum we can expand")
        if lo.is_Integer and hi.is_Integer:
            if hi - lo + 1 > MAX_SUM_TERMS:
                raise Unparseable("too many terms")
            terms = [body.xreplace({var: sympy.Integer(k)}) for k in range(int(lo), int(hi) + 1)]
            return sympy.Add(*terms) if t.text == "sum" else sympy.Mul(*terms)
        if t.text == "sum" and _polynomial_in(body, var):
            return sympy.summation(body, (var, lo, hi))
        raise Unparseable("a sum or product we cannot decide")

    def integral(self, t: Tok) -> sympy.Expr:
        body = self.term()
        d = self.peek()
        if d is None or d.kind is not T.OP or d.text != "d":
            raise Unparseable("integral without its differential")
        self.i += 1
        var = sympy.Symbol(d.var)
        if not _polynomial_in(body, var):
            raise Unparseable("only polynomial integrands are integrated")
        if not t.lower and not t.upper:
            return sympy.Integral(body, var)
        lo, hi = self.bound(t.lower), self.bound(t.upper)
        return sympy.integrate(body, (var, lo, hi))


def _polynomial_in(body: sympy.Expr, var: sympy.Symbol) -> bool:
    if not body.is_polynomial(var):
        return False
    deg = sympy.degree(body, var) if body.has(var) else 0
    return bool(deg <= MAX_CALCULUS_DEGREE)


def _factorial(n: sympy.Expr) -> sympy.Expr:
    if not n.is_Integer or not 0 <= n <= MAX_FACTORIAL:
        raise Unparseable("factorial out of range")
    return sympy.factorial(n)


def safe_pow(base: sympy.Expr, exp: sympy.Expr) -> sympy.Expr:
    if not exp.is_Rational:
        raise Unparseable("non-numeric exponent")
    exp_r = sympy.Rational(exp)
    if base.free_symbols:
        if abs(exp_r) > MAX_SYMBOLIC_EXPONENT or exp_r.q > 3:
            raise Unparseable("symbolic power out of range")
        return sympy.Pow(base, exp_r)
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
    """Exact value of one arithmetic side; raises Unparseable."""
    if len(toks) > MAX_SEGMENT_TOKENS:
        raise Unparseable("too long")
    return _Parser(toks, Scope(variables=variables), percent_as_fraction, override, False).parse()


def evaluate_symbolic(toks: list[Tok], scope: Scope) -> sympy.Expr:
    """A symbolic side as a sympy expression; raises Unparseable."""
    if len(toks) > MAX_SEGMENT_TOKENS:
        raise Unparseable("too long")
    return _Parser(toks, scope, True, None, True).parse()
