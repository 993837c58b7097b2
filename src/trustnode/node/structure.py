"""What is published about a session besides ciphertexts: the HDAG's shape without its text,
and the bundle (key manifest + shape) whose CID the provider posts on chain.

The public dashboard draws the HDAG from the shape; auditors find their segments' context
(problem, parents, children) in it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from trustnode.audit.context import prerequisite_edges
from trustnode.models.enums import AuditorType, Level, Relationship, Tier
from trustnode.models.hdag import HDAG
from trustnode.storage.envelopes import KeyManifest


class ShapeNode(BaseModel):
    index: int
    node_id: str
    level: Level
    auditor: AuditorType
    tier: Tier
    weight: int
    parents: list[int] = Field(default_factory=list, description="Segments this one depends on.")
    children: list[int] = Field(default_factory=list, description="Segments this one implies.")


class ShapeEdge(BaseModel):
    source: int
    target: int
    relationship: Relationship


class SessionShape(BaseModel):
    """The HDAG of a session with every piece of trace text removed."""

    nodes: list[ShapeNode]
    edges: list[ShapeEdge] = Field(default_factory=list)

    @classmethod
    def from_hdag(cls, hdag: HDAG, weights: list[int]) -> SessionShape:
        index = {n.id: i for i, n in enumerate(hdag.nodes)}
        parents: dict[int, list[int]] = {i: [] for i in range(len(hdag.nodes))}
        children: dict[int, list[int]] = {i: [] for i in range(len(hdag.nodes))}
        for pre, dep, _rel in prerequisite_edges(hdag):
            if pre in index and dep in index and pre != dep:
                if index[pre] not in parents[index[dep]]:
                    parents[index[dep]].append(index[pre])
                if index[dep] not in children[index[pre]]:
                    children[index[pre]].append(index[dep])
        nodes = [
            ShapeNode(
                index=i,
                node_id=n.id,
                level=n.abstraction_level,
                auditor=n.primary_auditor,
                tier=n.primary_auditor.tier,
                weight=weights[i],
                parents=sorted(parents[i]),
                children=sorted(children[i]),
            )
            for i, n in enumerate(hdag.nodes)
        ]
        edges = [
            ShapeEdge(source=index[e.source], target=index[e.target], relationship=e.relationship)
            for e in hdag.edges
            if e.source in index and e.target in index
        ]
        return cls(nodes=nodes, edges=edges)

    def goal_indices(self) -> list[int]:
        return [n.index for n in self.nodes if n.level == Level.GOAL]

    def context_of(self, index: int) -> set[int]:
        """Segments an auditor of `index` may read: the problem (GOAL), its parents and children."""
        node = self.nodes[index]
        ctx = set(self.goal_indices()) | set(node.parents) | set(node.children)
        ctx.discard(index)
        return ctx


class OutlineEntry(BaseModel):
    """A context segment an auditor may not decrypt, described in a few words instead."""

    index: int
    node_id: str
    summary: str = Field(description="The HDAG node's 3-5 word summary.")


class SealedOutline(BaseModel):
    """One auditor's outline of withheld context, sealed to its registered encryption key."""

    auditor: str
    sealed: str = Field(description="0x-hex sealed box of the JSON list of OutlineEntry.")


class SessionBundle(BaseModel):
    """Pinned after the draw; its CID is the `manifestCid` of `publishKeys`."""

    version: int = 1
    round: int = Field(default=0, ge=0, description="The panel these keys are for (0, or an appeal round).")
    manifest: KeyManifest
    shape: SessionShape
    outlines: list[SealedOutline] = Field(
        default_factory=list, description="Per auditor: context beyond its privacy share, as summaries."
    )

    def outline_for(self, auditor: str) -> SealedOutline | None:
        return next((o for o in self.outlines if o.auditor.lower() == auditor.lower()), None)


class SegmentPlaintext(BaseModel):
    """What one encrypted segment contains."""

    index: int
    node_id: str
    level: Level
    type: str
    auditor: AuditorType
    content: str
    summary: str = ""
    domain: str = "general"
