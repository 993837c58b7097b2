"""Stage 2 of claim extraction: normalised text -> tokens.

Numbers (with decimals, separators, percent, scale words), operators, brackets and
equality signs are tokens; every word is a BREAK that ends a run of arithmetic, with
flags that the later stages use (a word glued to a number, a hypothetical clause).

With `symbolic=True` single letters are symbols (`x`, `a_1`, `f'`), `2x` is a product,
and `sqrt sin log ∑ ∏ ∫ ∂x` are functions: the algebra tier reads that stream.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import sympy

from trustnode.audit.claims.clauses import mark_clauses
from trustnode.audit.claims.model import T, Tok
from trustnode.audit.claims.words import (
    APPROX_WORDS,
    CLAUSE_ENDS,
    CLOSE_MATH,
    DIGITS,
    FUNCTION_LETTERS,
    FUNCTION_WORDS,
    GLUED_SUFFIXES,
    HYPOTHETICAL_WORDS,
    IMPLIES,
    LEFT_JOIN_WORDS,
    NOT_UNITS,
    OPEN_MATH,
    RIGHT_JOIN_WORDS,
    SCALE_WORDS,
    SHORT_WORDS,
    UNIT_WORDS,
)

MAX_NUMBER_DIGITS = 60
PI = "\u03c0"
MAX_BOUND_CHARS = 40  # "∑_(k=1)^(n)": a bound longer than this is not one we read


_NUM_RE = re.compile(
    r"(?P<int>[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+)?(?:\.(?P<frac>[0-9]+))?(?P<ell>\.\.\.)?"
)
_WORD_RE = re.compile(r"[A-Za-z]{2,}(?:-[A-Za-z]{2,})+|[A-Za-z]+(?:'[a-z]+)?")  # "left-hand", "don't"
_LETTERS_RE = re.compile(r"[A-Za-z]+")
_SUBSCRIPT_RE = re.compile(r"_(?:[A-Za-z0-9]{1,3}|\([A-Za-z0-9+\-]{1,8}\))")
_INVERSE = "^(-1)"
_BIG_OPS = {"\u2211": "sum", "\u220f": "prod", "\u222b": "int"}
_FACTORIAL_NEXT = frozenset("=+-*/)^\u2248<>\u2264\u2265\u27e7,;.")
CURRENCY = "$\u20ac\u00a3\u00a5\u00a2\u00b0"


def var_name(word: str) -> bool:
    return len(word) == 1 and word.isupper()


def _group(text: str, i: int) -> tuple[str, int] | None:
    """The bracketed bound at text[i] ("(k=1)" or a single character), bounded in length."""
    if i >= len(text):
        return None
    if text[i] != "(":
        return (text[i], i + 1) if text[i].isalnum() else None
    depth = 0
    for j in range(i, min(len(text), i + MAX_BOUND_CHARS)):
        depth += 1 if text[j] == "(" else -1 if text[j] == ")" else 0
        if depth == 0:
            return text[i + 1 : j], j + 1
    return None


def _skip_spaces(text: str, j: int) -> int:
    end = min(len(text), j + MAX_BOUND_CHARS)
    while j < end and text[j] == " ":
        j += 1
    return j


def _big_operator(text: str, i: int, name: str, space: bool) -> tuple[Tok, int]:
    """∑_(k=1)^(n), ∏_(i=1)^(5), ∫_(0)^(1) or a bare ∫: one FUNC token holding its bounds."""
    tok = Tok(T.FUNC, name, i, i + 1, space)
    j = _skip_spaces(text, i + 1)
    if text.startswith("_", j):
        low = _group(text, _skip_spaces(text, j + 1))
        if low is None:
            return Tok(T.BREAK, text[i], i, i + 1, space), i + 1
        j = low[1]
        if name == "int":
            tok.lower = low[0]
        else:
            var, eq, lo = low[0].partition("=")
            if not eq or len(var.strip()) != 1 or not var.strip().isalpha():
                return Tok(T.BREAK, text[i], i, i + 1, space), j
            tok.var, tok.lower = var.strip(), lo
        j = _skip_spaces(text, j)
        if text.startswith("^", j):
            up = _group(text, _skip_spaces(text, j + 1))
            if up is None:
                return Tok(T.BREAK, text[i], i, i + 1, space), j
            tok.upper, j = up[0], up[1]
    elif name != "int":
        return Tok(T.BREAK, text[i], i, i + 1, space), i + 1
    if name != "int" and not tok.upper:
        return Tok(T.BREAK, text[i], i, i + 1, space), j
    tok.end = j
    return tok, j


def _number(text: str, i: int, space: bool, symbolic: bool) -> tuple[Tok, int]:
    n = len(text)
    m = _NUM_RE.match(text, i)
    assert m is not None
    int_part = (m.group("int") or "0").replace(",", "")
    frac = m.group("frac") or ""
    end = m.end()
    ell = bool(m.group("ell"))
    if not m.group("int") and not frac:
        return Tok(T.BREAK, text[i], i, i + 1, space), i + 1
    if ell and not frac:  # "we get 5..." ends a sentence; only decimals trail off
        end -= 3
        ell = False
    tok = Tok(T.NUM, text[i:end], i, end, space)
    if len(int_part) + len(frac) > MAX_NUMBER_DIGITS:
        tok.kind = T.BREAK
    else:
        tok.value = sympy.Rational(f"{int_part}.{frac}" if frac else int_part)
        tok.decimals = len(frac)
        tok.ellipsis = ell
    j = end
    if j < n and (text[j].isalpha() or text[j] == "_") and text[j] != PI:
        # a letter glued to the digits: "3rd" and "5km" are never numbers; "2x" is a product
        # in symbolic mode and "27sqrt(3)" always is
        glued = _LETTERS_RE.match(text, j)
        word = glued.group(0) if glued else ""
        after = text[j + len(word) : j + len(word) + 1]
        if word.lower() in ("sqrt", "floor", "ceil") and after == "(":
            pass
        elif not symbolic or word.lower() in GLUED_SUFFIXES or len(word) > 3 or text[j] == "_":
            tok.attached = True
    k = j
    while k < n and text[k] == " ":
        k += 1
    if k < n and text[k] == "%":
        tok.percent = True
        tok.scale = sympy.Rational(1, 100)
        j = k + 1
    tok.end = j
    tok.text = text[i:j]
    return tok, j


def _symbol(text: str, i: int, space: bool) -> tuple[Tok, int]:
    """One letter, with a subscript and primes: "x", "a_1", "a_(n+1)", "f'"."""
    j = i + 1
    m = _SUBSCRIPT_RE.match(text, j)
    if m:
        j = m.end()
    while j < len(text) and text[j] == "'":
        j += 1
    name = text[i:j]
    if text.startswith(_INVERSE, j) and text.startswith("(", j + len(_INVERSE)) and name in FUNCTION_LETTERS:
        j += len(_INVERSE)  # "f^(-1)(5)": the inverse function, applied
        name += "^-1"
    tok = Tok(T.SYM, name, i, j, space)
    tok.apply = j < len(text) and text[j] == "(" and (name[0] in FUNCTION_LETTERS or "'" in name)
    return tok, j


def _letter_product(word: str, prev: Tok | None, i: int, nxt: str) -> bool:
    """Is a short letter run a product of symbols ("2xy", "ax^2", "+ bx +") rather than a word?"""
    if not (1 < len(word) <= 3 and word.isascii() and word.isalpha()) or word.lower() in SHORT_WORDS:
        return False
    if prev is not None and prev.kind is T.NUM and prev.end == i and not prev.attached:
        return True
    before_math = prev is not None and prev.kind in (T.OP, T.EQ, T.LP, T.RP)
    return before_math or nxt in ("^", "(", ")", "+", "-", "*", "/", "=")


def _word(
    text: str, i: int, space: bool, toks: list[Tok], variables: Mapping[str, sympy.Expr], symbolic: bool
) -> int:
    m = _WORD_RE.match(text, i)
    word = m.group(0) if m else text[i]
    end = i + len(word)
    low = word.lower()
    prev = toks[-1] if toks else None
    nxt = text[end : end + 1]
    if (low in ("sqrt", "floor", "ceil") and nxt == "(") or (
        symbolic and low in FUNCTION_WORDS and nxt in "( "
    ):
        toks.append(Tok(T.FUNC, low, i, end, space))
    elif low in ("percent", "pct") and prev is not None and prev.kind is T.NUM and not prev.percent:
        prev.percent = True
        prev.scale = sympy.Rational(1, 100)
        prev.text += " " + word
        prev.end = end
    elif low in SCALE_WORDS and prev is not None and prev.kind is T.NUM and not prev.percent:
        prev.scale = prev.scale * SCALE_WORDS[low]
        prev.text += " " + word
        prev.end = end
    elif low in APPROX_WORDS and prev is not None and prev.kind is T.EQ:
        prev.approx = True
    elif var_name(word) and word in variables:
        toks.append(Tok(T.VAR, word, i, end, space))
    elif symbolic and word.isascii() and len(word) == 1 and word.isalpha():
        tok, end = _symbol(text, i, space)
        toks.append(tok)
    elif symbolic and _letter_product(word, prev, i, text[end : end + 1]):
        for k, letter in enumerate(word):  # "2xy", "ax^2 + bx": products of one-letter symbols
            toks.append(Tok(T.SYM, letter, i + k, i + k + 1, False))
    else:
        toks.append(Tok(T.BREAK, word, i, end, space))
    return end if end > i else i + 1


def tokenize(
    text: str, variables: Mapping[str, sympy.Expr] | None = None, *, symbolic: bool = False
) -> list[Tok]:
    """Split normalised text into tokens; everything that is not arithmetic becomes BREAK."""
    variables = variables or {}
    toks: list[Tok] = []
    i, n = 0, len(text)
    space = True
    open_integrals = 0  # "∫ 3x^2 dx": the "dx" closes the integrand
    while i < n:
        c = text[i]
        if c in " \t\r":
            space = True
            i += 1
            continue
        if c in DIGITS or (c == "." and i + 1 < n and text[i + 1] in DIGITS):
            tok, i = _number(text, i, space, symbolic)
            toks.append(tok)
        elif c in "+-*/^":
            toks.append(Tok(T.OP, c, i, i + 1, space))
            i += 1
        elif c == "=":
            j = i + 1
            while j < n and text[j] == "=":
                j += 1
            if i > 0 and text[i - 1] in "<>!":
                rel = {"<": "\u2264", ">": "\u2265", "!": "\u2260"}[text[i - 1]]
                if toks and toks[-1].text in "<>!" and toks[-1].end == i:
                    toks.pop()
                toks.append(Tok(T.BREAK, rel, i - 1, j, space))
            else:
                toks.append(Tok(T.EQ, "=", i, j, space))
            i = j
        elif c == "\u2248" or (c == "~" and i + 1 < n and text[i + 1] == "="):
            j = i + (2 if c == "~" else 1)
            toks.append(Tok(T.EQ, "\u2248", i, j, space, approx=True))
            i = j
        elif (
            c == "!"
            and toks
            and toks[-1].kind in (T.NUM, T.RP, T.SYM)
            and not space
            and _factorial_at(text, i)
        ):
            toks.append(Tok(T.OP, "!", i, i + 1, False))
            i += 1
        elif c in "([":
            toks.append(Tok(T.LP, "(", i, i + 1, space))
            i += 1
        elif c in ")]":
            toks.append(Tok(T.RP, ")", i, i + 1, space))
            i += 1
        elif c in CURRENCY:
            i += 1  # currency and the degree sign: transparent, but keep the spacing information
            continue
        elif symbolic and c in _BIG_OPS:
            tok, i = _big_operator(text, i, _BIG_OPS[c], space)
            toks.append(tok)
            open_integrals += tok.text == "int"
        elif (
            open_integrals
            and c == "d"
            and text[i + 1 : i + 2].isascii()
            and text[i + 1 : i + 2].isalpha()
            and not text[i + 2 : i + 3].isalpha()
        ):
            tok = Tok(T.OP, "d", i, i + 2, space)
            tok.var = text[i + 1]
            toks.append(tok)
            open_integrals -= 1
            i += 2
        elif symbolic and c == "\u2202" and i + 1 < n and text[i + 1].isalpha():
            tok = Tok(T.FUNC, "deriv", i, i + 2, space)
            tok.var = text[i + 1]
            toks.append(tok)
            i += 2
        elif c == PI:
            if symbolic:
                toks.append(Tok(T.SYM, c, i, i + 1, space))
            else:  # π read as a number known to two places: "π(1.5)^2 = 7.07" may use 3.14
                toks.append(Tok(T.NUM, c, i, i + 1, space, value=sympy.pi, decimals=2))
            i += 1
        elif c in (OPEN_MATH, CLOSE_MATH):
            if not _transparent_delimiter(text, i):
                toks.append(Tok(T.BREAK, c, i, i + 1, space))
            i += 1
            continue
        elif c.isalpha():
            i = _word(text, i, space, toks, variables, symbolic)
        else:
            toks.append(Tok(T.BREAK, IMPLIES if c == IMPLIES else c, i, i + 1, space))
            i += 1
        space = False
    mark_clauses(toks)
    return _merge_mixed_numbers(_drop_units(toks))


_JOINS_BEFORE = frozenset("=+*/^(\u2248")  # not "-": "- \\(x = 2\\)" is a list item
_JOINS_AFTER = frozenset("=+*/^)\u2248")
_DELIMITER_SCAN = 64


def _transparent_delimiter(text: str, i: int) -> bool:
    """Is the math delimiter at text[i] inside an expression ("20 \\(\\times\\) 2", "\\] \\[= 7")?

    Only a delimiter between two complete pieces is a boundary; one next to an operator or
    an equality sign joins them. The look-around is bounded, so tokenizing stays linear.
    """
    skip = " \t\n\r" + OPEN_MATH + CLOSE_MATH
    j = i - 1
    while j >= max(0, i - _DELIMITER_SCAN) and text[j] in skip:
        j -= 1
    if j >= 0 and text[j] in _JOINS_BEFORE:
        return True
    k = i + 1
    while k < min(len(text), i + _DELIMITER_SCAN) and text[k] in skip:
        k += 1
    return k < len(text) and text[k] in _JOINS_AFTER


def _factorial_at(text: str, i: int) -> bool:
    """Is the "!" at text[i] a factorial ("7! = 5040", "5!/3!") rather than an exclamation?"""
    j = i + 1
    if j < len(text) and text[j] == "=":
        return False  # "!="
    while j < len(text) and text[j] == " ":
        j += 1
    return j < len(text) and (text[j] in _FACTORIAL_NEXT or text[j].isdigit())


def _merge_mixed_numbers(toks: list[Tok]) -> list[Tok]:
    """Read "1 1/2" as one and a half (a whole number, a space, a proper fraction)."""
    out: list[Tok] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if (
            i + 3 < len(toks)
            and t.kind is T.NUM
            and plain_int(t)
            and (not out or not (out[-1].kind is T.OP and out[-1].text in "/^"))
            and plain_int(toks[i + 1])
            and toks[i + 1].space_before
            and toks[i + 2].kind is T.OP
            and toks[i + 2].text == "/"
            and not toks[i + 2].space_before
            and plain_int(toks[i + 3])
            and not toks[i + 3].space_before
            and 0 < (toks[i + 1].value or 0) < (toks[i + 3].value or 0)
            and not (i + 4 < len(toks) and toks[i + 4].kind is T.OP and toks[i + 4].text == "^")
        ):
            a, b, c = t.value, toks[i + 1].value, toks[i + 3].value
            assert a is not None
            merged = Tok(T.NUM, f"{t.text} {toks[i + 1].text}/{toks[i + 3].text}", t.start, toks[i + 3].end)
            merged.space_before = t.space_before
            merged.value = a + sympy.Rational(b, c)
            merged.decimals = 30  # exact as written
            out.append(merged)
            i += 4
            continue
        out.append(t)
        i += 1
    return out


def plain_int(t: Tok) -> bool:
    return (
        t.kind is T.NUM
        and t.decimals == 0
        and not t.percent
        and not t.ellipsis
        and not t.attached
        and t.scale == 1
        and "," not in t.text
    )


def _unit_word(t: Tok, spaced: bool = True) -> bool:
    """A lower-case word that can only name what a number counts ("5 hours", "495 students")."""
    w = t.text
    return (
        t.kind is T.BREAK
        and (t.space_before or not spaced)
        and len(w) >= 2
        and w.isalpha()
        and w.islower()
        and w not in LEFT_JOIN_WORDS
        and w not in RIGHT_JOIN_WORDS
        and w not in FUNCTION_WORDS
        and w not in HYPOTHETICAL_WORDS
        and w not in CLAUSE_ENDS
        and w not in NOT_UNITS
    ) or (t.kind is T.BREAK and w.lower() in UNIT_WORDS)


def _drop_units(toks: list[Tok]) -> list[Tok]:
    """Drop unit words inside a computation: "5 hours * 3", "$194/meter * 490 meters = ...".

    A word between a number and an operator is a unit; so is "/word" right after a number
    (a rate) when an operator or "=" follows; a word before "=" only when the side
    already holds an operator (so "3 hours = 180 minutes" stays a conversion, unread).
    """
    out: list[Tok] = []
    n = len(toks)
    idx = 0
    while idx < n:
        t = toks[idx]
        nxt = toks[idx + 1] if idx + 1 < n else None
        after_operand = bool(out) and out[-1].kind in (T.NUM, T.RP)
        if (
            after_operand
            and t.kind is T.OP
            and t.text == "/"
            and nxt is not None
            and _unit_word(nxt, spaced=False)
            and not nxt.space_before
            and (idx + 2 >= n or toks[idx + 2].kind in (T.OP, T.EQ, T.RP) or toks[idx + 2].text in ".,;")
        ):
            idx += 2  # "$15/student": a rate's unit
            continue
        before_op = nxt is not None and nxt.kind in (T.OP, T.RP) and nxt.text not in "^!"
        before_eq = nxt is not None and nxt.kind is T.EQ and _has_operator(out)
        if after_operand and _unit_word(t) and (before_op or before_eq):
            idx += 1
            continue
        out.append(t)
        idx += 1
    return out


def _has_operator(out: list[Tok]) -> bool:
    """Does the expression ending `out` (back to the last word) hold an operator?"""
    for t in reversed(out):
        if t.kind is T.BREAK or t.kind is T.EQ:
            return False
        if t.kind is T.OP and t.text in "+-*":
            return True  # not "/": "1/2 inch = 20 miles" is a scale, not a computation
    return False
