"""A deterministic stand-in for an LLM that answers the HDAG pipeline's prompts.

Plugged into `trustnode.llm.fake_server` (`--responder trustnode.hdag.fake_responder:respond`)
it lets the five-step and single-call modes run end to end without a model: it reads the
tagged sections of each prompt and answers with what the offline rules make of them.
Tests and the benchmark use it to measure calls and tokens; it is not a decomposer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from trustnode.hdag import rules
from trustnode.hdag.ids import IdAllocator
from trustnode.hdag.offline import link
from trustnode.hdag.text import split_units
from trustnode.llm.fake_server import Reply, requested_schema_name
from trustnode.llm.probe import answers_probe
from trustnode.models.enums import Level
from trustnode.models.hdag import HDAGNode
from trustnode.models.trace import TextSpan, TraceInput

_PARA = re.compile(r'<paragraph id="([^"]+)"(?: part="final output")?>\n(.*?)\n</paragraph>', re.DOTALL)


def _tag(text: str, tag: str) -> str:
    m = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", text, re.DOTALL)
    return m.group(1) if m else ""


def task_name(request: dict[str, Any]) -> str:
    """The HDAG step the client asked for (its schema name)."""
    return requested_schema_name(request)


def _first_user(request: dict[str, Any]) -> str:
    for m in request.get("messages", []):
        if isinstance(m, dict) and m.get("role") == "user":
            return str(m.get("content", ""))
    return ""


def _units(user: str) -> list[tuple[str, str]]:
    """(paragraph id, unit text) for every unit of every paragraph in the prompt."""
    out: list[tuple[str, str]] = []
    for pid, body in _PARA.findall(user):
        out.extend((pid, body[s:e]) for s, e in split_units(body))
    return out


def _nodes_for(problem: str, items: list[tuple[str, str, Level]]) -> list[HDAGNode]:
    """HDAG nodes (G1 + items as (id, text, level)) over a pseudo document, for `link`."""
    texts = [t for _, t, _ in items] or ["(empty)"]
    doc = TraceInput(problem=problem or "(problem)", thinking="\n\n".join(texts)).to_document()
    pos = doc.thinking.start
    nodes = [
        HDAGNode(
            id="G1",
            content=doc.problem_text,
            span=doc.problem,
            abstraction_level=Level.GOAL,
            primary_auditor="T_LLM",
        )
    ]
    for nid, text, level in items:
        cls = rules.classify(text)
        nodes.append(
            HDAGNode(
                id=nid,
                content=text,
                span=TextSpan(start=pos, end=pos + len(text)),
                abstraction_level=level,
                primary_auditor=cls.primary,
            )
        )
        pos += len(text) + 2
    return nodes


def _edges(problem: str, items: list[tuple[str, str, Level]]) -> list[dict[str, Any]]:
    nodes = _nodes_for(problem, items)
    doc = TraceInput(
        problem=problem or "(problem)", thinking="\n\n".join(t for _, t, _ in items) or "(empty)"
    ).to_document()
    return [e.model_dump(mode="json", by_alias=True) for e in link(doc, nodes)]


def _segment(pid: str, text: str, ids: IdAllocator, high_stakes: bool) -> dict[str, Any]:
    cls = rules.classify(text, high_stakes=high_stakes)
    return {
        "id": ids.next(cls.level),
        "level": cls.level.value,
        "paragraph": pid,
        "text": text,
        "type": cls.type,
        "summary": rules.summarize(text, cls.type),
        "complexity": cls.complexity.value,
        "primary_auditor": cls.primary.value,
        "secondary_auditors": [a.value for a in cls.secondary],
    }


def respond(request: dict[str, Any]) -> dict[str, Any] | Reply:
    """Answer one HDAG pipeline request (dispatch on the schema name)."""
    name = task_name(request)
    probe = answers_probe(name, "decomposer")
    if probe is not None:
        return probe
    user = _first_user(request)
    problem = _tag(user, "problem")
    high_stakes = "high-stakes" in user
    ids = IdAllocator({"G1"})
    if name == "hdag_levels":
        blocks = []
        for pid, text in _units(user):
            blocks.append({"level": rules.classify(text).level.value, "paragraph": pid, "text": text})
        return {"blocks": blocks}
    if name == "hdag_segments":
        blocks = json.loads(_tag(user, "blocks") or "[]")
        return {"segments": [_segment(b["paragraph"], b["text"], ids, high_stakes) for b in blocks]}
    if name == "hdag_relations":
        segs = json.loads(_tag(user, "segments") or "[]")
        items = [(s["id"], s["text"], Level(s["level"])) for s in segs]
        return {"edges": _edges(problem, items)}
    if name == "hdag_auditors":
        segs = json.loads(_tag(user, "segments") or "[]")
        out = []
        for s in segs:
            cls = rules.classify(s["text"], high_stakes=high_stakes)
            out.append(
                {
                    "id": s["id"],
                    "primary_auditor": cls.primary.value,
                    "secondary_auditors": [a.value for a in cls.secondary],
                    "complexity": cls.complexity.value,
                }
            )
        return {"assignments": out}
    if name == "hdag_refine":
        return {
            "nodes": json.loads(_tag(user, "nodes") or "[]"),
            "edges": json.loads(_tag(user, "edges") or "[]"),
        }
    if name == "hdag_single":
        nodes = [_segment(pid, text, ids, high_stakes) for pid, text in _units(user)]
        items = [(n["id"], n["text"], Level(n["level"])) for n in nodes]
        return {"nodes": nodes, "edges": _edges(problem, items)}
    return Reply.http_error(400, f"fake HDAG responder does not know the task {name!r}")
