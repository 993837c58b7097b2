"""Byte-exact encodings the v2 contracts hash or pack: commitments, verdict words, slash coins,
segment tiers and weights, panel keys and segment-word lanes.

Kept apart from the settlement rules (`consensus.rules`, which re-exports every name here) so
each file stays one concept.  Every function mirrors one Solidity expression, named in its
docstring; the chain consistency test checks them against the deployed contracts.
"""

from __future__ import annotations

from collections.abc import Sequence

from eth_abi import encode
from eth_utils import keccak

from trustnode.models.enums import SegmentOutcome

WAD = 10**18
MAX_SEATS_PER_AUDITOR = 64  # Verdicts: bits 0-63 FAIL, 128-191 abstain (AuditSessions.MAX_SEAT_CAP)
ABSTAIN_SHIFT = 128
MAX_ROUND = 255  # PanelKey.MAX_ROUND


def slash_coin(slash_seed: bytes, auditor: str, segment_index: int, round: int = 0) -> int:
    """uint256(keccak256(abi.encode(slashSeed, auditor, round, segment))) % 1e18 (SettlementModule).

    The slash seed is the session's second randomness value, requested when its outcome became
    final, so no coin is known while anyone can still vote.
    """
    if len(slash_seed) != 32:
        raise ValueError("slash seed must be 32 bytes")
    if segment_index < 0 or not 0 <= round <= MAX_ROUND:
        raise ValueError("segment must be >= 0 and round in [0, 255]")
    digest = keccak(
        encode(["bytes32", "address", "uint256", "uint256"], [slash_seed, auditor, round, segment_index])
    )
    return int.from_bytes(digest, "big") % WAD


def commitment(
    chain_id: int,
    voting_contract: str,
    session_id: int,
    auditor: str,
    verdicts: int,
    salt: bytes,
    *,
    round: int = 0,
) -> bytes:
    """keccak256(abi.encode(chainid, votingModule, sessionId, round, auditor, verdicts, salt)).

    `voting_contract` is the VotingModule's address (v2), `verdicts` the full word of
    `verdicts_word` (FAIL and abstain bitmaps), stored and compared over all 256 bits.
    """
    if len(salt) != 32:
        raise ValueError("salt must be 32 bytes")
    if not 0 <= round <= MAX_ROUND:
        raise ValueError("round must be in [0, 255]")
    return keccak(
        encode(
            ["uint256", "address", "uint256", "uint256", "address", "uint256", "bytes32"],
            [chain_id, voting_contract, session_id, round, auditor, verdicts, salt],
        )
    )


def verdict_bitmap(votes_fail: Sequence[bool]) -> int:
    """Bit j = 1 iff the auditor's j-th seat (seat order) votes FAIL (no abstentions)."""
    return verdicts_word(votes_fail, [False] * len(votes_fail))


def verdicts_word(votes_fail: Sequence[bool], abstains: Sequence[bool]) -> int:
    """Verdicts.pack: bit j = seat j votes FAIL, bit 128 + j = seat j abstains (never both)."""
    if len(votes_fail) != len(abstains):
        raise ValueError("one abstain flag per seat")
    if len(votes_fail) > MAX_SEATS_PER_AUDITOR:
        raise ValueError(f"at most {MAX_SEATS_PER_AUDITOR} seats per auditor fit a verdicts word")
    word = 0
    for j, (fail, abstain) in enumerate(zip(votes_fail, abstains, strict=True)):
        if fail and abstain:
            raise ValueError(f"seat {j} cannot both vote FAIL and abstain")
        word |= (1 << j) * fail | (1 << (ABSTAIN_SHIFT + j)) * abstain
    return word


def verdicts_valid(word: int, seat_count: int) -> bool:
    """Verdicts.isValid: only the two bitmaps, nothing beyond the last seat, never FAIL and abstain."""
    fail_mask = (1 << 64) - 1
    if word < 0 or word >> 256 or word & ~(fail_mask | fail_mask << ABSTAIN_SHIFT):
        return False
    fails, abstains = word & fail_mask, word >> ABSTAIN_SHIFT
    return fails >> seat_count == 0 and abstains >> seat_count == 0 and fails & abstains == 0


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


def panel_key(session_id: int, round: int = 0) -> int:
    """PanelKey.keyOf: round << 64 | sessionId."""
    if not 0 <= session_id < 2**64 or not 0 <= round <= MAX_ROUND:
        raise ValueError("session id must fit 64 bits and round 8 bits")
    return round << 64 | session_id


class SegmentLane:
    """One segment's 32-bit lane of a segment word (SegmentWord): votes, outcome, tier, weight."""

    __slots__ = ("fail_votes", "outcome", "pass_votes", "tier", "weight")

    def __init__(self, word: int, segment_index: int) -> None:
        lane = word >> (32 * (segment_index % 8)) & 0xFFFFFFFF
        self.fail_votes = lane & 0x3F
        self.pass_votes = lane >> 6 & 0x3F
        self.outcome = SegmentOutcome(lane >> 12 & 3)
        self.tier = lane >> 14 & 3
        self.weight = lane >> 16
