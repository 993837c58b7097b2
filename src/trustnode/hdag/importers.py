"""Importers: traces that arrive already split into steps.

`from_steps` (ProcessBench style) makes one node per step and `from_dagmath` reads the
DAG-MATH JSON format (`step_id`, `edge`|`thinking`, `direct_dependent_steps`,
`node`|`text`). Every node keeps `step_index`, the 0-based position of its step, so an
auditor's verdict on a node maps straight back to the original step.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from trustnode.hdag.coverage import new_node
from trustnode.hdag.ids import IdAllocator
from trustnode.hdag.offline import goal_node, link
from trustnode.hdag.text import split_units
from trustnode.hdag.validate import (
    DEFAULT_MIN_COMPLETENESS,
    HDAGValidationError,
    ValidationReport,
    validate_hdag,
)
from trustnode.models.enums import Level, Relationship, Strength
from trustnode.models.hdag import HDAG, HDAGEdge, HDAGMetadata, HDAGNode
from trustnode.models.trace import TraceDocument, TraceInput


class ImportFormatError(ValueError):
    """The input is not a trace this importer understands; the message says why."""


def _step_nodes(doc: TraceDocument) -> list[HDAGNode]:
    used = IdAllocator()
    nodes = [goal_node(doc, used)]
    text = doc.text
    for i, st in enumerate(doc.steps):
        seg = text[st.start : st.end]
        lead, trail = len(seg) - len(seg.lstrip()), len(seg.rstrip())
        nodes.append(new_node(doc, used, st.start + lead, st.start + trail, step_index=i))
    if doc.output is not None:
        o = doc.output
        for s, e in split_units(text[o.start : o.end], o.start):
            nodes.append(new_node(doc, used, s, e))
    return nodes


def _explicit_edges(nodes: list[HDAGNode], dependencies: list[list[int] | None]) -> list[HDAGEdge]:
    """Hierarchy edges plus the given step dependencies (0-based, each strictly earlier)."""
    by_step = {n.step_index: n for n in nodes if n.step_index is not None}
    goal = nodes[0].id
    latest_planning = goal
    edges: list[HDAGEdge] = []
    for n in nodes[1:]:
        if n.abstraction_level is Level.GOAL:
            edges.append(
                HDAGEdge(
                    source=n.id, target=goal, relationship=Relationship.REFINES, strength=Strength.STRONG
                )
            )
        else:
            edges.append(
                HDAGEdge(
                    source=latest_planning if n.abstraction_level not in (Level.STRATEGY,) else goal,
                    target=n.id,
                    relationship=Relationship.DECOMPOSES_TO,
                    strength=Strength.STRONG,
                    confidence=0.8,
                )
            )
        if n.step_index is not None:
            for d in dependencies[n.step_index] or []:
                edges.append(
                    HDAGEdge(
                        source=n.id,
                        target=by_step[d].id,
                        relationship=Relationship.DEPENDS_ON,
                        strength=Strength.STRONG,
                        confidence=0.95,
                    )
                )
        if n.abstraction_level in (Level.STRATEGY, Level.TACTIC):
            latest_planning = n.id
    return edges


def _check_dependencies(dependencies: list[list[int] | None], n_steps: int) -> None:
    if len(dependencies) != n_steps:
        raise ImportFormatError(f"{len(dependencies)} dependency lists for {n_steps} steps")
    for i, deps in enumerate(dependencies):
        for d in deps or []:
            if not 0 <= d < i:
                raise ImportFormatError(f"step {i} depends on step {d}, which is not an earlier step")


def from_steps(
    problem: str | TraceInput,
    steps: list[str] | None = None,
    *,
    output: str = "",
    dependencies: list[list[int] | None] | None = None,
    domain: str = "general",
    high_stakes: bool = False,
    decomposer: str = "import-steps",
    min_completeness: float = DEFAULT_MIN_COMPLETENESS,
) -> HDAG:
    """One node per pre-split step (validated). `problem` may be a whole TraceInput with steps.

    `dependencies[i]` lists the 0-based earlier steps step i builds on (None: from the
    problem); without it, dependencies come from shared quantities as offline.
    """
    return from_steps_report(
        problem,
        steps,
        output=output,
        dependencies=dependencies,
        domain=domain,
        high_stakes=high_stakes,
        decomposer=decomposer,
        min_completeness=min_completeness,
    )[0]


def from_steps_report(
    problem: str | TraceInput,
    steps: list[str] | None = None,
    *,
    output: str = "",
    dependencies: list[list[int] | None] | None = None,
    domain: str = "general",
    high_stakes: bool = False,
    decomposer: str = "import-steps",
    min_completeness: float = DEFAULT_MIN_COMPLETENESS,
) -> tuple[HDAG, ValidationReport]:
    """`from_steps` with its validation report."""
    if isinstance(problem, TraceInput):
        trace = problem
        if trace.steps is None:
            raise ImportFormatError("from_steps needs a trace given as steps, not free thinking")
    else:
        if steps is None:
            raise ImportFormatError("from_steps needs a list of steps")
        try:
            trace = TraceInput(
                problem=problem, steps=steps, output=output, domain=domain, high_stakes=high_stakes
            )
        except ValidationError as exc:
            raise ImportFormatError(f"not a valid stepped trace: {exc.errors()[0]['msg']}") from exc
    doc = trace.to_document()
    nodes = _step_nodes(doc)
    if dependencies is not None:
        _check_dependencies(dependencies, len(doc.steps))
        edges = _explicit_edges(nodes, dependencies)
    else:
        edges = link(doc, nodes)
    hdag = HDAG(document=doc, nodes=nodes, edges=edges, metadata=HDAGMetadata(decomposer=decomposer))
    hdag, report = validate_hdag(hdag, repair=True, min_completeness=min_completeness)
    if not report.ok:
        raise HDAGValidationError("imported steps did not validate", report)
    return hdag, report


# ----------------------------------------------------------------- DAG-MATH
class DagMathStep(BaseModel):
    """One DAG-MATH step; `edge`/`thinking` is the justification, `node`/`text` the assertion."""

    model_config = ConfigDict(extra="ignore")

    step_id: int
    edge: str | None = None
    thinking: str | None = None
    node: str | None = None
    text: str | None = None
    direct_dependent_steps: list[int] | None = None

    @model_validator(mode="after")
    def _has_text(self) -> DagMathStep:
        if not (self.body.strip()):
            raise ValueError(f"step {self.step_id} has no text (give 'node' or 'text')")
        return self

    @property
    def body(self) -> str:
        why = self.edge if self.edge is not None else self.thinking
        what = self.node if self.node is not None else self.text
        parts = [p.strip() for p in (why, what) if p and p.strip()]
        return "\n".join(parts)


class DagMathTrace(BaseModel):
    """A DAG-MATH record: the problem and its steps (several spellings of the fields accepted)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    problem: str = Field(min_length=1)
    steps: list[DagMathStep] = Field(min_length=1)
    output: str = ""

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            for alt in ("problem_text", "question", "problem_statement"):
                if "problem" not in data and alt in data:
                    data["problem"] = data[alt]
            for alt in ("final_answer", "answer"):
                if "output" not in data and isinstance(data.get(alt), str | int | float):
                    data["output"] = str(data[alt])
        return data


def from_dagmath(obj: Any, *, min_completeness: float = DEFAULT_MIN_COMPLETENESS) -> HDAG:
    """HDAG from a DAG-MATH JSON object (dict with problem and steps)."""
    return from_dagmath_report(obj, min_completeness=min_completeness)[0]


def from_dagmath_report(
    obj: Any, *, min_completeness: float = DEFAULT_MIN_COMPLETENESS
) -> tuple[HDAG, ValidationReport]:
    try:
        rec = DagMathTrace.model_validate(obj)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ImportFormatError(f"not a DAG-MATH trace: {where}: {first['msg']}") from exc
    ids = [s.step_id for s in rec.steps]
    if any(b <= a for a, b in zip(ids, ids[1:], strict=False)):
        raise ImportFormatError("DAG-MATH step_id values must be strictly increasing")
    index = {sid: i for i, sid in enumerate(ids)}
    deps: list[list[int] | None] = []
    for s in rec.steps:
        if s.direct_dependent_steps is None:
            deps.append(None)
            continue
        mapped: list[int] = []
        for d in s.direct_dependent_steps:
            if d not in index:
                raise ImportFormatError(f"step {s.step_id} depends on unknown step_id {d}")
            if d >= s.step_id:
                raise ImportFormatError(f"step {s.step_id} depends on step {d}, which is not earlier")
            mapped.append(index[d])
        deps.append(mapped)
    return from_steps_report(
        rec.problem,
        [s.body for s in rec.steps],
        output=rec.output,
        dependencies=deps,
        decomposer="import-dagmath",
        min_completeness=min_completeness,
    )


# ----------------------------------------------------------------- input sniffing
def parse_trace_input(obj: Any) -> tuple[str, TraceInput | DagMathTrace]:
    """Recognise a TraceInput, a ProcessBench-style record or a DAG-MATH object.

    Returns ("trace", TraceInput) or ("dagmath", DagMathTrace); raises ImportFormatError.
    """
    if isinstance(obj, list):
        raise ImportFormatError("expected a JSON object with a problem; got a list")
    if not isinstance(obj, dict):
        raise ImportFormatError(f"expected a JSON object, got {type(obj).__name__}")
    steps = obj.get("steps")
    if isinstance(steps, list) and steps and all(isinstance(s, dict) for s in steps):
        try:
            return "dagmath", DagMathTrace.model_validate(obj)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ImportFormatError(
                f"not a DAG-MATH trace: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
            ) from exc
    fields = {k: obj[k] for k in TraceInput.model_fields if k in obj}
    if "output" not in fields:
        for alt in ("final_answer", "answer"):
            if isinstance(obj.get(alt), str):
                fields["output"] = obj[alt]
                break
    try:
        return "trace", TraceInput.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "record"
        raise ImportFormatError(f"not a trace: {where}: {first['msg']}") from exc
