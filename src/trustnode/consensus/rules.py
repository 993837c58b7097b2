"""The one Python reference of protocol v2's on-chain rules, in the contracts' integer arithmetic.

The simulator and the in-memory chain settle every vote through these functions, and the
chain consistency test checks that the deployed v2 contracts (AuditSessions, SettlementModule,
Staking) produce the same balances and reputations, so any change here or in `contracts/src`
must keep the two equal.  Conventions: reputation and probabilities in WAD (1e18 = 1.0); tau,
beta, fee split and commission in basis points; Solidity's integer division truncates, which
for the non-negative quantities here is Python's ``//``.

A session's result is computed in two places on chain, mirrored by two functions here:
`score_auditor` (SettlementModule: rewards, slashes and the reputation map of one auditor's
seats) and `apply_result` (Staking: commission, the pool's assets, the slash cap, the share
price floor), then `apply_reputation` composes the reputation map in ledger (draw) order.
`settle_auditor` chains the three for the common case of one session at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from eth_utils import to_checksum_address
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from trustnode.consensus.arithmetic import (
    AUDIT_POOL_BPS,
    BPS,
    PRICE_FLOOR_INVERSE,
    Termination,
    TerminationPayout,
    TraceVerdict,
    apply_reputation,
    fee_covers_seats,
    fee_split,
    pool_remainder,
    quorum,
    reputation_step,
    reputation_update,
    segment_outcome,
    slash_probability,
    termination_payout,
    trace_verdict,
)
from trustnode.consensus.encoding import (
    WAD,
    commitment,
    pack_tiers_weights,
    panel_key,
    slash_coin,
    verdict_bitmap,
    verdicts_valid,
    verdicts_word,
)
from trustnode.models.enums import SegmentOutcome

__all__ = [
    "AUDIT_POOL_BPS",
    "BPS",
    "PRICE_FLOOR_INVERSE",
    "WAD",
    "Termination",
    "TerminationPayout",
    "TraceVerdict",
    "apply_reputation",
    "commitment",
    "fee_covers_seats",
    "fee_split",
    "pack_tiers_weights",
    "panel_key",
    "pool_remainder",
    "quorum",
    "reputation_step",
    "reputation_update",
    "segment_outcome",
    "slash_coin",
    "slash_probability",
    "termination_payout",
    "trace_verdict",
    "verdict_bitmap",
    "verdicts_valid",
    "verdicts_word",
]  # fmt: skip  (the names re-exported from `arithmetic` and `encoding`; the rest are defined here)

# --- scoring one auditor's seats (SettlementModule) -------------------------------------------


class EconomicRules(BaseModel):
    """The on-chain economic parameters (token units and WAD/bps fixed point)."""

    model_config = ConfigDict(frozen=True)

    reward: int = Field(
        ge=0, description="R per agreeing vote (and per drawn seat of a session without verdict)"
    )
    penalty: int = Field(ge=0, description="P per slashed vote (slashAmount), token wei")
    p_min: int = Field(ge=0, le=WAD)
    p_max: int = Field(ge=0, le=WAD)
    gamma: int = Field(ge=0, le=WAD)

    @model_validator(mode="after")
    def _ordered(self) -> EconomicRules:
        if self.p_min > self.p_max:
            raise ValueError("p_min must not exceed p_max")
        return self


class Seat(BaseModel):
    """One seat: its segment and its opened vote (vote_fail None = never revealed; abstain = revealed
    without a verdict, which needs vote_fail False)."""

    model_config = ConfigDict(frozen=True)

    segment_index: int = Field(ge=0)
    vote_fail: bool | None = None
    abstain: bool = False

    @model_validator(mode="after")
    def _abstain_is_revealed(self) -> Seat:
        if self.abstain and self.vote_fail is not False:
            raise ValueError("an abstaining seat is revealed and carries no FAIL bit (vote_fail=False)")
        return self


class SeatSettlement(BaseModel):
    model_config = ConfigDict(frozen=True)

    segment_index: int
    outcome: SegmentOutcome
    revealed: bool
    abstained: bool = False
    agreed: bool | None = Field(description="None when INCONCLUSIVE, abstained or never revealed")
    rewarded: int
    slashed: int = Field(description="P if this seat is slashed (before the pool cap)")
    coin: int | None = Field(default=None, description="slash coin of an incorrect vote, if a seed existed")


class SessionScore(BaseModel):
    """What SettlementModule sends to Staking for one auditor (one `SessionResult`)."""

    model_config = ConfigDict(frozen=True)

    p_slash: int
    correct: int
    incorrect: int = Field(description="wrong votes and unrevealed seats")
    abstained: int
    slashes: int
    reward: int = Field(description="gross: R per correct seat, or R per drawn seat without a verdict")
    slash: int = Field(description="slashes * P, capped only when applied")
    rep_mul: int
    rep_add: int
    seats: list[SeatSettlement]


def score_auditor(
    *,
    auditor: str,
    seats: Sequence[Seat],
    outcomes: Sequence[SegmentOutcome],
    draw_reputation: int,
    slash_seed: bytes | None,
    rules: EconomicRules,
    round: int = 0,
    finalized: bool = True,
) -> SessionScore:
    """Score one auditor's seats, in seat order (ascending segments), as SettlementModule does.

    Finalized session, per seat: never revealed -> slashed, incorrect; revealed on an
    INCONCLUSIVE segment -> nothing; abstained -> no reward, no slash, reputation as incorrect;
    correct -> R; incorrect -> slashed iff its coin < pSlash(draw_reputation), every incorrect
    vote slashed when the slash randomness lapsed (`slash_seed` None).  A session that ended
    without a verdict pays R per drawn seat and changes nothing else.
    """
    segs = [s.segment_index for s in seats]
    if any(b <= a for a, b in zip(segs, segs[1:], strict=False)):
        raise ValueError("seats must be in seat order: strictly increasing segments")
    p_slash = slash_probability(draw_reputation, rules.p_min, rules.p_max)
    if not finalized:
        return SessionScore(
            p_slash=p_slash, correct=0, incorrect=0, abstained=0, slashes=0,
            reward=len(seats) * rules.reward, slash=0, rep_mul=WAD, rep_add=0, seats=[],
        )  # fmt: skip
    mul, add = WAD, 0
    correct = incorrect = abstained = slashes = 0
    out: list[SeatSettlement] = []
    for seat in seats:
        outcome = outcomes[seat.segment_index]
        if outcome == SegmentOutcome.NONE:
            raise ValueError(f"segment {seat.segment_index} is not finalized")
        revealed = seat.vote_fail is not None
        agreed: bool | None = None
        hit = False
        coin: int | None = None
        if not revealed:
            hit = True
        elif outcome == SegmentOutcome.INCONCLUSIVE:
            out.append(_seat(seat, outcome, None, False, None, rules))
            continue
        elif not seat.abstain:
            agreed = seat.vote_fail == (outcome == SegmentOutcome.FAIL)
            if not agreed:
                coin = (
                    None if slash_seed is None else slash_coin(slash_seed, auditor, seat.segment_index, round)
                )
                hit = coin is None or coin < p_slash
        mul, add = reputation_step(mul, add, agreed is True, rules.gamma)
        correct += agreed is True
        incorrect += agreed is False or not revealed
        abstained += seat.abstain
        slashes += hit
        out.append(_seat(seat, outcome, agreed, hit, coin, rules))
    return SessionScore(
        p_slash=p_slash, correct=correct, incorrect=incorrect, abstained=abstained, slashes=slashes,
        reward=correct * rules.reward, slash=slashes * rules.penalty, rep_mul=mul, rep_add=add, seats=out,
    )  # fmt: skip


def _seat(
    seat: Seat,
    outcome: SegmentOutcome,
    agreed: bool | None,
    hit: bool,
    coin: int | None,
    rules: EconomicRules,
) -> SeatSettlement:
    return SeatSettlement(
        segment_index=seat.segment_index, outcome=outcome, revealed=seat.vote_fail is not None,
        abstained=seat.abstain, agreed=agreed, rewarded=rules.reward if agreed else 0,
        slashed=rules.penalty if hit else 0, coin=coin,
    )  # fmt: skip


# --- applying a result to the auditor's pool (Staking) -----------------------------------------


class AppliedResult(BaseModel):
    """A session's result applied to the pool when its ledger entry reaches the head."""

    model_config = ConfigDict(frozen=True)

    commission: int = Field(description="reward * bps of the draw / 10000, paid to the auditor at once")
    net_reward: int
    slashed: int = Field(description="min(slash, assets + net reward), to the treasury")
    swept: int = Field(description="assets sent to the treasury by a price-floor reset")
    assets_after: int
    shares_after: int | None


def apply_result(
    *, assets: int, reward: int, slash: int, commission_bps: int, total_shares: int | None = None
) -> AppliedResult:
    """Staking's `_resolveOne` + `_applySession`: the commission recorded at the draw is paid at
    once; the net reward joins the pool, then the slash is taken, capped by the pool's assets;
    if a share is then worth less than 1e-9 wei the pool resets (remaining assets to the
    treasury, shares void).  Without `total_shares` the reset is not checked."""
    if not 0 <= commission_bps <= BPS:
        raise ValueError("commission_bps must be in [0, 10000]")
    if min(assets, reward, slash) < 0:
        raise ValueError("amounts must be >= 0")
    commission = reward * commission_bps // BPS
    net = reward - commission
    after = assets + net
    taken = min(slash, after)
    after -= taken
    swept = 0
    shares = total_shares
    if shares is not None and (after != 0 if shares == 0 else after * PRICE_FLOOR_INVERSE < shares):
        swept, after, shares = after, 0, 0
    return AppliedResult(
        commission=commission,
        net_reward=net,
        slashed=taken,
        swept=swept,
        assets_after=after,
        shares_after=shares,
    )


# --- one auditor, one session, both halves -------------------------------------------------------


class AuditorSettlement(BaseModel):
    """What settling one auditor in one session moves, and its reputation afterwards."""

    model_config = ConfigDict(frozen=True)

    auditor: str
    reputation_before: int = Field(description="reputation when the result is applied (ledger order)")
    draw_reputation: int = Field(description="reputation fixed at the draw, which sets p_slash")
    reputation_after: int
    p_slash: int
    gross_reward: int
    commission: int
    reward_to_pool: int
    slashed: int = Field(description="taken from the pool (capped by its assets after the net reward)")
    swept: int
    pool_assets_after: int
    rep_mul: int
    rep_add: int
    seats: list[SeatSettlement]
    correct: int = Field(description="agreeing votes on decided segments (rewarded)")
    incorrect: int
    abstained: int
    slashes: int = Field(description="slash events (each P before the pool cap)")

    @field_validator("auditor")
    @classmethod
    def _checksum(cls, v: str) -> str:
        return to_checksum_address(v)


def settle_auditor(
    *,
    auditor: str,
    seats: Sequence[Seat],
    outcomes: Sequence[SegmentOutcome],
    reputation: int,
    pool_assets: int,
    commission_bps: int,
    rules: EconomicRules,
    slash_seed: bytes | None = None,
    session_seed: bytes | None = None,
    draw_reputation: int | None = None,
    round: int = 0,
    finalized: bool = True,
    total_shares: int | None = None,
) -> AuditorSettlement:
    """Score one auditor's seats and apply the result to its pool, as the contracts do.

    `reputation` is the pool's reputation when the result is applied; `draw_reputation` (default:
    the same) the one recorded at the draw, which sets p_slash; `commission_bps` the commission in
    force at the draw.  `slash_seed` is the session's late slash randomness (None: the request
    lapsed, every incorrect vote is slashed).  `session_seed` is the old name of `slash_seed`,
    accepted until every caller passes `slash_seed`.
    """
    if slash_seed is not None and session_seed is not None:
        raise ValueError("pass slash_seed only")
    seed = slash_seed if slash_seed is not None else session_seed
    r_draw = reputation if draw_reputation is None else draw_reputation
    score = score_auditor(
        auditor=auditor, seats=seats, outcomes=outcomes, draw_reputation=r_draw, slash_seed=seed,
        rules=rules, round=round, finalized=finalized,
    )  # fmt: skip
    applied = apply_result(
        assets=pool_assets, reward=score.reward, slash=score.slash, commission_bps=commission_bps,
        total_shares=total_shares,
    )  # fmt: skip
    return AuditorSettlement(
        auditor=auditor, reputation_before=reputation, draw_reputation=r_draw,
        reputation_after=apply_reputation(reputation, score.rep_mul, score.rep_add), p_slash=score.p_slash,
        gross_reward=score.reward, commission=applied.commission, reward_to_pool=applied.net_reward,
        slashed=applied.slashed, swept=applied.swept, pool_assets_after=applied.assets_after,
        rep_mul=score.rep_mul, rep_add=score.rep_add, seats=score.seats, correct=score.correct,
        incorrect=score.incorrect, abstained=score.abstained, slashes=score.slashes,
    )  # fmt: skip


def tally(seats_by_auditor: Iterable[Sequence[Seat]], n_segments: int) -> list[tuple[int, int]]:
    """(pass, fail) revealed votes per segment from every auditor's seats; abstentions count in neither."""
    counts = [[0, 0] for _ in range(n_segments)]
    for seats in seats_by_auditor:
        for seat in seats:
            if seat.vote_fail is None or seat.abstain:
                continue
            counts[seat.segment_index][1 if seat.vote_fail else 0] += 1
    return [(a, b) for a, b in counts]
