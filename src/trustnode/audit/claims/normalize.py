"""Stage 1 of claim extraction: text -> plain operator syntax.

LaTeX (fractions, roots, boxes, text, spacing, delimiters), unicode operators and
GSM8K-style calculator annotations become plain `+ - * / ^ ( ) =` text. Marks that the
later stages read: `⟦ ⟧` math delimiters (a boundary, not a word), `≤ ≥ < > ≠`
relations, `⇒` implications, `¦` any other LaTeX command (a chain breaker), `π`,
`∑ ∏ ∫` and `∂x` (sums, products, integrals, d/dx). LaTeX is read in one left-to-right
pass, so the cost is linear in the text (times a bounded nesting depth).
"""

from __future__ import annotations

import re
from functools import lru_cache

from trustnode.audit.claims.words import BREAKER, CLOSE_MATH, IMPLIES, JUXTAPOSED, OPEN_MATH

ANNOTATION_RE = re.compile(r"<<([^<>=]{1,300})=([^<>]{1,100})>>")
MAX_LATEX_DEPTH = 60

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
    "\u2264": " \u2264 ",
    "\u2265": " \u2265 ",
    "\u21d2": f" {IMPLIES} ",
    "\u2192": f" {IMPLIES} ",
    "\u27f9": f" {IMPLIES} ",
    "\u2032": "'",
    "\u230a": " floor(",
    "\u230b": ")",
    "\u2308": " ceil(",
    "\u2309": ")",
}

_SIMPLE: dict[str, str] = {
    "times": " * ", "cdot": " * ", "ast": " * ", "div": " / ",
    "approx": " \u2248 ", "simeq": " \u2248 ", "thickapprox": " \u2248 ",
    "neq": " \u2260 ", "ne": " \u2260 ", "leq": " \u2264 ", "le": " \u2264 ", "leqslant": " \u2264 ",
    "geq": " \u2265 ", "ge": " \u2265 ", "geqslant": " \u2265 ", "lt": " < ", "gt": " > ",
    "Rightarrow": f" {IMPLIES} ", "implies": f" {IMPLIES} ", "rightarrow": f" {IMPLIES} ",
    "Longrightarrow": f" {IMPLIES} ", "longrightarrow": f" {IMPLIES} ", "to": f" {IMPLIES} ",
    "therefore": f" {IMPLIES} ",
    "cdots": "...", "ldots": "...", "dots": "...", "dotsb": "...",
    "quad": " ", "qquad": " ", "displaystyle": "", "textstyle": "", "limits": "",
    "pi": " \u03c0 ", "prime": "'", "sum": " \u2211 ", "prod": " \u220f ", "int": " \u222b ",
    "log": " log ", "ln": " ln ", "sin": " sin ", "cos": " cos ", "tan": " tan ", "exp": " exp ",
    "lbrace": "(", "rbrace": ")", "lvert": "|", "rvert": "|", "vert": "|", "mid": " | ",
    "lfloor": " floor(", "rfloor": ")", "lceil": " ceil(", "rceil": ")",
}  # fmt: skip
_GREEK = {
    "alpha": "\u03b1", "beta": "\u03b2", "gamma": "\u03b3", "delta": "\u03b4", "epsilon": "\u03b5",
    "varepsilon": "\u03b5", "theta": "\u03b8", "lambda": "\u03bb", "mu": "\u03bc", "phi": "\u03c6",
    "varphi": "\u03c6", "sigma": "\u03c3", "tau": "\u03c4", "omega": "\u03c9", "rho": "\u03c1",
}  # fmt: skip
_TEXT_CMDS = frozenset(
    {"text", "textbf", "textit", "textrm", "mbox", "mathrm", "mathbf", "mathit", "operatorname", "hbox"}
)
_BOX_CMDS = frozenset({"boxed", "fbox"})
_DECORATIONS = frozenset(
    {"underline", "overline", "bar", "hat", "vec", "tilde", "widehat", "widetilde", "dot", "ddot"}
)
_FRAC_CMDS = frozenset({"frac", "dfrac", "tfrac", "cfrac"})
_BINOM_CMDS = frozenset({"binom", "dbinom", "tbinom"})
_LEFT_DELIMS = {
    "(": "(", "[": "(", ".": " ", "|": "|", "\\{": "(", "\\lbrace": "(", "\\lvert": "|",
    "\\lfloor": " floor(", "\\lceil": " ceil(",
}  # fmt: skip
_RIGHT_DELIMS = {
    ")": ")", "]": ")", ".": " ", "|": "|", "\\}": ")", "\\rbrace": ")", "\\rvert": "|",
    "\\rfloor": ")", "\\rceil": ")",
}  # fmt: skip
_CMD_RE = re.compile(r"[A-Za-z]+")
_DERIV_DEN = re.compile(r"^\s*d\s*([A-Za-z])\s*$")
_DERIV_NUM = re.compile(r"^\s*d\s*([A-Za-z])?\s*$")
_HIGHER_DERIV = re.compile(r"^\s*d\s*[A-Za-z]")


class _Latex:
    """One pass over LaTeX: groups recurse, every character is read once per nesting level."""

    def __init__(self, s: str) -> None:
        self.s = s
        self.depth = 0

    def run(self, i: int, in_group: bool) -> tuple[str, int]:
        """Convert from i up to the closing brace of the current group (or the end)."""
        s, n = self.s, len(self.s)
        out: list[str] = []
        while i < n:
            c = s[i]
            if c == "}" and in_group:
                return "".join(out), i + 1
            if c == "{":
                inner, i = self.group(i + 1)
                out.append(f"({inner})")
            elif c == "\\":
                i = self.command(i, out)
            elif c == "&":
                out.append(" ")
                i += 1
            elif c == "$":
                out.append(" $ ")
                i += 1
            else:
                out.append(c)
                i += 1
        return "".join(out), i

    def group(self, i: int) -> tuple[str, int]:
        if self.depth >= MAX_LATEX_DEPTH:
            return BREAKER, len(self.s)
        self.depth += 1
        try:
            return self.run(i, True)
        finally:
            self.depth -= 1

    def arg(self, i: int) -> tuple[str, int] | None:
        """A `{...}` argument (converted) or a single character, after spaces."""
        s, n = self.s, len(self.s)
        while i < n and s[i] == " ":
            i += 1
        if i >= n:
            return None
        if s[i] == "{":
            return self.group(i + 1)
        if s[i].isalnum():
            return s[i], i + 1
        if s[i] == "\\":
            m = _CMD_RE.match(s, i + 1)
            if m and m.group(0) in ("pi",):
                return "\u03c0", m.end()
        return None

    def command(self, i: int, out: list[str]) -> int:
        s, n = self.s, len(self.s)
        if i + 1 >= n:
            out.append(" ")
            return i + 1
        nxt = s[i + 1]
        if nxt in "([":
            out.append(f" {OPEN_MATH} ")
            return i + 2
        if nxt in ")]":
            out.append(f" {CLOSE_MATH} ")
            return i + 2
        if nxt == "\\":
            out.append(" \n ")
            return i + 2
        if nxt in ",;:!> ":
            out.append(" ")
            return i + 2
        if nxt in "%$":
            out.append(nxt)
            return i + 2
        if nxt in "{}":
            out.append("(" if nxt == "{" else ")")
            return i + 2
        m = _CMD_RE.match(s, i + 1)
        if m is None:
            out.append(BREAKER)
            return i + 2
        name, j = m.group(0), m.end()
        if name in _SIMPLE:
            out.append(_SIMPLE[name])
            return j
        if name in _GREEK:
            out.append(_GREEK[name])
            return j
        if name in ("left", "right"):
            return self.delimiter(name, j, out)
        if name in ("begin", "end"):
            a = self.arg(j)
            out.append(" \n ")
            return a[1] if a else j
        if name in _FRAC_CMDS:
            return self.frac(i, j, out)
        if name in _BINOM_CMDS:
            a = self.arg(j)
            b = self.arg(a[1]) if a else None
            if a is None or b is None:
                out.append(BREAKER)
                return a[1] if a else j  # never read the same characters twice
            out.append(f" binom({a[0]})({b[0]})")
            return b[1]
        if name == "sqrt":
            return self.sqrt(j, out)
        if name in _TEXT_CMDS or name in _BOX_CMDS or name in _DECORATIONS:
            a = self.arg(j)
            if a is None:
                out.append(" ")
                return j
            if name in _TEXT_CMDS:
                out.append(f" {a[0]} ")
            elif name in _BOX_CMDS:
                out.append(f" ({a[0]}) ")  # "= -24 \boxed{-24}": a restatement, never a product
            else:  # decorations change meaning (repeating decimals, vectors): not arithmetic
                out.append(f" {BREAKER} ")
            return a[1]
        out.append(f" {BREAKER} ")
        return j

    def delimiter(self, name: str, j: int, out: list[str]) -> int:
        s = self.s
        while j < len(s) and s[j] == " ":
            j += 1
        table = _LEFT_DELIMS if name == "left" else _RIGHT_DELIMS
        for key in sorted(table, key=len, reverse=True):
            if s.startswith(key, j) and (
                not key[-1].isalpha() or not s[j + len(key) : j + len(key) + 1].isalpha()
            ):
                out.append(table[key])
                return j + len(key)
        out.append(f" {BREAKER} ")  # \left\lfloor and friends change the value
        return j

    def frac(self, i: int, j: int, out: list[str]) -> int:
        a = self.arg(j)
        b = self.arg(a[1]) if a else None
        if a is None or b is None:
            out.append(f" {BREAKER} ")
            return a[1] if a else j  # an unclosed argument was read to its end: never again
        den = _DERIV_DEN.match(b[0])
        num = _DERIV_NUM.match(a[0])
        if _HIGHER_DERIV.match(b[0]) and a[0].lstrip().startswith("d") and not (den and num):
            out.append(f" {BREAKER} ")  # d^2y/dx^2 and other derivatives we do not read
            return b[1]
        if den and num:  # d/dx, dy/dx
            out.append(f" \u2202{den.group(1)}" + (f"({num.group(1)})" if num.group(1) else " "))
            return b[1]
        tail = "".join(out[-3:]).rstrip(" ")
        glued = bool(tail) and tail[-1].isdigit()  # "(x-1)\\frac{8}{9}" is a product
        out.append((f" {JUXTAPOSED} " if glued else "") + f"(({a[0]})/({b[0]}))")
        return b[1]

    def sqrt(self, j: int, out: list[str]) -> int:
        s = self.s
        index = None
        if j < len(s) and s[j] == "[":
            close = s.find("]", j, j + 40)
            if close < 0:
                out.append(f" {BREAKER} ")
                return j
            index, j = s[j + 1 : close], close + 1
        a = self.arg(j)
        if a is None:
            out.append(f" {BREAKER} ")
            return j
        out.append(f"sqrt({a[0]})" if index is None else f"(({a[0]})^(1/({index})))")
        return a[1]


def latex_to_plain(s: str) -> str:
    """Rewrite LaTeX into plain operator syntax (see the module docstring for the marks)."""
    return _Latex(s.replace("{,}", ",")).run(0, False)[0]


_ASIDE_RE = re.compile(r"[ \t]\([ \t]*(?=[^()\n]*[A-Za-z]{2})[A-Za-z][A-Za-z ,'\-]{0,60}\)(?=[ \t.,;+\-*/=])")
_BULLET_RE = re.compile(r"(?m)^[ \t]*(?:[-*\u2022]|\d{1,2}[.)])[ \t]+")
_POWER_STARS_RE = re.compile(r"(?<=[\d)])[ \t]*\*\*[ \t]*(?=[-\d(])")
# "4 x 5", "3x4": a letter x between numbers is a times sign; "2x(3)" and "(a)x(b)" are not
_TIMES_X_RE = re.compile(r"(?<=[\d)])[ \t]+[xX][ \t]+(?=[\d($])|(?<=\d)[xX](?=\d)")
# "3 times 4 is 12": arithmetic in words, only in this exact shape
_WORDED_RE = re.compile(
    r"(?<![\w.])(\d[\d,.]*+)[ \t]++(times|plus|minus|multiplied by|divided by)[ \t]++(\d[\d,.]*+)"
    r"[ \t]++(?:is|are|equals|gives|makes)[ \t]++(\d[\d,.]*+)(?![\w])",
    re.IGNORECASE,
)
_WORDED_OPS = {"times": "*", "plus": "+", "minus": "-", "multiplied by": "*", "divided by": "/"}
_REMAINDER_R_RE = re.compile(r"(?<=\d)[ \t]*R[ \t]*(?=\d)")  # "355 / 6 = 58 R 5"
_DASH_MINUS_RE = re.compile(r"(?<=[\d)])[ \t]+[\u2013\u2014][ \t]+(?=[\d($(-])")
_PLAIN_DERIV_RE = re.compile(r"(?<![A-Za-z])d([A-Za-z])?\s*/\s*d([A-Za-z])(?![A-Za-z])")
_ARROW_RE = re.compile(r"=>|-->|->")


def _plain_derivative(m: re.Match[str]) -> str:
    return f" \u2202{m.group(2)}" + (f"({m.group(1)})" if m.group(1) else " ")


def _worded(m: re.Match[str]) -> str:
    op = _WORDED_OPS[" ".join(m.group(2).lower().split())]
    return f"{m.group(1)} {op} {m.group(3)} = {m.group(4)}"


def normalize(text: str, *, keep_annotations: bool = False) -> tuple[str, list[tuple[str, str]]]:
    """Plain-operator text and the calculator annotations `<<expr=result>>` found in it."""
    norm, notes = _normalize(text, keep_annotations)
    return norm, list(notes)


@lru_cache(maxsize=4096)  # the router and the linker read the same unit; the auditor reads it again
def _normalize(text: str, keep_annotations: bool) -> tuple[str, tuple[tuple[str, str], ...]]:
    annotations = tuple((m.group(1), m.group(2)) for m in ANNOTATION_RE.finditer(text))
    if not keep_annotations:
        text = ANNOTATION_RE.sub("", text)
    text = re.sub(r"\u221a\s*(\d+(?:\.\d+)?)", r"sqrt(\1)", text)
    for k, v in _UNICODE.items():
        text = text.replace(k, v)
    if "\\" in text or "{" in text:
        text = latex_to_plain(text)
    if "/" in text:
        text = _PLAIN_DERIV_RE.sub(_plain_derivative, text)
    if ">" in text:
        text = _ARROW_RE.sub(f" {IMPLIES} ", text)
    text = _ASIDE_RE.sub(" ", text)  # "9 - 3 (from snack) - 2 (for lunch) = 4"
    text = _BULLET_RE.sub("\n", text)
    text = _POWER_STARS_RE.sub("^", text)
    text = text.replace("**", " ")  # what is left of "**" is markdown bold
    text = _TIMES_X_RE.sub(" * ", text)
    text = _DASH_MINUS_RE.sub(" - ", text)  # "22 – 7": a dash between spaced numbers is a minus
    text = _REMAINDER_R_RE.sub(" remainder ", text)
    if "times" in text or "plus" in text or "minus" in text or " by " in text:
        text = _WORDED_RE.sub(_worded, text)
    return text, annotations
