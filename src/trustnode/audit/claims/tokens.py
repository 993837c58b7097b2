"""Stage 2 of claim extraction: normalised text -> tokens.

Numbers (with decimals, separators, percent, scale words), operators, brackets and
equality signs are tokens; every word is a BREAK that ends a run of arithmetic, with
flags that the later stages use (a word glued to a number, a hypothetical clause).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

import sympy

MAX_NUMBER_DIGITS = 60


class T(StrEnum):
    NUM = "num"
    VAR = "var"
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
    value: sympy.Rational | None = None
    decimals: int = 0
    scale: sympy.Rational = field(default_factory=lambda: sympy.Integer(1))
    percent: bool = False
    ellipsis: bool = False
    attached: bool = False  # digits glued to letters ("2x", "3rd"): not a number
    # EQ
    approx: bool = False
    conditional: bool = False  # inside "if ...", "suppose ...", or a question: not a claim
    # BREAK: a word not glued to a number or operator before it ("so X", not ".75X" or "- X")
    standalone: bool = True


_NUM_RE = re.compile(
    r"(?P<int>[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+)?(?:\.(?P<frac>[0-9]+))?(?P<ell>\.\.\.)?"
)
_WORD_RE = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")

APPROX_WORDS = frozenset(
    {"approximately", "approx", "about", "roughly", "around", "nearly", "almost", "circa"}
)
SCALE_WORDS = {
    "hundred": sympy.Integer(100),
    "thousand": sympy.Integer(1000),
    "million": sympy.Integer(10**6),
    "billion": sympy.Integer(10**9),
    "trillion": sympy.Integer(10**12),
}
# Words that join a number to what precedes it ("half of 50 = 25"): a first side after one is partial.
LEFT_JOIN_WORDS = frozenset(
    {
        "of", "times", "by", "per", "over", "plus", "minus", "into", "than", "divided", "multiplied",
        "squared", "cubed", "dozen", "dozens", "half", "halves", "third", "thirds", "quarter", "quarters",
        "twice", "double", "triple", "thrice", "power", "root", "mod", "modulo", "factorial", "choose",
        "percent", "pct", "fifths", "fourths", "sixths", "tenths", "hundredths", "from",
    }
)  # fmt: skip
# Words that join a number to what follows ("= 5 times as many"): a last side before one is partial.
RIGHT_JOIN_WORDS = frozenset(
    {
        "of", "times", "by", "over", "plus", "minus", "into", "divided", "multiplied", "squared", "cubed",
        "dozen", "dozens", "halves", "third", "thirds", "quarter", "quarters", "power", "mod", "modulo",
        "factorial", "choose", "fifths", "fourths", "sixths", "tenths", "hundredths", "th", "st", "nd", "rd",
    }
)  # fmt: skip
# Unit words that may sit between a number and an operator ("5 hours * 3") and be dropped.
UNIT_WORDS = frozenset(
    {
        "hour", "hours", "hr", "hrs", "minute", "minutes", "min", "mins", "second", "seconds", "sec", "secs",
        "day", "days", "week", "weeks", "month", "months", "year", "years", "dollar", "dollars", "cent",
        "cents", "km", "cm", "mm", "kg", "mg", "lb", "lbs", "pound", "pounds", "ounce", "ounces",
        "oz", "mile", "miles", "foot", "feet", "ft", "inch", "inches", "yard", "yards", "meter", "meters",
        "liter", "liters", "litre", "litres", "gallon", "gallons", "ml", "mph", "kmh", "units",
        "unit", "people", "pieces", "items", "cups", "cup",
    }
)  # fmt: skip
SAFE_LEFT_SYMBOLS = frozenset({"\n", ":", ";", ",", ".", '"', "\u201c", "\u201d", "?"})
SAFE_LEFT_ATTACHED = frozenset({'"', "\u201c", "\n", "[", "{"})
SAFE_RIGHT_ATTACHED = frozenset({".", ",", ";", ":", "?", '"', "\u201d", "\n", "'"})


# Words that open a condition or a hypothesis: equalities up to the end of the clause are
# not claimed ("if 2 + 2 = 5, then ..."), and words or marks that end that clause.
HYPOTHETICAL_WORDS = frozenset(
    {"if", "whether", "suppose", "supposing", "assume", "assuming", "unless", "iff", "hypothetically"}
)
CLAUSE_ENDS = frozenset({".", ";", "!", "?", "\n", ",", "then", "so", "thus", "hence", "therefore"})
DIGITS = frozenset("0123456789")  # other scripts' digits are not read as numbers
MAX_DEPTH = 60  # brackets and signs nested deeper than this are not arithmetic anyone writes


def var_name(word: str) -> bool:
    return len(word) == 1 and word.isupper()


def tokenize(text: str, variables: Mapping[str, sympy.Expr] | None = None) -> list[Tok]:
    """Split normalised text into arithmetic tokens; everything else becomes BREAK."""
    variables = variables or {}
    toks: list[Tok] = []
    i, n = 0, len(text)
    space = True
    while i < n:
        c = text[i]
        if c in " \t\r":
            space = True
            i += 1
            continue
        start = i
        if c in DIGITS or (c == "." and i + 1 < n and text[i + 1] in DIGITS):
            m = _NUM_RE.match(text, i)
            assert m is not None
            int_part = (m.group("int") or "0").replace(",", "")
            frac = m.group("frac") or ""
            end = m.end()
            ell = bool(m.group("ell"))
            if not m.group("int") and not frac:
                toks.append(Tok(T.BREAK, c, start, i + 1, space))
                i += 1
                space = False
                continue
            if ell and not frac:  # "we get 5..." ends a sentence; only decimals trail off
                end -= 3
                ell = False
            tok = Tok(T.NUM, text[start:end], start, end, space)
            digits = len(int_part) + len(frac)
            if digits > MAX_NUMBER_DIGITS:
                tok.kind = T.BREAK
            else:
                tok.value = sympy.Rational(f"{int_part}.{frac}" if frac else int_part)
                tok.decimals = len(frac)
                tok.ellipsis = ell
            j = end
            # a letter glued to the digits: "2x", "3rd", "5km"
            if j < n and (text[j].isalpha() or text[j] == "_"):
                tok.attached = True
            # percent sign, maybe after a space
            k = j
            while k < n and text[k] == " ":
                k += 1
            if k < n and text[k] == "%":
                tok.percent = True
                tok.scale = sympy.Rational(1, 100)
                j = k + 1
            tok.end = j
            tok.text = text[start:j]
            toks.append(tok)
            i = j
            space = False
            continue
        if c in "+-*/^":
            toks.append(Tok(T.OP, c, i, i + 1, space))
            i += 1
        elif c == "=":
            j = i + 1
            while j < n and text[j] == "=":
                j += 1
            if (i > 0 and text[i - 1] in "<>!") or (j < n and text[j] == ">"):
                # "<=", ">=", "!=", "=>": a relation or an implication, not an equality
                j += 1 if j < n and text[j] == ">" else 0
                toks.append(Tok(T.BREAK, "\u2260", i, j, space))
            else:
                toks.append(Tok(T.EQ, "=", i, j, space))
            i = j
        elif c == "\u2248" or (c == "~" and i + 1 < n and text[i + 1] == "="):
            j = i + (2 if c == "~" else 1)
            toks.append(Tok(T.EQ, "\u2248", i, j, space, approx=True))
            i = j
        elif c in "([":
            toks.append(Tok(T.LP, "(", i, i + 1, space))
            i += 1
        elif c in ")]":
            toks.append(Tok(T.RP, ")", i, i + 1, space))
            i += 1
        elif c in "$\u20ac\u00a3\u00a5\u00a2\u00b0":
            # currency and the degree sign: transparent, but keep the spacing information
            i += 1
            continue
        elif c.isalpha():
            m = _WORD_RE.match(text, i)
            word = m.group(0) if m else c
            end = i + len(word)
            low = word.lower()
            prev = toks[-1] if toks else None
            if low == "sqrt" and end < n and text[end] == "(":
                toks.append(Tok(T.FUNC, "sqrt", i, end, space))
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
            else:
                toks.append(Tok(T.BREAK, word, i, end, space))
            i = end
        else:
            toks.append(Tok(T.BREAK, c, i, i + 1, space))
            i += 1
        space = False
    conditional = False
    for t in toks:
        if t.kind is T.BREAK:
            low = t.text.lower()
            if low in HYPOTHETICAL_WORDS:
                conditional = True
            elif low in CLAUSE_ENDS:
                conditional = False
        elif t.kind is T.EQ:
            t.conditional = conditional
    question = False  # read backwards: an equality in a sentence that ends with "?" is asked
    for t in reversed(toks):
        if t.kind is T.BREAK and t.text == "?":
            question = True
        elif t.kind is T.BREAK and t.text in (".", "!", "\n", ";"):
            question = False
        elif t.kind is T.EQ and question:
            t.conditional = True
    for prev, t in zip(toks, toks[1:], strict=False):
        if t.kind is T.BREAK and (
            prev.kind not in (T.BREAK, T.LP)
            or (not t.space_before and prev.kind is T.BREAK and prev.text.isalnum())
        ):
            t.standalone = False
    return _merge_mixed_numbers(_drop_units(toks))


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


def _drop_units(toks: list[Tok]) -> list[Tok]:
    """Drop a unit word sitting between a number and an operator ("5 hours * 3")."""
    out: list[Tok] = []
    for idx, t in enumerate(toks):
        if (
            t.kind is T.BREAK
            and t.text.lower() in UNIT_WORDS
            and out
            and out[-1].kind in (T.NUM, T.RP)
            and idx + 1 < len(toks)
            and toks[idx + 1].kind in (T.OP, T.RP)
            and toks[idx + 1].text != "^"
        ):
            continue
        out.append(t)
    return out
