"""Find arithmetic claims in prose and LaTeX and check them exactly.

A claim is a chain of equalities `e0 = e1 = ... = en` between purely numeric
expressions. The text is first normalised (LaTeX, unicode operators, calculator
annotations), then tokenised; words break a chain, so "16 - 3 - 4 = 9 duck eggs"
yields one claim and "x + 5 = 8" yields none. Every way a side could be the tail
or head of something longer (an operator word before it, a variable, a label such
as "Day 1 = ...") drops that side: precision comes before recall, because a false
alarm on a correct trace is a wrong FAIL vote.

Values are exact sympy numbers. A written value may be rounded: a literal with d
decimals (or a percentage, or "..." truncation) holds when the exact value lies
equal to the exact value rounded to nearest, or truncated ("0.6944..."), at its last
written place; a whole number may also be the floor or ceiling ("25/3 = 8 buses"). An
explicit approximation ("≈", "approximately", "about") also allows 1% relative error;
decimals with two or more places inside an expression may be rounded inputs, whose
effect is bounded by perturbing each by one unit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache

import sympy

from trustnode.models.audit import CheckedClaim, ClaimStatus

MAX_TEXT_CHARS = 200_000
MAX_NUMBER_DIGITS = 60
MAX_SEGMENT_TOKENS = 400
MAX_POWER_DIGITS = 400
MAX_REBINDS = 64


# ---------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------

ANNOTATION_RE = re.compile(r"<<([^<>=]{1,300})=([^<>]{1,100})>>")

_UNICODE = {
    "\u2212": "-",  # minus sign
    "\u00d7": "*",
    "\u22c5": "*",
    "\u2219": "*",
    "\u00b7": "*",  # middle dot
    "\u00f7": "/",
    "\u2215": "/",
    "\u2248": " \u2248 ",
    "\u2243": " \u2248 ",
    "\u2026": "...",
    "\u00b2": "^2",
    "\u00b3": "^3",
    "\u221a": " sqrt",
    "\u00a0": " ",
    "\u202f": " ",
    "\u2009": " ",
    "\uff1d": "=",
    "\u2260": " \u2260 ",
}

_LATEX_SIMPLE = [
    (re.compile(r"\\left\s*([(\[|.])"), r"\1"),
    (re.compile(r"\\right\s*([)\]|.])"), r"\1"),
    (re.compile(r"\\left\\\{"), "("),
    (re.compile(r"\\right\\\}"), ")"),
    (re.compile(r"\\(?:times|cdot|ast)(?![A-Za-z])"), " * "),
    (re.compile(r"\\div(?![A-Za-z])"), " / "),
    (re.compile(r"\\(?:approx|simeq|thickapprox)(?![A-Za-z])"), " \u2248 "),
    (
        re.compile(
            r"\\(?:neq|ne|leq?|geq?|lt|gt|pm|mp|equiv|propto|to|rightarrow|Rightarrow|implies)(?![A-Za-z])"
        ),
        " \u2260 ",
    ),
    (re.compile(r"\\(?:cdots|ldots|dots)(?![A-Za-z])"), "..."),
    (re.compile(r"\\%"), "%"),
    (re.compile(r"\\\$"), "$"),
    (re.compile(r"\{,\}"), ","),
    (re.compile(r"\\[,;:!> ]|\\q?quad(?![A-Za-z])"), " "),
    (re.compile(r"\\[()\[\]]"), " "),
    (re.compile(r"\\(?:displaystyle|textstyle|mathrm|mathbf|mathit|operatorname)(?![A-Za-z])"), ""),
]


def _match_brace(s: str, i: int) -> int:
    """Index just past the `}` closing the `{` at s[i], or -1."""
    depth = 0
    for j in range(i, len(s)):
        c = s[j]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return -1


def _brace_arg(s: str, i: int) -> tuple[str, int] | None:
    """The `{...}` argument (or a single character) starting at s[i] after spaces."""
    while i < len(s) and s[i] == " ":
        i += 1
    if i >= len(s):
        return None
    if s[i] == "{":
        end = _match_brace(s, i)
        if end < 0:
            return None
        return s[i + 1 : end - 1], end
    if s[i].isalnum():
        return s[i], i + 1
    return None


_FRAC_RE = re.compile(r"\\[dtc]?frac(?![A-Za-z])")
_SQRT_RE = re.compile(r"\\sqrt(?![A-Za-z])")
_TEXT_RE = re.compile(r"\\(?:text|textbf|textit|mbox|mathrm|textrm|operatorname)\s*\{")
_BOXED_RE = re.compile(r"\\(?:boxed|fbox|underline|overline|bar|hat|vec|tilde|widehat)\s*\{")


def _latex(s: str) -> str:
    """Rewrite the LaTeX that arithmetic uses into plain operator syntax."""
    for _ in range(200):
        m = _FRAC_RE.search(s)
        if not m:
            break
        a = _brace_arg(s, m.end())
        b = _brace_arg(s, a[1]) if a else None
        if not a or not b:
            s = s[: m.start()] + " \u2260 " + s[m.end() :]
            continue
        # "3\frac{4}{5}" is a mixed number to some writers and a product to others
        glued = re.search(r"[\d)]\s*$", s[: m.start()]) is not None
        mark = " \u2016 " if glued else ""
        s = s[: m.start()] + mark + f"(({a[0]})/({b[0]}))" + s[b[1] :]
    for _ in range(200):
        m = _SQRT_RE.search(s)
        if not m:
            break
        i = m.end()
        index = None
        if i < len(s) and s[i] == "[":
            close = s.find("]", i)
            if close < 0:
                s = s[: m.start()] + " \u2260 " + s[m.end() :]
                continue
            index, i = s[i + 1 : close], close + 1
        a = _brace_arg(s, i)
        if not a:
            s = s[: m.start()] + " \u2260 " + s[m.end() :]
            continue
        repl = f"sqrt({a[0]})" if index is None else f"(({a[0]})^(1/({index})))"
        s = s[: m.start()] + repl + s[a[1] :]
    for _ in range(200):
        m = _TEXT_RE.search(s)
        if not m:
            break
        end = _match_brace(s, m.end() - 1)
        if end < 0:
            s = s[: m.start()] + " " + s[m.end() :]
            continue
        s = s[: m.start()] + " " + s[m.end() : end - 1] + " " + s[end:]
    for _ in range(200):
        m = _BOXED_RE.search(s)
        if not m:
            break
        end = _match_brace(s, m.end() - 1)
        name = m.group(0)
        if end < 0:
            s = s[: m.start()] + " " + s[m.end() :]
            continue
        inner = s[m.end() : end - 1]
        if "boxed" in name or "fbox" in name:
            s = s[: m.start()] + " " + inner + " " + s[end:]
        else:  # decorations change meaning (repeating decimals, vectors): not arithmetic
            s = s[: m.start()] + " \u2260 " + s[end:]
    s = re.sub(r"\^\s*\{", "^{", s)
    for pat, repl in _LATEX_SIMPLE:
        s = pat.sub(repl, s)
    # any other control word is not arithmetic: make it a chain breaker
    s = re.sub(r"\\[A-Za-z]+", " \u2260 ", s)
    s = s.replace("{", "(").replace("}", ")")
    s = s.replace("$", " $ ")
    return s


_ASIDE_RE = re.compile(r"[ \t]\((?=[^()\n]*[A-Za-z]{2})[A-Za-z][A-Za-z ,'\-]{0,60}\)(?=[ \t.,;])")
_BULLET_RE = re.compile(r"(?m)^[ \t]*(?:[-*\u2022]|\d{1,2}[.)])[ \t]+")
_POWER_STARS_RE = re.compile(r"(?<=[\d)])[ \t]*\*\*[ \t]*(?=[-\d(])")
_TIMES_X_RE = re.compile(r"(?<=[\d)])[ \t]*[xX][ \t]*(?=[\d($])")
_DASH_MINUS_RE = re.compile(r"(?<=[\d)])[ \t]+[\u2013\u2014][ \t]+(?=[\d($(-])")


def normalize(text: str, *, keep_annotations: bool = False) -> tuple[str, list[tuple[str, str]]]:
    """Plain-operator text and the calculator annotations `<<expr=result>>` found in it."""
    annotations = [(m.group(1), m.group(2)) for m in ANNOTATION_RE.finditer(text)]
    if not keep_annotations:
        text = ANNOTATION_RE.sub("", text)
    text = re.sub(r"\u221a\s*(\d+(?:\.\d+)?)", r"sqrt(\1)", text)
    for k, v in _UNICODE.items():
        text = text.replace(k, v)
    if "\\" in text or "{" in text:
        text = _latex(text)
    text = _ASIDE_RE.sub(" ", text)  # "9 - 3 (from snack) - 2 (for lunch) = 4"
    text = _BULLET_RE.sub("\n", text)
    text = _POWER_STARS_RE.sub("^", text)
    text = text.replace("**", " ")  # what is left of "**" is markdown bold
    text = _TIMES_X_RE.sub(" * ", text)
    text = _DASH_MINUS_RE.sub(" - ", text)  # "22 – 7": a dash between spaced numbers is a minus
    return text, annotations


# ---------------------------------------------------------------------------
# Tokens
# ---------------------------------------------------------------------------


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


def _var_name(word: str) -> bool:
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
            elif _var_name(word) and word in variables:
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
            and _plain_int(t)
            and (not out or not (out[-1].kind is T.OP and out[-1].text in "/^"))
            and _plain_int(toks[i + 1])
            and toks[i + 1].space_before
            and toks[i + 2].kind is T.OP
            and toks[i + 2].text == "/"
            and not toks[i + 2].space_before
            and _plain_int(toks[i + 3])
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


def _plain_int(t: Tok) -> bool:
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


# ---------------------------------------------------------------------------
# Chains
# ---------------------------------------------------------------------------

OPERAND_START = (T.NUM, T.VAR, T.LP, T.FUNC)
OPERAND_END = (T.NUM, T.VAR, T.RP)


@dataclass
class Side:
    """One side of a chain: tokens and where they sit in the normalised text."""

    toks: list[Tok]
    start: int
    end: int

    @property
    def literal(self) -> Tok | None:
        """The number token when the side is a bare (possibly negative) literal."""
        ts = self.toks
        while len(ts) >= 2 and ts[0].kind is T.LP and ts[-1].kind is T.RP:
            ts = ts[1:-1]
        if len(ts) == 1 and ts[0].kind is T.NUM:
            return ts[0]
        if len(ts) == 2 and ts[0].kind is T.OP and ts[0].text in "+-" and ts[1].kind is T.NUM:
            return ts[1]
        return None


@dataclass
class Chain:
    sides: list[Side]
    eqs: list[Tok]  # eqs[i] sits between sides[i] and sides[i+1]
    defines: str | None = None  # "A = ..." with A not yet bound


def _balanced(toks: list[Tok]) -> bool:
    depth = 0
    for t in toks:
        if t.kind is T.LP:
            depth += 1
        elif t.kind is T.RP:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _trim_parens(toks: list[Tok], left: bool) -> list[Tok]:
    """Drop unmatched brackets at the outer end of a chain's first or last side."""
    toks = list(toks)
    if left:
        while toks and toks[0].kind is T.LP and not _balanced(toks):
            depth = 0
            for t in toks:
                depth += 1 if t.kind is T.LP else -1 if t.kind is T.RP else 0
            if depth <= 0:
                break
            toks = toks[1:]
    else:
        while toks and toks[-1].kind is T.RP and not _balanced(toks):
            depth = 0
            for t in toks:
                depth += 1 if t.kind is T.LP else -1 if t.kind is T.RP else 0
            if depth >= 0:
                break
            toks = toks[:-1]
    return toks


JUXTAPOSED = "\u2016"  # marks a run that starts right after another operand


def _left_partial(first: list[Tok], before: Tok | None) -> bool:
    """Is the chain's first side possibly the tail of a longer expression?"""
    if not first:
        return True
    t0 = first[0]
    if t0.kind is T.OP and t0.text != "-":
        return True
    if before is not None and not t0.space_before and before.text not in SAFE_LEFT_ATTACHED:
        return True  # glued to the previous token: "2:30", "f(2)", "a_1", "3!"
    if before is not None and before.kind is T.BREAK:
        w = before.text
        if w in (JUXTAPOSED, "\u2260", "<", ">", "|", "!", "%", "'", "^", "_", "&"):
            return True
        if w.lower() in LEFT_JOIN_WORDS or (len(w) == 1 and w.isalpha()):
            return True
        if Side(first, 0, 0).literal is not None and w not in SAFE_LEFT_SYMBOLS:
            return True  # "Day 1 = ...", "Step 2 = ...": a label, not a value
        if not w.isalnum() and w not in SAFE_LEFT_SYMBOLS:
            return True  # "22 – 7 = 15" with an unknown dash, "|x| = 5", "≤ 3 = ..."
        if t0.kind is T.OP and not w.isalpha() and w not in (":", ",", ";", "\n"):
            return True  # "3! - 1 = 5": the minus is binary
        if (
            t0.kind is T.OP
            and w.isalpha()
            and w[0].isupper()
            and len(w) > 1
            and w.lower() not in ("so", "then")
        ):
            return True  # "Total - 5 = 3"
    return bool(before is not None and before.kind is T.NUM and before.attached)


def _right_partial(last: list[Tok], after: Tok | None) -> bool:
    """Is the chain's last side possibly the head of a longer expression?"""
    if not last:
        return True
    t = last[-1]
    if t.kind in (T.OP, T.LP, T.FUNC):
        return True
    if t.kind is T.NUM and t.attached:
        return True
    if after is None:
        return False
    if not after.space_before and after.text not in SAFE_RIGHT_ATTACHED:
        return True
    if after.kind is T.BREAK:
        w = after.text
        if w.lower() in RIGHT_JOIN_WORDS:
            return True
        if len(w) == 1 and w.isalpha():
            return True
        if w in ("!", "|", "\u2260", "<", ">", "'", "%"):
            return True
    return False


def _split_runs(toks: list[Tok]) -> list[tuple[list[Tok], Tok | None, Tok | None]]:
    """Maximal stretches of arithmetic tokens, with the token before and after each."""
    runs: list[tuple[list[Tok], Tok | None, Tok | None]] = []
    cur: list[Tok] = []
    before: Tok | None = None
    prev_break: Tok | None = None
    for t in toks:
        if t.kind is T.BREAK or (t.kind is T.NUM and t.attached):
            if cur:
                runs.append((cur, before, t))
                cur = []
            prev_break = t
            continue
        if (
            cur
            and cur[-1].kind in OPERAND_END
            and (t.kind in (T.NUM, T.VAR, T.FUNC) or (t.kind is T.LP and t.space_before))
        ):
            # two operands side by side: "1 1/2", "A 5" -> not one expression
            runs.append((cur, before, t))
            cur = []
            prev_break = Tok(T.BREAK, JUXTAPOSED, t.start, t.start)
        if not cur:
            before = prev_break
        cur.append(t)
    if cur:
        runs.append((cur, before, None))
    return runs


def _make_chains(toks: list[Tok], variables: Mapping[str, sympy.Expr]) -> list[Chain]:
    chains: list[Chain] = []
    for run, before, after in _split_runs(toks):
        if not any(t.kind is T.EQ for t in run):
            continue
        if any(t.kind is T.EQ and t.conditional for t in run):
            continue  # a condition being tested, not a claim
        if len(run) > MAX_SEGMENT_TOKENS * 4:
            continue
        parts: list[list[Tok]] = [[]]
        eqs: list[Tok] = []
        for t in run:
            if t.kind is T.EQ:
                eqs.append(t)
                parts.append([])
            else:
                parts[-1].append(t)
        defines = None
        if (
            not parts[0]
            and before is not None
            and before.kind is T.BREAK
            and before.standalone
            and _var_name(before.text)
            and before.text not in variables
        ):
            defines = before.text
        if (
            len(parts[0]) > 1
            and parts[0][0].kind is T.OP
            and parts[0][0].text == "-"
            and parts[0][1].space_before
            and (before is None or before.text in ("\n", ":", ";"))
        ):
            parts[0] = parts[0][1:]  # "for B: - A = 0": a dash that starts a list item
        parts[0] = _trim_parens(parts[0], left=True)
        parts[-1] = _trim_parens(parts[-1], left=False)
        first_ok = not _left_partial(parts[0], before)
        last_ok = not _right_partial(parts[-1], after)
        lo = 0 if first_ok else 1
        hi = len(parts) if last_ok else len(parts) - 1
        if hi - lo < 2 and (defines is None or hi - lo < 1):
            continue
        sides = [Side(p, p[0].start if p else 0, p[-1].end if p else 0) for p in parts[lo:hi]]
        chains.append(Chain(sides=sides, eqs=eqs[lo : max(lo, hi - 1)], defines=defines if lo == 1 else None))
    return chains


# ---------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------


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
            return _safe_pow(base, exp)
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


def _safe_pow(base: sympy.Expr, exp: sympy.Expr) -> sympy.Expr:
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


# ---------------------------------------------------------------------------
# Checking
# ---------------------------------------------------------------------------


class Tolerance(StrEnum):
    EXACT = "exact"
    ROUNDED = "rounded"
    TRUNCATED = "truncated"
    APPROXIMATE = "approximate"
    PROPAGATED = "propagated"


def _rat(x: sympy.Expr) -> sympy.Rational:
    """An exact rational, or a 60-digit rational approximation of an irrational."""
    if x.is_Rational:
        return sympy.Rational(x)
    return sympy.Rational(str(sympy.N(x, 60)))


def _unit(tok: Tok, percent_as_fraction: bool) -> sympy.Rational:
    scale = tok.scale if (percent_as_fraction or not tok.percent) else tok.scale * 100
    return sympy.Rational(1, 10**tok.decimals) * scale


def _rounded_inputs(toks: list[Tok]) -> list[Tok]:
    """Decimals inside an expression that may themselves be rounded (two or more places, or '...')."""
    return [t for t in toks if t.kind is T.NUM and (t.decimals >= 2 or t.ellipsis)]


def _propagation(
    side: Side, value: sympy.Expr, variables: Mapping[str, sympy.Expr], pct: bool
) -> sympy.Rational:
    """Bound on how much one-unit changes of rounded inputs move the side's value."""
    if side.literal is not None:
        return sympy.Integer(0)
    bound = sympy.Integer(0)
    for t in _rounded_inputs(side.toks):
        assert t.value is not None
        u = sympy.Rational(1, 10**t.decimals)
        try:
            moved = evaluate(side.toks, variables, pct, {id(t): t.value + u})
        except Unparseable:
            return sympy.Integer(-1)
        bound += abs(_rat(moved) - _rat(value))
    return bound


def _format(v: sympy.Expr) -> str:
    if v.is_Integer:
        return str(v)
    if v.is_Rational:
        r = sympy.Rational(v)
        q = r.q
        while q % 2 == 0:
            q //= 2
        while q % 5 == 0:
            q //= 5
        if q == 1:  # terminating decimal
            s = str(sympy.N(r, 40))
            s = s.rstrip("0").rstrip(".") if "." in s else s
            return s
        return f"{r} (\u2248 {sympy.N(r, 12)})"
    return f"{v} (\u2248 {sympy.N(v, 12)})"


@dataclass
class ChainCheck:
    claims: list[CheckedClaim]
    last_value: sympy.Expr | None


def _pair_holds(
    a: Side,
    va: sympy.Expr,
    b: Side,
    vb: sympy.Expr,
    approx: bool,
    variables: Mapping[str, sympy.Expr],
    pct: bool,
) -> tuple[bool, Tolerance]:
    if va.is_Rational and vb.is_Rational:
        if va == vb:
            return True, Tolerance.EXACT
    elif _zero(va - vb):
        return True, Tolerance.EXACT
    ra, rb = _rat(va), _rat(vb)
    diff = abs(ra - rb)
    prop = _propagation(a, va, variables, pct) + _propagation(b, vb, variables, pct)
    if prop < 0:
        return False, Tolerance.EXACT
    lit_unit = sympy.Integer(0)
    # a written value may be rounded or truncated at its last place: try each literal side
    # as the stated one and the other side as the exact value
    for stated, exact, side in ((rb, ra, b), (ra, rb, a)):
        lit = side.literal
        if lit is None:
            continue
        u = _unit(lit, pct)
        lit_unit = max(lit_unit, u)
        if lit.decimals == 0 and not lit.percent and lit.scale == 1:
            if diff < u + prop:  # whole numbers: floor, ceiling or rounding ("25/3 = 8 buses")
                return True, Tolerance.ROUNDED
            continue
        if diff <= u / 2 + prop:
            return True, Tolerance.ROUNDED
        if _truncate(exact, u) == stated:
            return True, Tolerance.TRUNCATED
    if prop > 0 and diff <= prop:
        return True, Tolerance.PROPAGATED
    if approx:
        ref = max(abs(_rat(va)), abs(_rat(vb)))
        if diff <= ref / 100 or (lit_unit > 0 and diff < lit_unit * 5):
            return True, Tolerance.APPROXIMATE
    return False, Tolerance.EXACT


def _zero(x: sympy.Expr) -> bool:
    """Is an irrational difference zero? Sympy's canonical form first, then 60 digits.

    (`simplify` can run for minutes on hostile input; a difference below 1e-45 at 60
    significant digits is zero for every expression this parser can build.)
    """
    if x == 0:
        return True
    d = sympy.N(x, 60)
    return bool(d.is_number and abs(d) < sympy.Float("1e-45", 60))


def _truncate(x: sympy.Rational, unit: sympy.Rational) -> sympy.Rational:
    """x cut (toward zero) to a multiple of unit: what "0.6944..." writes."""
    q = abs(x) / unit
    t = sympy.Integer(q.p // q.q) * unit
    return t if x >= 0 else -t


def _side_text(text: str, side: Side) -> str:
    raw = text[side.start : side.end]
    for sym in "$\u20ac\u00a3\u00a5\u00a2\u00b0":  # transparent symbols, as in the tokenizer
        raw = raw.replace(sym, " " if sym == "$" else "")
    return " ".join(raw.split())


def check_chain(chain: Chain, text: str, variables: Mapping[str, sympy.Expr]) -> ChainCheck:
    """Check consecutive sides of one chain; sides that do not parse split it."""
    values: list[sympy.Expr | None] = []
    for side in chain.sides:
        try:
            values.append(evaluate(side.toks, variables))
        except (Unparseable, KeyError, ValueError, TypeError, ZeroDivisionError, OverflowError):
            values.append(None)
    claims: list[CheckedClaim] = []
    prev: int | None = None  # the last side that parsed: a = (garbled) = c still claims a = c
    for i in range(len(chain.sides)):
        if values[i] is None:
            continue
        if prev is None:
            prev = i
            continue
        a, b = chain.sides[prev], chain.sides[i]
        va, vb = values[prev], values[i]
        prev = i
        assert va is not None and vb is not None
        if _lone_var(a):
            continue  # "X = 26" names a value; it is not computed from X's earlier meaning
        if va != vb and _continues(b, va):
            continue  # "3/2 = 1.50 + 3.00 = 4.50": a running total written as one chain
        if a.literal is not None and b.literal is not None:
            if a.literal.percent == b.literal.percent and va == vb:
                continue  # "5 = 5" restates a value: nothing was computed between the two sides
            if _plain_int(a.literal) and _plain_int(b.literal):
                continue  # "= 101 = 10": two bare whole numbers claim nothing computable
        approx = any(e.approx for e in chain.eqs[chain.sides.index(a) : i])
        holds, tol = _pair_holds(a, va, b, vb, approx, variables, True)
        has_pct = any(t.kind is T.NUM and t.percent for t in a.toks + b.toks)
        if not holds and has_pct:
            # "(20/80) * 100 = 25%": the percent sign used as a label
            try:
                va2 = evaluate(a.toks, variables, percent_as_fraction=False)
                vb2 = evaluate(b.toks, variables, percent_as_fraction=False)
                holds, tol = _pair_holds(a, va2, b, vb2, approx, variables, False)
            except (Unparseable, KeyError, ZeroDivisionError):
                pass
        if not holds and has_pct and _percent_mixed_with_sum(a.toks + b.toks):
            continue  # "50 + 10% = 55": percent-of-base notation, not arithmetic we can read
        # the stated value is the bare number when only one side is one ("194 = 11 * 17 + 9")
        computed, stated, value = (b, a, vb) if a.literal is not None and b.literal is None else (a, b, va)
        claims.append(
            CheckedClaim(
                text=f"{_side_text(text, a)} {chain.eqs[i - 1].text} {_side_text(text, b)}",
                expression=_side_text(text, computed),
                found=_side_text(text, stated),
                correct=_format(value),
                status=ClaimStatus.HOLDS if holds else ClaimStatus.WRONG,
                tolerance=tol.value,
            )
        )
    last = values[-1] if values else None
    return ChainCheck(claims=claims, last_value=last)


def _percent_mixed_with_sum(toks: list[Tok]) -> bool:
    for i, t in enumerate(toks):
        if t.kind is T.NUM and t.percent:
            near = toks[max(0, i - 1) : i + 2]
            if any(x.kind is T.OP and x.text in "+-" for x in near):
                return True
    return False


def _continues(side: Side, previous: sympy.Expr) -> bool:
    """Does the side start by adding to or taking from the previous value ("1.50 + 3.00")?"""
    ts = side.toks
    if len(ts) < 3 or ts[0].kind is not T.NUM or ts[1].kind is not T.OP or ts[1].text not in "+-*/":
        return False
    try:
        first = evaluate(ts[:1], {})
    except Unparseable:
        return False
    return bool(first == previous)


def _lone_var(side: Side) -> bool:
    return len(side.toks) == 1 and side.toks[0].kind is T.VAR


def _restated_name(chain: Chain) -> str | None:
    """`A = ... = v` where A was already bound: A now stands for the stated v."""
    first = chain.sides[0].toks
    if len(first) == 1 and first[0].kind is T.VAR:
        return first[0].text
    return None


@dataclass
class Extraction:
    """All claims found in one text, and the names it defined."""

    claims: list[CheckedClaim]
    bindings: dict[str, sympy.Expr]
    text: str
    annotations: int = 0
    truncated: bool = False  # the text was longer than MAX_TEXT_CHARS; the rest was not read

    @property
    def wrong(self) -> list[CheckedClaim]:
        return [c for c in self.claims if c.status is ClaimStatus.WRONG]

    @property
    def held(self) -> list[CheckedClaim]:
        return [c for c in self.claims if c.status is ClaimStatus.HOLDS]


def check_annotation(expr: str, result: str) -> CheckedClaim | None:
    """A calculator annotation `<<expr=result>>` as one claim, or None if unreadable."""
    text, _ = normalize(f"{expr} = {result}")
    toks = tokenize(text)
    parts: list[list[Tok]] = [[]]
    for t in toks:
        if t.kind is T.EQ:
            parts.append([])
        elif t.kind is T.BREAK:
            return None
        else:
            parts[-1].append(t)
    if len(parts) != 2:
        return None
    try:
        va = evaluate(parts[0], {})
        vb = evaluate(parts[1], {})
    except (Unparseable, ZeroDivisionError):
        return None
    a = Side(parts[0], 0, 0)
    b = Side(parts[1], 0, 0)
    holds, tol = _pair_holds(a, va, b, vb, False, {}, True)
    return CheckedClaim(
        text=f"<<{expr}={result}>>",
        expression=expr.strip(),
        found=result.strip(),
        correct=_format(va),
        status=ClaimStatus.HOLDS if holds else ClaimStatus.WRONG,
        tolerance="annotation" if tol is Tolerance.EXACT else tol.value,
    )


def extract_claims(
    text: str,
    variables: Mapping[str, sympy.Expr] | None = None,
    *,
    annotations: str = "strip",
) -> Extraction:
    """Every checkable claim in `text`, checked.

    `variables`: single upper-case names bound by earlier segments ("A = -14");
    chains of the form `A = ...` with A unbound define A for later text.
    `annotations`: "strip" removes `<<expr=result>>`; "check" also checks each one.
    """
    truncated = len(text) > MAX_TEXT_CHARS
    if truncated:
        text = text[:MAX_TEXT_CHARS]
    bindings: dict[str, sympy.Expr] = dict(variables or {})
    norm, notes = normalize(text)
    claims: list[CheckedClaim] = []
    if annotations == "check":
        for expr, result in notes:
            c = check_annotation(expr, result)
            if c is not None:
                claims.append(c)
    done = -1  # chains ending at or before this offset are already checked
    rereads = 0
    chains = _make_chains(tokenize(norm, bindings), bindings)
    k = 0
    while k < len(chains):
        chain = chains[k]
        k += 1
        if chain.sides[-1].end <= done:
            continue
        res = check_chain(chain, norm, bindings)
        claims.extend(res.claims)
        done = chain.sides[-1].end
        name = chain.defines or _restated_name(chain)
        ok = res.last_value is not None and not any(c.status is ClaimStatus.WRONG for c in res.claims)
        computed = any(sd.literal is None and not _lone_var(sd) for sd in chain.sides)
        changed = False
        if name and name in bindings and bindings[name] != res.last_value:
            del bindings[name]  # "A = 0 ... A = 1": cases, not one quantity; stop using the name
            changed = True
        elif name and name not in bindings and ok and computed and res.last_value is not None:
            bindings[name] = res.last_value  # only a computed definition: "A = (-9 - 5 - 0)"
            changed = True
        if changed:
            rereads += 1
            if rereads > MAX_REBINDS:  # a text that keeps renaming is not worth quadratic time
                if name:
                    bindings.pop(name, None)
                break
            # the name's meaning changed from here on: read the rest again
            chains = _make_chains(tokenize(norm, bindings), bindings)
            k = 0
    return Extraction(
        claims=claims, bindings=bindings, text=norm, annotations=len(notes), truncated=truncated
    )


def bind_from(texts: Iterable[str]) -> dict[str, sympy.Expr]:
    """Names defined by earlier segments, in reading order (a later segment may rebind)."""
    seq = tuple(texts)
    out: tuple[tuple[str, sympy.Expr], ...] = ()
    for k in range(len(seq) + 1):  # prefixes in order keep the cache's recursion one level deep
        out = _bind_prefix(seq[:k])
    return dict(out)


@lru_cache(maxsize=512)
def _bind_prefix(texts: tuple[str, ...]) -> tuple[tuple[str, sympy.Expr], ...]:
    # step i of a trace reuses the bindings of steps 0..i-1: cache by prefix
    if not texts:
        return ()
    before = dict(_bind_prefix(texts[:-1]))
    return tuple(sorted(extract_claims(texts[-1], before).bindings.items()))
