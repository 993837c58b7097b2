"""How much of a trace one auditor may decrypt, and which context keys it gets (SPEC 3).

The property: no auditor can decrypt more than `share` of a trace's thinking characters,
counting its seats and their context together. An auditor always gets the keys of its own
seats (it cannot audit without them). Context keys (the problem, the parents and children of
its seats) are added one by one while the union of everything it can decrypt stays within
the share; what does not fit is described by the HDAG's 3-5 word node summary, sealed to
that auditor, never by a key. Text outside the thinking (the problem statement, the final
answer) costs nothing, so the problem is always given.

If an auditor's seats alone exceed the share (a network too small for its seat cap: the
demo's four auditors hold whole tiers), it gets no context that adds thinking text, and the
provider logs how far over the share the draw put it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from trustnode.models.hdag import HDAG
from trustnode.node.structure import SessionShape

#: SPEC 3's default: the same figure as the per-auditor seat cap (25% of a trace). Operators
#: will set it as `privacy.max_decrypt_share` once the settings carry it.
MAX_DECRYPT_SHARE = 0.25

Span = tuple[int, int]


def thinking_spans(hdag: HDAG) -> list[list[Span]]:
    """Per node, the part of its span that lies in the thinking (empty for problem/answer text)."""
    t0, t1 = hdag.document.thinking.start, hdag.document.thinking.end
    out = []
    for n in hdag.nodes:
        a, b = max(n.span.start, t0), min(n.span.end, t1)
        out.append([(a, b)] if a < b else [])
    return out


def covered(spans: Sequence[Sequence[Span]], indices: set[int] | Sequence[int]) -> int:
    """Characters of the thinking covered by the union of the given nodes' spans."""
    merged: list[Span] = sorted(s for i in set(indices) for s in spans[i])
    total = 0
    end = -1
    for a, b in merged:
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


class Release(BaseModel):
    """What one auditor may decrypt in one session."""

    auditor: str
    seats: list[int]
    keys: list[int] = Field(description="Segments whose keys are sealed to it (seats first).")
    withheld: list[int] = Field(description="Context segments given as summaries only.")
    share: float = Field(description="Share of the thinking it can decrypt.")
    seats_share: float = Field(description="Share of the thinking its seats alone cover.")


def context_order(shape: SessionShape, seats: Sequence[int]) -> list[int]:
    """Context candidates by priority: the problem, then each seat's parents (nearest first), then children."""
    order = list(shape.goal_indices())
    for seat in seats:
        node = shape.nodes[seat]
        order += sorted(node.parents, reverse=True)
    for seat in seats:
        order += sorted(shape.nodes[seat].children)
    seen: set[int] = set(seats)
    out = []
    for i in order:
        if i not in seen:
            seen.add(i)
            out.append(i)
    return out


def plan_release(
    shape: SessionShape,
    spans: Sequence[Sequence[Span]],
    seats: Mapping[str, Sequence[int]],
    *,
    share: float = MAX_DECRYPT_SHARE,
) -> dict[str, Release]:
    """The keys every drawn auditor gets under the share (see the module docstring)."""
    total = covered(spans, range(len(spans))) or 1
    budget = int(share * total)
    plans: dict[str, Release] = {}
    for auditor, own in seats.items():
        have = set(own)
        seat_chars = covered(spans, have)
        keys = list(dict.fromkeys(own))
        withheld = []
        for i in context_order(shape, list(dict.fromkeys(own))):
            after = covered(spans, have | {i})
            if after == covered(spans, have) or after <= budget:
                have.add(i)
                keys.append(i)
            else:
                withheld.append(i)
        plans[auditor] = Release(
            auditor=auditor,
            seats=list(own),
            keys=keys,
            withheld=withheld,
            share=covered(spans, have) / total,
            seats_share=seat_chars / total,
        )
    return plans


def unrestricted_keys(shape: SessionShape, seats: Sequence[int]) -> set[int]:
    """The keys the node sealed before this rule: seats plus the goal, parents and children of each."""
    out = set(seats)
    for seat in seats:
        out |= shape.context_of(seat)
    return out


def single_seat_shares(hdag: HDAG, *, share: float = MAX_DECRYPT_SHARE) -> tuple[list[float], list[float]]:
    """For every segment, the share of the thinking an auditor holding that one seat can decrypt:
    (before: every context key, after: under the share). The issue's measure of the leak."""
    shape = SessionShape.from_hdag(hdag, [1] * len(hdag.nodes))
    spans = thinking_spans(hdag)
    total = covered(spans, range(len(spans))) or 1
    before, after = [], []
    for i in range(len(hdag.nodes)):
        before.append(covered(spans, unrestricted_keys(shape, [i])) / total)
        after.append(plan_release(shape, spans, {"a": [i]}, share=share)["a"].share)
    return before, after
