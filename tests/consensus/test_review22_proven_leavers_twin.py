"""Outside review 22: `check_session_appeal` with proven leavers mirrors AppealAdmission (Review22EarlierAuditorsLeaveToVeto).

A named leaver counts for a segment iff it sat on one of the segment's earlier panels and has no weight in the
round's snapshot; E_s = members - (earlier seats - proven_s), the round's E the least; the list strictly ascending
and at most MAX_LEAVERS.
Command: `PYTHONPATH=src /work/main/.venv/bin/pytest -q tests/consensus/test_review22_proven_leavers_twin.py`.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.consensus.test_appeal_rounds import PARAMS, SEATS, R, panel, seg
from trustnode.consensus.appeal_admission import (
    MAX_LEAVERS,
    check_session_appeal,
    eligible_auditors,
    proven_leavers,
)
from trustnode.consensus.appeals import AppealRefused

A = [f"0x{i:040x}" for i in range(1, 30)]
SAT0 = {A[0], A[1], A[2]}  # segment 0's round-0 auditors
SAT1 = {A[3], A[4], A[5]}  # segment 1's


def _check(
    members: int,
    leavers: list[str],
    named: list[int] | None = None,
    live: set[str] = frozenset(),
    **kw: object,
) -> object:  # type: ignore[assignment]
    segs = [seg(i, panel(0, "PPP", 1)) for i in range(2)]
    sat = {0: SAT0, 1: SAT1}
    return check_session_appeal(segs, named or [0], seats=SEATS, appeal=PARAMS, reward=R, block=100, opens_after=90,
                                outcome_final=False, window_ends=[100] * 2, rounds_opened=0, running=set(),
                                canaries=set(), members=lambda t: members, seat_cap=8, leavers=leavers,
                                live=lambda a: a in live, sat_before=lambda a, s: a in sat[s], **kw)  # type: ignore[arg-type]  # fmt: skip


def test_proven_leavers_keep_the_appeal() -> None:
    with pytest.raises(AppealRefused, match="NotEnoughEligibleAuditors"):
        _check(8, [])  # 10 members, 2 left: E 5
    assert _check(8, [A[0], A[1]]).eligible == 7  # type: ignore[attr-defined]
    assert _check(15, [A[0], A[1]], require_charged=True).refusals_charged  # type: ignore[attr-defined]


def test_live_stranger_and_other_segment_leavers_not_counted() -> None:
    with pytest.raises(AppealRefused, match="NotEnoughEligibleAuditors"):
        _check(8, [A[0], A[1]], live={A[1]})  # A[1] live: E 6
    with pytest.raises(AppealRefused, match="NotEnoughEligibleAuditors"):
        _check(8, [A[0], A[9]])  # A[9] never sat: E 6
    with pytest.raises(AppealRefused, match="NotEnoughEligibleAuditors.*segment 1"):
        _check(8, [A[0], A[1]], named=[0, 1])  # segment 1 keeps E 5


def test_bad_lists_refused() -> None:
    with pytest.raises(AppealRefused, match="LeaversNotAscending"):
        _check(8, [A[1], A[0]])
    with pytest.raises(AppealRefused, match="LeaversNotAscending"):
        _check(8, [A[0], A[0]])
    with pytest.raises(AppealRefused, match="TooManyLeavers"):
        _check(8, [f"0x{i:040x}" for i in range(1, MAX_LEAVERS + 2)])


@given(st.integers(3, 20), st.integers(0, 2**20 - 1), st.integers(0, 2**21 - 1))
def test_eligible_never_exceeds_the_true_count(n: int, gone_mask: int, name_mask: int) -> None:
    """Brute force: n auditors, the first 3 seated on segment 0's round-0 panel; any leave, any (and a stranger)
    named: E <= the live auditors that sat on no earlier panel."""
    auditors = A[:n]
    live = {a for i, a in enumerate(auditors) if not (gone_mask >> i) & 1}
    named = [a for i, a in enumerate(A[: n + 1]) if (name_mask >> i) & 1]
    proven = proven_leavers(named, 0, live=lambda a: a in live, sat_before=lambda a, s: a in SAT0)
    truth = sum(1 for a in live if a not in SAT0)
    assert eligible_auditors(len(live), 3, 1, proven) <= truth
