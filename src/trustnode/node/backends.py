"""Which auditor backend a daemon of each tier runs."""

from __future__ import annotations

import contextlib

from trustnode.audit.base import Auditor
from trustnode.audit.computer import ComputerAuditor
from trustnode.audit.human_queue import HumanAuditor, HumanQueue, HumanQueueError
from trustnode.config import Settings
from trustnode.models.audit import AuditResult, AuditTask, Evidence
from trustnode.models.enums import Tier, Verdict
from trustnode.models.human import seat_id_for
from trustnode.node.auditor import BackendFactory
from trustnode.node.paths import human_queue_path
from trustnode.node.seat_audit import UndecidedRule
from trustnode.node.votes import VoteRecord


class LazyAuditor:
    """Votes PASS on every seat without reading it: the demo's (and tests') lazy auditor, the
    behaviour gold canaries exist to catch (`trustnode auditor run --lazy`). Never a default."""

    name = "lazy"

    def audit(self, task: AuditTask) -> AuditResult:
        return AuditResult(
            verdict=Verdict.PASS,
            decided=True,
            evidence=Evidence(auditor=self.name, checkable=True, details={"read": False}),
        )


def backend_for_tier(
    tier: Tier, settings: Settings, address: str, *, lazy: bool = False
) -> Auditor | BackendFactory:
    if lazy:
        return LazyAuditor()
    if tier == Tier.COMPUTER:
        return ComputerAuditor()
    if tier == Tier.LLM:
        if not settings.llm.base_url:
            raise ValueError("an LLM auditor needs TRUSTNODE_LLM__BASE_URL (an OpenAI-compatible endpoint)")
        from trustnode.audit.llm_judge import judge_from_settings

        return judge_from_settings(settings)
    return HumanSeats(HumanQueue(human_queue_path(settings)), address)


class HumanSeats:
    """The human tier's backend (one `HumanAuditor` per session) and the queue's record of what the
    daemon did with each decision: committed on chain, or abandoned with the reason, so the audit
    page never shows a seat as waiting after its vote landed or its session ended."""

    def __init__(self, queue: HumanQueue, address: str) -> None:
        self.queue = queue
        self.address = address

    def __call__(self, rec: VoteRecord) -> HumanAuditor:
        return HumanAuditor(self.queue, self.address, session_id=rec.session_id, round=rec.round)

    def _seat_ids(self, rec: VoteRecord) -> list[str]:
        return [seat_id_for(rec.session_id, seg, self.address, rec.round) for seg in rec.seats]

    def committed(self, rec: VoteRecord) -> None:
        for seat_id in self._seat_ids(rec):
            with contextlib.suppress(HumanQueueError):
                self.queue.mark_committed(seat_id)

    def abandoned(self, rec: VoteRecord, reason: str) -> None:
        for seat_id in self._seat_ids(rec):
            with contextlib.suppress(HumanQueueError):
                self.queue.abandon(seat_id, reason)


def undecided_policy(tier: Tier) -> UndecidedRule:
    """A machine seat it cannot decide abstains (never a PASS); a person's seat waits for the person."""
    return UndecidedRule.WAIT if tier == Tier.HUMAN else UndecidedRule.ABSTAIN
