"""Node ids of an HDAG: a level prefix and a number (G1, S2, T3, ST4, O5).

Validation, the offline decomposer, the importers and the LLM pipeline all mint ids; one
allocator keeps them fresh (never reusing an id, even one a repair dropped) and one pattern
says whether an id matches its level.
"""

from __future__ import annotations

import re

from trustnode.models.enums import Level

NODE_ID = re.compile(r"^(G|S|T|ST|O)(\d+)$")


def id_prefix(nid: str) -> str | None:
    """The level prefix of a well-formed node id ("ST" of "ST4"), else None."""
    m = NODE_ID.match(nid)
    return m.group(1) if m else None


class IdAllocator:
    """Hands out fresh node ids per level prefix (G1, S1, T1, ST1, O1 ...)."""

    def __init__(self, ids: set[str] | None = None) -> None:
        self.used: set[str] = set()
        self._next: dict[str, int] = {}
        for i in ids or ():
            self.add(i)

    def add(self, nid: str) -> None:
        self.used.add(nid)
        m = NODE_ID.match(nid)
        if m:
            self._next[m.group(1)] = max(self._next.get(m.group(1), 1), int(m.group(2)) + 1)

    def __contains__(self, nid: object) -> bool:
        return nid in self.used

    def peek(self, level: Level) -> str:
        """The id `next(level)` would hand out, without taking it."""
        return f"{level.id_prefix}{self._next.get(level.id_prefix, 1)}"

    def next(self, level: Level) -> str:
        prefix = level.id_prefix
        n = self._next.get(prefix, 1)
        nid = f"{prefix}{n}"
        self._next[prefix] = n + 1
        self.used.add(nid)
        return nid
