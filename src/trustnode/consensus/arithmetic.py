"""Integer arithmetic of protocol v2's verdicts and economics: quorum, segment and trace verdicts,
fee split, pool remainder, payouts of sessions that end without a verdict, reputation, p_slash.

Plain functions over plain data in the contracts' fixed point (WAD = 1e18, basis points), each
naming the Solidity expression it mirrors.  `consensus.rules` re-exports every name here and adds
the settlement of one auditor; import from there.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import IntEnum

from pydantic import BaseModel, ConfigDict, Field

from trustnode.consensus.encoding import WAD
from trustnode.models.enums import SegmentOutcome

BPS = 10_000
AUDIT_POOL_BPS = 8_000  # 80% of the fee funds the session's audit pool, 20% the treasury
PRICE_FLOOR_INVERSE = 10**9  # StakingLedger: a pool resets when assets * 1e9 < shares


# --- quorum and verdicts -------------------------------------------------------------------


def quorum(k: int, tau_bps: int) -> int:
    """q_t = ceil(tau_bps * k_t / 10000) in integers."""
    if k < 1:
        raise ValueError("k must be >= 1")
    if not 0 < tau_bps <= BPS:
        raise ValueError("tau_bps must be in (0, 10000]")
    return -((-tau_bps * k) // BPS)


def segment_outcome(pass_votes: int, fail_votes: int, k: int, tau_bps: int) -> SegmentOutcome:
    """PASS if passVotes >= q, else FAIL if failVotes >= q, else INCONCLUSIVE (PASS checked first).

    Abstentions and unrevealed seats count in neither tally.
    """
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


# --- fee, pool and the sessions that end without a verdict ----------------------------------


def fee_split(fee: int) -> tuple[int, int]:
    """(audit pool, treasury) = (fee * 8000 / 10000, the rest), the treasury's share at opening."""
    if fee < 0:
        raise ValueError("fee must be >= 0")
    pool = fee * AUDIT_POOL_BPS // BPS
    return pool, fee - pool


def fee_covers_seats(fee: int, total_seats: int, reward: int) -> bool:
    """Opening a session requires 0.8 * fee >= totalSeats * R (so every reward is funded)."""
    return fee_split(fee)[0] >= total_seats * reward


def pool_remainder(pool: int, rewards: Iterable[int]) -> int:
    """What goes to the treasury when the last auditor of a session is settled (`payOut`)."""
    left = pool - sum(rewards)
    if left < 0:
        raise ValueError("rewards exceed the audit pool")
    return left


class Termination(IntEnum):
    """Why a session ended without a verdict (IAuditSessions.Termination, contract order)."""

    NONE = 0
    RANDOMNESS_MISSED = 1  # draw randomness available and nobody fixed it: provider's abandonment
    RANDOMNESS_FAILED = 2  # no value in time (VRF timeout, or too late for the draw window): nobody's fault
    SNAPSHOT_UNAVAILABLE = 3  # the draw started after its snapshot stopped being readable
    DRAW_FAILED = 4  # eligible weight truly cannot fill the seats
    DRAW_ABANDONED = 5  # nobody finished the draw before its deadline
    KEYS_WITHHELD = 6  # the provider never published the keys
    DRAW_REFUSED = 7  # a segment unfilled after sampled auditors refused their locks: no refund


class TerminationPayout(BaseModel):
    """Where the audit pool of a session that ended without a verdict goes (`_terminate`)."""

    model_config = ConfigDict(frozen=True)

    reserved: int = Field(description="R per drawn seat, paid to its auditor at settlement")
    refunded: int = Field(description="to the provider: only when nobody could have prevented the end")
    forfeited: int = Field(description="to the treasury: no refund once the randomness target is fixed")


def termination_payout(pool: int, reward: int, drawn_seats: int, reason: Termination) -> TerminationPayout:
    """Drawn seats keep R each for their locked time; the rest is refunded only for a source that
    never delivered or a draw that truly could not fill its seats, else it goes to the treasury
    (so withholding keys or letting the randomness lapse cannot re-roll a draw for free)."""
    if reason == Termination.NONE:
        raise ValueError("a terminated session has a reason")
    reserved = reward * drawn_seats
    rest = pool - reserved
    if rest < 0:
        raise ValueError("the pool does not cover R per drawn seat")
    refund = reason in (Termination.RANDOMNESS_FAILED, Termination.DRAW_FAILED)
    return TerminationPayout(
        reserved=reserved, refunded=rest if refund else 0, forfeited=0 if refund else rest
    )


# --- reputation and the slash probability ------------------------------------------------------


def _check_wad(x: int, name: str) -> None:
    if not 0 <= x <= WAD:
        raise ValueError(f"{name} must be in [0, 1e18], got {x}")


def reputation_update(r: int, correct: bool, gamma: int) -> int:
    """The spec's step r' = ((1e18 - gamma) * r + gamma * (correct ? 1e18 : 0)) / 1e18.

    On chain a session's steps are composed into one map first (`reputation_step`), whose
    truncation can differ from chaining this function by a few wei.
    """
    _check_wad(r, "r")
    _check_wad(gamma, "gamma")
    return ((WAD - gamma) * r + gamma * (WAD if correct else 0)) // WAD


def reputation_step(mul: int, add: int, correct: bool, gamma: int) -> tuple[int, int]:
    """Compose one more step into the session's map r -> r * mul / 1e18 + add (SettlementModule):
    mul' = mul * (1e18 - gamma) / 1e18, add' = (add * (1e18 - gamma) + (correct ? gamma * 1e18 : 0)) / 1e18.
    """
    _check_wad(gamma, "gamma")
    keep = WAD - gamma
    return mul * keep // WAD, (add * keep + (gamma * WAD if correct else 0)) // WAD


def apply_reputation(r: int, mul: int, add: int) -> int:
    """Staking applies a session's map when its ledger entry reaches the head, in draw order:
    r -> min(1e18, r * mul / 1e18 + add)."""
    _check_wad(r, "r")
    return min(WAD, r * mul // WAD + add)


def slash_probability(r: int, p_min: int, p_max: int) -> int:
    """pSlash = pMin + (pMax - pMin) * (1e18 - r) / 1e18 (WAD), r fixed when the auditor was drawn."""
    _check_wad(r, "r")
    if not 0 <= p_min <= p_max <= WAD:
        raise ValueError("need 0 <= p_min <= p_max <= 1e18")
    return p_min + (p_max - p_min) * (WAD - r) // WAD
