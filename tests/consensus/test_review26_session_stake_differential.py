"""Outside review 26 of a7a6f5e: `session_lock_seats` against `AppealMath.sessionLockSeats` (holds).

Property: the Python twin computes the chain's stake premise bound exactly, and the bound is the
round-by-round maximum of one auditor's seat locks in one session.
Differential: `test_grid_checksum_matches_solidity` hashes `session_lock_seats` over n in 1..20 and
{255, 256, 300, 1024}, n_t in 1..n, seat cap 1..8, max rounds 0..4 (h = h * 1_000_003 + v + 1 mod 2**64,
n outermost) and asserts the constant that the forge test
`Review26StakePremiseBound.test_GridChecksumMatchesPython` asserts for the Solidity function.
Command: `PYTHONPATH=src /work/main/.venv/bin/pytest tests/consensus/test_review26_session_stake_differential.py`.
"""

from __future__ import annotations

import pytest

from trustnode.consensus.session_stake import (
    StakeBelowSessionLocks,
    check_session_stake,
    max_session_segments,
    session_lock_seats,
)

GRID_CHECKSUM = 0x7506C3745ACE3FBE  # Review26StakePremiseBound.GRID_CHECKSUM
SEGMENT_COUNTS = (*range(1, 21), 255, 256, 300, 1024)
TOKEN = 10**18


def _model(tier_segments: int, segment_count: int, seat_cap: int, max_rounds: int) -> int:
    """Round 0 and each admissible appeal round add at most seat_cap new segments of the tier."""
    seats = 0
    for _ in range(min(max_rounds * segment_count, 255) + 1):
        seats += min(seat_cap, tier_segments - seats)
    return seats


def test_grid_checksum_matches_solidity() -> None:
    h = 0
    for n in SEGMENT_COUNTS:
        for nt in range(1, n + 1):
            for cap in range(1, 9):
                for rounds in range(5):
                    h = (h * 1_000_003 + session_lock_seats(nt, n, cap, rounds) + 1) % 2**64
    assert h == GRID_CHECKSUM


@pytest.mark.parametrize("n", (1, 2, 7, 9, 25, 26, 255, 256, 1024))
def test_closed_form_is_the_round_model(n: int) -> None:
    for nt in {1, n // 2 or 1, n}:
        for cap in (1, 2, 3, 8, 64):
            for rounds in range(5):
                assert session_lock_seats(nt, n, cap, rounds) == _model(nt, n, cap, rounds)


def test_devnet_limit_and_first_failing_tier() -> None:
    """200 / 8 TRUST: 25 segments of a tier open, 26 do not; the first short tier is reported."""
    assert max_session_segments(200 * TOKEN, 8 * TOKEN) == 25
    kw = {"seat_cap": 8, "max_rounds": 1, "appeal_blocks": 10, "slash_amount": 8 * TOKEN}
    check_session_stake([1] * 25 + [2] * 25, [200 * TOKEN] * 3, **kw)
    with pytest.raises(StakeBelowSessionLocks) as e:
        check_session_stake([2] * 26 + [1] * 26, [200 * TOKEN] * 3, **kw)
    assert (e.value.tier, e.value.required) == (1, 208 * TOKEN)
