"""Where a node's text is in the trace, and nodes too long to audit as one segment.

Both run on text a decomposer (possibly an LLM) produced, so both are linear: a quote is
found with `str.find`, first exactly, then on a whitespace-collapsed copy of the text
with an index map back; a long node is cut with `text.cap_length`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from trustnode.hdag.text import MAX_SEGMENT_CHARS, cap_length
from trustnode.models.enums import Level
from trustnode.models.hdag import HDAGEdge, HDAGNode
from trustnode.models.trace import TextSpan

MAX_ANCHOR_HITS = 64
_SPACE_RUN = re.compile(r"\s+")


def _collapsed(text: str) -> tuple[str, list[int]]:
    """`text` with every whitespace run as one space, and each kept character's index."""
    out: list[str] = []
    index: list[int] = []
    pos = 0
    for m in _SPACE_RUN.finditer(text):
        out.append(text[pos : m.start()])
        index.extend(range(pos, m.start()))
        out.append(" ")
        index.append(m.start())
        pos = m.end()
    out.append(text[pos:])
    index.extend(range(pos, len(text)))
    return "".join(out), index


def _hits(haystack: str, needle: str) -> list[int]:
    hits: list[int] = []
    i = haystack.find(needle)
    while i != -1 and len(hits) < MAX_ANCHOR_HITS:
        hits.append(i)
        i = haystack.find(needle, i + 1)
    return hits


def anchor(text: str, quote: str, hint: int = 0) -> tuple[int, int] | None:
    """Where `quote` occurs in `text` (nearest to `hint`); exact first, then whitespace-insensitive."""
    q = quote.strip()
    if not q:
        return None
    hits = _hits(text, q)
    if hits:
        best = min(hits, key=lambda h: abs(h - hint))
        return best, best + len(q)
    flat, index = _collapsed(text)
    needle = " ".join(q.split())
    found = _hits(flat, needle)
    if not found:
        return None
    best = min(found, key=lambda h: abs(index[h] - hint))
    return index[best], index[best + len(needle) - 1] + 1


def split_long_nodes(
    text: str, nodes: list[HDAGNode], edges: list[HDAGEdge], fresh: Callable[[Level], str]
) -> tuple[list[HDAGNode], list[HDAGEdge], list[str]]:
    """Cut every non-GOAL node longer than MAX_SEGMENT_CHARS; parts keep the node's edges.

    `fresh(level)` hands out a new id. Returns the nodes, the edges and one repair note per
    cut node. GOAL nodes (the problem statement, which every auditor sees as context
    anyway) are left whole.
    """
    out: list[HDAGNode] = []
    notes: list[str] = []
    parts_of: dict[str, list[str]] = {}
    for n in nodes:
        if n.abstraction_level is Level.GOAL or n.span.end - n.span.start <= MAX_SEGMENT_CHARS:
            out.append(n)
            continue
        pieces = cap_length(text, n.span.start, n.span.end)
        ids = [n.id] + [fresh(n.abstraction_level) for _ in pieces[1:]]
        for nid, (s, e) in zip(ids, pieces, strict=True):
            out.append(
                n.model_copy(update={"id": nid, "span": TextSpan(start=s, end=e), "content": text[s:e]})
            )
        parts_of[n.id] = ids
        notes.append(
            f"split {n.id} ({n.span.end - n.span.start} characters, over {MAX_SEGMENT_CHARS}) "
            f"into {', '.join(ids)}"
        )
    extra: list[HDAGEdge] = []
    for nid, ids in parts_of.items():
        for ed in edges:
            for pid in ids[1:]:
                if ed.source == nid:
                    extra.append(ed.model_copy(update={"source": pid}))
                if ed.target == nid:
                    extra.append(ed.model_copy(update={"target": pid}))
    return out, edges + extra, notes


def too_long(nodes: list[HDAGNode]) -> list[str]:
    """Ids of non-GOAL nodes longer than MAX_SEGMENT_CHARS."""
    return [
        n.id
        for n in nodes
        if n.abstraction_level is not Level.GOAL and n.span.end - n.span.start > MAX_SEGMENT_CHARS
    ]
