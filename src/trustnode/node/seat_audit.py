"""One auditor's work on its seats of a session: open the bundle, judge each seat, decide its vote.

Kept apart from the daemon (`node/auditor.py`), which only sequences the protocol steps: this is
the part that reads the bundle and writes evidence. An undecided seat never becomes PASS: a machine
seat ABSTAINS with its reason (logged once per reason), a human seat waits for the person.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from trustnode.audit.base import Auditor
from trustnode.chain.port import ChainPort, SeatVote
from trustnode.llm.errors import LLMError
from trustnode.models.audit import AuditResult, AuditTask
from trustnode.models.enums import Verdict
from trustnode.node.structure import SessionBundle
from trustnode.node.tasks import build_tasks
from trustnode.node.votes import VoteRecord, VoteState
from trustnode.storage.base import BlobStore


class UndecidedRule(StrEnum):
    """What a seat the backend could not decide becomes."""

    ABSTAIN = "abstain"  # machine tiers
    WAIT = "wait"  # human tier: the person decides, or the seat is never committed


@dataclass(frozen=True)
class SeatAuditor:
    """What judging one's seats needs: the bundle's store, the chain's root, this auditor's keys."""

    store: BlobStore
    port: ChainPort
    address: str
    private_key: bytes
    undecided: UndecidedRule
    evidence_dir: Path
    say: Callable[..., None]  # (session_id, message, *args) -> None, the daemon's log voice

    def tasks(self, rec: VoteRecord) -> list[AuditTask]:
        """One task per seat, checked against the Merkle root stored on chain."""
        bundle = SessionBundle.model_validate_json(self.store.cat(rec.manifest_cid))
        root = bytes.fromhex(self.port.session(rec.session_id).merkle_root[2:])
        return build_tasks(
            self.store,
            bundle,
            address=self.address,
            private_key=self.private_key,
            seats=rec.seats,
            onchain_root=root,
        )


def judge(backend: Auditor, task: AuditTask) -> tuple[AuditResult | None, str]:
    """The backend's result, or None and the reason when it could not give one."""
    try:
        return backend.audit(task), ""
    except LLMError as exc:  # the judge never got a valid answer (JudgeError): this seat only
        return None, f"{type(exc).__name__}: {exc}"


def audit_seats(a: SeatAuditor, rec: VoteRecord, backend: Auditor) -> None:
    """Fill `rec.votes` and evidence; DECIDED (with a fresh salt) once every seat has a vote.

    The caller stores `rec` before it sends any commit."""
    tasks = a.tasks(rec)
    a.evidence_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    votes: list[SeatVote | None] = []
    hashes: list[str | None] = []
    for j, task in enumerate(tasks):
        result, error = judge(backend, task)
        vote = _vote(a, rec, j, task, result, error)
        votes.append(vote)
        hashes.append(None if result is None else "0x" + result.evidence_hash().hex())
        doc: dict[str, Any] = {
            "vote": vote,
            "decided": bool(result and result.decided),
            "abstain_reason": rec.reasons.get(j) if vote == SeatVote.ABSTAIN else None,
            "result": None if result is None else result.model_dump(mode="json"),
        }
        path = a.evidence_dir / f"{rec.session_id}-{rec.round}-{task.segment_index}.json"
        path.write_text(json.dumps(doc, default=str))
    rec.votes, rec.evidence_hashes = votes, hashes
    if all(v is not None for v in votes):
        rec.salt = "0x" + secrets.token_bytes(32).hex()
        rec.state = VoteState.DECIDED


def _vote(
    a: SeatAuditor, rec: VoteRecord, j: int, task: AuditTask, result: AuditResult | None, error: str
) -> SeatVote | None:
    if result is not None and result.decided:
        return SeatVote.FAIL if result.verdict == Verdict.FAIL else SeatVote.PASS
    if a.undecided == UndecidedRule.WAIT and result is not None:
        return None
    reason = error or str((result.evidence.details if result else {}).get("reason") or "undecided")
    if rec.reasons.get(j) != reason:
        a.say(rec.session_id, "seat %d (segment %d) abstains: %s", j, task.segment_index, reason)
    rec.reasons[j] = reason
    return SeatVote.ABSTAIN
