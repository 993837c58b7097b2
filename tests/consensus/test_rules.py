"""The integer reference of the protocol rules, checked against hand computation and raw ABI bytes."""

from __future__ import annotations

import pytest
from eth_utils import keccak, to_checksum_address

from trustnode.consensus.rules import (
    WAD,
    EconomicRules,
    Seat,
    commitment,
    fee_covers_seats,
    fee_split,
    pack_tiers_weights,
    quorum,
    reputation_update,
    segment_outcome,
    settle_auditor,
    slash_draw,
    slash_probability,
    tally,
    trace_verdict,
    verdict_bitmap,
)
from trustnode.models.enums import SegmentOutcome as O

ALICE = to_checksum_address("0x" + "11" * 20)
SEED = bytes(range(32))


def test_quorum_is_integer_ceiling() -> None:
    assert quorum(3, 6000) == 2  # ceil(1.8)
    assert quorum(3, 6667) == 3  # ceil(2.0001): basis points, not 2/3
    assert quorum(3, 6666) == 2
    assert quorum(5, 6000) == 3
    assert quorum(10, 7000) == 7
    assert quorum(1, 5100) == 1
    assert quorum(4, 10000) == 4
    with pytest.raises(ValueError):
        quorum(0, 6000)
    with pytest.raises(ValueError):
        quorum(3, 0)


def test_segment_outcome_checks_pass_first() -> None:
    assert segment_outcome(2, 1, 3, 6000) == O.PASS
    assert segment_outcome(1, 2, 3, 6000) == O.FAIL
    assert segment_outcome(1, 1, 3, 6000) == O.INCONCLUSIVE  # one seat did not reveal
    assert segment_outcome(2, 2, 5, 6000) == O.INCONCLUSIVE
    assert segment_outcome(3, 0, 3, 10000) == O.PASS
    assert segment_outcome(2, 1, 3, 10000) == O.INCONCLUSIVE
    with pytest.raises(ValueError):
        segment_outcome(3, 1, 3, 6000)


def test_trace_verdict_integer_threshold_and_score() -> None:
    v = trace_verdict([O.PASS, O.FAIL, O.PASS, O.INCONCLUSIVE], [3, 3, 1, 3], 4000)
    assert (v.weight_passed, v.total_weight, v.score_bps) == (4, 10, 4000)
    assert v.passed  # 4 * 10000 >= 4000 * 10, equality passes
    assert not trace_verdict([O.PASS, O.FAIL, O.PASS, O.INCONCLUSIVE], [3, 3, 1, 3], 4001).passed
    assert trace_verdict([O.PASS, O.FAIL, O.FAIL], [1, 1, 1], 5000).score_bps == 3333  # floor
    with pytest.raises(ValueError):
        trace_verdict([O.PASS], [0], 5000)
    with pytest.raises(ValueError):
        trace_verdict([O.PASS, O.PASS], [1], 5000)


def test_reputation_update_fixed_point() -> None:
    gamma = WAD // 20
    assert reputation_update(WAD // 2, True, gamma) == (95 * WAD // 100 * WAD // 2 + gamma * WAD) // WAD
    assert reputation_update(WAD // 2, True, gamma) == 525 * 10**15
    assert reputation_update(WAD // 2, False, gamma) == 475 * 10**15
    assert reputation_update(1, False, gamma) == 0  # floor of 0.95 wei
    assert reputation_update(WAD, True, gamma) == WAD
    assert reputation_update(0, True, WAD) == WAD
    with pytest.raises(ValueError):
        reputation_update(WAD + 1, True, gamma)


def test_slash_probability() -> None:
    p_min, p_max = WAD // 5, WAD // 2
    assert slash_probability(WAD, p_min, p_max) == p_min
    assert slash_probability(0, p_min, p_max) == p_max
    assert slash_probability(WAD // 2, p_min, p_max) == 35 * 10**16
    assert slash_probability(WAD // 3, p_min, p_max) == p_min + (p_max - p_min) * (WAD - WAD // 3) // WAD


def test_slash_draw_is_keccak_of_abi_encoding() -> None:
    raw = SEED + bytes(12) + bytes.fromhex(ALICE[2:]) + (7).to_bytes(32, "big")
    assert slash_draw(SEED, ALICE, 7) == int.from_bytes(keccak(raw), "big") % WAD
    assert slash_draw(SEED, ALICE, 7) != slash_draw(SEED, ALICE, 8)
    with pytest.raises(ValueError):
        slash_draw(b"short", ALICE, 0)


def test_commitment_is_keccak_of_abi_encoding() -> None:
    voting = to_checksum_address("0x" + "22" * 20)
    salt = b"\x05" * 32
    raw = (
        (31337).to_bytes(32, "big")
        + bytes(12)
        + bytes.fromhex(voting[2:])
        + (4).to_bytes(32, "big")
        + bytes(12)
        + bytes.fromhex(ALICE[2:])
        + (0b101).to_bytes(32, "big")
        + salt
    )
    assert commitment(31337, voting, 4, ALICE, 0b101, salt) == keccak(raw)
    assert verdict_bitmap([True, False, True]) == 0b101
    assert verdict_bitmap([]) == 0


def test_fee_split_and_cover() -> None:
    assert fee_split(1000) == (800, 200)
    assert fee_split(1001) == (800, 201)  # the pool share rounds down, the treasury takes the rest
    assert fee_covers_seats(75, 10, 6)
    assert not fee_covers_seats(74, 10, 6)


def test_pack_tiers_weights() -> None:
    assert pack_tiers_weights([0, 2], [1, 258]).hex() == "000001" + "020102"
    with pytest.raises(ValueError):
        pack_tiers_weights([0], [70000])


RULES = EconomicRules(reward=6, penalty=8, p_min=WAD // 5, p_max=WAD // 2, gamma=WAD // 10)


def test_settlement_by_hand() -> None:
    outcomes = [O.PASS, O.FAIL, O.INCONCLUSIVE, O.PASS]
    seats = [
        Seat(segment_index=0, vote_fail=False),  # agrees: +R
        Seat(segment_index=1, vote_fail=True),  # agrees: +R
        Seat(segment_index=2, vote_fail=True),  # inconclusive: nothing
        Seat(segment_index=3, vote_fail=True),  # disagrees: slashed iff draw < pSlash
    ]
    r0 = WAD // 2
    res = settle_auditor(
        auditor=ALICE,
        seats=seats,
        outcomes=outcomes,
        reputation=r0,
        pool_assets=100,
        commission_bps=2500,
        session_seed=SEED,
        rules=RULES,
    )
    p_slash = WAD // 5 + (WAD // 2 - WAD // 5) * (WAD - r0) // WAD
    hit = slash_draw(SEED, ALICE, 3) < p_slash
    assert res.p_slash == p_slash
    assert res.correct == 2 and res.slashes == int(hit)
    assert res.gross_reward == 12 and res.commission == 3 and res.reward_to_pool == 9
    assert res.slashed == (8 if hit else 0)
    assert res.pool_assets_after == 100 - res.slashed + 9
    r = reputation_update(
        reputation_update(reputation_update(r0, True, WAD // 10), True, WAD // 10), False, WAD // 10
    )
    assert res.reputation_after == r
    assert [s.agreed for s in res.seats] == [True, True, None, False]


def test_unrevealed_seats_always_slashed_and_capped_by_assets() -> None:
    seats = [Seat(segment_index=i) for i in range(3)]
    res = settle_auditor(
        auditor=ALICE,
        seats=seats,
        outcomes=[O.PASS, O.INCONCLUSIVE, O.FAIL],
        reputation=WAD,
        pool_assets=20,
        commission_bps=0,
        session_seed=SEED,
        rules=RULES,
    )
    assert res.slashes == 3 and res.correct == 0
    assert res.slashed == 20  # min(3 * 8, 20)
    assert res.pool_assets_after == 0
    assert res.reputation_after == reputation_update(
        reputation_update(reputation_update(WAD, False, WAD // 10), False, WAD // 10), False, WAD // 10
    )


def test_unfinalized_session_settles_nothing() -> None:
    res = settle_auditor(
        auditor=ALICE,
        seats=[Seat(segment_index=0)],
        outcomes=[O.NONE],
        reputation=WAD // 2,
        pool_assets=50,
        commission_bps=0,
        session_seed=SEED,
        rules=RULES,
        finalized=False,
    )
    assert (res.slashed, res.gross_reward, res.reputation_after, res.pool_assets_after) == (
        0,
        0,
        WAD // 2,
        50,
    )


def test_slash_frequency_follows_p_slash() -> None:
    """Over many segments the share of slashed disagreeing votes is pSlash (draws are uniform)."""
    n = 4000
    res = settle_auditor(
        auditor=ALICE,
        seats=[Seat(segment_index=i, vote_fail=True) for i in range(n)],
        outcomes=[O.PASS] * n,
        reputation=WAD // 2,
        pool_assets=10**9,
        commission_bps=0,
        session_seed=SEED,
        rules=RULES,
    )
    share = res.slashes / n
    assert abs(share - 0.35) < 4 * (0.35 * 0.65 / n) ** 0.5


def test_tally() -> None:
    counts = tally(
        [
            [Seat(segment_index=0, vote_fail=False), Seat(segment_index=1)],
            [Seat(segment_index=0, vote_fail=True)],
        ],
        2,
    )
    assert counts == [(1, 1), (0, 0)]
