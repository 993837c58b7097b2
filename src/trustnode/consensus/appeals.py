"""Reference rules of appeals (issue 15), in the contracts' integer arithmetic.

A segment's history is a list of panels: round 0 is the session's own panel, round r >= 1 an
appeal panel of k_r = 2 k_{r-1} + 1 seats.  Each DECIDED panel's quorum outcome replaces the
segment's outcome; every vote of every round is scored against the FINAL outcome; bonds,
freed first-round rewards and a capped treasury budget pay the appeal panels and the
appellants.  `docs/appeals-canaries.md` is the prose of these functions; the contracts must
reproduce them exactly (WAD and basis points, Solidity rounding = Python ``//`` on
non-negative integers).  Functions take plain pydantic data and return plain pydantic data,
so the simulator, the tests and the chain consistency test share one implementation.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from eth_abi import encode
from eth_utils import keccak, to_checksum_address
from pydantic import BaseModel, ConfigDict, Field, field_validator

from trustnode.consensus.rules import (
    BPS,
    WAD,
    EconomicRules,
    quorum,
    segment_outcome,
    slash_probability,
)
from trustnode.models.enums import SegmentOutcome, Tier

#: Panel tallies are 6-bit counters on chain: no panel may exceed 63 seats.
MAX_PANEL_SEATS = 63
#: Hard bound on appeal rounds (k_4 = 16 (k_0 + 1) - 1 already exceeds 63 for k_0 >= 3).
MAX_ROUNDS = 4
MAX_PHASE_BLOCKS = 100_000
DECIDED = (SegmentOutcome.PASS, SegmentOutcome.FAIL)


class Vote(StrEnum):
    """What one seat did: a revealed verdict, an explicit abstention, or no reveal at all."""

    PASS = "PASS"
    FAIL = "FAIL"
    ABSTAIN = "ABSTAIN"
    UNREVEALED = "UNREVEALED"


class PanelStatus(StrEnum):
    DECIDED = "decided"  # keys published, commit-reveal ran, the quorum rule applied
    KEYS_WITHHELD = "keys_withheld"  # the provider published no keys by the key deadline
    UNFILLABLE = "unfillable"  # eligible weight ran out before the panel was full


class AppealResult(StrEnum):
    UPHELD = "upheld"  # final outcome == appealed outcome: the appeal failed
    OVERTURNED = (
        "overturned"  # final outcome differs (and is decided, or the appeal was against INCONCLUSIVE)
    )
    VOIDED = "voided"  # appealed PASS/FAIL, final INCONCLUSIVE: bond back, no reward
    KEYS_WITHHELD = "keys_withheld"  # bond back, no reward, segment INCONCLUSIVE and final
    UNFILLABLE = "unfillable"  # bond back minus R per drawn seat, outcome stands and is final


class Effect(StrEnum):
    """How a vote moves its auditor's reputation: r <- (1 - g) r + g * 1[correct]."""

    CORRECT = "correct"
    INCORRECT = "incorrect"
    NONE = "none"


class AppealParams(BaseModel):
    """Appeal parameters of a session (pinned with its params version)."""

    model_config = ConfigDict(frozen=True)

    appeal_blocks: int = Field(default=7200, ge=0, le=MAX_PHASE_BLOCKS, description="window; 0 disables")
    max_rounds: int = Field(default=3, ge=0, le=MAX_ROUNDS)
    bond_multiplier_bps: int = Field(default=BPS, ge=BPS, le=10 * BPS)
    reward_bps: int = Field(default=2000, ge=0, le=BPS, description="successful appellant's reward / bond")


class PanelSeat(BaseModel):
    """One seat of one panel: its auditor, what it did, and its reputation fixed at the panel's draw."""

    model_config = ConfigDict(frozen=True)

    auditor: str
    vote: Vote
    reputation: int = Field(ge=0, le=WAD)

    @field_validator("auditor")
    @classmethod
    def _checksum(cls, v: str) -> str:
        return to_checksum_address(v)


class Appeal(BaseModel):
    model_config = ConfigDict(frozen=True)

    appellant: str
    bond: int = Field(ge=0)
    appealed: SegmentOutcome = Field(
        description="the outcome contested (the segment's outcome at appeal time)"
    )

    @field_validator("appellant")
    @classmethod
    def _checksum(cls, v: str) -> str:
        return to_checksum_address(v)


class Panel(BaseModel):
    model_config = ConfigDict(frozen=True)

    round: int = Field(ge=0, le=MAX_ROUNDS)
    seats: list[PanelSeat]
    status: PanelStatus = PanelStatus.DECIDED
    appeal: Appeal | None = Field(default=None, description="None exactly for round 0")


class SegmentRecord(BaseModel):
    """Everything that happened to one segment, round 0 first."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(ge=0)
    tier: Tier
    weight: int = Field(ge=1, le=0xFFFF)
    panels: list[Panel] = Field(min_length=1)


# --- sizes, bonds and the farming inequality -----------------------------------------------------


def panel_seats(k0: int, round_: int) -> int:
    """k_r = 2 k_{r-1} + 1 with k_0 the tier's seats, i.e. k_r = 2^r (k_0 + 1) - 1."""
    if k0 < 1 or not 0 <= round_ <= MAX_ROUNDS:
        raise ValueError("need k0 >= 1 and 0 <= round <= 4")
    return (k0 + 1) * (1 << round_) - 1


def min_bond(k0: int, round_: int, reward: int, multiplier_bps: int) -> int:
    """Bond per segment to open round r >= 1: k_r * R * appealBondMultiplierBps / 10000."""
    if round_ < 1:
        raise ValueError("round 0 is not an appeal")
    return panel_seats(k0, round_) * reward * multiplier_bps // BPS


def appellant_reward(bond: int, reward_bps: int) -> int:
    """A successful appellant's reward on top of its returned bond: bond * appealRewardBps / 10000."""
    return bond * reward_bps // BPS


def cheapest_spoil(k: int, tau_bps: int) -> int:
    """Fewest wrong votes that make a k-seat panel's outcome wrong (INCONCLUSIVE or the opposite)."""
    q = quorum(k, tau_bps)
    return min(q, k - q + 1)


def farming_loses(
    k0: int,
    round_: int,
    tau_bps: int,
    appeal: AppealParams,
    econ: EconomicRules,
    *,
    count_forgone: bool = True,
) -> bool:
    """True iff a coalition that spoils round `round_` and appeals it expects to lose money.

    Cost: m = cheapest_spoil(k_r) wrong votes, each slashed P with probability >= p_min and (with
    `count_forgone`) forgoing the reward R it would have earned; gain: the appellant reward on the
    bond of round r + 1, even if the appeal surely succeeds.  Exact in integers:
    m * (R * 1e18 [if forgone] + pMin * P) * 10000 > rewardBps * bond * 1e18.
    """
    m = cheapest_spoil(panel_seats(k0, round_), tau_bps)
    per_vote = (econ.reward * WAD if count_forgone else 0) + econ.p_min * econ.penalty
    bond = min_bond(k0, round_ + 1, econ.reward, appeal.bond_multiplier_bps)
    return m * per_vote * BPS > appeal.reward_bps * bond * WAD


def check_appeal_params(
    appeal: AppealParams, seats: Sequence[int], tau_bps: int, econ: EconomicRules
) -> None:
    """What `setParams` enforces: panels fit 63 seats and reward farming loses in every tier and round."""
    for t, k0 in enumerate(seats):
        if appeal.max_rounds and panel_seats(k0, appeal.max_rounds) > MAX_PANEL_SEATS:
            raise ValueError(f"tier {t}: k_{appeal.max_rounds} = {panel_seats(k0, appeal.max_rounds)} > 63")
        for r in range(appeal.max_rounds):
            if not farming_loses(k0, r, tau_bps, appeal, econ):
                raise ValueError(
                    f"tier {t}: spoiling round {r} and appealing it would pay (lower reward_bps)"
                )


class AppealRefused(ValueError):
    """An appeal the contract reverts: nothing is taken from the appellant."""


def check_appeal(
    seg: SegmentRecord,
    *,
    k0: int,
    appeal: AppealParams,
    reward: int,
    block: int,
    window_end: int,
    eligible: int,
    max_bond: int | None = None,
) -> tuple[int, int]:
    """What `appeal(sessionId, segment)` checks; returns (round, bond) of the panel it opens.

    `window_end`: last block of the window that is open now (the session's appeal window for
    round 1, `appealBlocks` after the previous panel's reveal phase for later rounds).
    `eligible`: auditors of the segment's tier who sat on none of its panels (the provider
    excluded) - fewer than k_r and the appeal is refused up front, so no round ever starts that
    cannot be seated.  The bond is exactly `min_bond`; `max_bond` is the appellant's own limit.
    """
    r = len(seg.panels)
    last = seg.panels[-1]
    if appeal.appeal_blocks == 0 or appeal.max_rounds == 0:
        raise AppealRefused("AppealsDisabled")
    if block > window_end:
        raise AppealRefused("AppealWindowClosed")
    if last.status is not PanelStatus.DECIDED:
        raise AppealRefused("SegmentFinal")  # keys withheld or unfillable: that outcome is final
    if r > appeal.max_rounds:
        raise AppealRefused("NoRoundsLeft")
    k = panel_seats(k0, r)
    if eligible < k:
        raise AppealRefused(f"NotEnoughEligibleAuditors: {eligible} < k_{r} = {k}")
    bond = min_bond(k0, r, reward, appeal.bond_multiplier_bps)
    if max_bond is not None and bond > max_bond:
        raise AppealRefused(f"BondAboveLimit: the bond of round {r} is {bond}")
    return r, bond


# --- outcomes ------------------------------------------------------------------------------------


class Resolution(BaseModel):
    """The outcome after each panel (index = round), the final outcome, and each appeal's result."""

    model_config = ConfigDict(frozen=True)

    outcomes: list[SegmentOutcome]
    final: SegmentOutcome
    results: list[AppealResult | None] = Field(description="None for round 0")


def tally(panel: Panel) -> tuple[int, int]:
    """(PASS, FAIL) revealed votes; abstentions and missing reveals count in neither."""
    return (
        sum(1 for s in panel.seats if s.vote is Vote.PASS),
        sum(1 for s in panel.seats if s.vote is Vote.FAIL),
    )


def appeal_result(appealed: SegmentOutcome, final: SegmentOutcome, status: PanelStatus) -> AppealResult:
    """How an appeal ended, judged against the FINAL outcome of its segment."""
    if status is PanelStatus.KEYS_WITHHELD:
        return AppealResult.KEYS_WITHHELD
    if status is PanelStatus.UNFILLABLE:
        return AppealResult.UNFILLABLE
    if final == appealed:
        return AppealResult.UPHELD
    if appealed in DECIDED and final == SegmentOutcome.INCONCLUSIVE:
        return AppealResult.VOIDED
    return AppealResult.OVERTURNED


def resolve(seg: SegmentRecord, k0: int, tau_bps: int, appeal: AppealParams, reward: int) -> Resolution:
    """Validate a segment's history as the contract would have let it happen, and resolve it."""
    outcomes: list[SegmentOutcome] = []
    seen: set[str] = set()
    for r, panel in enumerate(seg.panels):
        if panel.round != r:
            raise ValueError(f"segment {seg.index}: panel {r} says round {panel.round}")
        k = panel_seats(k0, r)
        names = [s.auditor for s in panel.seats]
        if len(set(names)) != len(names) or seen & set(names):
            raise ValueError(f"segment {seg.index} round {r}: an auditor sits twice (exclusion violated)")
        seen |= set(names)
        if r == 0:
            if panel.appeal is not None or panel.status is not PanelStatus.DECIDED:
                raise ValueError("round 0 is the session's own decided panel")
        else:
            prev = outcomes[-1]
            if r > appeal.max_rounds or seg.panels[r - 1].status is not PanelStatus.DECIDED:
                raise ValueError(f"segment {seg.index}: round {r} is not allowed")
            if panel.appeal is None or panel.appeal.appealed != prev:
                raise ValueError(f"segment {seg.index} round {r}: the appeal must contest {prev.name}")
            if panel.appeal.bond != min_bond(k0, r, reward, appeal.bond_multiplier_bps):
                raise ValueError(f"segment {seg.index} round {r}: the bond is exactly the minimum bond")
        if panel.status is PanelStatus.UNFILLABLE:
            if len(panel.seats) >= k:
                raise ValueError("an unfillable panel has fewer than k_r seats")
            if any(s.vote is not Vote.UNREVEALED for s in panel.seats):
                raise ValueError("an unfillable panel never votes")
            outcomes.append(outcomes[-1])
            continue
        if len(panel.seats) != k:
            raise ValueError(f"segment {seg.index} round {r}: {len(panel.seats)} seats, k_r = {k}")
        if panel.status is PanelStatus.KEYS_WITHHELD:
            if any(s.vote is not Vote.UNREVEALED for s in panel.seats):
                raise ValueError("nobody can vote without keys")
            outcomes.append(SegmentOutcome.INCONCLUSIVE)
            continue
        p, f = tally(panel)
        outcomes.append(segment_outcome(p, f, k, tau_bps))
    final = outcomes[-1]
    results: list[AppealResult | None] = [None]
    for panel in seg.panels[1:]:
        assert panel.appeal is not None
        results.append(appeal_result(panel.appeal.appealed, final, panel.status))
    return Resolution(outcomes=outcomes, final=final, results=results)


# --- scoring and money ---------------------------------------------------------------------------


def round_slash_draw(slash_seed: bytes, auditor: str, round_: int, segment: int) -> int:
    """uint256(keccak256(abi.encode(slashSeed, auditor, round, segment))) % 1e18 (protocol v2 coin)."""
    if len(slash_seed) != 32:
        raise ValueError("slash seed must be 32 bytes")
    digest = keccak(
        encode(["bytes32", "address", "uint256", "uint256"], [slash_seed, auditor, round_, segment])
    )
    return int.from_bytes(digest, "big") % WAD


class VoteScore(BaseModel):
    """One seat's result: what it earned, what it lost, how its reputation moves."""

    model_config = ConfigDict(frozen=True)

    round: int
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

    Agreeing vote on a decided truth: `reward`, CORRECT.  Disagreeing: slashed P iff its coin is
    below pSlash(r at the panel's draw), INCORRECT.  Never revealed: always slashed, INCORRECT.
    Abstained: nothing paid or slashed, INCORRECT.  Revealed vote on an INCONCLUSIVE truth: nothing.
    """
    base = {"round": round_, "segment": segment, "auditor": seat.auditor, "vote": seat.vote, "gamma": gamma}
    if seat.vote is Vote.UNREVEALED:
        return VoteScore(**base, agreed=None, rewarded=0, slashed=econ.penalty, effect=Effect.INCORRECT)
    if seat.vote is Vote.ABSTAIN:
        return VoteScore(**base, agreed=None, rewarded=0, slashed=0, effect=Effect.INCORRECT)
    if truth not in DECIDED:
        return VoteScore(**base, agreed=None, rewarded=0, slashed=0, effect=Effect.NONE)
    if (seat.vote is Vote.FAIL) == (truth == SegmentOutcome.FAIL):
        return VoteScore(**base, agreed=True, rewarded=reward, slashed=0, effect=Effect.CORRECT)
    coin = round_slash_draw(slash_seed, seat.auditor, round_, segment)
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
    model_config = ConfigDict(frozen=True)

    round: int
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
    reward_per_vote: list[int] = Field(description="per round: what one funded seat of that panel gets")
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
    OVERTURNED / VOIDED / KEYS_WITHHELD - the bond is refunded whole; UNFILLABLE - the bond pays
    R per drawn seat and the rest is refunded.  Then, round by round, the panels owed by the pot
    (agreeing votes of an OVERTURNED round, every seat of a KEYS_WITHHELD round) are paid
    per_vote = min(R, (pot + budget) // count) each, from the pot first and the budget second;
    then each OVERTURNED appellant's reward, pot first, budget second, as far as they reach.  The
    pot's remainder goes to the treasury.  `budget` is what the treasury still grants.
    """
    if budget < 0:
        raise ValueError("budget must be >= 0")
    R = econ.reward
    res = resolve(seg, k0, tau_bps, appeal, R)
    final = res.final
    reserved = k0 * R
    votes: list[VoteScore] = []
    payouts: list[AppealPayout] = []
    per_vote = [0] * len(seg.panels)
    pot = reserved
    bonds = 0
    owed: list[tuple[int, list[int]]] = []  # (round, indices into votes) paid from pot + budget
    for r, panel in enumerate(seg.panels):
        result = res.results[r]
        if panel.status is not PanelStatus.DECIDED:
            start = len(votes)
            for s in panel.seats:
                votes.append(
                    VoteScore(round=r, segment=seg.index, auditor=s.auditor, vote=s.vote, agreed=None,
                              rewarded=0, slashed=0, effect=Effect.NONE, gamma=econ.gamma)
                )  # fmt: skip
            if panel.status is PanelStatus.KEYS_WITHHELD:
                owed.append((r, list(range(start, len(votes)))))
            else:  # UNFILLABLE: the bond pays R per drawn seat
                per_vote[r] = R
                votes[start:] = [v.model_copy(update={"rewarded": R}) for v in votes[start:]]
        else:
            # The appeal's own bond pays an UPHELD panel, so its rewards are final now; an
            # OVERTURNED panel's rewards wait for the pot (set to 0 here, filled in below).
            upheld_or_first = result in (None, AppealResult.UPHELD)
            start = len(votes)
            for s in panel.seats:
                votes.append(
                    score_seat(s, round_=r, segment=seg.index, truth=final, econ=econ, gamma=econ.gamma,
                               slash_seed=slash_seed, reward=R if upheld_or_first else 0)
                )  # fmt: skip
            if upheld_or_first:
                per_vote[r] = R
            agreeing = [i for i in range(start, len(votes)) if votes[i].agreed]
            if r == 0:
                pot -= len(agreeing) * R
            elif result is AppealResult.OVERTURNED and agreeing:
                owed.append((r, agreeing))
        if panel.appeal is not None:
            assert result is not None
            b = panel.appeal.bond
            bonds += b
            refund = b
            if result is AppealResult.UPHELD:
                refund = 0
                pot += b - sum(votes[i].rewarded for i in range(len(votes)) if votes[i].round == r)
            elif result is AppealResult.UNFILLABLE:
                refund = b - len(panel.seats) * R
            due = appellant_reward(b, appeal.reward_bps) if result is AppealResult.OVERTURNED else 0
            payouts.append(
                AppealPayout(round=r, appellant=panel.appeal.appellant, bond=b, result=result, refund=refund,
                             reward_due=due, reward_paid=0)
            )  # fmt: skip
    budget_left = budget
    shortfall = 0

    def take(amount: int) -> None:
        nonlocal pot, budget_left
        from_pot = min(amount, pot)
        pot -= from_pot
        budget_left -= amount - from_pot

    for r, idx in owed:
        pv = min(R, (pot + budget_left) // len(idx))
        per_vote[r] = pv
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


def apply_effects(reputation: int, effects: Sequence[tuple[Effect, int]]) -> int:
    """Reputation after a sequence of (effect, gamma) in seat order: r' = ((1e18 - g) r + g * 1e18 * c) / 1e18."""
    r = reputation
    for effect, gamma in effects:
        if effect is Effect.NONE:
            continue
        r = ((WAD - gamma) * r + (gamma * WAD if effect is Effect.CORRECT else 0)) // WAD
    return r


__all__ = [
    "MAX_PANEL_SEATS",
    "MAX_ROUNDS",
    "Appeal",
    "AppealParams",
    "AppealPayout",
    "AppealRefused",
    "AppealResult",
    "Effect",
    "Panel",
    "PanelSeat",
    "PanelStatus",
    "Resolution",
    "SegmentRecord",
    "SegmentSettlement",
    "Vote",
    "VoteScore",
    "appeal_result",
    "appellant_reward",
    "check_appeal",
    "apply_effects",
    "check_appeal_params",
    "cheapest_spoil",
    "farming_loses",
    "min_bond",
    "panel_seats",
    "resolve",
    "round_slash_draw",
    "score_seat",
    "settle_segment",
    "tally",
]
