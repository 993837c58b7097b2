"""Reference rules of appeals (issue 15): the data model, panel sizes and bonds, admission.

The shape.  A session's panels are numbered by **round**: round 0 is the session's own panel,
round `a >= 1` is the session's `a`-th appeal (its ledger key is `PanelKey.keyOf(sessionId, a)`
and its slash coins `keccak256(slashSeed, auditor, a, segment)`).  One appeal names one or more
segments, all at the same **depth** d (the number of panels the segment has had after round 0);
the round gives each of them a panel of k_{d+1} = 2 k_d + 1 seats of its tier, excluding the
provider and everyone who sat on an earlier panel of that segment.  So a segment's history is a
list of panels in depth order whose round numbers increase (not necessarily by one: other
segments' appeals take rounds in between).  Each DECIDED panel's quorum outcome replaces the
segment's outcome; every vote of every round is scored against the FINAL outcome
(`appeal_settlement`); `appeal_resolution` validates a history and resolves it.

`docs/appeals-canaries.md` is the prose; the contracts must reproduce these functions exactly
(WAD and basis points, Solidity rounding = Python ``//`` on non-negative integers).  They take
and return plain pydantic data, so the simulator, the tests, the in-memory chain and the chain
consistency test share one implementation.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from eth_utils import to_checksum_address
from pydantic import BaseModel, ConfigDict, Field, field_validator

from trustnode.consensus.encoding import MAX_ROUND
from trustnode.consensus.rules import BPS, WAD, EconomicRules, quorum
from trustnode.models.enums import SegmentOutcome, Tier

#: Panel tallies are 6-bit counters on chain: no panel may exceed 63 seats.
MAX_PANEL_SEATS = 63
#: Hard bound on appeal rounds (k_4 = 16 (k_0 + 1) - 1 already exceeds 63 for k_0 >= 3).
MAX_ROUNDS = 4
MAX_PHASE_BLOCKS = 100_000
DECIDED = (SegmentOutcome.PASS, SegmentOutcome.FAIL)


#: Most canaryRefundBps (review finding 3): a canary's seats cost its provider k R of pool, paid with
#: a fee of at least k R / 0.8, whose 20% (k R / 4 = 2500 bps of k R) is all the provider loses when
#: its own auditors hold those seats; a refund above that share would pay the provider for canaries.
MAX_CANARY_REFUND_BPS = 2500


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
    REFUSED = "refused"  # the draw failed after sampled auditors refused their stake locks
    ABANDONED = "abandoned"  # its randomness was obtainable in time and nobody drew: the appellant's doing


class AppealResult(StrEnum):
    UPHELD = "upheld"  # final outcome == appealed outcome: the appeal failed
    OVERTURNED = (
        "overturned"  # final outcome differs (and is decided, or the appeal was against INCONCLUSIVE)
    )
    VOIDED = "voided"  # appealed PASS/FAIL, final INCONCLUSIVE: bond back, no reward
    KEYS_WITHHELD = "keys_withheld"  # INCONCLUSIVE + bond back, or FAIL + bond lost: withheld_keeps
    UNFILLABLE = "unfillable"  # bond back minus R per drawn seat, outcome stands and is final
    REFUSED = "refused"  # as withheld (outcome_after_withheld), bond back whole, seats from the pot
    ABANDONED = "abandoned"  # outcome stands (final), bond forfeited: R per drawn seat, the rest to the pot


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
    """One panel of one segment; its depth is its position in `SegmentRecord.panels`."""

    model_config = ConfigDict(frozen=True)

    round: int = Field(ge=0, le=MAX_ROUND, description="the session round (0: its own panel; a: appeal a)")
    seats: list[PanelSeat]
    status: PanelStatus = PanelStatus.DECIDED
    appeal: Appeal | None = Field(default=None, description="None exactly for round 0")


class SegmentRecord(BaseModel):
    """Everything that happened to one segment, round 0 first, panels in depth order."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(ge=0)
    tier: Tier
    weight: int = Field(ge=1, le=0xFFFF)
    panels: list[Panel] = Field(min_length=1)

    @property
    def depth(self) -> int:
        """Panels after round 0 (0 = never appealed)."""
        return len(self.panels) - 1


# --- sizes, bonds and the farming inequality -----------------------------------------------------


def panel_seats(k0: int, depth: int) -> int:
    """k_d = 2 k_{d-1} + 1 with k_0 the tier's seats, i.e. k_d = 2^d (k_0 + 1) - 1 (d = panel depth)."""
    if k0 < 1 or not 0 <= depth <= MAX_ROUNDS:
        raise ValueError("need k0 >= 1 and 0 <= depth <= 4")
    return (k0 + 1) * (1 << depth) - 1


def min_bond(k0: int, depth: int, reward: int, multiplier_bps: int) -> int:
    """Bond per segment for its panel of depth d >= 1: k_d * R * appealBondMultiplierBps / 10000."""
    if depth < 1:
        raise ValueError("depth 0 is not an appeal")
    return panel_seats(k0, depth) * reward * multiplier_bps // BPS


def appellant_reward(bond: int, reward_bps: int) -> int:
    """A successful appellant's reward on top of its returned bond: bond * appealRewardBps / 10000."""
    return bond * reward_bps // BPS


def cheapest_spoil(k: int, tau_bps: int) -> int:
    """Fewest wrong votes that make a k-seat panel's outcome wrong (INCONCLUSIVE or the opposite)."""
    q = quorum(k, tau_bps)
    return min(q, k - q + 1)


def farming_loses(
    k0: int,
    depth: int,
    tau_bps: int,
    appeal: AppealParams,
    econ: EconomicRules,
    *,
    count_forgone: bool = True,
) -> bool:
    """True iff a coalition that spoils a segment's panel of depth `depth` and appeals it expects to lose.

    Cost: m = cheapest_spoil(k_d) wrong votes, each slashed P with probability >= p_min and (with
    `count_forgone`) forgoing the reward R it would have earned; gain: the appellant reward on the
    bond of depth d + 1, even if the appeal surely succeeds.  Exact in integers:
    m * (R * 1e18 [if forgone] + pMin * P) * 10000 > rewardBps * bond * 1e18.
    """
    m = cheapest_spoil(panel_seats(k0, depth), tau_bps)
    per_vote = (econ.reward * WAD if count_forgone else 0) + econ.p_min * econ.penalty
    bond = min_bond(k0, depth + 1, econ.reward, appeal.bond_multiplier_bps)
    return m * per_vote * BPS > appeal.reward_bps * bond * WAD


def safe_rounds(appeal: AppealParams, seats: Sequence[int], tau_bps: int, econ: EconomicRules) -> int:
    """The most rounds (up to `max_rounds`) whose every panel fits 63 seats and after whose every
    earlier round spoiling a panel and appealing it loses, in every tier (the contracts' `_safeRounds`:
    a session's appeals stop there even if its core parameters changed after the appeal version)."""
    for r in range(appeal.max_rounds):
        for k0 in seats:
            if panel_seats(k0, r + 1) > MAX_PANEL_SEATS or not farming_loses(k0, r, tau_bps, appeal, econ):
                return r
    return appeal.max_rounds


def check_appeal_params(
    appeal: AppealParams,
    seats: Sequence[int],
    tau_bps: int,
    econ: EconomicRules,
    *,
    canary_refund_bps: int = 0,
) -> None:
    """What `setParams` enforces: the canary refund within the treasury's fee share
    (`MAX_CANARY_REFUND_BPS`), and every round safe (`safe_rounds`); raises saying which
    is not."""
    if not 0 <= canary_refund_bps <= MAX_CANARY_REFUND_BPS:
        raise ValueError(
            f"canary_refund_bps {canary_refund_bps} > {MAX_CANARY_REFUND_BPS}: a provider whose own auditors "
            "hold its canaries' seats would recover more than the canaries cost it (the treasury's 20% share)"
        )
    r = safe_rounds(appeal, seats, tau_bps, econ)
    if r == appeal.max_rounds:
        return
    for t, k0 in enumerate(seats):
        if panel_seats(k0, r + 1) > MAX_PANEL_SEATS:
            raise ValueError(f"tier {t}: k_{r + 1} = {panel_seats(k0, r + 1)} > 63")
        if not farming_loses(k0, r, tau_bps, appeal, econ):
            raise ValueError(
                f"tier {t}: spoiling a depth-{r} panel and appealing it would pay (lower reward_bps)"
            )
    raise AssertionError("safe_rounds stopped early without a reason")  # pragma: no cover


class AppealRefused(ValueError):
    """An appeal the contract reverts: nothing is taken from the appellant.

    `name` is the contract's error name, the message starts with it.
    """

    def __init__(self, name: str, detail: str = "") -> None:
        super().__init__(f"{name}: {detail}" if detail else name)
        self.name = name
        self.detail = detail


def first_window(finalized_at: int, canary_reveal_blocks: int, appeal_blocks: int) -> tuple[int, int]:
    """(canaryEnd, windowEnd) of a session whose round 0 finalized at block `finalized_at`: the
    canary reveal window is (finalized_at, canaryEnd], then every segment's first appeal window is
    (canaryEnd, windowEnd], `appealBlocks` long, so a revealed canary is known before any appeal."""
    canary_end = finalized_at + canary_reveal_blocks
    return canary_end, canary_end + appeal_blocks


def window_after_round(round_end: int, appeal_blocks: int, *, rounds_left: bool) -> int:
    """The last block the segments of a round that ended (decided) at `round_end` may be appealed
    again: a new window of `appealBlocks` while rounds remain, none (0) otherwise."""
    return round_end + appeal_blocks if rounds_left else 0


__all__ = [
    "MAX_PANEL_SEATS",
    "MAX_ROUNDS",
    "Appeal",
    "AppealParams",
    "AppealRefused",
    "AppealResult",
    "Effect",
    "Panel",
    "PanelSeat",
    "PanelStatus",
    "SegmentRecord",
    "Vote",
    "appellant_reward",
    "check_appeal_params",
    "cheapest_spoil",
    "farming_loses",
    "first_window",
    "min_bond",
    "panel_seats",
    "window_after_round",
]
