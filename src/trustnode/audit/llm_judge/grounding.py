"""Grounding: a reported violation counts only if it quotes the audited segment itself."""

from __future__ import annotations

import re

from trustnode.audit.llm_judge.textnorm import fold

_ELLIPSIS = re.compile(r"\s*(?:\.\s*\.\s*\.|\u2026|\[\s*\.\.\.\s*\])\s*")


def slice_in_segment(failing_slice: str, segment: str) -> bool:
    """True if the quotation occurs in the segment (pieces around "..." in order), compared
    after `fold` (invisible characters, look-alikes, quotes, whitespace and case)."""
    hay = fold(segment)
    needle = fold(failing_slice).strip(" \"'`")
    if not needle:
        return False
    if needle in hay:
        return True
    pieces = [p.strip(" \"'`") for p in _ELLIPSIS.split(needle)]
    pieces = [p for p in pieces if p]
    if not pieces or not any(ch.isalnum() for p in pieces for ch in p):
        return False
    pos = 0
    for piece in pieces:
        found = hay.find(piece, pos)
        if found < 0:
            return False
        pos = found + len(piece)
    return True
