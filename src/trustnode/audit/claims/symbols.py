"""Symbolic lexemes of claim text (stage 2 of claim extraction, `symbolic=True`).

The algebra tier reads single letters as symbols (`x`, `a_1`, `f'`, the inverse `f^(-1)`),
short letter runs next to math as products of symbols ("2xy", "ax^2"), and the big
operators `∑ ∏ ∫` with their bounds as one FUNC token each.
"""

from __future__ import annotations

import re

from trustnode.audit.claims.model import T, Tok
from trustnode.audit.claims.words import FUNCTION_LETTERS, SHORT_WORDS

MAX_BOUND_CHARS = 40  # "∑_(k=1)^(n)": a bound longer than this is not one we read
_SUBSCRIPT_RE = re.compile(r"_(?:[A-Za-z0-9]{1,3}|\([A-Za-z0-9+\-]{1,8}\))")
_INVERSE = "^(-1)"
BIG_OPS = {"\u2211": "sum", "\u220f": "prod", "\u222b": "int"}


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


def big_operator(text: str, i: int, name: str, space: bool) -> tuple[Tok, int]:
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


def read_symbol(text: str, i: int, space: bool) -> tuple[Tok, int]:
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


def letter_product(word: str, prev: Tok | None, i: int, nxt: str) -> bool:
    """Is a short letter run a product of symbols ("2xy", "ax^2", "+ bx +") rather than a word?"""
    if not (1 < len(word) <= 3 and word.isascii() and word.isalpha()) or word.lower() in SHORT_WORDS:
        return False
    if prev is not None and prev.kind is T.NUM and prev.end == i and not prev.attached:
        return True
    before_math = prev is not None and prev.kind in (T.OP, T.EQ, T.LP, T.RP)
    return before_math or nxt in ("^", "(", ")", "+", "-", "*", "/", "=")
