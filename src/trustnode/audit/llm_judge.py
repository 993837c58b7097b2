"""The LLM judge (T_LLM): a model lists logical violations of one segment; FAIL iff one survives.

The trace under audit is hostile input, so the design keeps it from steering the verdict:

- The verdict is computed from the schema's fields only (the list of violations), never from
  prose: an answer that says "PASS" but lists a surviving violation is a FAIL, and extra
  fields such as a "verdict" key are ignored.
- The segment and its context are fenced as data. Every block sits between markers that
  carry a nonce: an HMAC of the whole task under a key the trace author never sees, so the
  segment cannot write a matching closing marker. The system prompt (which never contains
  trace text) says only markers with that nonce are real and that data is never instruction.
- Temperature 0 and a fixed seed; the same judge gives the same prompt for the same task.

Survival rule. A reported violation survives when all of these hold:
1. it is well-formed: every text field is non-blank and `type` is one of the six
   (enforced by the response schema, so a malformed answer goes through the client's
   repair retries and then fails with `JudgeError`, never a guessed verdict);
2. it is grounded: its `failing_slice` occurs in the audited segment itself, compared after
   Unicode (NFKC), quote, whitespace and case normalisation, with "..." allowed to elide text
   between quoted pieces that must appear in order (a quote from a parent or child segment,
   or a paraphrase that is not in the text, is dropped: the segment is not at fault there);
3. it is not withdrawn by the verification call: a second call shows each grounded violation
   with its acceptance criterion and asks whether the segment already meets the criterion or
   the objection is pedantic; a violation is withdrawn only if every check of it says so.
   Verification can only turn FAIL into PASS, which is the direction an injection wants, so
   it is skipped (violations stand) when the segment or its context contains text aimed at
   the auditor (`steering_signals`).
The `step` field is recorded as the model gives it; it plays no part in survival.

Evidence records the surviving violations, and in `details` the dropped and withdrawn ones
with reasons, the model, seed, prompt digest and any suspected injection.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import unicodedata
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any, TypeVar

from pydantic import BaseModel, Field, JsonValue, field_validator

from trustnode.audit.arithmetic import bind_from, extract_claims
from trustnode.audit.base import undecided
from trustnode.config import Settings, load_settings
from trustnode.llm.client import LLMClient
from trustnode.llm.errors import LLMError, LLMInvalidOutputError
from trustnode.models.audit import (
    AuditResult,
    AuditTask,
    ContextSegment,
    Evidence,
    Violation,
    ViolationType,
)
from trustnode.models.enums import Verdict

DEFAULT_JUDGE_SEED = 20_251_122
MAX_SEGMENT_CHARS = 20_000
MAX_CONTEXT_CHARS = 6_000
MAX_PROBLEM_CHARS = 8_000
MAX_VIOLATIONS = 24
_MAX_FIELD_CHARS = 2_000

M = TypeVar("M", bound=BaseModel)

_SAFE_ID = re.compile(r"[A-Za-z0-9_.:-]{1,40}")


def _prompt(name: str) -> str:
    return resources.files("trustnode.audit").joinpath("prompts", name).read_text(encoding="utf-8").strip()


def prompt_digest() -> str:
    """sha256 over the four prompt templates: identifies the judge's wording in evidence."""
    h = hashlib.sha256()
    for name in ("judge_system.md", "judge_user.md", "verify_system.md", "verify_user.md"):
        h.update(name.encode() + b"\0" + _prompt(name).encode() + b"\0")
    return h.hexdigest()


# --------------------------------------------------------------------------- wire schemas


def _non_blank(value: str) -> str:
    text = value.strip()
    if not text:
        raise ValueError("must not be blank")
    return text


class ReportedViolation(BaseModel):
    """One violation as the model reports it (the response schema's item)."""

    step: str = Field(max_length=200, description="Id of the audited segment.")
    failing_slice: str = Field(
        max_length=_MAX_FIELD_CHARS,
        description="Shortest exact quotation of the segment that carries the defect.",
    )
    probe: str = Field(
        max_length=_MAX_FIELD_CHARS, description="Question deciding whether the step is sound."
    )
    type: ViolationType
    acceptance_criterion: str = Field(
        max_length=_MAX_FIELD_CHARS, description="Checkable condition the step would meet if sound."
    )
    explanation: str = Field(max_length=_MAX_FIELD_CHARS, description="Why the probe fails.")

    @field_validator("step", "failing_slice", "probe", "acceptance_criterion", "explanation")
    @classmethod
    def _filled(cls, value: str) -> str:
        return _non_blank(value)

    def to_violation(self) -> Violation:
        return Violation.model_validate(self.model_dump())


class JudgeFindings(BaseModel):
    """The judge's whole answer: the violations of the segment (empty: none)."""

    violations: list[ReportedViolation] = Field(max_length=MAX_VIOLATIONS)


class ViolationCheck(BaseModel):
    """The verifier's decision on one numbered violation."""

    index: int = Field(ge=1, description="Number of the flagged item.")
    criterion_met: bool = Field(description="The segment already meets the acceptance criterion.")
    substantive: bool = Field(description="The defect matters at the problem's level of rigour.")
    reason: str = Field(max_length=_MAX_FIELD_CHARS)

    @field_validator("reason")
    @classmethod
    def _filled(cls, value: str) -> str:
        return _non_blank(value)

    @property
    def withdraws(self) -> bool:
        return self.criterion_met or not self.substantive


class VerificationAnswer(BaseModel):
    """The verifier's answer: one check per flagged item."""

    checks: list[ViolationCheck] = Field(max_length=MAX_VIOLATIONS * 2)


# --------------------------------------------------------------------------- errors


class JudgeError(LLMError):
    """The judge could not reach a verdict (endpoint down, or no valid answer after repairs)."""

    def __init__(self, message: str, *, node_id: str, cause: LLMError) -> None:
        super().__init__(message)
        self.node_id = node_id
        self.cause = cause


# --------------------------------------------------------------------------- grounding

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})
_ELLIPSIS = re.compile(r"\s*(?:\.\s*\.\s*\.|\u2026|\[\s*\.\.\.\s*\])\s*")


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    return " ".join(text.split()).casefold()


def slice_in_segment(failing_slice: str, segment: str) -> bool:
    """True if the quotation occurs in the segment (pieces around "..." in order)."""
    hay = _norm(segment)
    needle = _norm(failing_slice).strip(" \"'`")
    if not needle:
        return False
    if needle in hay:
        return True
    pieces = [p.strip(" \"'`") for p in _ELLIPSIS.split(needle)]
    pieces = [p for p in pieces if p]
    if not pieces or not any(ch.isalnum() for p in pieces for ch in p):
        return False
    pos = 0
    for piece in pieces:
        found = hay.find(piece, pos)
        if found < 0:
            return False
        pos = found + len(piece)
    return True


# --------------------------------------------------------------------------- injection screen

_STEERING: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE | re.MULTILINE))
    for name, pattern in (
        ("ignore-instructions", r"\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}"
         r"\b(?:instructions?|prompts?|rules?|above|previous|prior|earlier|everything)\b"),
        ("dictated-verdict", r"\b(?:answer|respond|reply|output|return|say|print|mark|grade|rate|verdict|"
         r"vote|judge)\b[^.\n]{0,30}(?-i:\b(?:PASS|FAIL|PASSED|FAILED)\b)"),
        ("role-claim", r"^\s*(?:system|assistant|developer|operator)\s*:|\b(?:system|developer)\s+"
         r"(?:prompt|message|instructions?)\b"),
        ("addresses-auditor", r"\byou\s+are\s+(?:now\s+)?(?:an?|the)\s+(?:auditor|judge|grader|reviewer|"
         r"verifier|assistant|ai|language\s+model)\b|\b(?:auditors?|judges?|graders?|reviewers?|"
         r"verifiers?)\b[^.\n]{0,30}\b(?:must|should|shall|will|are\s+required\s+to)\b[^.\n]{0,30}"
         r"\b(?:pass|approve|accept|ignore|answer|output)\b"),
        ("fake-fence", r"<<<|>>>\s*$|(?-i:\bDATA\b[^\n]{0,60}\b(?:BEGIN|END)\b)|</?\s*(?:system|instructions?|"
         r"segment|data|prompt|user|assistant)\s*>"),
        ("fake-answer", r"[\"'](?:violations|checks|verdict)[\"']\s*:"),
    )
)  # fmt: skip


def steering_signals(*texts: str) -> list[str]:
    """Names of the patterns by which the text seems to address the auditor, not the problem."""
    found: list[str] = []
    for name, pattern in _STEERING:
        if any(pattern.search(t) for t in texts) and name not in found:
            found.append(name)
    return found


# --------------------------------------------------------------------------- the judge


def _safe_id(value: str | None, fallback: str) -> str:
    return value if value and _SAFE_ID.fullmatch(value) else fallback


def _clip(text: str, limit: int) -> tuple[str, str]:
    if len(text) <= limit:
        return text, ""
    return text[:limit], f" (first {limit} of {len(text)} characters)"


class LLMJudge:
    """Auditor backend that asks an OpenAI-compatible model for violations of one segment."""

    name = "llm"

    def __init__(
        self,
        client: LLMClient,
        *,
        model_seed: int = DEFAULT_JUDGE_SEED,
        verify: bool = True,
        fence_key: bytes | None = None,
        trace_id: str | None = None,
    ) -> None:
        """`fence_key`: secret for the fence nonce; random per judge unless given (for caching
        across runs). `trace_id`: account this judge's calls to that id in the client."""
        self.client = client
        self.seed = model_seed
        self.verify = verify
        self._fence_key = fence_key if fence_key is not None else secrets.token_bytes(32)
        self.trace_id = trace_id
        self._system = Template(_prompt("judge_system.md"))
        self._user = Template(_prompt("judge_user.md"))
        self._verify_system = Template(_prompt("verify_system.md"))
        self._verify_user = Template(_prompt("verify_user.md"))
        self.prompt_sha256 = prompt_digest()

    # ------------------------------------------------------------------ prompt building
    def fence_nonce(self, task: AuditTask) -> str:
        """32 hex digits no text of the task contains; unguessable without the fence key."""
        material = task.model_dump_json().encode()
        texts = [task.content, task.context.problem] + [
            s.content for s in (*task.context.parents, *task.context.children)
        ]
        for counter in range(1000):
            nonce = hmac.new(
                self._fence_key, material + counter.to_bytes(4, "big"), hashlib.sha256
            ).hexdigest()
            nonce = nonce[:32]
            if not any(nonce in t for t in texts):
                return nonce
        raise RuntimeError("could not find a fence nonce absent from the task")  # pragma: no cover

    @staticmethod
    def _block(nonce: str, kind: str, ident: str, body: str, note: str = "") -> str:
        return f"<<<DATA {nonce} BEGIN {kind} {ident}>>>{note}\n{body}\n<<<DATA {nonce} END {kind} {ident}>>>"

    def _context_blocks(self, task: AuditTask, nonce: str) -> tuple[list[str], list[str]]:
        """(blocks before the segment, blocks after it)."""
        problem, note = _clip(task.context.problem, MAX_PROBLEM_CHARS)
        before = [self._block(nonce, "problem", "P", problem, note)]

        def ctx(kind: str, seg: ContextSegment, i: int) -> str:
            body, clip_note = _clip(seg.content, MAX_CONTEXT_CHARS)
            ident = _safe_id(seg.node_id, f"{kind[0].upper()}{i}")
            return self._block(nonce, kind, ident, body, clip_note)

        before += [ctx("dependency", s, i) for i, s in enumerate(task.context.parents, 1)]
        after = [ctx("implication", s, i) for i, s in enumerate(task.context.children, 1)]
        return before, after

    def messages(self, task: AuditTask) -> list[dict[str, str]]:
        """The chat sent for the first (finding) call."""
        nonce = self.fence_nonce(task)
        node_id = _safe_id(task.node_id, "SEG")
        before, after = self._context_blocks(task, nonce)
        blocks = [*before, self._block(nonce, "segment", node_id, task.content), *after]
        return [
            {"role": "system", "content": self._system.substitute(nonce=nonce)},
            {
                "role": "user",
                "content": self._user.substitute(
                    node_id=node_id, level=task.level.value, nonce=nonce, blocks="\n\n".join(blocks)
                ),
            },
        ]

    def verification_messages(
        self, task: AuditTask, violations: list[ReportedViolation]
    ) -> list[dict[str, str]]:
        """The chat sent for the second (verification) call."""
        nonce = self.fence_nonce(task)
        node_id = _safe_id(task.node_id, "SEG")
        before, after = self._context_blocks(task, nonce)
        items = [
            {
                "index": i,
                "type": v.type.value,
                "failing_slice": v.failing_slice,
                "probe": v.probe,
                "acceptance_criterion": v.acceptance_criterion,
                "explanation": v.explanation,
            }
            for i, v in enumerate(violations, 1)
        ]
        # the first answer knew the token; never let it (or text it echoed) close a fence here
        findings = json.dumps(items, ensure_ascii=False, indent=1).replace(nonce, "[fence token]")
        blocks = [
            *before,
            self._block(nonce, "segment", node_id, task.content),
            *after,
            self._block(nonce, "findings", "F", findings),
        ]
        return [
            {"role": "system", "content": self._verify_system.substitute(nonce=nonce)},
            {
                "role": "user",
                "content": self._verify_user.substitute(
                    count=len(violations),
                    node_id=node_id,
                    level=task.level.value,
                    nonce=nonce,
                    blocks="\n\n".join(blocks),
                ),
            },
        ]

    # ------------------------------------------------------------------ the audit
    def _ask(self, task: AuditTask, what: str, call: str, fn: Callable[[], M]) -> M:
        """Run one client call; turn client failures into a JudgeError naming the segment."""
        try:
            return fn()
        except LLMInvalidOutputError as exc:
            raise JudgeError(
                f"LLM judge: no valid {what} for segment {task.node_id} after {exc.attempts} answers "
                f"(last error: {exc.validation_error}); no verdict was guessed",
                node_id=task.node_id,
                cause=exc,
            ) from exc
        except LLMError as exc:
            raise JudgeError(
                f"LLM judge: the {call} call for segment {task.node_id} failed: {exc}",
                node_id=task.node_id,
                cause=exc,
            ) from exc

    def audit(self, task: AuditTask) -> AuditResult:
        """Ask for violations, keep the grounded ones, verify them, FAIL iff one survives."""
        if not task.content.strip():
            return undecided(self.name, "the segment is empty")
        if len(task.content) > MAX_SEGMENT_CHARS:
            return undecided(
                self.name,
                f"the segment has {len(task.content)} characters; the judge reads at most {MAX_SEGMENT_CHARS}",
            )
        ctx = task.context
        signals = steering_signals(
            task.content, ctx.problem, *(s.content for s in (*ctx.parents, *ctx.children))
        )
        findings = self._ask(
            task,
            "list of violations",
            "finding",
            lambda: self.client.complete_json(
                self.messages(task),
                JudgeFindings,
                trace_id=self.trace_id,
                temperature=0.0,
                seed=self.seed,
                name="judge_findings",
            ),
        )

        grounded: list[tuple[int, ReportedViolation]] = []
        dropped: list[JsonValue] = []
        for i, v in enumerate(findings.violations, 1):
            if slice_in_segment(v.failing_slice, task.content):
                grounded.append((i, v))
            else:
                dropped.append(
                    {
                        "index": i,
                        "type": v.type.value,
                        "failing_slice": v.failing_slice,
                        "reason": "failing_slice does not occur in the audited segment",
                    }
                )

        withdrawn: list[JsonValue] = []
        survivors = [v for _, v in grounded]
        if not grounded:
            verification = "not needed"
        elif not self.verify:
            verification = "disabled"
        elif signals:
            verification = "skipped: the segment contains text aimed at the auditor, so no withdrawals"
        else:
            answer = self._ask(
                task,
                "verification answer",
                "verification",
                lambda: self.client.complete_json(
                    self.verification_messages(task, survivors),
                    VerificationAnswer,
                    trace_id=self.trace_id,
                    temperature=0.0,
                    seed=self.seed,
                    name="judge_checks",
                ),
            )
            verification = "done"
            by_item: dict[int, list[ViolationCheck]] = {}
            for check in answer.checks:
                by_item.setdefault(check.index, []).append(check)
            kept: list[ReportedViolation] = []
            for item, (orig, v) in enumerate(grounded, 1):
                checks = by_item.get(item, [])
                if checks and all(c.withdraws for c in checks):
                    withdrawn.append(
                        {
                            "index": orig,
                            "type": v.type.value,
                            "failing_slice": v.failing_slice,
                            "criterion_met": any(c.criterion_met for c in checks),
                            "substantive": all(c.substantive for c in checks),
                            "reason": checks[0].reason,
                        }
                    )
                else:
                    kept.append(v)
            survivors = kept

        details: dict[str, JsonValue] = {
            "model": self.client.model,
            "seed": self.seed,
            "temperature": 0.0,
            "prompt_sha256": self.prompt_sha256,
            "reported": len(findings.violations),
            "dropped": dropped,
            "withdrawn": withdrawn,
            "verification": verification,
            "suspected_injection": list(signals),
        }
        return AuditResult(
            verdict=Verdict.FAIL if survivors else Verdict.PASS,
            decided=True,
            evidence=Evidence(
                auditor=self.name,
                checkable=True,
                violations=[v.to_violation() for v in survivors],
                details=details,
            ),
        )


# --------------------------------------------------------------------------- construction


def fence_key_from_file(path: Path) -> bytes:
    """The node's fence key: 32 random bytes made once (mode 0600) and reused, so that the same
    segment gets the same prompt across runs (LLM cache hits) while staying secret to the node."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        key = path.read_bytes()
        if len(key) != 32:
            raise ValueError(f"{path} should hold a 32-byte fence key, it holds {len(key)} bytes") from None
        return key
    key = secrets.token_bytes(32)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
        fh.flush()
        os.fsync(fh.fileno())
    return key


def judge_from_settings(settings: Settings | None = None, *, verify: bool = True) -> LLMJudge:
    """The judge a node runs: the configured endpoint, its cache, seed and the node's fence key."""
    settings = settings or load_settings()
    client = LLMClient(settings.llm, settings.llm_cache_dir)
    key = fence_key_from_file(settings.data_dir / "llm-judge" / "fence.key")
    return LLMJudge(client, model_seed=settings.llm.seed, verify=verify, fence_key=key)


# --------------------------------------------------------------------------- offline stand-in model

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
    It reads the request the way the prompts ask a model to (only blocks fenced with the
    nonce), reports each sentence of the segment whose arithmetic the exact checker proves
    wrong as an Unjustified_Inference, and finds no other kind of violation. As verifier it
    re-checks each finding's slice. It is not a language model and claims no more than that.
    """
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
