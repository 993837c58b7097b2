"""A whole session's final settlement with appeals and canaries (issue 15), every token accounted for.

Composes `appeals.settle_segment` (real segments and canaries never revealed) and
`canaries.settle_canary` (revealed canaries) into what the contracts move when the last window
has closed and the slash seed is known: rewards and slashes per (auditor, round) ledger entry,
appellant refunds and rewards, treasury budget draws, canary refunds and the treasury's share.
`SessionSettlement.inflow == SessionSettlement.outflow` is the conservation law the property
test and the forge invariants hold the contracts to.
"""

from __future__ import annotations

from collections import defaultdict

from pydantic import BaseModel, ConfigDict, Field, computed_field

from trustnode.consensus.appeal_settlement import SegmentSettlement, settle_segment
from trustnode.consensus.appeals import AppealParams, Effect, SegmentRecord
from trustnode.consensus.canaries import (
    CanaryParams,
    CanarySettlement,
    canary_count,
    canary_refund,
    settle_canary,
    trace_verdict_with_canaries,
)
from trustnode.consensus.rules import EconomicRules, TraceVerdict, fee_split
from trustnode.models.enums import SegmentOutcome


class RevealedCanary(BaseModel):
    """A canary whose (index, verdict, salt) matched its commitment in time."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(ge=0)
    verdict: SegmentOutcome


class SessionRecord(BaseModel):
    """What the chain knows about a session once its outcome is final."""

    model_config = ConfigDict(frozen=True)

    fee: int = Field(ge=0)
    seats: tuple[int, int, int] = Field(description="k_0 per tier (Computer, LLM, Human)")
    tau_bps: int
    beta_bps: int
    segments: list[SegmentRecord] = Field(min_length=1)
    canaries_committed: int = Field(ge=0)
    canaries_revealed: list[RevealedCanary] = Field(default_factory=list)


class AuditorRound(BaseModel):
    """One auditor's result in one round: the `SessionResult` of its (session, round) ledger entry."""

    model_config = ConfigDict(frozen=True)

    auditor: str
    round: int
    reward: int
    slash: int = Field(description="before the Staking cap at the pool's assets")
    effects: list[tuple[Effect, int]] = Field(description="(effect, gamma) in segment order")


class SessionSettlement(BaseModel):
    model_config = ConfigDict(frozen=True)

    verdict: TraceVerdict
    final_outcomes: list[SegmentOutcome]
    segments: list[SegmentSettlement]
    canaries: list[CanarySettlement]
    fee: int
    fee_to_treasury: int
    pool_slack: int = Field(description="pool beyond the k_0 R reservations, swept to the treasury")
    appeal_budget_used: int
    canary_refund_due: int
    canary_refund_paid: int

    @computed_field  # type: ignore[prop-decorator]
    @property
    def rewards(self) -> int:
        return sum(s.rewards for s in self.segments) + sum(c.rewards for c in self.canaries)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def slashed(self) -> int:
        return sum(s.slashed for s in self.segments) + sum(c.slashed for c in self.canaries)

    @property
    def bonds(self) -> int:
        return sum(s.bonds for s in self.segments)

    @property
    def appellant_refunds(self) -> int:
        return sum(p.refund for s in self.segments for p in s.payouts)

    @property
    def appellant_rewards(self) -> int:
        return sum(p.reward_paid for s in self.segments for p in s.payouts)

    @property
    def treasury_in(self) -> int:
        """Everything the treasury receives: fee share, pool slack, pots, canary leftovers, slashes."""
        return (
            self.fee_to_treasury
            + self.pool_slack
            + sum(s.to_treasury for s in self.segments)
            + sum(c.to_treasury for c in self.canaries)
            + self.slashed
        )

    @property
    def inflow(self) -> int:
        """Tokens entering: the fee, the bonds, the treasury's grants and the slashed stake."""
        return self.fee + self.bonds + self.appeal_budget_used + self.canary_refund_paid + self.slashed

    @property
    def outflow(self) -> int:
        """Tokens leaving: rewards, appellant refunds and rewards, canary refunds, the treasury's receipts."""
        return (
            self.rewards
            + self.appellant_refunds
            + self.appellant_rewards
            + self.canary_refund_paid
            + self.treasury_in
        )

    def auditor_rounds(self) -> list[AuditorRound]:
        """Per (auditor, round), sorted: the totals and the reputation effects in segment order."""
        acc: dict[tuple[str, int], list[tuple[int, int, int, Effect, int]]] = defaultdict(list)
        votes = [v for s in self.segments for v in s.votes] + [v for c in self.canaries for v in c.votes]
        for v in votes:
            acc[(v.auditor, v.round)].append((v.segment, v.rewarded, v.slashed, v.effect, v.gamma))
        out = []
        for (auditor, rnd), rows in sorted(acc.items()):
            rows.sort(key=lambda x: x[0])
            out.append(
                AuditorRound(
                    auditor=auditor,
                    round=rnd,
                    reward=sum(x[1] for x in rows),
                    slash=sum(x[2] for x in rows),
                    effects=[(x[3], x[4]) for x in rows],
                )
            )
        return out


def settle_session(
    rec: SessionRecord,
    *,
    appeal: AppealParams,
    canary: CanaryParams,
    econ: EconomicRules,
    slash_seed: bytes,
    appeal_budget: int,
    canary_budget: int,
) -> SessionSettlement:
    """Settle a final session: segments in index order draw on the appeal budget first come first served."""
    n = len(rec.segments)
    if any(s.index != i for i, s in enumerate(rec.segments)):
        raise ValueError("segments must be listed in index order")
    if rec.canaries_committed != canary_count(n, canary.rate_bps):
        raise ValueError(
            f"{rec.canaries_committed} canaries committed, the rate requires {canary_count(n, canary.rate_bps)}"
        )
    truth = {c.index: c.verdict for c in rec.canaries_revealed}
    if len(truth) != len(rec.canaries_revealed) or len(truth) > rec.canaries_committed:
        raise ValueError("canary reveals must name distinct segments, at most one per commitment")
    pool, fee_share = fee_split(rec.fee)
    reserved = sum(rec.seats[int(s.tier)] * econ.reward for s in rec.segments)
    if pool < reserved:
        raise ValueError("the fee does not cover k_0 R for every segment")
    segs: list[SegmentSettlement] = []
    cans: list[CanarySettlement] = []
    budget = appeal_budget
    finals: list[SegmentOutcome] = []
    for s in rec.segments:
        k0 = rec.seats[int(s.tier)]
        if s.index in truth:
            if len(s.panels) != 1:
                raise ValueError(f"canary {s.index} was appealed: canaries are revealed before the window")
            c = settle_canary(s.index, s.panels[0], truth[s.index], k0=k0, econ=econ, canary=canary,
                              slash_seed=slash_seed)  # fmt: skip
            cans.append(c)
            finals.append(c.truth)
            continue
        st = settle_segment(s, k0=k0, tau_bps=rec.tau_bps, appeal=appeal, econ=econ, slash_seed=slash_seed,
                            budget=budget)  # fmt: skip
        budget -= st.budget_used
        segs.append(st)
        finals.append(st.final)
    verdict = trace_verdict_with_canaries(
        [SegmentOutcome.INCONCLUSIVE if i in truth else o for i, o in enumerate(finals)],
        [s.weight for s in rec.segments],
        sorted(truth),
        rec.canaries_committed - len(truth),
        rec.beta_bps,
    )
    due = sum(
        canary_refund(rec.seats[int(rec.segments[i].tier)], econ.reward, canary.refund_bps) for i in truth
    )
    paid = min(due, canary_budget)
    return SessionSettlement(
        verdict=verdict,
        final_outcomes=finals,
        segments=segs,
        canaries=cans,
        fee=rec.fee,
        fee_to_treasury=fee_share,
        pool_slack=pool - reserved,
        appeal_budget_used=appeal_budget - budget,
        canary_refund_due=due,
        canary_refund_paid=paid,
    )
