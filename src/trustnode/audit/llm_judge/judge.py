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
   `textnorm.fold` (invisible characters, look-alike letters, quotes, whitespace and case),
   with "..." allowed to elide text
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

No verdict without the model. `audit` returns a decided result only from a schema-valid
answer of the model. A segment the judge cannot read (empty, or longer than
MAX_SEGMENT_CHARS) is returned undecided with `details["reason"]` and
`details["undecided"]` (a short code) and is never sent; a daemon must not turn it into a
PASS vote. When the model never gives a valid answer, `audit` raises `JudgeError`
(`errors.py`), never a guessed verdict.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from string import Template
from typing import TypeVar

from pydantic import BaseModel, JsonValue

from trustnode.audit.base import undecided
from trustnode.audit.llm_judge.errors import JudgeError
from trustnode.audit.llm_judge.grounding import slice_in_segment
from trustnode.audit.llm_judge.schemas import (
    JudgeFindings,
    ReportedViolation,
    VerificationAnswer,
    ViolationCheck,
)
from trustnode.audit.llm_judge.screen import steering_signals
from trustnode.config import Settings, load_settings
from trustnode.llm.client import LLMClient
from trustnode.llm.errors import LLMError, LLMInvalidOutputError
from trustnode.llm.probe import ProbeReport
from trustnode.models.audit import AuditResult, AuditTask, ContextSegment, Evidence
from trustnode.models.enums import Verdict

DEFAULT_JUDGE_SEED = 20_251_122
MAX_SEGMENT_CHARS = 20_000
MAX_CONTEXT_CHARS = 6_000
MAX_PROBLEM_CHARS = 8_000

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
        self.endpoint: ProbeReport | None = None

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
                f"LLM judge: the {call} call for segment {task.node_id} failed: {exc}; no verdict was guessed",
                node_id=task.node_id,
                cause=exc,
            ) from exc

    def audit(self, task: AuditTask) -> AuditResult:
        """Ask for violations, keep the grounded ones, verify them, FAIL iff one survives."""
        if not task.content.strip():
            return undecided(self.name, "the segment is empty; the model was not asked", undecided="empty")
        if len(task.content) > MAX_SEGMENT_CHARS:
            return undecided(
                self.name,
                f"the segment has {len(task.content)} characters; the judge reads at most "
                f"{MAX_SEGMENT_CHARS}, so the model was not asked (split the step)",
                undecided="too_long",
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


def judge_from_settings(
    settings: Settings | None = None, *, verify: bool = True, probe: bool = True
) -> LLMJudge:
    """The judge a node runs: the configured endpoint (`settings.llm`), its cache, seed and
    the node's fence key. With `probe` (the default) the endpoint is checked first, so a
    wrong URL fails here, at start-up, with `LLMEndpointError` or `LLMUnavailableError`;
    the report is kept in `judge.endpoint`."""
    settings = settings or load_settings()
    client = LLMClient(settings.llm, settings.llm_cache_dir)
    try:
        report = client.probe("judge") if probe else None
    except LLMError:
        client.close()
        raise
    key = fence_key_from_file(settings.data_dir / "llm-judge" / "fence.key")
    judge = LLMJudge(client, model_seed=settings.llm.seed, verify=verify, fence_key=key)
    judge.endpoint = report
    return judge
