"""Which auditor backend a daemon of each tier runs."""

from __future__ import annotations

from trustnode.audit.base import Auditor
from trustnode.audit.computer import ComputerAuditor
from trustnode.audit.human_queue import HumanAuditor, HumanQueue
from trustnode.config import Settings
from trustnode.models.enums import Tier
from trustnode.node.auditor import BackendFactory, UndecidedRule
from trustnode.node.paths import human_queue_path


def backend_for_tier(tier: Tier, settings: Settings, address: str) -> Auditor | BackendFactory:
    if tier == Tier.COMPUTER:
        return ComputerAuditor()
    if tier == Tier.LLM:
        if not settings.llm.base_url:
            raise ValueError("an LLM auditor needs TRUSTNODE_LLM__BASE_URL (an OpenAI-compatible endpoint)")
        from trustnode.audit.llm_judge import judge_from_settings

        return judge_from_settings(settings)
    queue = HumanQueue(human_queue_path(settings))
    return lambda rec: HumanAuditor(queue, address, session_id=rec.session_id)


def undecided_policy(tier: Tier) -> UndecidedRule:
    """A machine seat it cannot decide abstains (never a PASS); a person's seat waits for the person."""
    return UndecidedRule.WAIT if tier == Tier.HUMAN else UndecidedRule.ABSTAIN
