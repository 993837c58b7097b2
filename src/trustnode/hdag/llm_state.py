"""The HDAG an LLM decomposition is building: paragraphs, chunks, items, edges, notes.

`llm_pipeline.LLMDecomposer` drives the model; this module keeps what it has answered so
far, anchors the model's quotes in the trace, and answers a step by the offline rules
when the model never gives a valid answer for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trustnode.hdag import rules
from trustnode.hdag.ids import IdAllocator, id_prefix
from trustnode.hdag.llm_schemas import (
    AuditorsAnswer,
    EdgeItem,
    GraphAnswer,
    LevelBlock,
    LevelsAnswer,
    NodeItem,
    SegmentItem,
)
from trustnode.hdag.offline import goal_node
from trustnode.hdag.spans import anchor
from trustnode.hdag.text import paragraphs, split_units
from trustnode.llm.errors import LLMInvalidOutputError
from trustnode.models.enums import Level
from trustnode.models.hdag import HDAGEdge, HDAGNode
from trustnode.models.trace import TextSpan, TraceDocument

DEFAULT_CHUNK_CHARS = 6000
EARLIER_LIMIT = 150


@dataclass(frozen=True)
class Paragraph:
    """A stable unit of chunking: its prompt id and where it lies in the document."""

    pid: str
    start: int
    end: int
    output: bool = False


def document_paragraphs(doc: TraceDocument, max_chars: int = DEFAULT_CHUNK_CHARS) -> list[Paragraph]:
    """Paragraphs of thinking then output; one per step for pre-split traces; over-long ones split by unit."""
    text = doc.text
    raw: list[tuple[int, int, bool]] = []
    if doc.steps:
        for st in doc.steps:
            seg = text[st.start : st.end]
            lead, trail = len(seg) - len(seg.lstrip()), len(seg.rstrip())
            if trail > lead:
                raw.append((st.start + lead, st.start + trail, False))
    else:
        th = doc.thinking
        raw.extend((s, e, False) for s, e in paragraphs(text[th.start : th.end], th.start))
    if doc.output is not None:
        o = doc.output
        raw.extend((s, e, True) for s, e in paragraphs(text[o.start : o.end], o.start))
    out: list[Paragraph] = []
    for i, (s, e, is_out) in enumerate(raw, start=1):
        if e - s <= max_chars:
            out.append(Paragraph(f"P{i}", s, e, is_out))
            continue
        parts: list[tuple[int, int]] = []
        for us, ue in split_units(text[s:e], s):
            if parts and ue - parts[-1][0] <= max_chars:
                parts[-1] = (parts[-1][0], ue)
            else:
                parts.append((us, ue))
        out.extend(Paragraph(f"P{i}.{k}", ps, pe, is_out) for k, (ps, pe) in enumerate(parts, start=1))
    return out


def chunk_paragraphs(paras: list[Paragraph], max_chars: int = DEFAULT_CHUNK_CHARS) -> list[list[Paragraph]]:
    """Greedy groups of consecutive paragraphs of at most `max_chars` characters each."""
    chunks: list[list[Paragraph]] = []
    size = 0
    for p in paras:
        n = p.end - p.start
        if chunks and size + n <= max_chars:
            chunks[-1].append(p)
            size += n
        else:
            chunks.append([p])
            size = n
    return chunks


class DraftState:
    """The HDAG under construction: items by global id, edges, and notes for the metadata."""

    def __init__(self, doc: TraceDocument, chunk_chars: int) -> None:
        self.doc = doc
        self.paras = document_paragraphs(doc, chunk_chars)
        self.by_pid = {p.pid: p for p in self.paras}
        self.chunks = chunk_paragraphs(self.paras, chunk_chars)
        self.ids = IdAllocator()
        self.goal = goal_node(doc, self.ids)
        self.items: dict[str, HDAGNode] = {}
        self.order: list[str] = []
        self.edges: list[HDAGEdge] = []
        self.notes: list[str] = []
        self.valid_answers = 0  # calls the model answered validly
        self.invalid: LLMInvalidOutputError | None = None  # the last call it never did
        self._assigned: set[str] = set()

    def rules_levels(self, chunk: list[Paragraph]) -> LevelsAnswer:
        """Step 1 by the offline rules: each paragraph one block at its rule level."""
        return LevelsAnswer(
            blocks=[
                LevelBlock(
                    level=rules.classify(self.doc.text[p.start : p.end]).level,
                    paragraph=p.pid,
                    text=self.doc.text[p.start : p.end],
                )
                for p in chunk
            ]
        )

    def rules_graph(self, chunk: list[Paragraph]) -> GraphAnswer:
        """A chunk's nodes by the offline rules (one per unit of text), without edges:
        validation links them and covers what is left."""
        nodes: list[NodeItem] = []
        for p in chunk:
            for k, (s, e) in enumerate(split_units(self.doc.text[p.start : p.end], p.start), start=1):
                text = self.doc.text[s:e]
                cls = rules.classify(text, high_stakes=self.doc.high_stakes)
                nodes.append(
                    NodeItem(
                        id=f"R{p.pid}.{k}",
                        level=cls.level,
                        paragraph=p.pid,
                        text=text,
                        type=cls.type,
                        summary=rules.summarize(text, cls.type),
                        complexity=cls.complexity,
                        primary_auditor=cls.primary,
                        secondary_auditors=list(cls.secondary),
                    )
                )
        return GraphAnswer(nodes=nodes, edges=[])

    def first_ids(self) -> str:
        return ", ".join(self.ids.peek(lvl) for lvl in Level)

    def nodes(self) -> list[HDAGNode]:
        return [self.goal, *(self.items[i] for i in self.order if i in self.items)]

    def earlier(self, before: list[str] | None = None) -> list[dict[str, str]]:
        """Ids and summaries of the segments before a chunk, as context for cross-chunk edges.

        Planning-level segments are always listed; of the STEP/OPERATION ones only the
        last EARLIER_LIMIT, so the context of a very long trace stays bounded (the trace
        text itself is never cut: every paragraph is sent in its own chunk)."""
        stop = set(before or [])
        prior: list[HDAGNode] = []
        for i in self.order:
            if i in stop:
                break
            n = self.items.get(i)
            if n is not None:
                prior.append(n)
        detail = [n for n in prior if n.abstraction_level in (Level.STEP, Level.OPERATION)]
        keep = {n.id for n in detail[-EARLIER_LIMIT:]}
        out = [{"id": self.goal.id, "level": "GOAL", "summary": self.goal.summary}]
        out += [
            {"id": n.id, "level": n.abstraction_level.value, "summary": n.summary}
            for n in prior
            if n.id in keep or n.abstraction_level not in (Level.STEP, Level.OPERATION)
        ]
        return out

    def describe(self, ids: list[str], full: bool = False) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for i in ids:
            n = self.items.get(i)
            if n is None:
                continue
            d: dict[str, Any] = {
                "id": n.id,
                "level": n.abstraction_level.value,
                "paragraph": self._pid_of(n),
                "text": n.content,
                "type": n.type,
                "summary": n.summary,
            }
            if full:
                d.update(
                    primary_auditor=n.primary_auditor.value,
                    secondary_auditors=[a.value for a in n.secondary_auditors],
                    complexity=n.complexity.value,
                )
            out.append(d)
        return out

    def _pid_of(self, n: HDAGNode) -> str:
        for p in self.paras:
            if p.start <= n.span.start < p.end:
                return p.pid
        return self.paras[0].pid if self.paras else "P1"

    def edges_touching(self, ids: list[str]) -> list[HDAGEdge]:
        s = set(ids)
        return [e for e in self.edges if e.source in s or e.target in s]

    def _make_node(self, item: SegmentItem, nid: str, chunk: list[Paragraph]) -> HDAGNode:
        para = self.by_pid.get(item.paragraph.strip())
        region = (para.start, para.end) if para else (chunk[0].start, chunk[-1].end)
        text = self.doc.text
        found = anchor(text[region[0] : region[1]], item.text)
        if found is not None:
            s, e = found[0] + region[0], found[1] + region[0]
            span, content = TextSpan(start=s, end=e), text[s:e]
        else:  # left for validation to re-anchor elsewhere or drop
            span, content = TextSpan(start=region[0], end=region[1]), item.text
        if isinstance(item, NodeItem):
            primary, secondary = item.primary_auditor, list(item.secondary_auditors)
        else:
            primary = rules.classify(content, high_stakes=self.doc.high_stakes).primary
            secondary = []
        return HDAGNode(
            id=nid,
            content=content,
            span=span,
            abstraction_level=item.level,
            type=item.type or "inference",
            summary=item.summary or rules.summarize(content, item.type or "inference"),
            primary_auditor=primary,
            secondary_auditors=[a for a in secondary if a is not primary],
            complexity=item.complexity,
            step_index=self.doc.step_index_at(span.start) if self.doc.steps else None,
        )

    def add_items(self, items: list[SegmentItem] | list[NodeItem], chunk: list[Paragraph]) -> dict[str, str]:
        """Add the model's segments under fresh global ids; returns local id -> global id."""
        mapping: dict[str, str] = {"G1": self.goal.id}
        for item in items:
            if item.id.strip() == "G1":
                continue  # the problem statement is ours already
            nid = self.ids.next(item.level)
            mapping.setdefault(item.id.strip(), nid)
            node = self._make_node(item, nid, chunk)
            self.items[nid] = node
            self.order.append(nid)
        self.order.sort(key=lambda i: self.items[i].span.start if i in self.items else -1)
        return mapping

    def add_edges(self, edges: list[EdgeItem], mapping: dict[str, str]) -> None:
        for e in edges:
            src, dst = (
                mapping.get(e.source.strip(), e.source.strip()),
                mapping.get(e.target.strip(), e.target.strip()),
            )
            self.edges.append(
                HDAGEdge(
                    source=src,
                    target=dst,
                    relationship=e.relationship,
                    strength=e.strength,
                    confidence=e.confidence,
                )
            )

    def assign(self, answer: AuditorsAnswer) -> None:
        for a in answer.assignments:
            n = self.items.get(a.id.strip())
            if n is None:
                self.notes.append(f"step 4 assigned auditors to unknown segment {a.id}")
                continue
            n.primary_auditor = a.primary_auditor
            n.secondary_auditors = [x for x in a.secondary_auditors if x is not a.primary_auditor]
            n.complexity = a.complexity
            self._assigned.add(n.id)

    def route_unassigned(self) -> None:
        missing = [i for i in self.order if i in self.items and i not in self._assigned]
        for i in missing:
            n = self.items[i]
            cls = rules.classify(n.content, high_stakes=self.doc.high_stakes)
            n.primary_auditor = cls.primary
            n.secondary_auditors = list(cls.secondary)
        if missing:
            self.notes.append(f"auditors of {', '.join(missing)} set by rules (missing from step 4)")

    def replace_chunk(self, ids: list[str], answer: GraphAnswer, chunk: list[Paragraph]) -> None:
        """Swap a chunk's nodes and edges for the refined ones."""
        old = set(ids)
        others = {i for i in self.items if i not in old}
        self.edges = [e for e in self.edges if e.source not in old and e.target not in old]
        for i in ids:
            self.items.pop(i, None)
        self.order = [i for i in self.order if i not in old]
        mapping: dict[str, str] = {"G1": self.goal.id}
        for item in answer.nodes:
            local = item.id.strip()
            if local == "G1":
                continue
            fits = (
                id_prefix(local) == item.level.id_prefix and local not in others and local not in self.items
            )
            nid = local if fits else self.ids.next(item.level)
            if fits:
                self.ids.add(nid)
            mapping[local] = nid
            self.items[nid] = self._make_node(item, nid, chunk)
            self.order.append(nid)
        self.order.sort(key=lambda i: self.items[i].span.start)
        self.add_edges(answer.edges, mapping)
