"""Money of appeals (issue 15): every vote of every round scored against the final outcome, bonds,
the segment's pot, the treasury's appeal budget and the appellants' refunds and rewards.

`settle_segment` is what the contracts move for one segment once the session's outcome is final
(`docs/appeals-canaries.md`, "Money: one rule"); `final_settlement.settle_session` composes it
for a whole session with the canaries.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from trustnode.consensus.appeal_resolution import Resolution, resolve, withheld_keeps
from trustnode.consensus.appeals import (
    DECIDED,
    AppealParams,
    AppealResult,
    Effect,
    PanelSeat,
    PanelStatus,
    SegmentRecord,
    Vote,
    appellant_reward,
)
from trustnode.consensus.rules import (
    WAD,
    EconomicRules,
    reputation_step,
    reputation_update,
    slash_coin,
    slash_probability,
)
from trustnode.models.enums import SegmentOutcome


class VoteScore(BaseModel):
    """One seat's result: what it earned, what it lost, how its reputation moves."""

    model_config = ConfigDict(frozen=True)

    round: int = Field(description="the session round of the panel (its ledger key and slash coin)")
    segment: int
    auditor: str
    vote: Vote
    agreed: bool | None = Field(description="None when the truth it is scored against is INCONCLUSIVE")
    rewarded: int
    slashed: int
    coin: int | None = None
    effect: Effect
    gamma: int = Field(description="the reputation step this vote uses (gamma, or canaryGamma)")


def score_seat(
    seat: PanelSeat,
    *,
    round_: int,
    segment: int,
    truth: SegmentOutcome,
    econ: EconomicRules,
    gamma: int,
    slash_seed: bytes,
    reward: int,
) -> VoteScore:
    """Score one revealed-or-not seat of a panel that voted, against `truth` (final outcome or canary truth).

    Never revealed: always slashed, INCORRECT.  Revealed (or abstained) on an INCONCLUSIVE truth:
    nothing.  Abstained: nothing paid or slashed, INCORRECT.  Agreeing vote: `reward`, CORRECT.
    Disagreeing: slashed P iff its coin `slash_coin(seed, auditor, segment, round)` is below
    pSlash(r at the panel's draw), INCORRECT.  The order is SettlementModule's (`rules.score_auditor`).
    """
    base = {"round": round_, "segment": segment, "auditor": seat.auditor, "vote": seat.vote, "gamma": gamma}
    if seat.vote is Vote.UNREVEALED:
        return VoteScore(**base, agreed=None, rewarded=0, slashed=econ.penalty, effect=Effect.INCORRECT)
    if truth not in DECIDED:
        return VoteScore(**base, agreed=None, rewarded=0, slashed=0, effect=Effect.NONE)
    if seat.vote is Vote.ABSTAIN:
        return VoteScore(**base, agreed=None, rewarded=0, slashed=0, effect=Effect.INCORRECT)
    if (seat.vote is Vote.FAIL) == (truth == SegmentOutcome.FAIL):
        return VoteScore(**base, agreed=True, rewarded=reward, slashed=0, effect=Effect.CORRECT)
    coin = slash_coin(slash_seed, seat.auditor, segment, round_)
    hit = coin < slash_probability(seat.reputation, econ.p_min, econ.p_max)
    return VoteScore(
        **base,
        agreed=False,
        rewarded=0,
        slashed=econ.penalty if hit else 0,
        coin=coin,
        effect=Effect.INCORRECT,
    )


class AppealPayout(BaseModel):
    """What one appeal's appellant gets back for one segment (an appeal naming several segments has
    one payout per segment, each with that segment's bond)."""

    model_config = ConfigDict(frozen=True)

    round: int = Field(description="the session round the appeal opened")
    appellant: str
    bond: int
    result: AppealResult
    refund: int = Field(description="bond returned to the appellant")
    reward_due: int
    reward_paid: int


class SegmentSettlement(BaseModel):
    """Every token one segment moves once its outcome is final.

    Conservation: reserved + sum(bonds) + budget_used == round0 rewards + panel rewards
    + refunds + appellant rewards + to_treasury (slashes come from stake and go to the treasury
    separately: `slashed`).
    """

    model_config = ConfigDict(frozen=True)

    segment: int
    final: SegmentOutcome
    resolution: Resolution
    votes: list[VoteScore]
    payouts: list[AppealPayout]
    reserved: int = Field(description="k_0 * R set aside in the session pool at opening")
    bonds: int
    budget_used: int
    to_treasury: int
    reward_per_vote: list[int] = Field(description="per depth: what one funded seat of that panel gets")
    shortfall: int = Field(description="dues the pot and the budget could not cover (reported by an event)")

    @property
    def rewards(self) -> int:
        return sum(v.rewarded for v in self.votes)

    @property
    def slashed(self) -> int:
        return sum(v.slashed for v in self.votes)


def settle_segment(
    seg: SegmentRecord,
    *,
    k0: int,
    tau_bps: int,
    appeal: AppealParams,
    econ: EconomicRules,
    slash_seed: bytes,
    budget: int,
) -> SegmentSettlement:
    """Resolve a segment, score every vote of every round against the final outcome, move the money.

    Order (exactly the contract's): round-0 agreeing votes are paid R from the segment's
    reservation; the rest of the reservation starts the segment's pot.  Per appeal round:
    UPHELD - the bond pays the panel's agreeing votes R each, its surplus joins the pot;
    KEYS_WITHHELD over a decided FAIL that stood (`withheld_keeps`, at any depth) - the bond is
    forfeited, R per locked seat, its surplus joins the pot; OVERTURNED / VOIDED / other
    KEYS_WITHHELD - the bond is refunded whole; UNFILLABLE - the bond pays R per drawn seat and the
    rest is refunded; REFUSED - the bond is refunded whole.  Then, round by round, the panels owed
    by the pot are paid: the agreeing votes of an OVERTURNED round per_vote = min(R, (pot + budget)
    // count) each, from the pot first and the budget second; every seat of a KEYS_WITHHELD round
    (and every drawn seat of a REFUSED one) min(R, pot // count) from the pot only, never the
    budget (review finding 2: withholding is the provider's doing, and a coalition holding most of
    a panel would otherwise net Treasury money by
    appealing its own segment and withholding the keys; the rest is a reported shortfall).  Then
    each OVERTURNED appellant's reward, pot first, budget second, as far as they reach.  The pot's
    remainder goes to the treasury.  `budget` is what the treasury still grants.

    Inferred scoring (`scoring_is_inferred`): when the last panel's keys were withheld over a
    contested PASS, the segment is scored as FAIL by adverse inference, not by any panel.  An earlier
    appeal that is OVERTURNED only by that inference gets its bond back but no reward, and its
    agreeing votes are owed by the pot only, never the budget: else a provider appealing its own
    correct PASS, losing at depth 1, then withholding its own depth-2 panel netted its depth-1 alias
    the reward from the Treasury's appeal budget (`Review5SelfAppealThenWithholdDeeper`).
    """
    if budget < 0:
        raise ValueError("budget must be >= 0")
    R = econ.reward
    res = resolve(seg, k0, tau_bps, appeal, R)
    final = res.final
    inferred = scoring_is_inferred(res.scoring, final)
    reserved = k0 * R
    votes: list[VoteScore] = []
    payouts: list[AppealPayout] = []
    per_vote = [0] * len(seg.panels)
    pot = reserved
    bonds = 0
    # (depth, indices into votes, pot only) paid from the pot, then the budget unless pot only
    owed: list[tuple[int, list[int], bool]] = []
    for d, panel in enumerate(seg.panels):
        result = res.results[d]
        rnd = panel.round
        start = len(votes)
        # withheld over a decided FAIL that stands: the bond is forfeited to the panel's locked seats
        # abandoned (a timely seed nobody drew, outside review 6): the bond pays R per drawn seat, the
        # rest joins the pot (`AppealSettlement._scoreRound`)
        forfeit = panel.status is PanelStatus.ABANDONED or (
            panel.status is PanelStatus.KEYS_WITHHELD and panel.appeal is not None
            and withheld_keeps(d, panel.appeal.appealed)
        )  # fmt: skip
        if panel.status is not PanelStatus.DECIDED:
            for s in panel.seats:
                votes.append(
                    VoteScore(round=rnd, segment=seg.index, auditor=s.auditor, vote=s.vote, agreed=None,
                              rewarded=0, slashed=0, effect=Effect.NONE, gamma=econ.gamma)
                )  # fmt: skip
            # KEYS_WITHHELD (not forfeited) and REFUSED: every locked seat owed by the pot only
            pot_owed = panel.status is PanelStatus.REFUSED or (
                panel.status is PanelStatus.KEYS_WITHHELD and not forfeit
            )
            if pot_owed:
                if len(votes) > start:  # a refused draw may have drawn none of this segment's seats
                    owed.append((d, list(range(start, len(votes))), True))
            else:  # UNFILLABLE or forfeited: the bond pays R per drawn (locked) seat
                per_vote[d] = R
                votes[start:] = [v.model_copy(update={"rewarded": R}) for v in votes[start:]]
        else:
            # The appeal's own bond pays an UPHELD panel, so its rewards are final now; an
            # OVERTURNED panel's rewards wait for the pot (set to 0 here, filled in below).
            upheld_or_first = result in (None, AppealResult.UPHELD)
            for s in panel.seats:
                votes.append(
                    score_seat(s, round_=rnd, segment=seg.index, truth=res.scoring, econ=econ, gamma=econ.gamma,
                               slash_seed=slash_seed, reward=R if upheld_or_first else 0)
                )  # fmt: skip
            if upheld_or_first:
                per_vote[d] = R
            agreeing = [i for i in range(start, len(votes)) if votes[i].agreed]
            if d == 0:
                pot -= len(agreeing) * R
            elif result is AppealResult.OVERTURNED and agreeing:
                owed.append((d, agreeing, inferred))
        if panel.appeal is not None:
            assert result is not None
            b = panel.appeal.bond
            bonds += b
            refund = b
            if result is AppealResult.UPHELD or forfeit:
                refund = 0
                pot += b - sum(v.rewarded for v in votes[start:])
            elif result is AppealResult.UNFILLABLE:
                refund = b - len(panel.seats) * R
            due = (
                appellant_reward(b, appeal.reward_bps)
                if result is AppealResult.OVERTURNED and not inferred
                else 0
            )
            payouts.append(
                AppealPayout(round=rnd, appellant=panel.appeal.appellant, bond=b, result=result, refund=refund,
                             reward_due=due, reward_paid=0)
            )  # fmt: skip
    budget_left = budget
    shortfall = 0

    def take(amount: int) -> None:
        nonlocal pot, budget_left
        from_pot = min(amount, pot)
        pot -= from_pot
        budget_left -= amount - from_pot

    for d, idx, pot_only in owed:
        pv = min(R, (pot + (0 if pot_only else budget_left)) // len(idx))
        per_vote[d] = pv
        take(pv * len(idx))
        shortfall += (R - pv) * len(idx)
        for i in idx:
            votes[i] = votes[i].model_copy(update={"rewarded": pv})
    for j, p in enumerate(payouts):
        paid = min(p.reward_due, pot + budget_left)
        take(paid)
        shortfall += p.reward_due - paid
        payouts[j] = p.model_copy(update={"reward_paid": paid})
    return SegmentSettlement(
        segment=seg.index,
        final=final,
        resolution=res,
        votes=votes,
        payouts=payouts,
        reserved=reserved,
        bonds=bonds,
        budget_used=budget - budget_left,
        to_treasury=pot,
        reward_per_vote=per_vote,
        shortfall=shortfall,
    )


def scoring_is_inferred(scoring: SegmentOutcome, final: SegmentOutcome) -> bool:
    """Whether the scoring outcome is an adverse inference rather than a panel's decision: FAIL over
    an INCONCLUSIVE verdict happens only when the last panel's keys were withheld over a contested
    PASS (`scoring_outcome`; a REFUSED PASS scores PASS, every other end scores its verdict)."""
    return scoring == SegmentOutcome.FAIL and final == SegmentOutcome.INCONCLUSIVE


def apply_effects(reputation: int, effects: Sequence[tuple[Effect, int]]) -> int:
    """Reputation after a sequence of (effect, gamma) in seat order, one spec step
    (`rules.reputation_update`) at a time."""
    r = reputation
    for effect, gamma in effects:
        if effect is not Effect.NONE:
            r = reputation_update(r, effect is Effect.CORRECT, gamma)
    return r


def effects_map(effects: Sequence[tuple[Effect, int]]) -> tuple[int, int]:
    """(repMul, repAdd) of a ledger entry: the steps composed in seat order as SettlementModule
    does (`rules.reputation_step`); Staking applies it with `rules.apply_reputation`."""
    mul, add = WAD, 0
    for effect, gamma in effects:
        if effect is not Effect.NONE:
            mul, add = reputation_step(mul, add, effect is Effect.CORRECT, gamma)
    return mul, add


__all__ = [
    "AppealPayout",
    "SegmentSettlement",
    "VoteScore",
    "apply_effects",
    "effects_map",
    "scoring_is_inferred",
    "score_seat",
    "settle_segment",
]
