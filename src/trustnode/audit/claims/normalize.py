"""Stage 1 of claim extraction: text -> plain operator syntax.

LaTeX (fractions, roots, boxes, text, spacing), unicode operators and GSM8K-style
calculator annotations become plain `+ - * / ^ ( ) =` text; control words that are
not arithmetic become chain breakers. Every other stage reads only this output.
"""

from __future__ import annotations

import re

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
