"""Numbers in claim text: how digits become NUM tokens (stage 2 of claim extraction).

A number may carry decimals, thousands separators, a trailing ellipsis, a percent sign or
a scale word, and a letter glued to it ("3rd", "5km") makes it no number at all. After
tokenizing, "1 1/2" is read as one mixed number.
"""

from __future__ import annotations

import re

import sympy

from trustnode.audit.claims.model import T, Tok
from trustnode.audit.claims.words import GLUED_SUFFIXES

MAX_NUMBER_DIGITS = 60
PI = "\u03c0"

_NUM_RE = re.compile(
    r"(?P<int>[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+)?(?:\.(?P<frac>[0-9]+))?(?P<ell>\.\.\.)?"
)
_LETTERS_RE = re.compile(r"[A-Za-z]+")


def read_number(text: str, i: int, space: bool, symbolic: bool) -> tuple[Tok, int]:
    """The number starting at text[i] (a BREAK if it is none) and the index after it."""
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


def plain_int(t: Tok) -> bool:
    """A whole number written plainly: no decimals, percent, scale, separator or glued letter."""
    return (
        t.kind is T.NUM
        and t.decimals == 0
        and not t.percent
        and not t.ellipsis
        and not t.attached
        and t.scale == 1
        and "," not in t.text
    )


def merge_mixed_numbers(toks: list[Tok]) -> list[Tok]:
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
