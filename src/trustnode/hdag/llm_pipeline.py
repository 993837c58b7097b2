"""The LLM decomposer: the paper's five steps as separate calls, or one structured call.

The model never gives offsets: it quotes text and names the paragraph it is in, and we
anchor the quote ourselves (falling back to validation's re-anchoring, which drops what
is not in the trace). Long traces are cut into chunks of whole paragraphs with stable
ids (P1, P2 ... or P3.1, P3.2 when one paragraph alone is too long), never truncated;
later chunks see earlier segments' ids and summaries so edges can cross chunks.
Everything ends in `validate_hdag`, whose repairs are recorded in the metadata.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from importlib import resources
from string import Template
from typing import Any, Literal

from trustnode.hdag import rules
from trustnode.hdag.llm_schemas import (
    AuditorsAnswer,
    EdgeItem,
    GraphAnswer,
    LevelBlock,
    LevelsAnswer,
    NodeItem,
    RelationsAnswer,
    SegmentItem,
    SegmentsAnswer,
)
from trustnode.hdag.offline import goal_node
from trustnode.hdag.text import paragraphs, split_units
from trustnode.hdag.validate import (
    DEFAULT_MIN_COMPLETENESS,
    IdAllocator,
    ValidationReport,
    anchor,
    completeness,
    validate_hdag,
)
from trustnode.llm.client import LLMClient
from trustnode.llm.errors import LLMInvalidOutputError
from trustnode.models.enums import Level
from trustnode.models.hdag import HDAG, HDAGEdge, HDAGMetadata, HDAGNode
from trustnode.models.trace import TextSpan, TraceDocument, TraceInput

LLMMode = Literal["llm-five-step", "llm-single"]
_ID = re.compile(r"^(G|S|T|ST|O)\d+$")
DEFAULT_CHUNK_CHARS = 6000
EARLIER_LIMIT = 150
CHARS_PER_ANSWER_TOKEN = 1.0
"""An answer copies its chunk's text plus JSON fields per segment: about one answer token
per character of trace. A chunk is cut so that its answer fits in the client's max_tokens."""


def _template(name: str) -> Template:
    return Template(
        resources.files("trustnode.hdag").joinpath("prompts", name).read_text(encoding="utf-8").strip()
    )


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


_OUTPUT_ATTR = ' part="final output"'


def _render_paragraphs(doc: TraceDocument, paras: list[Paragraph]) -> str:
    return "\n".join(
        f'<paragraph id="{p.pid}"{_OUTPUT_ATTR if p.output else ""}>\n{doc.text[p.start : p.end]}\n</paragraph>'
        for p in paras
    )


def _dump(items: list[Any]) -> str:
    return json.dumps(items, ensure_ascii=False, indent=1)


class LLMDecomposer:
    """Runs the five-step or single-call pipeline through one `LLMClient`."""

    def __init__(
        self,
        client: LLMClient,
        *,
        chunk_chars: int = DEFAULT_CHUNK_CHARS,
        min_completeness: float = DEFAULT_MIN_COMPLETENESS,
    ) -> None:
        self.client = client
        self.chunk_chars = max(
            200, min(chunk_chars, int(client.settings.max_tokens * CHARS_PER_ANSWER_TOKEN))
        )
        self.min_completeness = min_completeness
        self.system = _template("system.md").template

    # ----------------------------------------------------------------- plumbing
    def _ask(
        self,
        task: str,
        schema: type[Any],
        name: str,
        trace_id: str,
        st: _State | None = None,
        rules_answer: Callable[[], Any] | None = None,
    ) -> Any:
        """One call. When the model gives no valid answer even after the bounded repair and
        `rules_answer` is given, the offline rules answer that step instead, and the
        substitution is recorded in the HDAG's metadata; outages and refusals still raise,
        and so does a decomposition in which no call at all got a valid answer."""
        messages = [{"role": "system", "content": self.system}, {"role": "user", "content": task}]
        try:
            answer = self.client.complete_json(messages, schema, trace_id=trace_id, name=name)
        except LLMInvalidOutputError as exc:
            if rules_answer is None or st is None:
                raise
            st.invalid = exc
            st.notes.append(f"{name}: the model gave no valid answer in {exc.attempts} tries; rules used")
            return rules_answer()
        if st is not None:
            st.valid_answers += 1
        return answer

    def run(
        self, trace: TraceInput | TraceDocument, mode: LLMMode, *, trace_id: str | None = None
    ) -> tuple[HDAG, ValidationReport]:
        """The model's HDAG after validation and its repairs."""
        return validate_hdag(
            self.draft(trace, mode, trace_id=trace_id), repair=True, min_completeness=self.min_completeness
        )

    def draft(self, trace: TraceInput | TraceDocument, mode: LLMMode, *, trace_id: str | None = None) -> HDAG:
        """The model's HDAG before validation (unrepaired: spans may not match, gaps remain)."""
        doc = trace.to_document() if isinstance(trace, TraceInput) else trace
        trace_id = trace_id or "hdag-" + hashlib.sha256(doc.text.encode("utf-8")).hexdigest()[:16]
        before = self.client.usage(trace_id)
        state = _State(doc, self.chunk_chars)
        if mode == "llm-single":
            self._single(state, trace_id)
        elif mode == "llm-five-step":
            self._five_step(state, trace_id)
        else:
            raise ValueError(f"unknown LLM decomposition mode {mode!r}")
        if state.invalid is not None and state.valid_answers == 0:
            # every step fell to the rules: that is the offline decomposer, which a
            # provider uses only when configured to (decomposer.offline_fallback)
            raise state.invalid
        after = self.client.usage(trace_id)
        metadata = HDAGMetadata(
            decomposer=mode,
            model=self.client.model,
            llm_calls=after.calls - before.calls,
            prompt_tokens=after.prompt_tokens - before.prompt_tokens,
            completion_tokens=after.completion_tokens - before.completion_tokens,
            repairs=state.notes,
        )
        return HDAG.model_construct(document=doc, nodes=state.nodes(), edges=state.edges, metadata=metadata)

    # ----------------------------------------------------------------- single call
    def _single(self, st: _State, trace_id: str) -> None:
        tpl = _template("single.md")
        for chunk in st.chunks:
            task = tpl.substitute(
                problem=st.doc.problem_text,
                earlier=_dump(st.earlier()),
                paragraphs=_render_paragraphs(st.doc, chunk),
                first_ids=st.first_ids(),
            )
            answer: GraphAnswer = self._ask(
                task, GraphAnswer, "hdag_single", trace_id, st, partial(st.rules_graph, chunk)
            )
            mapping = st.add_items(answer.nodes, chunk)
            st.add_edges(answer.edges, mapping)

    # ----------------------------------------------------------------- five steps
    def _parallel(self, fn: Callable[[Any], Any], items: list[Any]) -> list[Any]:
        """Run one call per chunk concurrently (bounded by the client's concurrency); results in order."""
        workers = max(1, min(len(items), self.client.settings.concurrency))
        if workers == 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hdag-llm") as pool:
            return list(pool.map(fn, items))

    def _five_step(self, st: _State, trace_id: str) -> None:
        levels_tpl, seg_tpl = _template("levels.md"), _template("segment.md")
        rel_tpl, aud_tpl, ref_tpl = (
            _template("relations.md"),
            _template("auditors.md"),
            _template("refine.md"),
        )
        problem = st.doc.problem_text
        first_ids = st.first_ids()

        def levels_and_segments(chunk: list[Paragraph]) -> SegmentsAnswer:
            levels: LevelsAnswer = self._ask(
                levels_tpl.substitute(problem=problem, paragraphs=_render_paragraphs(st.doc, chunk)),
                LevelsAnswer,
                "hdag_levels",
                trace_id,
                st,
                lambda: st.rules_levels(chunk),
            )
            blocks = [b.model_dump(mode="json") for b in levels.blocks]
            answer: SegmentsAnswer = self._ask(
                seg_tpl.substitute(problem=problem, blocks=_dump(blocks), first_ids=first_ids),
                SegmentsAnswer,
                "hdag_segments",
                trace_id,
                st,
                lambda: SegmentsAnswer(segments=list(st.rules_graph(chunk).nodes)),
            )
            return answer

        chunk_ids: list[list[str]] = []
        for chunk, segs in zip(st.chunks, self._parallel(levels_and_segments, st.chunks), strict=True):
            mapping = st.add_items(segs.segments, chunk)  # ids are assigned here, in chunk order
            chunk_ids.append(list(dict.fromkeys(v for k, v in mapping.items() if k != "G1")))

        rel_prompts = [
            rel_tpl.substitute(
                problem=problem, earlier=_dump(st.earlier(before=ids)), segments=_dump(st.describe(ids))
            )
            for ids in chunk_ids
        ]
        for rel in self._parallel(
            lambda t: self._ask(
                t, RelationsAnswer, "hdag_relations", trace_id, st, lambda: RelationsAnswer(edges=[])
            ),
            rel_prompts,
        ):
            st.add_edges(rel.edges, {})

        stakes = (
            "; this trace is flagged high-stakes, so route hedged, clinical or ethical segments to T_Human"
            if st.doc.high_stakes
            else ""
        )
        aud_prompts = [
            aud_tpl.substitute(segments=_dump(st.describe(ids)), stakes=stakes) for ids in chunk_ids
        ]
        for aud in self._parallel(
            lambda t: self._ask(
                t, AuditorsAnswer, "hdag_auditors", trace_id, st, lambda: AuditorsAnswer(assignments=[])
            ),
            aud_prompts,
        ):
            st.assign(aud)
        st.route_unassigned()

        _, draft = validate_hdag(
            HDAG.model_construct(
                document=st.doc, nodes=st.nodes(), edges=st.edges, metadata=HDAGMetadata(decomposer="draft")
            ),
            repair=False,
        )
        jobs: list[tuple[int, list[str], str]] = []
        for k, ids in enumerate(chunk_ids):
            live = [i for i in ids if i in st.items]
            if not live:
                continue
            issues = [
                f"{c.name}: {c.detail}"
                + (f" ({', '.join(o for o in c.offenders if o in live)})" if c.offenders else "")
                for c in draft.checks
                if not c.passed and (not c.offenders or any(o in live for o in c.offenders))
            ]
            prompt = ref_tpl.substitute(
                problem=problem,
                earlier=_dump(st.earlier(before=live)),
                nodes=_dump(st.describe(live, full=True)),
                edges=_dump([e.model_dump(mode="json", by_alias=True) for e in st.edges_touching(live)]),
                issues="\n".join(issues) or "none",
            )
            jobs.append((k, live, prompt))
        refined = self._parallel(
            lambda job: self._ask(job[2], GraphAnswer, "hdag_refine", trace_id, st, lambda: None), jobs
        )
        for (k, live, _), answer in zip(jobs, refined, strict=True):
            if answer is not None:  # None: no valid refinement, the drafted chunk stays
                st.replace_chunk(live, answer, st.chunks[k])


class _State:
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
            m = _ID.match(local)
            fits = (
                m is not None
                and m.group(1) == item.level.id_prefix
                and local not in others
                and local not in self.items
            )
            nid = local if fits else self.ids.next(item.level)
            if fits:
                self.ids.add(nid)
            mapping[local] = nid
            self.items[nid] = self._make_node(item, nid, chunk)
            self.order.append(nid)
        self.order.sort(key=lambda i: self.items[i].span.start)
        self.add_edges(answer.edges, mapping)


def model_completeness(draft: HDAG) -> float:
    """Share of the thinking that the model's own segments cover, exactly quoted, before
    validation fills gaps (the goal node, ours, is not counted)."""
    doc = draft.document
    spans = [
        n.span
        for n in draft.nodes
        if n.abstraction_level is not Level.GOAL and doc.text[n.span.start : n.span.end] == n.content
    ]
    return completeness(doc, spans)


def llm_decompose(
    trace: TraceInput | TraceDocument,
    client: LLMClient,
    *,
    mode: LLMMode = "llm-five-step",
    chunk_chars: int = DEFAULT_CHUNK_CHARS,
    min_completeness: float = DEFAULT_MIN_COMPLETENESS,
    trace_id: str | None = None,
) -> tuple[HDAG, ValidationReport]:
    """Decompose with an LLM (five separate calls per chunk, or one call per chunk)."""
    return LLMDecomposer(client, chunk_chars=chunk_chars, min_completeness=min_completeness).run(
        trace, mode, trace_id=trace_id
    )


__all__ = [
    "LLMDecomposer",
    "LLMMode",
    "Paragraph",
    "chunk_paragraphs",
    "document_paragraphs",
    "llm_decompose",
    "model_completeness",
]
