"""Protocol v2 parameters and enums as the contracts define them, and the devnet's defaults.

`SessionParams` is `IAuditSessions.SessionParams` (each session pins the version current at
its opening); `StakingParams` is `StakingLedger.StakingParams`; `epoch_blocks` and the
lookahead delay are constructor arguments of Staking and LookaheadRandomness.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from trustnode.consensus.appeals import MAX_CANARY_REFUND_BPS, AppealParams
from trustnode.consensus.canaries import MAX_CANARY_COMMIT_BLOCKS, CanaryParams
from trustnode.consensus.rules import EconomicRules

WAD = 10**18
TOKEN = 10**18


class SessionStatus(IntEnum):
    """IAuditSessions.Status."""

    NONE = 0
    CREATED = 1
    DRAWING = 2
    KEYS_PUBLISHED = 3
    COMMIT = 4
    REVEAL = 5
    FINALIZED = 6
    CANCELLED = 7
    EXPIRED = 8

    @property
    def terminal(self) -> bool:
        return self in (SessionStatus.FINALIZED, SessionStatus.CANCELLED, SessionStatus.EXPIRED)


class Termination(IntEnum):
    """IAuditSessions.Termination: why a session ended without a verdict."""

    NONE = 0
    RANDOMNESS_MISSED = 1
    RANDOMNESS_FAILED = 2
    SNAPSHOT_UNAVAILABLE = 3
    DRAW_FAILED = 4
    DRAW_ABANDONED = 5
    KEYS_WITHHELD = 6
    DRAW_REFUSED = 7


class RequestStatus(IntEnum):
    """IRandomness.RequestStatus."""

    UNKNOWN = 0
    PENDING = 1
    READY = 2
    FULFILLED = 3
    EXPIRED = 4
    FAILED = 5


class SessionParams(BaseModel):
    """IAuditSessions.SessionParams: what a session pins at opening."""

    model_config = ConfigDict(frozen=True)

    tau_bps: int = Field(gt=5000, le=10_000, description="quorum share; q_t = ceil(tau * k_t)")
    beta_bps: int = Field(gt=0, le=10_000, description="trace PASS iff W >= beta * sum(w)")
    seat_cap: int = Field(ge=1, le=64, description="max seats per auditor per session")
    seats_per_tier: tuple[int, int, int] = Field(description="k_t for Computer, LLM, Human (1..31)")
    tier_weight: tuple[int, int, int] = Field(
        description="w_t enforced per tier (0 = the provider chooses any weight >= 1)"
    )
    gamma: int = Field(ge=0, le=WAD)
    p_min: int = Field(ge=0, le=WAD)
    p_max: int = Field(ge=0, le=WAD)
    reward: int = Field(ge=0, description="R per agreeing vote (token wei)")
    slash_amount: int = Field(ge=0, description="P per slash (token wei), locked per seat at draw")
    draw_blocks: int = Field(ge=1)
    key_blocks: int = Field(ge=1)
    commit_blocks: int = Field(ge=1)
    reveal_blocks: int = Field(ge=1)
    canary_commit_blocks: int = Field(
        default=0,
        ge=0,
        le=MAX_CANARY_COMMIT_BLOCKS,
        description="canaryCommitBlocks: a session owing canaries has its draw randomness target at "
        "open + max(delay, this), the canary operator's commit window",
    )
    # issue 15 (the names of consensus.appeals.AppealParams / canaries.CanaryParams); the
    # defaults disable both, as a contract version without them behaves
    appeal_blocks: int = Field(default=0, ge=0, description="appeal window (blocks); 0 disables appeals")
    max_rounds: int = Field(default=0, ge=0, le=4, description="appeal panels per segment")
    appeal_bond_multiplier_bps: int = Field(default=10_000, ge=10_000, le=100_000)
    appeal_reward_bps: int = Field(
        default=0, ge=0, le=10_000, description="successful appellant's reward / bond"
    )
    appeal_budget: int = Field(
        default=0, ge=0, description="most the treasury grants one session for appeal panels and rewards"
    )
    canary_rate_bps: int = Field(default=0, ge=0, le=3000, description="canaries / segments")
    canary_reveal_blocks: int = Field(default=1, ge=1, description="canary reveal window (blocks)")
    canary_gamma: int = Field(default=0, ge=0, le=WAD, description="reputation step of a canary vote")
    canary_refund_bps: int = Field(
        default=0,
        ge=0,
        le=MAX_CANARY_REFUND_BPS,
        description="refund per revealed canary / (k R); at most the treasury's 20% fee share (2500)",
    )

    @property
    def appeal(self) -> AppealParams:
        """The appeal part, as the reference rules take it."""
        return AppealParams(
            appeal_blocks=self.appeal_blocks,
            max_rounds=self.max_rounds,
            bond_multiplier_bps=self.appeal_bond_multiplier_bps,
            reward_bps=self.appeal_reward_bps,
        )

    @property
    def canary(self) -> CanaryParams:
        """The canary part, as the reference rules take it."""
        return CanaryParams(
            rate_bps=self.canary_rate_bps,
            gamma=self.canary_gamma,
            reveal_blocks=self.canary_reveal_blocks,
            refund_bps=self.canary_refund_bps,
        )

    @property
    def econ(self) -> EconomicRules:
        """R, P, pMin, pMax and gamma, as the reference rules take them."""
        return EconomicRules(
            reward=self.reward,
            penalty=self.slash_amount,
            p_min=self.p_min,
            p_max=self.p_max,
            gamma=self.gamma,
        )

    @model_validator(mode="after")
    def _check(self) -> SessionParams:
        if self.p_min > self.p_max:
            raise ValueError("p_min must not exceed p_max")
        if not all(1 <= k <= 31 for k in self.seats_per_tier):
            raise ValueError("seats per tier must be in 1..31")
        return self

    def as_abi(self) -> tuple[Any, ...]:
        return (
            self.tau_bps,
            self.beta_bps,
            self.seat_cap,
            list(self.seats_per_tier),
            list(self.tier_weight),
            self.gamma,
            self.p_min,
            self.p_max,
            self.reward,
            self.slash_amount,
            self.draw_blocks,
            self.key_blocks,
            self.commit_blocks,
            self.reveal_blocks,
            self.canary_commit_blocks,
        )

    @classmethod
    def from_abi(cls, t: Sequence[Any]) -> SessionParams:
        names = list(cls.model_fields)[: len(t)]
        values = dict(zip(names, t, strict=True))
        values["seats_per_tier"] = tuple(values["seats_per_tier"])
        values["tier_weight"] = tuple(values["tier_weight"])
        return cls.model_validate(values)


class StakingParams(BaseModel):
    """StakingLedger.StakingParams."""

    model_config = ConfigDict(frozen=True)

    min_stake: tuple[int, int, int] = Field(description="per tier, token wei, for sortition eligibility")
    cooldown: int = Field(ge=0, description="withdrawal cooldown, seconds")
    commission_delay: int = Field(ge=0, description="seconds before a commission change applies")
    initial_reputation: int = Field(ge=0, le=WAD, description="r0")
    reputation_floor: int = Field(ge=0, le=WAD, description="weight = backing * (r + floor)")
    max_commission_bps: int = Field(ge=0, le=5000)

    def as_abi(self) -> tuple[Any, ...]:
        return (
            list(self.min_stake),
            self.cooldown,
            self.commission_delay,
            self.initial_reputation,
            self.reputation_floor,
            self.max_commission_bps,
        )

    @classmethod
    def from_abi(cls, t: Sequence[Any]) -> StakingParams:
        return cls(
            min_stake=tuple(t[0]),
            cooldown=t[1],
            commission_delay=t[2],
            initial_reputation=t[3],
            reputation_floor=t[4],
            max_commission_bps=t[5],
        )


def check_stake_premise(session: SessionParams, staking: StakingParams) -> None:
    """Refuse parameters under which appeals are on and a tier's minimum stake backs no seat lock
    (outside review 22).  AuditSessions opens a session with appeals only if each tier's minimum backs
    every lock the session can ask of one auditor of the tier: slash_amount per segment of the tier, in
    every practical case (`MinStakeBelowSessionLocks`, `consensus.session_stake.max_session_segments`);
    below one lock no session with a segment of the tier could open.  The per-session bound is the
    chain's: it depends on the session's segments."""
    if session.appeal_blocks == 0 or session.max_rounds == 0 or session.slash_amount == 0:
        return
    for tier, floor in enumerate(staking.min_stake):
        if floor < session.slash_amount:
            raise ValueError(
                f"tier {tier}: minimum stake {floor} wei is below one seat lock ({session.slash_amount} wei); "
                "with appeals on, a session opens only if the minimum backs one lock per segment of the tier"
            )


#: Blocks between a randomness request and the block whose hash serves it (LookaheadRandomness).
DEVNET_RANDOMNESS_DELAY = 2
#: Blocks per staking snapshot epoch on a devnet. A session draws from the snapshot at the start of
#: its opening epoch, so new stake enters draws within one epoch; the draw must end within two.
DEVNET_EPOCH_BLOCKS = 12
DEVNET_SESSION_PARAMS = SessionParams(
    tau_bps=6000,
    beta_bps=7000,
    seat_cap=8,
    seats_per_tier=(1, 3, 3),
    tier_weight=(0, 0, 0),
    gamma=WAD // 10,
    p_min=WAD // 5,
    p_max=WAD // 2,
    reward=6 * TOKEN,
    slash_amount=8 * TOKEN,
    draw_blocks=40,
    key_blocks=40,
    commit_blocks=40,
    reveal_blocks=40,
    # 1 s blocks: the operator's round trip (IPFS fetch, decryption, proofs, one transaction) takes
    # a few seconds; 8 blocks leave room for a slow fetch while the draw still ends in its epochs
    canary_commit_blocks=8,
)
DEVNET_STAKING_PARAMS = StakingParams(
    # Outside review 22: with appeals on, a session opens only if the minimum backs one lock (slash_amount,
    # 8 TRUST) per segment of a tier: 25 segments of a tier (the demo's appeal act has 20 computer ones).
    min_stake=(200 * TOKEN, 200 * TOKEN, 200 * TOKEN),
    cooldown=60,
    commission_delay=60,
    initial_reputation=WAD // 2,
    reputation_floor=WAD // 2,
    max_commission_bps=2000,
)
