"""Outside review 26 (and a requireCharged gap): `check_session_appeal` mirrors AppealAdmission's new refusals.

- `wired=False` (a session opened before `setExtensions`, id < `canariesFromSession`): AppealsDisabled
  (Review26OpenedBeforeWiringUnchecked).
- `min_stake` (Staking's current minimum per tier) below slash_amount x `session_lock_seats`:
  MinStakeBelowSessionLocks (Review26MinStakeLoweredAfterOpening: 9 tier-1 segments, 8 TRUST locks, 10 TRUST
  minimum -> required 72 TRUST).
- `require_charged`: RefusalsNotCharged after BondAboveLimit (AppealAdmission._open).
Command: `PYTHONPATH=src /work/main/.venv/bin/pytest -q tests/consensus/test_review26_admission_twin.py`.
"""

from __future__ import annotations

import pytest

from tests.consensus.test_appeal_rounds import PARAMS, SEATS, R, panel, seg
from trustnode.consensus.appeal_admission import check_session_appeal
from trustnode.consensus.appeals import AppealRefused

T = 10**18


def _check(members: int = 20, **kw: object) -> object:
    segs = [seg(i, panel(0, "PPP", 1)) for i in range(9)]
    return check_session_appeal(segs, [0], seats=SEATS, appeal=PARAMS, reward=R, block=100, opens_after=90,
                                outcome_final=False, window_ends=[100] * 9, rounds_opened=0, running=set(),
                                canaries=set(), members=lambda t: members, seat_cap=8, **kw)  # type: ignore[arg-type]  # fmt: skip


def test_a_session_opened_before_the_wiring_is_not_appealable() -> None:
    _check()
    with pytest.raises(AppealRefused, match="AppealsDisabled"):
        _check(wired=False)


def test_a_minimum_lowered_after_the_opening_refuses_the_round() -> None:
    _check(min_stake=(72 * T, 72 * T, 72 * T), slash_amount=8 * T)  # 9 segments x 8 TRUST: exactly enough
    with pytest.raises(AppealRefused, match="MinStakeBelowSessionLocks.*72000000000000000000"):
        _check(min_stake=(10 * T, 10 * T, 10 * T), slash_amount=8 * T)


def test_require_charged_refuses_an_uncharged_round() -> None:
    assert not _check(members=12).refusals_charged  # E 9 < 2 k_1 = 14
    with pytest.raises(AppealRefused, match="RefusalsNotCharged"):
        _check(members=12, require_charged=True)
    assert _check(members=20, require_charged=True).refusals_charged  # E 17 >= 14
