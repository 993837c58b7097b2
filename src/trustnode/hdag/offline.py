"""The offline decomposer: a deterministic HDAG without any LLM (the default).

Units come from `text.split_units` (per pre-split step when the trace has steps, so a
node never crosses a step boundary and verdicts map back to the step index), levels and
auditors from `rules.classify`. Edges: each unit hangs under the nearest earlier unit of
a higher planning level (GOAL/STRATEGY/TACTIC) with `decomposes_to`; it `depends_on`
earlier units that produced the numbers or introduced the variables it uses, and the
previous unit when it opens with a back-reference ("so", "thus", "this") or cites
"step N". Every prerequisite precedes its dependent in the text, so the result is
acyclic and connected by construction; `validate_hdag` still runs on it.
"""

from __future__ import annotations

from trustnode.hdag import rules
from trustnode.hdag.coverage import new_node
from trustnode.hdag.ids import IdAllocator
from trustnode.hdag.spans import MAX_SEGMENT_SHARE
from trustnode.hdag.text import split_units
from trustnode.hdag.validate import (
    DEFAULT_MIN_COMPLETENESS,
    HDAGValidationError,
    ValidationReport,
    validate_hdag,
)
from trustnode.models.enums import AuditorType, Complexity, Level, Relationship, Strength
from trustnode.models.hdag import HDAG, HDAGEdge, HDAGMetadata, HDAGNode
from trustnode.models.trace import TraceDocument, TraceInput

MAX_DEPENDENCIES = 4
_PLANNING = (Level.GOAL, Level.STRATEGY, Level.TACTIC)


def goal_node(doc: TraceDocument, used: IdAllocator) -> HDAGNode:
    """G1: the problem statement, audited for interpretation (by humans when high-stakes and ambiguous)."""
    problem = doc.problem_text
    human = doc.high_stakes and rules.is_ambiguous(problem)
    used.add("G1")
    return HDAGNode(
        id="G1",
        content=problem,
        span=doc.problem,
        abstraction_level=Level.GOAL,
        type="objective_statement",
        summary=rules.summarize(problem, "objective_statement"),
        primary_auditor=AuditorType.T_HUMAN if human else AuditorType.T_LLM,
        secondary_auditors=[AuditorType.T_LLM] if human else [],
        complexity=Complexity.HIGH if human else Complexity.MEDIUM,
    )


def unit_spans(doc: TraceDocument) -> list[tuple[int, int, int | None]]:
    """(start, end, step_index) of every unit of the thinking and the output."""
    text = doc.text
    out: list[tuple[int, int, int | None]] = []
    if doc.steps:
        for i, st in enumerate(doc.steps):
            out.extend((s, e, i) for s, e in split_units(text[st.start : st.end], st.start))
    else:
        th = doc.thinking
        out.extend((s, e, None) for s, e in split_units(text[th.start : th.end], th.start))
    if doc.output is not None:
        o = doc.output
        out.extend((s, e, None) for s, e in split_units(text[o.start : o.end], o.start))
    return out


def link(doc: TraceDocument, nodes: list[HDAGNode]) -> list[HDAGEdge]:
    """Hierarchy and dependency edges over nodes in document order (nodes[0] is G1)."""
    edges: list[HDAGEdge] = []
    problem_q = rules.quantities(doc.problem_text)
    problem_numbers = problem_q.numbers | problem_q.results
    last_planning: dict[Level, str] = {Level.GOAL: nodes[0].id}
    latest_planning = nodes[0].id
    producer_result: dict[str, str] = {}
    producer_mention: dict[str, str] = {}
    var_owner: dict[str, str] = {}
    last_in_step: dict[int, str] = {}
    prev_id: str | None = None
    for n in nodes[1:]:
        lvl = n.abstraction_level
        q = rules.quantities(n.content)
        # -- hierarchy
        parent: str
        if lvl is Level.GOAL:
            parent = nodes[0].id
            edges.append(
                HDAGEdge(
                    source=n.id,
                    target=parent,
                    relationship=Relationship.REFINES,
                    strength=Strength.STRONG,
                    confidence=0.9,
                )
            )
        else:
            if lvl is Level.STRATEGY:
                parent = last_planning[Level.GOAL]
            elif lvl is Level.TACTIC:
                parent = last_planning.get(Level.STRATEGY, last_planning[Level.GOAL])
            else:
                parent = latest_planning
            edges.append(
                HDAGEdge(
                    source=parent,
                    target=n.id,
                    relationship=Relationship.DECOMPOSES_TO,
                    strength=Strength.MEDIUM if lvl is Level.OPERATION else Strength.STRONG,
                    confidence=0.8,
                )
            )
        # -- dependencies (only on earlier units, never on the hierarchy parent again)
        if lvl not in (Level.GOAL, Level.STRATEGY):
            deps: dict[str, tuple[Strength, float]] = {}

            def want(
                pid: str | None,
                strength: Strength,
                conf: float,
                deps: dict[str, tuple[Strength, float]] = deps,
                parent: str = parent,
                me: str = n.id,
            ) -> None:
                if pid is None or pid in (me, parent, nodes[0].id) or pid in deps:
                    return
                deps[pid] = (strength, conf)

            for num in sorted(q.numbers - q.results):
                if num in producer_result:
                    want(producer_result[num], Strength.STRONG, 0.8)
                elif num in producer_mention:
                    # a given restated earlier in the thinking is a weaker link than a result
                    weak = num in problem_numbers
                    want(
                        producer_mention[num],
                        Strength.WEAK if weak else Strength.MEDIUM,
                        0.5 if weak else 0.6,
                    )
            for var in sorted(q.variables - q.defines):
                want(var_owner.get(var), Strength.MEDIUM, 0.6)
            if q.backref and prev_id is not None:
                want(prev_id, Strength.MEDIUM, 0.6)
            if doc.steps:
                for ref in q.step_refs:
                    want(last_in_step.get(ref - 1), Strength.STRONG, 0.7)
            for pid, (strength, conf) in list(deps.items())[:MAX_DEPENDENCIES]:
                edges.append(
                    HDAGEdge(
                        source=n.id,
                        target=pid,
                        relationship=Relationship.DEPENDS_ON,
                        strength=strength,
                        confidence=conf,
                    )
                )
        # -- bookkeeping
        if lvl in _PLANNING:
            last_planning[lvl] = n.id
            latest_planning = n.id
        for num in q.results:
            producer_result[num] = n.id
        for num in q.numbers:
            producer_mention[num] = n.id
        for var in q.defines:
            var_owner[var] = n.id
        for var in q.variables:
            var_owner.setdefault(var, n.id)
        if n.step_index is not None:
            last_in_step[n.step_index] = n.id
        prev_id = n.id
    return edges


def build_offline(doc: TraceDocument, decomposer: str = "offline") -> HDAG:
    """The unvalidated offline HDAG of a document."""
    used = IdAllocator()
    nodes = [goal_node(doc, used)]
    for s, e, step in unit_spans(doc):
        nodes.append(new_node(doc, used, s, e, step_index=step))
    edges = link(doc, nodes)
    return HDAG(document=doc, nodes=nodes, edges=edges, metadata=HDAGMetadata(decomposer=decomposer))


def decompose_offline_report(
    trace: TraceInput | TraceDocument,
    *,
    min_completeness: float = DEFAULT_MIN_COMPLETENESS,
    max_share: float = MAX_SEGMENT_SHARE,
) -> tuple[HDAG, ValidationReport]:
    """Offline HDAG and its validation report; raises if validation fails (a decomposer bug).
    `max_share`: the privacy share no segment may exceed (see `validate_hdag`)."""
    doc = trace.to_document() if isinstance(trace, TraceInput) else trace
    hdag, report = validate_hdag(
        build_offline(doc), repair=True, min_completeness=min_completeness, max_share=max_share
    )
    if not report.ok:
        raise HDAGValidationError("offline decomposition did not validate", report)
    return hdag, report


def decompose_offline(trace: TraceInput | TraceDocument) -> HDAG:
    """Deterministic HDAG of a trace, validated."""
    return decompose_offline_report(trace)[0]
