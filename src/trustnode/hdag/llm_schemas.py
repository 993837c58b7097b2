"""Answer schemas of the LLM pipeline's calls (sent as json_schema response formats).

Kept flat and small so that modest local models can fill them. Segments quote the
trace verbatim (`text`) and name the paragraph they come from; spans are computed by us,
never trusted from the model.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from trustnode.models.enums import AuditorType, Complexity, Level, Relationship, Strength


class LevelBlock(BaseModel):
    level: Level
    paragraph: str = Field(description="Id of the paragraph the block starts in, e.g. P3.")
    text: str = Field(description="Exact text copied from the trace.")


class LevelsAnswer(BaseModel):
    """Step 1: abstraction-level blocks."""

    blocks: list[LevelBlock]


class SegmentItem(BaseModel):
    id: str = Field(description="G2.., S1.., T1.., ST1.., O1.. (prefix matches the level)")
    level: Level
    paragraph: str
    text: str = Field(description="Exact text copied from the trace.")
    type: str = "inference"
    summary: str = ""
    complexity: Complexity = Complexity.MEDIUM


class SegmentsAnswer(BaseModel):
    """Step 2: auditable segments with metadata."""

    segments: list[SegmentItem]


class EdgeItem(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    source: str = Field(alias="from")
    target: str = Field(alias="to")
    relationship: Relationship
    strength: Strength = Strength.MEDIUM
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)


class RelationsAnswer(BaseModel):
    """Step 3: typed relationships."""

    edges: list[EdgeItem]


class Assignment(BaseModel):
    id: str
    primary_auditor: AuditorType
    secondary_auditors: list[AuditorType] = Field(default_factory=list)
    complexity: Complexity = Complexity.MEDIUM


class AuditorsAnswer(BaseModel):
    """Step 4: auditor assignment."""

    assignments: list[Assignment]


class NodeItem(SegmentItem):
    primary_auditor: AuditorType
    secondary_auditors: list[AuditorType] = Field(default_factory=list)


class GraphAnswer(BaseModel):
    """Step 5 (refine) and the single-call mode: the finished nodes and edges."""

    nodes: list[NodeItem]
    edges: list[EdgeItem]
