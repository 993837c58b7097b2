"""The structural auditor: DAG-MATH logical closeness and graph facts of an HDAG.

DAG-MATH calls a reasoning graph logically closed when every node except the final ones
is used by a later node (out-degree >= 1). Here the graph is the STEP/OPERATION layer of
the HDAG with edges pointing from a prerequisite to the segment that uses it; an
OPERATION counts as used by the STEP it decomposes. Facts reported: unclosed nodes,
closeness rate, #nodes, #edges, density 2E/(N(N-1)), max in/out degree, segments with no
support from the problem or an earlier segment, and definite defects (dependency cycles,
a segment that depends on one written after it).

A structural FAIL is a vote worth a slash only when the finding is that precise. Only the
definite defects vote (`VOTING_FINDINGS`); unclosed and unsupported segments are evidence,
never a vote: on the shared ProcessBench sets they fall on correct steps most of the time
(`trustnode eval --auditor structural` measures each finding's precision). With no voting
finding the auditor says so, undecided: structure never vouches for a segment.
"""

from __future__ import annotations

import re

import networkx as nx
from pydantic import BaseModel, Field

from trustnode.audit.base import undecided
from trustnode.audit.context import prerequisite_edges
from trustnode.models.audit import AuditResult, AuditTask, Evidence
from trustnode.models.enums import Level, Relationship, Verdict
from trustnode.models.hdag import HDAG

STRUCTURAL_LEVELS = (Level.STEP, Level.OPERATION)
#: Findings definite enough to vote FAIL: the graph itself is wrong, whatever the text says.
VOTING_FINDINGS = frozenset({"cycle", "forward_dependency"})
#: Findings kept as evidence only (measured far below 90% precision on ProcessBench).
EVIDENCE_FINDINGS = frozenset({"unclosed", "unsupported"})
_NUM_RE = re.compile(r"\d+(?:[.,]\d+)*")
_WORD_RE = re.compile(r"[A-Za-z]{4,}")
_STOPWORDS = frozenset(
    [
        "that",
        "this",
        "with",
        "from",
        "have",
        "there",
        "their",
        "then",
        "than",
        "they",
        "them",
        "what",
        "when",
        "which",
        "will",
        "would",
        "each",
        "into",
        "also",
        "just",
        "only",
        "some",
        "such",
        "were",
        "been",
        "more",
        "most",
        "many",
        "much",
        "very",
        "over",
        "like",
        "make",
        "made",
        "does",
    ]
)


class Finding(BaseModel):
    """One structural observation about one node."""

    kind: str = Field(description="cycle | forward_dependency | unclosed | unsupported")
    text: str


class GraphStats(BaseModel):
    """DAG-MATH graph-level statistics."""

    nodes: int
    edges: int
    density: float
    max_in_degree: int
    max_out_degree: int


class StructuralReport(BaseModel):
    """Everything the structural auditor knows about one HDAG."""

    stats: GraphStats
    final_nodes: list[str]
    unclosed: list[str]
    closeness_rate: float
    logically_closed: bool
    unsupported: list[str]
    forward_dependencies: list[tuple[str, str]]
    cyclic: list[str]

    def findings(self, node_id: str) -> list[Finding]:
        """Every structural finding about this node, voting or not."""
        out: list[Finding] = []
        if node_id in self.cyclic:
            out.append(Finding(kind="cycle", text="on a dependency cycle"))
        out += [
            Finding(kind="forward_dependency", text=f"depends on {pre}, which comes later")
            for dep, pre in self.forward_dependencies
            if dep == node_id
        ]
        if node_id in self.unclosed:
            out.append(Finding(kind="unclosed", text="unclosed: no later segment uses it"))
        if node_id in self.unsupported:
            out.append(
                Finding(
                    kind="unsupported",
                    text="unsupported: nothing in the problem or earlier segments leads to it",
                )
            )
        return out

    def defects(self, node_id: str) -> list[str]:
        """The findings that vote FAIL (empty when none does)."""
        return [f.text for f in self.findings(node_id) if f.kind in VOTING_FINDINGS]


def dependency_graph(hdag: HDAG) -> nx.DiGraph:
    """STEP/OPERATION nodes; edge u -> v when v uses u (operations feed their step)."""
    g = nx.DiGraph()
    keep = {n.id: n for n in hdag.nodes if n.abstraction_level in STRUCTURAL_LEVELS}
    for nid in keep:
        g.add_node(nid)
    for pre, dep, rel in prerequisite_edges(hdag):
        if pre not in keep or dep not in keep or pre == dep:
            continue
        if rel is Relationship.DECOMPOSES_TO:
            g.add_edge(dep, pre, relationship=rel.value)  # the part feeds the whole
        else:
            g.add_edge(pre, dep, relationship=rel.value)
    return g


def graph_stats(g: nx.DiGraph) -> GraphStats:
    n, e = g.number_of_nodes(), g.number_of_edges()
    density = (2 * e) / (n * (n - 1)) if n > 1 else 0.0
    return GraphStats(
        nodes=n,
        edges=e,
        density=density,
        max_in_degree=max((d for _, d in g.in_degree()), default=0),
        max_out_degree=max((d for _, d in g.out_degree()), default=0),
    )


def _numbers(text: str) -> set[str]:
    """Numbers as written, without separators or trailing decimal zeros ("1,200.50" -> "1200.5")."""
    out: set[str] = set()
    for m in _NUM_RE.finditer(text):
        s = m.group(0).replace(",", "")
        if "." in s:
            s = s.rstrip("0").rstrip(".")
        out.add(s or "0")
    return out


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD_RE.findall(text)} - _STOPWORDS


def analyze(hdag: HDAG) -> StructuralReport:
    """Closeness, statistics and support over the STEP/OPERATION layer."""
    g = dependency_graph(hdag)
    nodes = {n.id: n for n in hdag.nodes if n.abstraction_level in STRUCTURAL_LEVELS}
    order = sorted(nodes.values(), key=lambda n: (n.span.start, n.span.end, n.id))
    steps = [n for n in order if n.abstraction_level is Level.STEP]
    last_start = steps[-1].span.start if steps else (order[-1].span.start if order else 0)
    sinks = [n.id for n in order if g.out_degree(n.id) == 0]
    final = [nid for nid in sinks if nodes[nid].span.start >= last_start]
    if not final and order:
        final = [order[-1].id]
    unclosed = [nid for nid in sinks if nid not in final]
    rate = (len(order) - len(unclosed)) / len(order) if order else 1.0

    problem = hdag.document.problem_text
    pnums, pwords = _numbers(problem), _words(problem)
    pos = {n.id: n.span.start for n in hdag.nodes}
    support_from_earlier: set[str] = set()
    for pre, dep, rel in prerequisite_edges(hdag):
        if rel is Relationship.DECOMPOSES_TO:
            continue
        if pre in pos and dep in pos and pos[pre] < pos[dep]:
            support_from_earlier.add(dep)
    # an operation inherits the support of the step it belongs to
    for pre, dep, rel in prerequisite_edges(hdag):
        if rel is Relationship.DECOMPOSES_TO and pre in support_from_earlier and dep in nodes:
            support_from_earlier.add(dep)
    unsupported: list[str] = []
    for n in order:
        if n.id in support_from_earlier:
            continue
        nums = _numbers(n.content)
        if nums & pnums or (not nums and _words(n.content) & pwords):
            continue  # it takes a quantity (or, with no numbers, a term) from the problem
        unsupported.append(n.id)

    forward: list[tuple[str, str]] = []
    for e in hdag.edges:
        if (
            e.relationship is Relationship.DEPENDS_ON
            and e.source in nodes
            and e.target in nodes
            and pos[e.target] > pos[e.source]
        ):
            forward.append((e.source, e.target))
    cyclic: set[str] = set()
    for comp in nx.strongly_connected_components(g):
        if len(comp) > 1:
            cyclic |= comp
    return StructuralReport(
        stats=graph_stats(g),
        final_nodes=final,
        unclosed=unclosed,
        closeness_rate=rate,
        logically_closed=not unclosed,
        unsupported=unsupported,
        forward_dependencies=forward,
        cyclic=sorted(cyclic),
    )


class StructuralAuditor:
    """Judges segments of one HDAG by its structure (see module docstring)."""

    name = "structural"

    def __init__(self, hdag: HDAG) -> None:
        self.hdag = hdag
        self.report = analyze(hdag)

    def audit(self, task: AuditTask) -> AuditResult:
        if task.level not in STRUCTURAL_LEVELS:
            return undecided(self.name, f"{task.level.value} segments are outside the step graph")
        ids = {n.id for n in self.hdag.nodes}
        if task.node_id not in ids:
            return undecided(self.name, f"node {task.node_id} is not in this HDAG")
        r = self.report
        findings = r.findings(task.node_id)
        defects = [f.text for f in findings if f.kind in VOTING_FINDINGS]
        details: dict[str, object] = {
            "defects": defects,
            "findings": [f.model_dump() for f in findings],
            "closed": task.node_id not in r.unclosed,
            "final": task.node_id in r.final_nodes,
            "supported": task.node_id not in r.unsupported,
            "closeness_rate": r.closeness_rate,
            "graph": r.stats.model_dump(),
        }
        if not defects:
            return undecided(
                self.name,
                "no definite structural defect (structure alone never vouches for a segment)",
                **details,
            )
        evidence = Evidence.model_validate({"auditor": self.name, "checkable": True, "details": details})
        return AuditResult(verdict=Verdict.FAIL, decided=True, evidence=evidence)
