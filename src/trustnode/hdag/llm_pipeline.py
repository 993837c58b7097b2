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
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from importlib import resources
from string import Template
from typing import Any, Literal

from trustnode.hdag.coverage import completeness
from trustnode.hdag.llm_schemas import (
    AuditorsAnswer,
    GraphAnswer,
    LevelsAnswer,
    RelationsAnswer,
    SegmentsAnswer,
)
from trustnode.hdag.llm_state import (
    DEFAULT_CHUNK_CHARS,
    DraftState,
    Paragraph,
    chunk_paragraphs,
    document_paragraphs,
)
from trustnode.hdag.spans import MAX_SEGMENT_SHARE
from trustnode.hdag.validate import (
    DEFAULT_MIN_COMPLETENESS,
    ValidationReport,
    validate_hdag,
)
from trustnode.llm.client import LLMClient
from trustnode.llm.errors import LLMInvalidOutputError
from trustnode.models.enums import Level
from trustnode.models.hdag import HDAG, HDAGMetadata
from trustnode.models.trace import TraceDocument, TraceInput

LLMMode = Literal["llm-five-step", "llm-single"]
CHARS_PER_ANSWER_TOKEN = 1.0
"""An answer copies its chunk's text plus JSON fields per segment: about one answer token
per character of trace. A chunk is cut so that its answer fits in the client's max_tokens."""


def _template(name: str) -> Template:
    return Template(
        resources.files("trustnode.hdag").joinpath("prompts", name).read_text(encoding="utf-8").strip()
    )


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
        max_share: float = MAX_SEGMENT_SHARE,
    ) -> None:
        self.client = client
        self.max_share = max_share
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
        st: DraftState | None = None,
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
            self.draft(trace, mode, trace_id=trace_id),
            repair=True,
            min_completeness=self.min_completeness,
            max_share=self.max_share,
        )

    def draft(self, trace: TraceInput | TraceDocument, mode: LLMMode, *, trace_id: str | None = None) -> HDAG:
        """The model's HDAG before validation (unrepaired: spans may not match, gaps remain)."""
        doc = trace.to_document() if isinstance(trace, TraceInput) else trace
        trace_id = trace_id or "hdag-" + hashlib.sha256(doc.text.encode("utf-8")).hexdigest()[:16]
        before = self.client.usage(trace_id)
        state = DraftState(doc, self.chunk_chars)
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
    def _single(self, st: DraftState, trace_id: str) -> None:
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

    def _five_step(self, st: DraftState, trace_id: str) -> None:
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
    max_share: float = MAX_SEGMENT_SHARE,
) -> tuple[HDAG, ValidationReport]:
    """Decompose with an LLM (five separate calls per chunk, or one call per chunk)."""
    dec = LLMDecomposer(
        client, chunk_chars=chunk_chars, min_completeness=min_completeness, max_share=max_share
    )
    return dec.run(trace, mode, trace_id=trace_id)


__all__ = [
    "LLMDecomposer",
    "LLMMode",
    "Paragraph",
    "chunk_paragraphs",
    "document_paragraphs",
    "llm_decompose",
    "model_completeness",
]
