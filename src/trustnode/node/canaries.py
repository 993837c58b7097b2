"""Gold canaries in the provider's own sessions (issue 15): where they sit and what auditors see
of them. Their texts and truths come from an authorized canary operator (`node.canary_client`),
never from the provider: the provider asks for `canaries_for_real(n, rate)` texts shaped like its
real segments (`request_for`), puts them at random leaf positions (`layout`) and pins them like any
segment; it learns a canary's truth only when the operator reveals it on chain.

Each canary copies the tier and length of a real non-GOAL segment of the same trace (its *donor*,
chosen by the operator among the request's shapes), and in the published shape it takes the
donor's parents, so its auditor gets the problem statement and a parent under the same
key-release rule as a real leaf of its tier; it has no children, so no real segment's audit
depends on it. For the privacy share a canary costs what its donor costs (it is given the donor's
thinking span), so a canary seat buys exactly the context a real seat of that length would. With
canaries, node ids are renumbered per level in leaf order, so an id never tells a later-added node.
"""

from __future__ import annotations

import random

from trustnode.consensus.canaries import canaries_for_real
from trustnode.models.canary_operator import MAX_CHARS, CanaryBatch, CanaryRequest, CanaryShape
from trustnode.models.enums import Level
from trustnode.models.hdag import HDAG
from trustnode.models.jobs import CanaryRecord, SegmentRecord, TraceJob
from trustnode.node.privacy import Span, thinking_spans
from trustnode.node.structure import SegmentPlaintext, SessionShape, ShapeEdge, ShapeNode


class BadBatch(ValueError):
    """The operator's batch does not fit the request (count, slots, donors): nothing is placed."""


class Leaf:
    """One leaf of a session before pinning: a real HDAG node or a canary."""

    def __init__(self, hdag_index: int | None, canary: CanaryRecord | None, node_id: str) -> None:
        self.hdag_index, self.canary, self.node_id = hdag_index, canary, node_id


def donors(hdag: HDAG) -> list[int]:
    """The HDAG nodes a canary may imitate: every real segment but the problem statement."""
    return [i for i, node in enumerate(hdag.nodes) if node.abstraction_level is not Level.GOAL]


def request_for(
    hdag: HDAG, rate_bps: int, provider: str, *, high_stakes: bool = False
) -> CanaryRequest | None:
    """What to ask the operator for (None: this session gets no canary at this rate)."""
    real = donors(hdag)
    count = canaries_for_real(len(hdag.nodes), rate_bps) if real else 0
    if count == 0:
        return None
    shapes = [
        CanaryShape(
            tier=hdag.nodes[i].primary_auditor.tier,
            chars=min(MAX_CHARS, max(1, len(hdag.nodes[i].content))),
            level=hdag.nodes[i].abstraction_level,
        )
        for i in real
    ]
    return CanaryRequest(provider=provider, shapes=shapes, count=count, high_stakes=high_stakes)


def check_batch(batch: CanaryBatch, req: CanaryRequest) -> None:
    """Refuse a batch that cannot be placed as asked (a buggy or hostile operator)."""
    got = len(batch.canaries)
    if got != req.count:
        raise BadBatch(f"the operator sent {got} canaries for {req.count} asked")
    if sorted(c.slot for c in batch.canaries) != list(range(got)):
        raise BadBatch("the operator's canary slots are not 0..n-1")
    for c in batch.canaries:
        if c.source >= len(req.shapes) or c.tier is not req.shapes[c.source].tier:
            raise BadBatch(f"canary slot {c.slot} names donor {c.source}, which is not a shape of its tier")
        if not c.text.strip() or len(c.text) > 4 * MAX_CHARS:
            raise BadBatch(f"canary slot {c.slot} has an empty or oversize text")


def layout(hdag: HDAG, batch: CanaryBatch | None, *, rng: random.Random | None = None) -> list[Leaf]:
    """The session's leaves in order: real nodes in HDAG order, the operator's canaries (checked
    with `check_batch` first) at random positions."""
    rng = rng or random.SystemRandom()
    n = len(hdag.nodes)
    real = donors(hdag)
    made = sorted(batch.canaries, key=lambda c: c.slot) if batch is not None else []
    count = len(made)
    slots = set(rng.sample(range(n + count), count))
    leaves: list[Leaf] = []
    real_iter = iter(range(n))
    pending = iter(made)
    for pos in range(n + count):
        if pos in slots:
            c = next(pending)
            donor = hdag.nodes[real[c.source]]
            rec = CanaryRecord(
                index=pos,
                slot=c.slot,
                imitates=real[c.source],  # an HDAG index until the leaves are numbered below
                text=c.text,
                level=c.level if c.level is not Level.GOAL else donor.abstraction_level,
                kind=c.kind,
                auditor=c.auditor,
                summary=c.summary,
            )
            leaves.append(Leaf(None, rec, ""))
        else:
            i = next(real_iter)
            leaves.append(Leaf(i, None, hdag.nodes[i].id))
    at = {leaf.hdag_index: pos for pos, leaf in enumerate(leaves) if leaf.hdag_index is not None}
    for leaf in leaves:
        if leaf.canary is not None:
            leaf.canary = leaf.canary.model_copy(update={"imitates": at[leaf.canary.imitates]})
    if count:
        _renumber(leaves, hdag)
    return leaves


def _renumber(leaves: list[Leaf], hdag: HDAG) -> None:
    """Ids per level prefix in leaf order (G1, ST1, ST2, ...), so no id marks an inserted node."""
    seen: dict[str, int] = {}
    for leaf in leaves:
        level = (
            leaf.canary.level
            if leaf.canary is not None
            else hdag.nodes[leaf.hdag_index or 0].abstraction_level
        )
        seen[level.id_prefix] = seen.get(level.id_prefix, 0) + 1
        leaf.node_id = f"{level.id_prefix}{seen[level.id_prefix]}"


def plaintext(job: TraceJob, leaf: Leaf, index: int) -> SegmentPlaintext:
    """What segment `index` of the session contains (a canary reads like any segment)."""
    if leaf.canary is not None:
        c = leaf.canary
        return SegmentPlaintext(
            index=index, node_id=leaf.node_id, level=c.level, type=c.kind, auditor=c.auditor,
            content=c.text, summary=c.summary, domain=job.trace.domain,
        )  # fmt: skip
    assert job.hdag is not None and leaf.hdag_index is not None
    n = job.hdag.nodes[leaf.hdag_index]
    return SegmentPlaintext(
        index=index, node_id=leaf.node_id, level=n.abstraction_level, type=n.type, auditor=n.primary_auditor,
        content=n.content, summary=n.summary, domain=job.trace.domain,
    )  # fmt: skip


# -- views of a pinned job --------------------------------------------------------------------


def hdag_index(seg: SegmentRecord) -> int | None:
    """The HDAG node of a real segment (jobs pinned before canaries: its own index)."""
    if seg.canary:
        return None
    return seg.index if seg.hdag_index is None else seg.hdag_index


def canary_of(job: TraceJob) -> dict[int, CanaryRecord]:
    return {c.index: c for c in job.canaries}


def session_shape(job: TraceJob) -> SessionShape:
    """The published shape, in session indices, canaries included (see the module docstring)."""
    assert job.hdag is not None
    real = SessionShape.from_hdag(job.hdag, [1] * len(job.hdag.nodes))
    to_session = {h: s.index for s in job.segments if (h := hdag_index(s)) is not None}
    canaries = canary_of(job)
    nodes: list[ShapeNode] = []
    for seg in job.segments:
        h = hdag_index(seg)
        if h is not None:
            src = real.nodes[h]
            nodes.append(
                src.model_copy(
                    update={
                        "index": seg.index,
                        "node_id": seg.node_id,
                        "weight": seg.weight,
                        "parents": sorted(to_session[p] for p in src.parents),
                        "children": sorted(to_session[c] for c in src.children),
                    }
                )
            )
        else:
            c = canaries[seg.index]
            parents = nodes_of(real, to_session, c.imitates, job)
            nodes.append(
                ShapeNode(
                    index=seg.index, node_id=seg.node_id, level=c.level, auditor=c.auditor,
                    tier=c.auditor.tier, weight=seg.weight, parents=parents, children=[],
                )
            )  # fmt: skip
    for node in nodes:
        for p in node.parents:
            if node.index not in nodes[p].children:
                nodes[p].children = sorted([*nodes[p].children, node.index])
    edges = [
        e.model_copy(update={"source": to_session[e.source], "target": to_session[e.target]})
        for e in real.edges
    ]
    for seg in job.segments:
        if seg.canary:
            donor = canaries[seg.index].imitates
            edges += [
                ShapeEdge(
                    source=seg.index if e.source == donor else e.source,
                    target=seg.index if e.target == donor else e.target,
                    relationship=e.relationship,
                )
                for e in edges
                if donor in (e.source, e.target)
                and ({e.source, e.target} - {donor}) <= set(nodes[seg.index].parents)
            ]
    edges.sort(key=lambda e: (e.source, e.target, e.relationship.value))
    return SessionShape(nodes=nodes, edges=edges)


def nodes_of(real: SessionShape, to_session: dict[int, int], donor: int, job: TraceJob) -> list[int]:
    """The donor's parents in session indices (`donor` is a session index)."""
    seg = job.segments[donor]
    h = hdag_index(seg)
    assert h is not None, "a canary imitates a real segment"
    return sorted(to_session[p] for p in real.nodes[h].parents)


def session_spans(job: TraceJob) -> list[list[Span]]:
    """Per leaf, its thinking span for the privacy share; a canary costs its donor's."""
    assert job.hdag is not None
    spans = thinking_spans(job.hdag)
    out: list[list[Span]] = []
    canaries = canary_of(job)
    for seg in job.segments:
        h = hdag_index(seg)
        if h is None:
            donor = hdag_index(job.segments[canaries[seg.index].imitates])
            h = donor if donor is not None else 0
        out.append(spans[h])
    return out


def session_summaries(job: TraceJob) -> list[str]:
    """Per leaf, the 3-5 word summary an outline gives when its key is withheld."""
    assert job.hdag is not None
    canaries = canary_of(job)
    out = []
    for seg in job.segments:
        h = hdag_index(seg)
        out.append(canaries[seg.index].summary if h is None else job.hdag.nodes[h].summary)
    return out
