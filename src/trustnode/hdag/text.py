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
from dataclasses import dataclass

#: Longest text the segmenter reads (a whole request body is at most 1 MB); longer text is
#: refused with `TextTooLongError` rather than scanned.
MAX_TEXT_CHARS = 1_000_000
#: Longest segment any HDAG may hold: the offline decomposer cuts longer units, and
#: validation repair cuts longer nodes from any decomposer (an auditor is never handed
#: one enormous step, and no tier can skip a segment for its length).
MAX_SEGMENT_CHARS = 2000

_DISPLAY_START = ("```", "$$", "\\[", "\\begin")
# Where a protected region may start; the scanner below decides whether one does.
_OPENERS = re.compile(r"```|\$|\\[\[(]|\\begin\{")
_ENV_NAME = re.compile(r"[A-Za-z*]+\}")
_INLINE_END = re.compile(r"[$\n]")
_CLOSERS = {"```": "```", "$$": "$$", "\\[": "\\]", "\\(": "\\)"}

_PARAGRAPH = re.compile(r"\n[ \t]*+\n\s*+")
_LIST_ITEM = re.compile(
    r"\n[ \t]*+(?=(?:[-*\u2022+][ \t]|\d{1,3}[.)][ \t]|[a-z][.)][ \t]|#{1,6}[ \t]|\*\*|Step[ \t]+\d))"
)
# End of a sentence: punctuation, optional closers, whitespace, then a plausible start.
_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*+\s++(?=[A-Z0-9\\$(\"*\u2022#\[])")
_ABBREV = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|cf|approx|resp|Mr|Mrs|Ms|Dr|Prof|St|No|Fig|Eq|eq|Sec|al|ca)\.|\b[A-Z]\.)$"
)
_ALNUM = re.compile(r"[0-9A-Za-z\u00c0-\uffff]")


class TextTooLongError(ValueError):
    """The text is longer than MAX_TEXT_CHARS."""

    def __init__(self, length: int) -> None:
        super().__init__(f"text of {length} characters is longer than the limit of {MAX_TEXT_CHARS}")
        self.length = length


def check_length(text: str) -> None:
    """Refuse text longer than MAX_TEXT_CHARS (every scanner here is linear, but not free)."""
    if len(text) > MAX_TEXT_CHARS:
        raise TextTooLongError(len(text))


class _Scanner:
    """Protected regions in one left-to-right pass.

    Formulas: ``` code ```, $$ .. $$, \\[ .. \\], \\begin{env} .. \\end{env}, \\( .. \\),
    $ .. $ (one line, no "$" inside), tried in that order at each opening, leftmost first,
    shortest close. A closer that is missing after one opening is missing after every
    later one too, so it is searched for once: the scan is linear in the text.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.missing: set[str] = set()  # closers not found after some position
        self.searches = 0  # closer searches run (each at most one pass over the text)
        self.openings = 0  # opening markers looked at

    def _close(self, closer: str, start: int) -> int:
        if closer in self.missing:
            return -1
        self.searches += 1
        j = self.text.find(closer, start)
        if j < 0:
            self.missing.add(closer)
            return -1
        return j + len(closer)

    def match(self, s: int) -> int:
        """End of the region opening at s, or -1."""
        text = self.text
        if text.startswith("```", s):
            end = self._close("```", s + 3)
            if end >= 0:
                return end
        if text.startswith("$$", s):
            end = self._close("$$", s + 3)  # at least one character inside
            if end >= 0:
                return end
        for opener in ("\\[", "\\("):
            if text.startswith(opener, s):
                end = self._close(_CLOSERS[opener], s + 3)
                if end >= 0:
                    return end
                break
        if text.startswith("\\begin{", s):
            m = _ENV_NAME.match(text, s + 7)
            if m is not None:
                end = self._close(f"\\end{{{m.group(0)[:-1]}}}", m.end())
                if end >= 0:
                    return end
        if text.startswith("$", s) and not text.startswith("$$", s) and (s == 0 or text[s - 1] not in "\\$"):
            m = _INLINE_END.search(text, s + 2) if s + 1 < len(text) and text[s + 1] != "\n" else None
            if m is not None and m.group(0) == "$" and text[m.start() - 1] != "\\":
                return m.end()
        return -1


@dataclass(frozen=True)
class ScanStats:
    """Work done by one scan: what a test bounds instead of wall time."""

    openings: int  # opening markers looked at (at most one per character)
    searches: int  # closer searches (one per region found, plus one per missing closer)


def scan_protected(text: str) -> tuple[list[tuple[int, int]], ScanStats]:
    """Protected regions and the work it took to find them."""
    check_length(text)
    scanner = _Scanner(text)
    out: list[tuple[int, int]] = []
    pos = 0
    while (m := _OPENERS.search(text, pos)) is not None:
        scanner.openings += 1
        end = scanner.match(m.start())
        if end < 0:
            pos = m.start() + 1
            continue
        out.append((m.start(), end))
        pos = end
    return out, ScanStats(openings=scanner.openings, searches=scanner.searches)


def protected_regions(text: str) -> list[tuple[int, int]]:
    """Spans of formulas and code that a split must never fall inside (linear time)."""
    return scan_protected(text)[0]


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
    merged = _join_restatements(text, _merge_tiny(text, pieces))
    capped = [piece for s, e in merged for piece in cap_length(text, s, e, guard)]
    return [(s + offset, e + offset) for s, e in capped]


def _cut_rank(text: str, pos: int, guard: _Guard) -> int:
    """How good a cut before text[pos] is: 4 line break, 3 sentence end, 2 space, 1 space
    inside a formula, 0 not a space (outside formulas unless said)."""
    if not text[pos - 1].isspace():
        return 0
    if guard.inside(pos):
        return 1
    if text[pos - 1] == "\n":
        return 4
    return 3 if pos >= 2 and text[pos - 2] in ".!?;:" else 2


def cap_length(
    text: str, start: int, end: int, guard: _Guard | None = None, limit: int = MAX_SEGMENT_CHARS
) -> list[tuple[int, int]]:
    """Cut text[start:end] into trimmed pieces of at most `limit` characters.

    The cut is the best boundary in the second half of each window: a line break, then a
    sentence end, then a space outside formulas, then any space, then the window's end.
    Each character is looked at a bounded number of times, so this is linear.
    """
    if limit < 2:
        raise ValueError(f"a piece needs at least 2 characters, not {limit}")
    if end - start <= limit:
        return [(start, end)]
    if guard is None:
        guard = _Guard([(s + start, e + start) for s, e in protected_regions(text[start:end])])
    out: list[tuple[int, int]] = []
    cur = start
    while end - cur > limit:
        window = cur + limit
        best, best_rank = window, 0
        for pos in range(window, cur + limit // 2, -1):
            rank = _cut_rank(text, pos, guard)
            if rank > best_rank:
                best, best_rank = pos, rank
                if rank == 4:
                    break
        out.append((cur, best))
        cur = best
    out.append((cur, end))
    trimmed: list[tuple[int, int]] = []
    for s, e in out:
        seg = text[s:e]
        lead, trail = len(seg) - len(seg.lstrip()), len(seg.rstrip())
        if trail > lead:
            trimmed.append((s + lead, s + trail))
    return trimmed


_LABELLED = re.compile(r"\W{0,4}+([A-Za-z][A-Za-z']*+(?:[ \t]++[A-Za-z][A-Za-z']*+){0,5})[ \t]*+=")


def _label(text: str, s: int, e: int) -> str:
    """ "total earnings" for a piece that starts "Total earnings = ..." ("" when it does not)."""
    m = _LABELLED.match(text, s, min(e, s + 80))
    return " ".join(m.group(1).lower().split()) if m and len(m.group(1)) > 1 else ""


# A sentence that goes on solving the previous one's equation ("Subtracting 150 from both sides, ...")
_CONTINUES = re.compile(
    r"\W{0,4}+(?:then,?[ \t]++|now,?[ \t]++|next,?[ \t]++)?"
    r"(?:subtract|add(?:ing)?\b|divid|multiply|multiplying|combin|simplif|expand|rearrang|collect|cross-multipl|"
    r"isolat|mov(?:e|ing)\b|factor|(?:this|which|that|it)[ \t]++(?:simplifies|becomes|reduces|gives|yields))",
    re.IGNORECASE,
)


def _join_restatements(text: str, pieces: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Keep one calculation in one unit: a restated total ("Total = 3 + 5. Total = 8.") and
    the steps that solve one equation ("... = 500. Subtracting 150 from both sides, ...")."""
    out: list[list[int]] = []
    last = ""
    for s, e in pieces:
        label = _label(text, s, e)
        same = bool(label) and label == last
        goes_on = _CONTINUES.match(text, s, min(e, s + 40)) is not None and "=" in text[s:e]
        if (
            out
            and (same or goes_on)
            and "=" in text[out[-1][0] : out[-1][1]]
            and e - out[-1][0] <= MAX_SEGMENT_CHARS
        ):
            out[-1][1] = e
        else:
            out.append([s, e])
        last = label
    return [(s, e) for s, e in out]


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
