"""Text as a reader sees it, for matching only: invisible and look-alike characters folded.

A trace can hide words from pattern checks with characters a reader does not see
(zero-width spaces, soft hyphens, joiners, tag characters: Unicode category Cf), with
combining marks, or with letters of another script that look like Latin ones (Cyrillic
"о" for "o"). The grounding check and the injection screen both compare `fold(text)`, so
"Ign\u200bore previous instructions" is read as what it shows and a quotation that leaves
out a soft hyphen still matches. The text sent to the model is never changed.
"""

from __future__ import annotations

import json
import unicodedata
from functools import lru_cache
from importlib import resources

_QUOTES = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"'}
)


@lru_cache(maxsize=1)
def _confusables() -> dict[int, str]:
    """Non-ASCII characters that Unicode's confusables data (UTS #39, as shipped by the
    `confusable_homoglyphs` package) lists as look-alikes of an ASCII letter or digit."""
    raw = resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text(encoding="utf-8")
    data = json.loads(raw)
    table: dict[int, str] = {}
    for target in sorted(data, key=lambda t: (not t.islower(), t)):  # lower-case letters win ties
        if len(target) != 1 or not target.isascii() or not target.isalnum():
            continue
        for entry in data[target]:
            glyph = entry.get("c", "") if isinstance(entry, dict) else ""
            if len(glyph) == 1 and not glyph.isascii():
                table.setdefault(ord(glyph), target)
    return table


def _visible(ch: str) -> bool:
    return unicodedata.category(ch) not in ("Cf", "Mn", "Me")


def reveal(text: str) -> str:
    """The text as a reader sees it: compatibility-normalised, invisible format characters
    and combining marks removed, look-alike letters and digits mapped to ASCII. Line
    breaks and case are kept (the injection screen matches on them)."""
    text = "".join(ch for ch in unicodedata.normalize("NFKD", text) if _visible(ch))
    return unicodedata.normalize("NFKC", text).translate(_confusables())


def fold(text: str) -> str:
    """`reveal`, then quotes straightened, whitespace collapsed and case folded (grounding)."""
    return " ".join(reveal(text).translate(_QUOTES).split()).casefold()


def has_hidden_characters(text: str) -> bool:
    """True when the text holds format characters (Cf) a reader cannot see."""
    return any(unicodedata.category(ch) == "Cf" for ch in text)
