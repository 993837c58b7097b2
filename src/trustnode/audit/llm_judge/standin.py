"""A deterministic stand-in for the judge's model, for offline demos on the fake server.

It is not a language model: it reads the request the way the prompts ask a model to
(only blocks fenced with the nonce) and reports what the exact arithmetic checker proves
wrong. `trustnode demo` uses it unless told `--llm local`, and says so.
"""

from __future__ import annotations

import json
import re
from typing import Any

from trustnode.audit.arithmetic import bind_from, extract_claims
from trustnode.audit.llm_judge.schemas import MAX_VIOLATIONS
from trustnode.llm.fake_server import requested_schema_name
from trustnode.llm.probe import answers_probe
from trustnode.models.audit import ViolationType

_MARKER = re.compile(r"<<<DATA ([0-9a-f]{32}) BEGIN ")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _request_blocks(request: dict[str, Any]) -> tuple[dict[str, list[tuple[str, str]]], str]:
    messages = request.get("messages") or []
    if len(messages) < 2 or not isinstance(messages[0], dict):
        raise ValueError("not an LLM-judge request: expected a system and a user message")
    m = _MARKER.search(str(messages[0].get("content", "")))
    if m is None:
        raise ValueError("not an LLM-judge request: the system prompt names no fence token")
    nonce = m.group(1)
    user = str(messages[-1].get("content", ""))
    pattern = re.compile(
        rf"<<<DATA {nonce} BEGIN (\w+) (\S+)>>>[^\n]*\n(.*?)\n<<<DATA {nonce} END \1 \2>>>", re.DOTALL
    )
    blocks: dict[str, list[tuple[str, str]]] = {}
    for b in pattern.finditer(user):
        blocks.setdefault(b.group(1), []).append((b.group(2), b.group(3)))
    if "segment" not in blocks:
        raise ValueError("not an LLM-judge request: no fenced segment block")
    return blocks, nonce


def arithmetic_judge_responder(request: dict[str, Any]) -> dict[str, Any]:
    """A deterministic stand-in for the judge's model, for offline demos on the fake server.

    `python -m trustnode.llm.fake_server --responder trustnode.audit.llm_judge:arithmetic_judge_responder`
    It answers the judge's start-up probe, reads the request the way the prompts ask a
    model to (only blocks fenced with the nonce), reports each sentence of the segment whose arithmetic the exact checker proves
    wrong as an Unjustified_Inference, and finds no other kind of violation. As verifier it
    re-checks each finding's slice. It is not a language model and claims no more than that.
    """
    probe = answers_probe(requested_schema_name(request), "judge")
    if probe is not None:
        return probe
    blocks, _ = _request_blocks(request)
    variables = bind_from(body for _, body in blocks.get("dependency", []))
    step, segment = blocks["segment"][0]
    if "findings" in blocks:
        items = json.loads(blocks["findings"][0][1])
        checks = []
        for item in items:
            wrong = extract_claims(str(item.get("failing_slice", "")), variables).wrong
            checks.append(
                {
                    "index": int(item["index"]),
                    "criterion_met": not wrong,
                    "substantive": True,
                    "reason": "the exact checker confirms the error" if wrong else "the arithmetic holds",
                }
            )
        return {"checks": checks}
    violations = []
    for sentence in _SENTENCE.split(segment):
        sentence = sentence.strip()
        if not sentence:
            continue
        wrong = extract_claims(sentence, variables).wrong
        if wrong:
            c = wrong[0]
            violations.append(
                {
                    "step": step,
                    "failing_slice": sentence,
                    "probe": f"Is {c.expression} equal to {c.found}?",
                    "type": ViolationType.UNJUSTIFIED_INFERENCE.value,
                    "acceptance_criterion": f"The step uses the exact value {c.expression} = {c.correct}.",
                    "explanation": f"{c.expression} evaluates to {c.correct}, not {c.found}.",
                }
            )
    return {"violations": violations[:MAX_VIOLATIONS]}
