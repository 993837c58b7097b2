"""Stage 2 of claim extraction: normalised text -> tokens.

Numbers (with decimals, separators, percent, scale words), operators, brackets and
equality signs are tokens; every word is a BREAK that ends a run of arithmetic, with
flags that the later stages use (a word glued to a number, a hypothetical clause).

With `symbolic=True` single letters are symbols (`x`, `a_1`, `f'`), `2x` is a product,
and `sqrt sin log ∑ ∏ ∫ ∂x` are functions: the algebra tier reads that stream.

This module runs the scan; numbers are read in `claims.numbers`, symbolic lexemes in
`claims.symbols`, and unit words are dropped from computations by `claims.units`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import sympy

from trustnode.audit.claims.clauses import mark_clauses
from trustnode.audit.claims.model import T, Tok
from trustnode.audit.claims.numbers import PI, merge_mixed_numbers, read_number
from trustnode.audit.claims.symbols import BIG_OPS, big_operator, letter_product, read_symbol
from trustnode.audit.claims.units import drop_units
from trustnode.audit.claims.words import (
    APPROX_WORDS,
    CLOSE_MATH,
    DIGITS,
    FUNCTION_WORDS,
    IMPLIES,
    OPEN_MATH,
    SCALE_WORDS,
)

_WORD_RE = re.compile(r"[A-Za-z]{2,}(?:-[A-Za-z]{2,})+|[A-Za-z]+(?:'[a-z]+)?")  # "left-hand", "don't"
_FACTORIAL_NEXT = frozenset("=+-*/)^\u2248<>\u2264\u2265\u27e7,;.")
CURRENCY = "$\u20ac\u00a3\u00a5\u00a2\u00b0"


def var_name(word: str) -> bool:
    """A variable name: one capital letter ("let N be the number of ...")."""
    return len(word) == 1 and word.isupper()


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
        tok, end = read_symbol(text, i, space)
        toks.append(tok)
    elif symbolic and letter_product(word, prev, i, text[end : end + 1]):
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
            tok, i = read_number(text, i, space, symbolic)
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
        elif symbolic and c in BIG_OPS:
            tok, i = big_operator(text, i, BIG_OPS[c], space)
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
    return merge_mixed_numbers(drop_units(toks))


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
