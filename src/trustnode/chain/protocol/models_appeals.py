"""Decoded views of the issue-15 modules (IAppealModule, ICanaryModule), field for field.

Each model lists the Solidity struct's fields in order, so `from_abi` decodes the tuple web3
returns; names are snake_cased.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from pydantic import BaseModel, ConfigDict

from trustnode.chain.protocol.params import SessionStatus


class _Struct(BaseModel):
    model_config = ConfigDict(frozen=True)

    @classmethod
    def from_abi(cls, t: Sequence[Any]) -> Self:
        return cls.model_validate(dict(zip(cls.model_fields, t, strict=True)))


class AppealModuleParams(_Struct):
    """IAppealModule.AppealParams."""

    appeal_blocks: int
    max_rounds: int
    appeal_bond_multiplier_bps: int
    appeal_reward_bps: int
    appeal_budget: int
    canary_rate_bps: int
    canary_reveal_blocks: int
    canary_gamma: int
    canary_refund_bps: int

    def as_abi(self) -> tuple[int, ...]:
        return tuple(getattr(self, f) for f in type(self).model_fields)


class RoundView(_Struct):
    """IAppealModule.Round (status: IAuditSessions.Status; Cancelled = unfillable, or refused when
    `refused`; Expired = keys withheld, or abandoned when drawn short; `refusals_charged`: decided at
    admission, the precondition for a failed draw to end refused rather than unfillable: it does iff
    the refusers short by more than this session's own locks hold more than half of the failing
    segment's eligible weight, `consensus.appeal_draw`)."""

    appellant: str
    status: SessionStatus
    depth: int
    segment_count: int
    bond: int
    epoch: int
    draw_request: int
    draw_deadline: int
    key_deadline: int
    commit_deadline: int
    reveal_deadline: int
    total_seats: int
    drawn_seats: int
    draw_cursor: int
    auditor_count: int
    committed_count: int
    revealed_count: int
    refused: bool
    refusals_charged: bool


class SegmentAppealsView(_Struct):
    """IAppealModule.SegmentAppeals."""

    depth: int
    last_round: int
    outcome: int
    pending: bool
    closed: bool
    window_end: int
    rounds: int

    def round_numbers(self) -> list[int]:
        """Its appeal rounds in depth order (8 bits each, depth 1 in bits 0-7)."""
        return [(self.rounds >> (8 * d)) & 0xFF for d in range(self.depth)]


class SessionAppealsView(_Struct):
    """IAppealModule.SessionAppeals."""

    finalized_at: int
    canary_end: int
    window_end: int
    last_window_end: int
    round_count: int
    open_rounds: int
    outcome_final: bool
    passed: bool
    score_bps: int
    appealed_count: int


class SessionMoneyView(_Struct):
    """IAppealSettlement.SessionMoney."""

    resolved_count: int
    resolve_cursor: int
    budget_used: int
    shortfall: int


class QuoteView(_Struct):
    """IAppealModule.Quote."""

    round: int
    depth: int
    bond: int
    total_seats: int
    seats: list[int]
    refusals_charged: bool


class CanaryStateView(_Struct):
    """ICanaryModule.CanaryState."""

    committed: int
    revealed: int
    reveal_opens_after: int
    reveal_closes: int
    refund_due: int
    refund_paid: int
    operator: str
