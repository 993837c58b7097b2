"""The hierarchical DAG (HDAG) of a reasoning trace (SPEC 2).

Nodes are exact spans of the trace document; edges carry a typed relationship. The
model only describes shape; checks that need the source text or graph algorithms live in
`trustnode.hdag.validate`.

Edge direction reads as the relationship's sentence, like the TRUST paper: an edge
`from: A, to: B, relationship: R` says "A R B". So `decomposes_to` and `enables` run from
the prerequisite to what it leads to (G1 decomposes_to S1), while `depends_on`,
`validates`, `exemplifies`, `refines` and `contradicts` run from the dependent segment to
the one it is about (ST2 depends_on ST1). `HDAGEdge.prerequisite` / `.dependent`
normalise this; acyclicity and "reachable from a GOAL" are checked on that normalised
flow (prerequisite -> dependent).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from trustnode.models.enums import AuditorType, Complexity, Level, Relationship, Strength
from trustnode.models.trace import TextSpan, TraceDocument


class HDAGNode(BaseModel):
    """One auditable segment."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^(G|S|T|ST|O)\d+$", description="Level prefix and number: G1, S2, ST3, O4 ...")
    content: str = Field(description="Exact text of the span in the trace document.")
    span: TextSpan
    abstraction_level: Level
    type: str = Field(default="inference", description="e.g. objective_statement, calculation.")
    summary: str = Field(default="", description="3-5 words.")
    primary_auditor: AuditorType
    secondary_auditors: list[AuditorType] = Field(default_factory=list)
    complexity: Complexity = Complexity.MEDIUM
    step_index: int | None = Field(
        default=None, description="Index of the original pre-split step this node came from."
    )


class HDAGEdge(BaseModel):
    """A typed, directed relationship between two nodes."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    source: str = Field(alias="from")
    target: str = Field(alias="to")
    relationship: Relationship
    strength: Strength = Strength.MEDIUM
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)

    @property
    def forward(self) -> bool:
        """True when the edge already points from prerequisite to dependent."""
        return self.relationship in FORWARD_RELATIONSHIPS

    @property
    def prerequisite(self) -> str:
        return self.source if self.forward else self.target

    @property
    def dependent(self) -> str:
        return self.target if self.forward else self.source


#: Relationships whose edge runs from the prerequisite to the dependent segment.
FORWARD_RELATIONSHIPS = frozenset({Relationship.DECOMPOSES_TO, Relationship.ENABLES})


class VerificationFlow(BaseModel):
    """The order in which segments can be audited."""

    entry_points: list[str] = Field(default_factory=list)
    critical_path: list[str] = Field(default_factory=list)
    parallel_tracks: list[list[str]] = Field(default_factory=list)
    exit_points: list[str] = Field(default_factory=list)


class HDAGMetadata(BaseModel):
    """Where the HDAG came from and what it cost."""

    decomposer: str = Field(
        description="offline | llm-five-step | llm-single | import-steps | import-dagmath"
    )
    model: str | None = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    repairs: list[str] = Field(default_factory=list, description="Repairs applied by validation.")


class HDAG(BaseModel):
    """A validated-or-not hierarchical DAG over one trace document."""

    model_config = ConfigDict(extra="forbid")

    document: TraceDocument
    nodes: list[HDAGNode]
    edges: list[HDAGEdge] = Field(default_factory=list)
    flow: VerificationFlow = Field(default_factory=VerificationFlow)
    metadata: HDAGMetadata

    @field_validator("nodes")
    @classmethod
    def _unique_ids(cls, nodes: list[HDAGNode]) -> list[HDAGNode]:
        seen: set[str] = set()
        for n in nodes:
            if n.id in seen:
                raise ValueError(f"duplicate node id {n.id}")
            seen.add(n.id)
        return nodes

    def node(self, node_id: str) -> HDAGNode:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def parents(self, node_id: str) -> list[str]:
        """Prerequisites of a node (direction normalised, see the module docstring)."""
        return [e.prerequisite for e in self.edges if e.dependent == node_id]

    def children(self, node_id: str) -> list[str]:
        """Segments that build on a node (direction normalised)."""
        return [e.dependent for e in self.edges if e.prerequisite == node_id]


class CheckResult(BaseModel):
    """One named check; `offenders` are node ids or `from->to` edge labels."""

    name: str
    passed: bool
    detail: str = ""
    offenders: list[str] = Field(default_factory=list)


class HDAGStats(BaseModel):
    nodes: int
    edges: int
    by_level: dict[str, int]
    by_auditor: dict[str, int]


class ValidationReport(BaseModel):
    """What validation found (after repairs, when repairing) and what it changed."""

    ok: bool
    checks: list[CheckResult]
    completeness: float
    min_completeness: float
    repairs: list[str] = Field(default_factory=list)
    stats: HDAGStats

    @property
    def failed(self) -> list[str]:
        return [c.name for c in self.checks if not c.passed]

    def check(self, name: str) -> CheckResult:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)
