"""Where a node's text is in the trace, and nodes too long to audit as one segment.

Both run on text a decomposer (possibly an LLM) produced, so both are linear: a quote is
found with `str.find`, first exactly, then on a whitespace-collapsed copy of the text
with an index map back; a long node is cut with `text.cap_length`.

"Too long" has two meanings, both enforced by validation repair for every decomposer:
longer than MAX_SEGMENT_CHARS, and more than MAX_SEGMENT_SHARE of the trace's thinking.
The second is SPEC 3's privacy share: an auditor always decrypts its own seats, so a
segment over the share breaks the rule that no auditor reads more than that share of a
trace (`node.privacy` enforces it for the context keys).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from trustnode.hdag import rules
from trustnode.hdag.text import MAX_SEGMENT_CHARS, cap_length
from trustnode.models.enums import Level
from trustnode.models.hdag import HDAGEdge, HDAGNode
from trustnode.models.trace import TextSpan, TraceDocument

MAX_ANCHOR_HITS = 64
#: SPEC 3's default privacy share (the same figure as the per-auditor seat cap): no segment
#: holds more than this share of its trace's thinking characters.
MAX_SEGMENT_SHARE = 0.25
#: Traces whose share is fewer characters than this are not cut for it: pieces that small
#: are fragments of a sentence, not steps an auditor can judge. (With the 25% share: traces
#: of under 320 thinking characters.)
MIN_SHARE_PIECE_CHARS = 80
#: Passes of the share repair: a cut trims the whitespace at its boundary, which can lower
#: the thinking's covered length (and so the limit) by a few characters.
_SHARE_PASSES = 4
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
    doc: TraceDocument, nodes: list[HDAGNode], edges: list[HDAGEdge], fresh: Callable[[Level], str]
) -> tuple[list[HDAGNode], list[HDAGEdge], list[str]]:
    """Cut every non-GOAL node longer than MAX_SEGMENT_CHARS; parts keep the node's edges.

    `fresh(level)` hands out a new id. Returns the nodes, the edges and one repair note per
    cut node. GOAL nodes (the problem statement, which every auditor sees as context
    anyway) are left whole.
    """
    long = set(too_long(nodes))
    cut = {n.id: MAX_SEGMENT_CHARS for n in nodes if n.id in long}
    return _split(doc, nodes, edges, fresh, cut, f"over {MAX_SEGMENT_CHARS}")


def _split(
    doc: TraceDocument,
    nodes: list[HDAGNode],
    edges: list[HDAGEdge],
    fresh: Callable[[Level], str],
    cut: dict[str, int],
    why: str,
) -> tuple[list[HDAGNode], list[HDAGEdge], list[str]]:
    """Cut each node named in `cut` into pieces of at most that many characters (as even as
    the text's boundaries allow); the first piece keeps the id, every piece the edges.

    Each piece is routed again by the router (`rules.classify`): the claim that sent the
    whole node to the computer tier lies in one piece only, and a T_Auto seat must always
    hold a claim the checker decides."""
    text = doc.text
    out: list[HDAGNode] = []
    notes: list[str] = []
    parts_of: dict[str, list[str]] = {}
    for n in nodes:
        if n.id not in cut:
            out.append(n)
            continue
        length, limit = n.span.end - n.span.start, cut[n.id]
        even = min(limit, math.ceil(1.2 * length / math.ceil(length / limit)))
        pieces = cap_length(text, n.span.start, n.span.end, limit=max(2, even))
        ids = [n.id] + [fresh(n.abstraction_level) for _ in pieces[1:]]
        for nid, (s, e) in zip(ids, pieces, strict=True):
            route = rules.classify(text[s:e], high_stakes=doc.high_stakes)
            update = {"id": nid, "span": TextSpan(start=s, end=e), "content": text[s:e]}
            update |= {"primary_auditor": route.primary, "secondary_auditors": list(route.secondary)}
            out.append(n.model_copy(update=update))
        parts_of[n.id] = ids
        notes.append(f"split {n.id} ({length} characters, {why}) into {', '.join(ids)}")
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


def _thinking_part(doc: TraceDocument, n: HDAGNode) -> tuple[int, int] | None:
    a, b = max(n.span.start, doc.thinking.start), min(n.span.end, doc.thinking.end)
    return (a, b) if a < b else None


def thinking_covered(doc: TraceDocument, nodes: list[HDAGNode]) -> int:
    """Characters of the thinking inside the union of the nodes' spans (the privacy share's
    denominator: what all of a trace's keys together decrypt of its thinking)."""
    total, end = 0, -1
    for a, b in sorted(p for n in nodes if (p := _thinking_part(doc, n)) is not None):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def share_limit(doc: TraceDocument, nodes: list[HDAGNode], share: float = MAX_SEGMENT_SHARE) -> int | None:
    """The most thinking characters one segment may hold, or None when the trace is too short
    to cut for the share (the limit would be under MIN_SHARE_PIECE_CHARS)."""
    limit = math.floor(share * thinking_covered(doc, nodes))
    return limit if limit >= MIN_SHARE_PIECE_CHARS else None


def private_thinking_floor(share: float = MAX_SEGMENT_SHARE) -> int:
    """Fewest thinking characters a trace needs so that every segment can stay within `share`
    while keeping at least MIN_SHARE_PIECE_CHARS (320 at the 25% default)."""
    return math.ceil(MIN_SHARE_PIECE_CHARS / share)


def _too_short(chars: int, share: float) -> str:
    return (
        f"the reasoning has {chars:,} characters: under the privacy share of {share:.0%} "
        f"(no auditor may read more of a trace; setting privacy.max_decrypt_share) a trace needs "
        f"at least {private_thinking_floor(share):,}, so that each segment keeps "
        f"{MIN_SHARE_PIECE_CHARS} characters or more; send a longer trace"
    )


def too_short_for_share(doc: TraceDocument, share: float = MAX_SEGMENT_SHARE) -> str | None:
    """Why the trace cannot be audited privately, judged before decomposition (None if it can).
    Used to refuse a trace on submission; `privacy_problem` is the exact check after it."""
    chars = len(doc.thinking_text.strip())
    return _too_short(chars, share) if chars < private_thinking_floor(share) else None


def privacy_problem(
    doc: TraceDocument, nodes: list[HDAGNode], share: float = MAX_SEGMENT_SHARE
) -> str | None:
    """Why some segment alone holds more than `share` of the thinking (None when none does).

    Validation cuts long enough traces to the share; a trace too short to cut keeps segments
    over it, and the node must refuse it rather than hand one auditor most of the trace."""
    total = thinking_covered(doc, nodes)
    limit = math.floor(share * total)
    over = [n.id for n in nodes if (p := _thinking_part(doc, n)) is not None and p[1] - p[0] > limit]
    if not over:
        return None
    if share_limit(doc, nodes, share) is None:
        return _too_short(total, share)
    return f"segment(s) {', '.join(over)} hold more than {share:.0%} of the thinking ({limit} characters)"


def over_share(doc: TraceDocument, nodes: list[HDAGNode], limit: int | None) -> list[str]:
    """Ids of nodes holding more than `limit` thinking characters (none when limit is None)."""
    if limit is None:
        return []
    return [n.id for n in nodes if (p := _thinking_part(doc, n)) is not None and p[1] - p[0] > limit]


def split_over_share(
    doc: TraceDocument,
    nodes: list[HDAGNode],
    edges: list[HDAGEdge],
    fresh: Callable[[Level], str],
    share: float = MAX_SEGMENT_SHARE,
) -> tuple[list[HDAGNode], list[HDAGEdge], list[str]]:
    """Cut every node holding more than `share` of the thinking (when the trace is long
    enough, see `share_limit`); parts keep the node's edges. Returns nodes, edges, notes."""
    notes: list[str] = []
    for _ in range(_SHARE_PASSES):
        limit = share_limit(doc, nodes, share)
        over = set(over_share(doc, nodes, limit))
        if limit is None or not over:
            break
        cut = {nid: limit for nid in over}
        nodes, edges, more = _split(doc, nodes, edges, fresh, cut, f"over {share:.0%} of the thinking")
        notes += more
    return nodes, edges, notes
