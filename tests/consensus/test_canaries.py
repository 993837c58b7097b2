"""Canary reference rules (issue 15): counts, commitments, reveal checks, scoring, trace verdict."""

from __future__ import annotations

import pytest
from eth_utils import keccak, to_checksum_address
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from trustnode.config import ProtocolSettings
from trustnode.consensus.appeal_settlement import apply_effects
from trustnode.consensus.appeals import (
    MAX_CANARY_REFUND_BPS,
    AppealParams,
    Effect,
    Panel,
    PanelSeat,
    Vote,
    check_appeal_params,
)
from trustnode.consensus.arithmetic import AUDIT_POOL_BPS, fee_covers_seats
from trustnode.consensus.canaries import (
    MAX_CANARY_COMMIT_BLOCKS,
    CanaryParams,
    CanaryReveal,
    canaries_for_real,
    canary_commit_window,
    canary_commitment,
    canary_count,
    canary_effects,
    canary_refund,
    canary_reveal_open,
    check_canary_window,
    check_reveal,
    settle_canary,
    trace_verdict_with_canaries,
)
from trustnode.consensus.rules import (
    BPS,
    WAD,
    EconomicRules,
    reputation_update,
    slash_coin,
    slash_probability,
    trace_verdict,
)
from trustnode.models.enums import SegmentOutcome as O

T = 10**18
R = 6 * T
ECON = EconomicRules(reward=R, penalty=8 * T, p_min=WAD // 5, p_max=WAD // 2, gamma=WAD // 10)
CANARY = CanaryParams()
SEED = bytes(range(32))


def addr(i: int) -> str:
    return to_checksum_address(i.to_bytes(20, "big"))


@given(st.integers(0, 5000), st.integers(0, 3000))
def test_node_count_always_passes_the_contract_check(n_real: int, rate: int) -> None:
    c = canaries_for_real(n_real, rate)
    assert canary_count(n_real + c, rate) == c


def test_counts_by_hand() -> None:
    assert canary_count(9, 1000) == 0
    assert canary_count(10, 1000) == 1
    assert canaries_for_real(9, 1000) == 1  # 9 real + 1 canary = 10 segments, 10% of them canaries
    assert canaries_for_real(18, 1000) == 2
    with pytest.raises(ValueError):
        canary_count(10, 3001)


def test_commitment_is_abi_encoded_and_checked() -> None:
    salt = bytes([7]) * 32
    h = canary_commitment(42, 5, O.FAIL, salt)
    raw = (42).to_bytes(32, "big") + (5).to_bytes(32, "big") + (2).to_bytes(32, "big") + salt
    assert h == keccak(raw)
    assert canary_commitment(42, 5, O.PASS, salt) != h
    assert canary_commitment(43, 5, O.FAIL, salt) != h  # bound to its session
    with pytest.raises(ValueError):
        canary_commitment(42, 5, O.INCONCLUSIVE, salt)
    good = CanaryReveal(slot=0, index=5, verdict=O.FAIL, salt=salt)
    kw = {"session_id": 42, "n_segments": 10}
    check_reveal([h], [], good, **kw)  # type: ignore[arg-type]
    for bad, err in [
        (good.model_copy(update={"verdict": O.PASS}), "CanaryMismatch"),
        (good.model_copy(update={"slot": 1}), "UnknownCanarySlot"),
        (good.model_copy(update={"index": 10}), "InvalidSegment"),
    ]:
        with pytest.raises(ValueError, match=err):
            check_reveal([h], [], bad, **kw)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="CanaryMismatch"):
        check_reveal([h], [], good, session_id=41, n_segments=10)
    with pytest.raises(ValueError, match="AlreadyRevealed"):
        check_reveal([h], [good], good, **kw)  # type: ignore[arg-type]


def test_reveal_window_opens_after_the_vote_reveals_and_closes() -> None:
    assert not canary_reveal_open(100, 100, 40)  # votes may still be revealed in block 100
    assert canary_reveal_open(101, 100, 40) and canary_reveal_open(140, 100, 40)
    assert not canary_reveal_open(141, 100, 40)


@given(st.integers(1, 128), st.integers(0, MAX_CANARY_COMMIT_BLOCKS), st.integers(0, 300))
def test_commit_window_is_at_least_canary_commit_blocks(delay: int, commit_blocks: int, owed: int) -> None:
    """The draw's randomness target is open + window: a session owing canaries gives the operator at
    least canaryCommitBlocks blocks (and never less than the delay); one owing none waits the delay."""
    window = canary_commit_window(delay, commit_blocks, owed)
    assert window >= delay
    assert window == (max(delay, commit_blocks) if owed else delay)


def test_commit_window_bounds_and_the_devnet_value() -> None:
    from trustnode.chain.protocol import DEVNET_RANDOMNESS_DELAY, DEVNET_SESSION_PARAMS, SessionParams

    assert MAX_CANARY_COMMIT_BLOCKS == 199  # a VRF source asks one confirmation more; v2.5 caps at 200
    assert (
        DEVNET_SESSION_PARAMS.canary_commit_blocks == 8 > DEVNET_RANDOMNESS_DELAY + 3
    )  # a slow round trip fits
    assert canary_commit_window(2, 8, 1) == 8 and canary_commit_window(2, 8, 0) == 2
    assert canary_commit_window(12, 8, 1) == 12
    for bad in ((0, 8, 1), (2, 200, 1), (2, -1, 1), (2, 8, -1)):
        with pytest.raises(ValueError, match="canaryCommitBlocks"):
            canary_commit_window(*bad)
    with pytest.raises(ValidationError):
        DEVNET_SESSION_PARAMS.model_validate(
            {**DEVNET_SESSION_PARAMS.model_dump(), "canary_commit_blocks": 200}
        )
    with pytest.raises(ValidationError):
        ProtocolSettings(canary_commit_blocks=200)
    assert ProtocolSettings().canary_commit_blocks == 8
    # the core's ABI tuple carries it last, and reads back
    abi = DEVNET_SESSION_PARAMS.as_abi()
    assert abi[-1] == 8 and SessionParams.from_abi(abi) == DEVNET_SESSION_PARAMS


def test_canary_votes_score_against_truth_not_majority() -> None:
    # Two lazy PASS votes are the majority, the truth is FAIL: the lone FAIL vote is the one paid.
    seats = [
        PanelSeat(auditor=addr(i + 1), vote=v, reputation=WAD // 2)
        for i, v in enumerate([Vote.PASS, Vote.PASS, Vote.FAIL])
    ]
    c = settle_canary(3, Panel(round=0, seats=seats), O.FAIL, k0=3, econ=ECON, canary=CANARY, slash_seed=SEED)
    assert [v.rewarded for v in c.votes] == [0, 0, R]
    p = slash_probability(WAD // 2, ECON.p_min, ECON.p_max)
    for v in c.votes[:2]:
        assert v.effect is Effect.INCORRECT and v.gamma == CANARY.gamma
        assert v.slashed == (8 * T if slash_coin(SEED, v.auditor, 3, 0) < p else 0)
    assert c.to_treasury == 2 * R
    # reputation moves by canaryGamma, not gamma
    lazy = apply_effects(WAD // 2, canary_effects(c, addr(1)))
    assert (
        lazy
        == reputation_update(WAD // 2, False, CANARY.gamma)
        < reputation_update(WAD // 2, False, ECON.gamma)
    )


def test_unrevealed_and_abstaining_seats_on_a_canary() -> None:
    seats = [
        PanelSeat(auditor=addr(1), vote=Vote.UNREVEALED, reputation=WAD),
        PanelSeat(auditor=addr(2), vote=Vote.ABSTAIN, reputation=WAD),
        PanelSeat(auditor=addr(3), vote=Vote.PASS, reputation=WAD),
    ]
    c = settle_canary(0, Panel(round=0, seats=seats), O.PASS, k0=3, econ=ECON, canary=CANARY, slash_seed=SEED)
    assert [(v.rewarded, v.slashed, v.effect) for v in c.votes] == [
        (0, 8 * T, Effect.INCORRECT),
        (0, 0, Effect.INCORRECT),
        (R, 0, Effect.CORRECT),
    ]


def _least_fee(seats: int, reward: int) -> int:
    """The smallest fee whose pool covers `seats` seats (`fee_covers_seats`)."""
    fee = -(-seats * reward * BPS // AUDIT_POOL_BPS)
    assert fee_covers_seats(fee, seats, reward) and not fee_covers_seats(fee - 1, seats, reward)
    return fee


@given(st.integers(1, 31), st.integers(1, 10**24), st.integers(0, MAX_CANARY_REFUND_BPS))
def test_refund_never_exceeds_what_the_canary_cost_its_provider(k0: int, reward: int, bps: int) -> None:
    """Review finding 3: even when the provider's own auditors hold every seat of a canary (they get
    its k R back), the canary cost the provider its fee minus k R, and the refund is never more."""
    assert canary_refund(k0, reward, bps) <= _least_fee(k0, reward) - k0 * reward


def test_refund_above_2500_bps_is_refused_everywhere() -> None:
    assert MAX_CANARY_REFUND_BPS == 2500
    assert canary_refund(3, R, 2_500) == 3 * R // 4 == _least_fee(3, R) - 3 * R  # exactly the cost
    # one basis point more would pay the provider more than its canary cost
    assert _least_fee(3, R) - 3 * R < 3 * R * 2_501 // BPS
    with pytest.raises(ValueError, match="2501 bps"):
        canary_refund(3, R, 2_501)
    with pytest.raises(ValidationError):
        CanaryParams(refund_bps=2_501)
    with pytest.raises(ValueError, match="canary_refund_bps 2501 > 2500"):
        check_appeal_params(AppealParams(), (1, 3, 3), 6000, ECON, canary_refund_bps=2_501)
    check_appeal_params(AppealParams(), (1, 3, 3), 6000, ECON, canary_refund_bps=2_500)
    with pytest.raises(ValidationError):
        ProtocolSettings(canary_refund_bps=2_501)
    assert ProtocolSettings(canary_refund_bps=2_500).canary_refund_bps == 2_500


def test_revealed_canaries_leave_the_trace() -> None:
    outs = [O.PASS, O.FAIL, O.PASS, O.PASS]
    w = [1, 2, 2, 3]
    v = trace_verdict_with_canaries(outs, w, [1], 0, 10_000)
    assert v == trace_verdict([O.PASS, O.PASS, O.PASS], [1, 2, 3], 10_000)
    assert v.passed


@given(
    st.lists(
        st.tuples(st.sampled_from([O.PASS, O.FAIL, O.INCONCLUSIVE]), st.integers(1, 5)),
        min_size=2,
        max_size=12,
    ),
    st.data(),
    st.integers(0, 10_000),
)
def test_withholding_a_reveal_never_raises_the_score(
    segs: list[tuple[O, int]], data: st.DataObject, beta: int
) -> None:
    outs = [o for o, _ in segs]
    w = [x for _, x in segs]
    canaries = data.draw(
        st.lists(st.integers(0, len(segs) - 1), min_size=1, max_size=len(segs) - 1, unique=True)
    )
    withheld = data.draw(st.sampled_from(canaries))
    revealed_all = trace_verdict_with_canaries(outs, w, canaries, 0, beta)
    rest = [i for i in canaries if i != withheld]
    one_withheld = trace_verdict_with_canaries(outs, w, rest, 1, beta)
    # compare W/T as exact fractions
    assert (
        one_withheld.weight_passed * revealed_all.total_weight
        <= revealed_all.weight_passed * one_withheld.total_weight
    )
    assert revealed_all.passed or not one_withheld.passed


def test_a_canary_window_longer_than_an_epoch_is_refused() -> None:
    """The core refuses it (InvalidParams); deploy and setParams refuse it first, saying why."""
    check_canary_window(12, 12)
    with pytest.raises(ValueError, match="longer than an epoch"):
        check_canary_window(13, 12)
