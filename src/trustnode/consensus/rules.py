"""The one Python reference of the protocol's on-chain rules, in the contracts' integer arithmetic.

The simulator settles every vote through these functions, and the chain consistency test
checks that the deployed contracts produce the same balances and reputations, so any change
here or in `contracts/src` must keep the two equal.  Conventions (lead's protocol notes):
reputation and probabilities in WAD (1e18 = 1.0); tau, beta, fee split and commission in
basis points; Solidity rounds integer division toward zero, which for the non-negative
quantities here is Python's ``//``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from eth_abi import encode
from eth_utils import keccak, to_checksum_address
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from trustnode.models.enums import SegmentOutcome

WAD = 10**18
BPS = 10_000
AUDIT_POOL_BPS = 8_000  # 80% of the fee funds the session's audit pool, 20% the treasury


# --- quorum and verdicts -------------------------------------------------------------------


def quorum(k: int, tau_bps: int) -> int:
    """q_t = ceil(tau_bps * k_t / 10000) in integers."""
    if k < 1:
        raise ValueError("k must be >= 1")
    if not 0 < tau_bps <= BPS:
        raise ValueError("tau_bps must be in (0, 10000]")
    return -((-tau_bps * k) // BPS)


def segment_outcome(pass_votes: int, fail_votes: int, k: int, tau_bps: int) -> SegmentOutcome:
    """PASS if passVotes >= q, else FAIL if failVotes >= q, else INCONCLUSIVE (PASS checked first)."""
    if pass_votes < 0 or fail_votes < 0 or pass_votes + fail_votes > k:
        raise ValueError(f"impossible tally pass={pass_votes} fail={fail_votes} k={k}")
    q = quorum(k, tau_bps)
    if pass_votes >= q:
        return SegmentOutcome.PASS
    if fail_votes >= q:
        return SegmentOutcome.FAIL
    return SegmentOutcome.INCONCLUSIVE


class TraceVerdict(BaseModel):
    """Trace-level result exactly as the contract stores it."""

    model_config = ConfigDict(frozen=True)

    passed: bool
    weight_passed: int = Field(description="W = sum of w over PASS segments")
    total_weight: int
    score_bps: int = Field(description="W * 10000 / sum(w), integer division")


def trace_verdict(outcomes: Sequence[SegmentOutcome], weights: Sequence[int], beta_bps: int) -> TraceVerdict:
    """PASS iff W * 10000 >= beta_bps * sum(w); score = W * 10000 // sum(w)."""
    if len(outcomes) != len(weights) or not outcomes:
        raise ValueError("need one weight per segment and at least one segment")
    if any(w <= 0 for w in weights):
        raise ValueError("segment weights must be positive")
    if not 0 <= beta_bps <= BPS:
        raise ValueError("beta_bps must be in [0, 10000]")
    total = sum(weights)
    passed_w = sum(w for o, w in zip(outcomes, weights, strict=True) if o == SegmentOutcome.PASS)
    return TraceVerdict(
        passed=passed_w * BPS >= beta_bps * total,
        weight_passed=passed_w,
        total_weight=total,
        score_bps=passed_w * BPS // total,
    )


# --- economics ---------------------------------------------------------------------------------


def fee_split(fee: int) -> tuple[int, int]:
    """(audit pool, treasury) = (fee * 8000 / 10000, the rest)."""
    if fee < 0:
        raise ValueError("fee must be >= 0")
    pool = fee * AUDIT_POOL_BPS // BPS
    return pool, fee - pool


def fee_covers_seats(fee: int, total_seats: int, reward: int) -> bool:
    """Opening a session requires 0.8 * fee >= totalSeats * R (so every reward is funded)."""
    return fee_split(fee)[0] >= total_seats * reward


def reputation_update(r: int, correct: bool, gamma: int) -> int:
    """r' = ((1e18 - gamma) * r + gamma * (correct ? 1e18 : 0)) / 1e18."""
    _check_wad(r, "r")
    _check_wad(gamma, "gamma")
    return ((WAD - gamma) * r + gamma * (WAD if correct else 0)) // WAD


def slash_probability(r: int, p_min: int, p_max: int) -> int:
    """pSlash = pMin + (pMax - pMin) * (1e18 - r) / 1e18 (WAD)."""
    _check_wad(r, "r")
    if not 0 <= p_min <= p_max <= WAD:
        raise ValueError("need 0 <= p_min <= p_max <= 1e18")
    return p_min + (p_max - p_min) * (WAD - r) // WAD


def slash_draw(session_seed: bytes, auditor: str, segment_index: int) -> int:
    """uint256(keccak256(abi.encode(sessionSeed, auditor, segmentIndex))) % 1e18."""
    if len(session_seed) != 32:
        raise ValueError("session seed must be 32 bytes")
    digest = keccak(encode(["bytes32", "address", "uint256"], [session_seed, auditor, segment_index]))
    return int.from_bytes(digest, "big") % WAD


def is_slashed(session_seed: bytes, auditor: str, segment_index: int, p_slash: int) -> bool:
    """A disagreeing vote on a decided segment is slashed iff its draw < pSlash."""
    return slash_draw(session_seed, auditor, segment_index) < p_slash


def commitment(
    chain_id: int, voting_contract: str, session_id: int, auditor: str, verdicts: int, salt: bytes
) -> bytes:
    """keccak256(abi.encode(chainid, votingContract, sessionId, auditor, uint256 verdicts, bytes32 salt))."""
    if len(salt) != 32:
        raise ValueError("salt must be 32 bytes")
    return keccak(
        encode(
            ["uint256", "address", "uint256", "address", "uint256", "bytes32"],
            [chain_id, voting_contract, session_id, auditor, verdicts, salt],
        )
    )


def verdict_bitmap(votes_fail: Sequence[bool]) -> int:
    """Bit j = 1 iff the auditor's j-th seat (seat order) votes FAIL."""
    if len(votes_fail) > 256:
        raise ValueError("at most 256 seats per auditor fit a uint256 bitmap")
    return sum(1 << j for j, fail in enumerate(votes_fail) if fail)


def pack_tiers_weights(tiers: Sequence[int], weights: Sequence[int]) -> bytes:
    """3 bytes per segment: tier (uint8) then weight (uint16 big-endian)."""
    if len(tiers) != len(weights):
        raise ValueError("one weight per tier")
    out = bytearray()
    for t, w in zip(tiers, weights, strict=True):
        # The same bounds the contract enforces (InvalidTier, InvalidWeight).
        if not 0 <= t <= 2:
            raise ValueError(f"tier {t} is not 0, 1 or 2")
        if not 1 <= w <= 0xFFFF:
            raise ValueError(f"weight {w} out of range 1..65535")
        out += bytes([t]) + w.to_bytes(2, "big")
    return bytes(out)


def _check_wad(x: int, name: str) -> None:
    if not 0 <= x <= WAD:
        raise ValueError(f"{name} must be in [0, 1e18], got {x}")


# --- settlement of one auditor in one session --------------------------------------------------


class EconomicRules(BaseModel):
    """The on-chain economic parameters (token units and WAD/bps fixed point)."""

    model_config = ConfigDict(frozen=True)

    reward: int = Field(ge=0, description="R per agreeing vote, token wei")
    penalty: int = Field(ge=0, description="P per slashed vote, token wei")
    p_min: int = Field(ge=0, le=WAD)
    p_max: int = Field(ge=0, le=WAD)
    gamma: int = Field(ge=0, le=WAD)

    @model_validator(mode="after")
    def _ordered(self) -> EconomicRules:
        if self.p_min > self.p_max:
            raise ValueError("p_min must not exceed p_max")
        return self


class Seat(BaseModel):
    """One seat of an auditor: its segment and its revealed vote (None = never revealed)."""

    model_config = ConfigDict(frozen=True)

    segment_index: int = Field(ge=0)
    vote_fail: bool | None = None


class SeatSettlement(BaseModel):
    model_config = ConfigDict(frozen=True)

    segment_index: int
    outcome: SegmentOutcome
    revealed: bool
    agreed: bool | None = Field(description="None when the segment is INCONCLUSIVE")
    rewarded: int
    slashed: int
    draw: int | None = None


class AuditorSettlement(BaseModel):
    """What settling one auditor in one session moves, and its reputation afterwards."""

    model_config = ConfigDict(frozen=True)

    auditor: str
    reputation_before: int
    reputation_after: int
    p_slash: int
    gross_reward: int
    commission: int
    reward_to_pool: int
    slashed: int
    pool_assets_after: int
    seats: list[SeatSettlement]
    correct: int = Field(description="agreeing votes on decided segments (rewarded)")
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
    session_seed: bytes,
    rules: EconomicRules,
    finalized: bool = True,
) -> AuditorSettlement:
    """Settle every seat of one auditor in one session, as the contracts do.

    Seat by seat in seat order: an agreeing vote on a decided segment counts for a reward R;
    a disagreeing revealed vote on a decided segment is slashed iff its draw is below
    pSlash(r_before); a seat never revealed is always slashed and counts as incorrect;
    INCONCLUSIVE segments change nothing for revealed seats.  Reputation moves after every
    counted vote.  Then, once for the auditor: the slash taken is min(slashes * P, pool assets
    before this settlement); the commission is gross reward * commission_bps // 10000, paid to
    the auditor; the rest of the reward goes into its staking pool.  A session that never
    finalized (cancelled or expired) settles nothing but the lock.
    """
    if not 0 <= commission_bps <= BPS:
        raise ValueError("commission_bps must be in [0, 10000]")
    if pool_assets < 0:
        raise ValueError("pool assets must be >= 0")
    r_before = reputation
    p_slash = slash_probability(r_before, rules.p_min, rules.p_max)
    r = r_before
    correct = slashes = 0
    out: list[SeatSettlement] = []
    for seat in seats if finalized else ():
        outcome = outcomes[seat.segment_index]
        if outcome == SegmentOutcome.NONE:
            raise ValueError(f"segment {seat.segment_index} is not finalized")
        decided = outcome in (SegmentOutcome.PASS, SegmentOutcome.FAIL)
        hit = False
        draw: int | None = None
        agreed: bool | None = None
        if seat.vote_fail is None:
            hit = True
            r = reputation_update(r, False, rules.gamma)
        elif decided:
            agreed = seat.vote_fail == (outcome == SegmentOutcome.FAIL)
            if not agreed:
                draw = slash_draw(session_seed, auditor, seat.segment_index)
                hit = draw < p_slash
            r = reputation_update(r, agreed, rules.gamma)
        correct += agreed is True
        slashes += hit
        rewarded = rules.reward if agreed else 0
        slashed = rules.penalty if hit else 0
        out.append(
            SeatSettlement(
                segment_index=seat.segment_index,
                outcome=outcome,
                revealed=seat.vote_fail is not None,
                agreed=agreed,
                rewarded=rewarded,
                slashed=slashed,
                draw=draw,
            )
        )
    gross = correct * rules.reward
    slashed_total = min(slashes * rules.penalty, pool_assets)
    commission = gross * commission_bps // BPS
    to_pool = gross - commission
    return AuditorSettlement(
        auditor=auditor,
        reputation_before=r_before,
        reputation_after=r,
        p_slash=p_slash,
        gross_reward=gross,
        commission=commission,
        reward_to_pool=to_pool,
        slashed=slashed_total,
        pool_assets_after=pool_assets - slashed_total + to_pool,
        seats=out,
        correct=correct,
        slashes=slashes,
    )


def tally(seats_by_auditor: Iterable[Sequence[Seat]], n_segments: int) -> list[tuple[int, int]]:
    """(pass, fail) revealed votes per segment from every auditor's seats."""
    counts = [[0, 0] for _ in range(n_segments)]
    for seats in seats_by_auditor:
        for seat in seats:
            if seat.vote_fail is None:
                continue
            counts[seat.segment_index][1 if seat.vote_fail else 0] += 1
    return [(a, b) for a, b in counts]
