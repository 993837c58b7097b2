"""Reference rules of gold canaries (issue 15), in the contracts' integer arithmetic.

A canary operator commits one hash per canary after the opening, within the session's commit
window (`canary_commit_window`: the draw's randomness target is open + max(delay,
canaryCommitBlocks)); the number of canaries is a public function of the segment count; after
the reveal phase, within canaryRevealBlocks, it reveals (index, verdict, salt).  A revealed canary's votes are scored
against the committed truth and move reputation by `canaryGamma`; its segment never counts in
the trace verdict.  A canary never revealed is a normal segment for its voters, but the trace
loses the session's largest segment weight from W for each one, so withholding a reveal never
helps the provider's verdict.  Prose: `docs/appeals-canaries.md`.
"""

from __future__ import annotations

from collections.abc import Sequence

from eth_abi import encode
from eth_utils import keccak, to_checksum_address
from pydantic import BaseModel, ConfigDict, Field

from trustnode.consensus.appeal_settlement import VoteScore, score_seat
from trustnode.consensus.appeals import DECIDED, MAX_CANARY_REFUND_BPS, Effect, Panel, PanelStatus
from trustnode.consensus.rules import BPS, WAD, EconomicRules, TraceVerdict
from trustnode.models.enums import SegmentOutcome

MAX_CANARY_RATE_BPS = 3000
#: Most blocks of a canary commit window (`canaryCommitBlocks`): VRF v2.5 waits at most 200
#: confirmations, and a VRF source asks for one more than the window.
MAX_CANARY_COMMIT_BLOCKS = 199


def check_canary_window(commit_blocks: int, epoch_blocks: int) -> None:
    """Refuse a canary commit window longer than a staking epoch (`AuditSessions._pushParams`): the
    draw could then never start before the opening epoch's snapshot stops being readable."""
    if commit_blocks > epoch_blocks:
        raise ValueError(
            f"canary_commit_blocks {commit_blocks} is longer than an epoch ({epoch_blocks} blocks): "
            "a session owing canaries could never be drawn before its snapshot expires; "
            f"use at most {epoch_blocks}"
        )


class CanaryParams(BaseModel):
    """Canary parameters of a session (pinned with its params version)."""

    model_config = ConfigDict(frozen=True)

    rate_bps: int = Field(default=1000, ge=0, le=MAX_CANARY_RATE_BPS, description="canaries / segments")
    gamma: int = Field(
        default=WAD // 5, ge=0, le=WAD, description="canaryGamma: reputation step of a canary vote"
    )
    reveal_blocks: int = Field(default=40, ge=1, le=100_000, description="canaryRevealBlocks")
    refund_bps: int = Field(
        default=MAX_CANARY_REFUND_BPS,
        ge=0,
        le=MAX_CANARY_REFUND_BPS,
        description="treasury refund per revealed canary / (k R); at most the treasury's fee share",
    )


# --- counts and commitments ----------------------------------------------------------------------


def canary_count(n_segments: int, rate_bps: int) -> int:
    """The number of canaries a session of n segments (canaries included) must commit: n * rate / 10000."""
    if n_segments < 0 or not 0 <= rate_bps <= MAX_CANARY_RATE_BPS:
        raise ValueError("need n >= 0 and 0 <= rate_bps <= 3000")
    return n_segments * rate_bps // BPS


def canaries_for_real(n_real: int, rate_bps: int) -> int:
    """How many canaries the node adds to n_real real segments: c = n_real * rate / (10000 - rate).

    Then canary_count(n_real + c, rate) == c exactly (the provider's count always passes the check).
    """
    if n_real < 0 or not 0 <= rate_bps <= MAX_CANARY_RATE_BPS:
        raise ValueError("need n_real >= 0 and 0 <= rate_bps <= 3000")
    return n_real * rate_bps // (BPS - rate_bps)


def canary_commitment(session_id: int, index: int, verdict: SegmentOutcome, salt: bytes) -> bytes:
    """keccak256(abi.encode(uint256 sessionId, uint256 index, uint8 verdict, bytes32 salt)).

    The provider node posts these with `commitCanaries(sessionId, hashes)` after `openSession`
    returned the id and before the draw's randomness target block (the contract refuses later
    commitments), so nobody, the provider included, knows the seats when the canaries are fixed.
    verdict is PASS (1) or FAIL (2); the salt keeps a 2-valued verdict from being guessed.
    """
    if verdict not in DECIDED:
        raise ValueError("a canary's verdict is PASS or FAIL")
    if len(salt) != 32:
        raise ValueError("salt is 32 bytes")
    if session_id < 0 or index < 0:
        raise ValueError("session id and index are unsigned")
    return keccak(encode(["uint256", "uint256", "uint8", "bytes32"], [session_id, index, int(verdict), salt]))


def canary_commit_window(randomness_delay: int, commit_blocks: int, owed: int) -> int:
    """Blocks after `openSession` until the draw's randomness target: `max(delay, canaryCommitBlocks)`
    for a session owing canaries, the randomness delay alone otherwise.

    The operator's commit is accepted through block `open + window` (the request is still Pending
    there), so it always has `canaryCommitBlocks` blocks for its round trip (IPFS fetch, decryption,
    proofs, transaction), and nobody can know the draw while a commit is still accepted.
    """
    if randomness_delay < 1 or not 0 <= commit_blocks <= MAX_CANARY_COMMIT_BLOCKS or owed < 0:
        raise ValueError("need delay >= 1, 0 <= canaryCommitBlocks <= 199 and owed >= 0")
    return max(randomness_delay, commit_blocks) if owed else randomness_delay


def canary_reveal_open(block: int, reveal_end: int, reveal_blocks: int) -> bool:
    """Reveals are accepted in (revealEnd, revealEnd + canaryRevealBlocks]: after every vote is public.

    A reveal before the votes are all revealed would tell the voters which seat is a canary; after
    the window the session settles without it (the canary is never scored against its truth).
    """
    return reveal_end < block <= reveal_end + reveal_blocks


class CanaryReveal(BaseModel):
    model_config = ConfigDict(frozen=True)

    slot: int = Field(ge=0, description="position of the commitment in the committed list")
    index: int = Field(ge=0, description="segment index")
    verdict: SegmentOutcome
    salt: bytes = Field(min_length=32, max_length=32)


def check_reveal(
    commitments: Sequence[bytes],
    revealed: Sequence[CanaryReveal],
    reveal: CanaryReveal,
    *,
    session_id: int,
    n_segments: int,
) -> None:
    """What `revealCanary` checks before recording a reveal (raises ValueError naming the failure)."""
    if not 0 <= reveal.slot < len(commitments):
        raise ValueError("UnknownCanarySlot")
    if any(r.slot == reveal.slot for r in revealed):
        raise ValueError("CanaryAlreadyRevealed")
    if reveal.index >= n_segments:
        raise ValueError("InvalidSegment")
    if any(r.index == reveal.index for r in revealed):
        raise ValueError("SegmentAlreadyCanary")
    h = canary_commitment(session_id, reveal.index, reveal.verdict, reveal.salt)
    if h != commitments[reveal.slot]:
        raise ValueError("CanaryMismatch")


# --- scoring -------------------------------------------------------------------------------------


class CanarySettlement(BaseModel):
    """A revealed canary's votes scored against its truth; its reservation's unused part goes to the treasury."""

    model_config = ConfigDict(frozen=True)

    segment: int
    truth: SegmentOutcome
    votes: list[VoteScore]
    reserved: int
    to_treasury: int

    @property
    def rewards(self) -> int:
        return sum(v.rewarded for v in self.votes)

    @property
    def slashed(self) -> int:
        return sum(v.slashed for v in self.votes)


def settle_canary(
    index: int,
    panel: Panel,
    truth: SegmentOutcome,
    *,
    k0: int,
    econ: EconomicRules,
    canary: CanaryParams,
    slash_seed: bytes,
) -> CanarySettlement:
    """Score every seat of a revealed canary against the committed truth, with canaryGamma.

    Agreeing vote: R from the session pool (the canary's seats were reserved like any seat);
    disagreeing vote: slashed P iff its coin < pSlash(r at the draw); no reveal: always slashed;
    abstention: nothing paid, INCORRECT.  All with the reputation step canaryGamma.
    """
    if truth not in DECIDED:
        raise ValueError("a canary's truth is PASS or FAIL")
    if panel.round != 0 or panel.status is not PanelStatus.DECIDED or len(panel.seats) != k0:
        raise ValueError("a canary has exactly its round-0 panel (canaries are never appealed)")
    votes = [
        score_seat(s, round_=0, segment=index, truth=truth, econ=econ, gamma=canary.gamma,
                   slash_seed=slash_seed, reward=econ.reward)
        for s in panel.seats
    ]  # fmt: skip
    reserved = k0 * econ.reward
    return CanarySettlement(
        segment=index,
        truth=truth,
        votes=votes,
        reserved=reserved,
        to_treasury=reserved - sum(v.rewarded for v in votes),
    )


def canary_refund(k0: int, reward: int, refund_bps: int) -> int:
    """Treasury refund to the provider per revealed canary: k * R * canaryRefundBps / 10000.

    At most `MAX_CANARY_REFUND_BPS`: never above what the canary cost a provider whose own auditors
    hold its seats (the treasury's 20% share of the k * R / 0.8 fee), so opening sessions to collect
    refunds never pays.
    """
    if not 0 <= refund_bps <= MAX_CANARY_REFUND_BPS:
        raise ValueError(f"canary refund {refund_bps} bps is outside 0..{MAX_CANARY_REFUND_BPS}")
    return k0 * reward * refund_bps // BPS


def trace_verdict_with_canaries(
    outcomes: Sequence[SegmentOutcome],
    weights: Sequence[int],
    revealed: Sequence[int],
    unrevealed: int,
    beta_bps: int,
) -> TraceVerdict:
    """Trace verdict over the non-canary segments.

    Revealed canaries leave both W and the total; each committed canary never revealed takes the
    session's largest segment weight off W (never below 0) while every unrevealed segment stays in
    the total.  So a provider never gains by withholding a reveal:
    (W - maxW) / T <= (W - w_c) / (T - w_c).  PASS iff W' * 10000 >= beta * T'; score = W' * 10000 / T'.
    """
    if len(outcomes) != len(weights) or not outcomes:
        raise ValueError("need one weight per segment and at least one segment")
    if any(w <= 0 for w in weights) or unrevealed < 0 or not 0 <= beta_bps <= BPS:
        raise ValueError("bad weights, unrevealed count or beta")
    skip = set(revealed)
    if len(skip) != len(revealed) or any(not 0 <= i < len(outcomes) for i in skip):
        raise ValueError("revealed canary indices must be distinct segment indices")
    total = sum(w for i, w in enumerate(weights) if i not in skip)
    if total == 0:
        raise ValueError("every segment is a canary")
    passed = sum(
        w
        for i, (o, w) in enumerate(zip(outcomes, weights, strict=True))
        if i not in skip and o == SegmentOutcome.PASS
    )
    passed = max(0, passed - unrevealed * max(weights))
    return TraceVerdict(
        passed=passed * BPS >= beta_bps * total,
        weight_passed=passed,
        total_weight=total,
        score_bps=passed * BPS // total,
    )


def canary_effects(settlement: CanarySettlement, auditor: str) -> list[tuple[Effect, int]]:
    """(effect, canaryGamma) of one auditor's seats on a canary, for `appeals.apply_effects`."""
    a = to_checksum_address(auditor)
    return [(v.effect, v.gamma) for v in settlement.votes if v.auditor == a]


__all__ = [
    "MAX_CANARY_COMMIT_BLOCKS",
    "check_canary_window",
    "MAX_CANARY_RATE_BPS",
    "CanaryParams",
    "CanaryReveal",
    "CanarySettlement",
    "canaries_for_real",
    "canary_commit_window",
    "canary_commitment",
    "canary_count",
    "canary_effects",
    "canary_refund",
    "canary_reveal_open",
    "check_reveal",
    "settle_canary",
    "trace_verdict_with_canaries",
]
