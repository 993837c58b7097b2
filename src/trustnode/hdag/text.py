"""Deterministic segmentation of reasoning text into auditable units.

Units are sentences, list items and calculation blocks. Formulas are never cut: inline
math (`$..$`, `\\(..\\)`), display math (`\\[..\\]`, `$$..$$`, `\\begin{env}..\\end{env}`) and
code fences are protected regions, and display math stays with the sentence that
introduces it. Every non-space character of the input lands in exactly one unit, which
is what makes the offline decomposer's completeness 1.0 by construction.
"""

from __future__ import annotations

import re
from bisect import bisect_right

# Protected regions, matched left to right; alternatives in priority order.
_PROTECTED = re.compile(
    r"```.*?```"
    r"|\$\$.+?\$\$"
    r"|\\\[.+?\\\]"
    r"|\\begin\{([A-Za-z*]+)\}.*?\\end\{\1\}"
    r"|\\\(.+?\\\)"
    r"|(?<![\\$])\$(?!\$)[^$\n]+?(?<!\\)\$",
    re.DOTALL,
)
_DISPLAY_START = ("```", "$$", "\\[", "\\begin")

_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
_LIST_ITEM = re.compile(
    r"\n[ \t]*(?=(?:[-*\u2022+][ \t]|\d{1,3}[.)][ \t]|[a-z][.)][ \t]|#{1,6}[ \t]|\*\*|Step[ \t]+\d))"
)
# End of a sentence: punctuation, optional closers, whitespace, then a plausible start.
_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\\$(\"*\u2022#\[])")
_ABBREV = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|cf|approx|resp|Mr|Mrs|Ms|Dr|Prof|St|No|Fig|Eq|eq|Sec|al|ca)\.|\b[A-Z]\.)$"
)
_ALNUM = re.compile(r"[0-9A-Za-z\u00c0-\uffff]")


def protected_regions(text: str) -> list[tuple[int, int]]:
    """Spans of formulas and code that a split must never fall inside."""
    return [(m.start(), m.end()) for m in _PROTECTED.finditer(text)]


class _Guard:
    def __init__(self, regions: list[tuple[int, int]]) -> None:
        self.regions = regions
        self.starts = [s for s, _ in regions]

    def inside(self, pos: int) -> bool:
        """True when a cut at `pos` would fall strictly inside a protected region."""
        i = bisect_right(self.starts, pos - 1) - 1
        return i >= 0 and self.regions[i][0] < pos < self.regions[i][1]


def _display_blocks(text: str, regions: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return [(s, e) for s, e in regions if text.startswith(_DISPLAY_START, s)]


def split_units(text: str, offset: int = 0) -> list[tuple[int, int]]:
    """Spans (absolute, `offset` added) of the units of `text`, trimmed of whitespace.

    The spans are disjoint, in order, and cover every non-space character.
    """
    if not text.strip():
        return []
    regions = protected_regions(text)
    guard = _Guard(regions)
    cuts: set[int] = set()
    hard: set[int] = set()  # paragraph breaks: tiny pieces never merge across them
    for m in _PARAGRAPH.finditer(text):
        if not guard.inside(m.start()):
            cuts.add(m.end())
            hard.add(m.end())
    for m in _LIST_ITEM.finditer(text):
        if not guard.inside(m.start()):
            cuts.add(m.end())
    for m in _SENTENCE.finditer(text):
        pos = m.start()
        if guard.inside(pos) or _ABBREV.search(text, max(0, pos - 8), pos):
            continue
        cuts.add(m.end())
    # A display block ends a unit when a new line starting a sentence follows it.
    for _s, e in _display_blocks(text, regions):
        rest = text[e : e + 200]
        nl = re.match(r"[ \t]*\n\s*(?=[A-Z(\"*\u2022#])", rest)
        if nl and not rest[nl.end() :].startswith(_DISPLAY_START):
            cuts.add(e + nl.end())
    bounds = sorted(c for c in cuts if 0 < c < len(text))
    pieces: list[tuple[int, int, bool]] = []  # (start, end, starts_after_hard_break)
    prev = 0
    for c in [*bounds, len(text)]:
        seg = text[prev:c]
        lead = len(seg) - len(seg.lstrip())
        trail = len(seg.rstrip())
        if trail > lead:
            pieces.append((prev + lead, prev + trail, prev in hard))
        prev = c
    merged = _merge_tiny(text, pieces)
    return [(s + offset, e + offset) for s, e in merged]


def _merge_tiny(text: str, pieces: list[tuple[int, int, bool]]) -> list[tuple[int, int]]:
    """Fold pieces with fewer than two letters/digits into a neighbour (never dropped)."""
    out: list[list[int]] = []
    carry: int | None = None  # start of a tiny piece waiting to join the next one
    for i, (s, e, after_break) in enumerate(pieces):
        tiny = len(_ALNUM.findall(text, s, e)) < 2
        if carry is not None:
            s = carry
            carry = None
        if tiny:
            nxt = pieces[i + 1] if i + 1 < len(pieces) else None
            if nxt is not None and not nxt[2]:
                carry = s
                continue
            if out and not after_break:
                out[-1][1] = e
                continue
            if nxt is not None and out == [] and not nxt[2]:
                carry = s
                continue
        out.append([s, e])
    if carry is not None:
        if out:
            out[-1][1] = pieces[-1][1]
        else:
            out.append([carry, pieces[-1][1]])
    return [(s, e) for s, e in out]


def paragraphs(text: str, offset: int = 0) -> list[tuple[int, int]]:
    """Paragraph spans (trimmed), never cutting a protected region: the LLM chunking unit."""
    if not text.strip():
        return []
    guard = _Guard(protected_regions(text))
    bounds = [m.end() for m in _PARAGRAPH.finditer(text) if not guard.inside(m.start())]
    out: list[tuple[int, int]] = []
    prev = 0
    for c in [*bounds, len(text)]:
        seg = text[prev:c]
        lead = len(seg) - len(seg.lstrip())
        trail = len(seg.rstrip())
        if trail > lead:
            out.append((prev + lead + offset, prev + trail + offset))
        prev = c
    return out


def non_space_count(text: str) -> int:
    """Characters that count for completeness."""
    return len("".join(text.split()))
