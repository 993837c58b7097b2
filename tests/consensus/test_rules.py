"""The integer reference of the v2 rules: hand computations, raw ABI bytes and properties."""

from __future__ import annotations

import pytest
from eth_utils import keccak, to_checksum_address
from hypothesis import given
from hypothesis import strategies as st

from trustnode.consensus.rules import (
    WAD,
    EconomicRules,
    Seat,
    Termination,
    apply_reputation,
    apply_result,
    commitment,
    fee_covers_seats,
    fee_split,
    pack_tiers_weights,
    panel_key,
    pool_remainder,
    quorum,
    reputation_step,
    reputation_update,
    score_auditor,
    segment_outcome,
    settle_auditor,
    slash_coin,
    slash_probability,
    tally,
    termination_payout,
    trace_verdict,
    verdict_bitmap,
    verdicts_valid,
    verdicts_word,
)
from trustnode.models.enums import SegmentOutcome as O

ALICE = to_checksum_address("0x" + "11" * 20)
SEED = bytes(range(32))
RULES = EconomicRules(reward=6, penalty=8, p_min=WAD // 5, p_max=WAD // 2, gamma=WAD // 10)


def _word(x: int) -> bytes:
    return x.to_bytes(32, "big")


def _addr(a: str) -> bytes:
    return bytes(12) + bytes.fromhex(a[2:])


def test_quorum_is_integer_ceiling() -> None:
    assert [quorum(3, 6000), quorum(3, 6667), quorum(3, 6666), quorum(5, 6000)] == [2, 3, 2, 3]
    assert [quorum(10, 7000), quorum(1, 5100), quorum(4, 10000)] == [7, 1, 4]
    with pytest.raises(ValueError):
        quorum(0, 6000)
    with pytest.raises(ValueError):
        quorum(3, 0)


def test_segment_outcome_checks_pass_first() -> None:
    assert segment_outcome(2, 1, 3, 6000) == O.PASS
    assert segment_outcome(1, 2, 3, 6000) == O.FAIL
    assert segment_outcome(1, 1, 3, 6000) == O.INCONCLUSIVE  # one seat abstained or never revealed
    assert segment_outcome(2, 2, 5, 6000) == O.INCONCLUSIVE
    assert segment_outcome(2, 1, 3, 10000) == O.INCONCLUSIVE
    with pytest.raises(ValueError):
        segment_outcome(3, 1, 3, 6000)


def test_trace_verdict_integer_threshold_and_score() -> None:
    v = trace_verdict([O.PASS, O.FAIL, O.PASS, O.INCONCLUSIVE], [3, 3, 1, 3], 4000)
    assert (v.weight_passed, v.total_weight, v.score_bps, v.passed) == (4, 10, 4000, True)
    assert not trace_verdict([O.PASS, O.FAIL, O.PASS, O.INCONCLUSIVE], [3, 3, 1, 3], 4001).passed
    assert trace_verdict([O.PASS, O.FAIL, O.FAIL], [1, 1, 1], 5000).score_bps == 3333
    with pytest.raises(ValueError):
        trace_verdict([O.PASS], [0], 5000)


def test_encodings_are_the_contracts_abi_bytes() -> None:
    voting = to_checksum_address("0x" + "22" * 20)
    salt = b"\x05" * 32
    raw = _word(31337) + _addr(voting) + _word(4) + _word(1) + _addr(ALICE) + _word(0b101) + salt
    assert commitment(31337, voting, 4, ALICE, 0b101, salt, round=1) == keccak(raw)
    assert commitment(31337, voting, 4, ALICE, 0b101, salt) != keccak(raw)  # round 0 differs
    coin_raw = SEED + _addr(ALICE) + _word(2) + _word(7)
    assert slash_coin(SEED, ALICE, 7, 2) == int.from_bytes(keccak(coin_raw), "big") % WAD
    assert slash_coin(SEED, ALICE, 7) != slash_coin(SEED, ALICE, 7, 1)
    assert pack_tiers_weights([0, 2], [1, 258]).hex() == "000001" + "020102"
    assert panel_key(5, 1) == (1 << 64) | 5
    for bad in (lambda: slash_coin(b"short", ALICE, 0), lambda: pack_tiers_weights([0], [70000])):
        with pytest.raises(ValueError):
            bad()


def test_verdicts_word_packs_fail_and_abstain_bitmaps() -> None:
    word = verdicts_word([True, False, False], [False, True, False])
    assert word == 0b001 | (0b010 << 128)
    assert verdict_bitmap([True, False, True]) == 0b101
    assert verdicts_valid(word, 3) and not verdicts_valid(word, 1)
    assert not verdicts_valid(1 | 1 << 128, 1)  # FAIL and abstain on one seat
    assert not verdicts_valid(1 << 64, 1)  # a bit outside both bitmaps
    with pytest.raises(ValueError):
        verdicts_word([True], [True])
    with pytest.raises(ValueError):
        verdict_bitmap([False] * 65)


def test_fee_pool_and_terminations() -> None:
    assert fee_split(1001) == (800, 201)  # the pool share rounds down, the treasury takes the rest
    assert fee_covers_seats(75, 10, 6) and not fee_covers_seats(74, 10, 6)
    assert pool_remainder(100, [6, 12]) == 82
    for reason in Termination:
        if reason == Termination.NONE:
            continue
        p = termination_payout(100, 6, 5, reason)
        assert p.reserved == 30 and p.reserved + p.refunded + p.forfeited == 100
        # no refund once the randomness target is fixed, unless nobody could have prevented the end
        refund = reason in (Termination.RANDOMNESS_FAILED, Termination.DRAW_FAILED)
        assert (p.refunded, p.forfeited) == ((70, 0) if refund else (0, 70))
    withheld = termination_payout(100, 6, 5, Termination.KEYS_WITHHELD)
    assert withheld.refunded == 0 and withheld.reserved == 5 * 6  # drawn seats paid R for their time


def test_score_by_hand_with_abstain_inconclusive_and_unrevealed() -> None:
    outcomes = [O.PASS, O.FAIL, O.INCONCLUSIVE, O.PASS, O.FAIL, O.INCONCLUSIVE, O.PASS]
    seats = [
        Seat(segment_index=0, vote_fail=False),  # correct: +R
        Seat(segment_index=1, vote_fail=True),  # correct: +R
        Seat(segment_index=2, vote_fail=True),  # inconclusive: nothing at all
        Seat(segment_index=3, vote_fail=True),  # incorrect: slashed iff coin < p_slash
        Seat(segment_index=4, vote_fail=False, abstain=True),  # abstain: no R, no slash, rep as wrong
        Seat(segment_index=5, vote_fail=False, abstain=True),  # abstain on inconclusive: nothing
        Seat(segment_index=6),  # never revealed: slashed, wrong
    ]
    r_draw = WAD // 2
    s = score_auditor(
        auditor=ALICE, seats=seats, outcomes=outcomes, draw_reputation=r_draw, slash_seed=SEED, rules=RULES
    )
    p_slash = WAD // 5 + (WAD // 2 - WAD // 5) * (WAD - r_draw) // WAD
    hit = slash_coin(SEED, ALICE, 3) < p_slash
    assert s.p_slash == p_slash == 35 * 10**16
    assert (s.correct, s.incorrect, s.abstained, s.slashes) == (2, 2, 1, 1 + hit)
    assert (s.reward, s.slash) == (12, 8 * (1 + hit))
    mul, add = WAD, 0
    for correct in (True, True, False, False, False):
        mul, add = reputation_step(mul, add, correct, RULES.gamma)
    assert (s.rep_mul, s.rep_add) == (mul, add)
    assert [x.agreed for x in s.seats] == [True, True, None, False, None, None, None]
    assert [x.slashed for x in s.seats] == [0, 0, 0, 8 * hit, 0, 0, 8]
    with pytest.raises(ValueError):  # seat order is ascending segments
        score_auditor(
            auditor=ALICE,
            seats=seats[::-1],
            outcomes=outcomes,
            draw_reputation=r_draw,
            slash_seed=SEED,
            rules=RULES,
        )
    with pytest.raises(ValueError):
        Seat(segment_index=0, vote_fail=True, abstain=True)


def test_lapsed_slash_randomness_slashes_every_incorrect_vote() -> None:
    n = 40
    seats = [Seat(segment_index=i, vote_fail=True) for i in range(n)]
    kw = {"auditor": ALICE, "seats": seats, "outcomes": [O.PASS] * n, "draw_reputation": WAD, "rules": RULES}
    assert score_auditor(slash_seed=None, **kw).slashes == n  # type: ignore[arg-type]
    some = score_auditor(slash_seed=SEED, **kw).slashes  # type: ignore[arg-type]
    assert 0 < some < n  # p_slash = p_min = 0.2 with a seed


def test_p_slash_comes_from_the_draw_reputation_not_the_current_one() -> None:
    """Settling good sessions first raises the live reputation; the bad session's p_slash stays."""
    seats = [Seat(segment_index=i, vote_fail=True) for i in range(200)]
    common = {"auditor": ALICE, "seats": seats, "outcomes": [O.PASS] * 200, "pool_assets": 10**9}
    low = settle_auditor(
        reputation=WAD, draw_reputation=0, commission_bps=0, slash_seed=SEED, rules=RULES, **common
    )  # type: ignore[arg-type]
    same = settle_auditor(reputation=0, commission_bps=0, slash_seed=SEED, rules=RULES, **common)  # type: ignore[arg-type]
    assert low.p_slash == same.p_slash == RULES.p_max
    assert low.slashes == same.slashes
    assert low.reputation_before == WAD and low.draw_reputation == 0


def test_session_without_verdict_pays_r_per_drawn_seat_and_nothing_else() -> None:
    res = settle_auditor(
        auditor=ALICE, seats=[Seat(segment_index=0), Seat(segment_index=3)], outcomes=[O.NONE] * 4,
        reputation=WAD // 2, pool_assets=50, commission_bps=1000, slash_seed=None, rules=RULES, finalized=False,
    )  # fmt: skip
    assert (res.gross_reward, res.commission, res.reward_to_pool, res.slashed) == (12, 1, 11, 0)
    assert (res.reputation_after, res.pool_assets_after, res.slashes) == (WAD // 2, 61, 0)


def test_slash_cap_counts_the_net_reward_and_the_price_floor_resets() -> None:
    a = apply_result(assets=10, reward=6, slash=100, commission_bps=5000)
    assert (a.commission, a.net_reward, a.slashed, a.assets_after) == (3, 3, 13, 0)
    b = apply_result(assets=10, reward=0, slash=9, commission_bps=0, total_shares=10**10 + 1)
    assert (b.slashed, b.swept, b.assets_after, b.shares_after) == (9, 1, 0, 0)  # 1 * 1e9 < shares
    c = apply_result(assets=10, reward=0, slash=9, commission_bps=0, total_shares=10**9)
    assert (c.swept, c.assets_after, c.shares_after) == (0, 1, 10**9)


def test_reputation_update_and_map() -> None:
    gamma = WAD // 20
    assert reputation_update(WAD // 2, True, gamma) == 525 * 10**15
    assert reputation_update(WAD // 2, False, gamma) == 475 * 10**15
    assert reputation_step(WAD, 0, True, gamma) == (WAD - gamma, gamma)
    assert apply_reputation(WAD // 2, *reputation_step(WAD, 0, True, gamma)) == 525 * 10**15
    assert apply_reputation(WAD, WAD, 1) == WAD  # capped
    assert slash_probability(WAD // 3, 0, WAD) == (WAD - WAD // 3)
    with pytest.raises(ValueError):
        reputation_update(WAD + 1, True, gamma)


def test_slash_frequency_follows_p_slash() -> None:
    n = 4000
    s = score_auditor(
        auditor=ALICE, seats=[Seat(segment_index=i, vote_fail=True) for i in range(n)], outcomes=[O.PASS] * n,
        draw_reputation=WAD // 2, slash_seed=SEED, rules=RULES,
    )  # fmt: skip
    assert abs(s.slashes / n - 0.35) < 4 * (0.35 * 0.65 / n) ** 0.5


def test_tally_skips_abstentions_and_unrevealed_seats() -> None:
    seats = [
        [Seat(segment_index=0, vote_fail=False), Seat(segment_index=1)],
        [Seat(segment_index=0, vote_fail=True), Seat(segment_index=1, vote_fail=False, abstain=True)],
    ]
    assert tally(seats, 2) == [(1, 1), (0, 0)]


# --- properties ---------------------------------------------------------------------------------

_votes = st.lists(st.sampled_from(["pass", "fail", "abstain", "hidden"]), min_size=1, max_size=64)
_outcome = st.sampled_from([O.PASS, O.FAIL, O.INCONCLUSIVE])


def _seats(votes: list[str]) -> list[Seat]:
    return [
        Seat(segment_index=i, vote_fail=None if v == "hidden" else v == "fail", abstain=v == "abstain")
        for i, v in enumerate(votes)
    ]


@given(
    votes=_votes,
    outcomes=st.lists(_outcome, min_size=64, max_size=64),
    r=st.integers(0, WAD),
    gamma=st.integers(0, WAD),
    seed=st.binary(min_size=32, max_size=32),
)
def test_score_properties(votes: list[str], outcomes: list[O], r: int, gamma: int, seed: bytes) -> None:
    rules = RULES.model_copy(update={"gamma": gamma})
    seats = _seats(votes)
    s = score_auditor(
        auditor=ALICE, seats=seats, outcomes=outcomes, draw_reputation=r, slash_seed=seed, rules=rules
    )
    decided = [o != O.INCONCLUSIVE for o in outcomes[: len(votes)]]
    counted = sum(1 for v, d in zip(votes, decided, strict=True) if d or v == "hidden")
    assert s.correct + s.incorrect + s.abstained == counted
    assert s.reward == s.correct * rules.reward and s.slash == s.slashes * rules.penalty
    assert s.slashes <= s.incorrect and s.slashes >= votes.count("hidden")
    assert s.rep_mul >= 0 and s.rep_add >= 0 and s.rep_mul + s.rep_add <= WAD  # the map stays in [0, 1]
    # The composed map is the spec's per-vote rule up to one wei of truncation per step.
    spec = r
    for v, o in zip(votes, outcomes, strict=False):
        if v == "hidden" or o != O.INCONCLUSIVE:
            spec = reputation_update(spec, v in ("pass", "fail") and (v == "fail") == (o == O.FAIL), gamma)
    assert abs(apply_reputation(r, s.rep_mul, s.rep_add) - spec) <= 2 * counted + 1
    # Abstaining is an incorrect vote for reputation, but never rewarded or slashed.
    as_wrong = [
        Seat(segment_index=x.segment_index, vote_fail=outcomes[x.segment_index] != O.FAIL) if x.abstain else x
        for x in seats
    ]
    w = score_auditor(
        auditor=ALICE, seats=as_wrong, outcomes=outcomes, draw_reputation=r, slash_seed=seed, rules=rules
    )
    assert (w.rep_mul, w.rep_add, w.correct) == (s.rep_mul, s.rep_add, s.correct)
    assert s.abstained == sum(1 for x in s.seats if x.abstained and x.outcome != O.INCONCLUSIVE)
    assert all(x.slashed == 0 and x.rewarded == 0 for x in s.seats if x.abstained)


@given(
    assets=st.integers(0, 10**24),
    reward=st.integers(0, 10**21),
    slash=st.integers(0, 10**22),
    bps=st.integers(0, 5000),
    shares=st.one_of(st.none(), st.integers(0, 10**40)),
)
def test_apply_result_conserves_tokens(
    assets: int, reward: int, slash: int, bps: int, shares: int | None
) -> None:
    a = apply_result(assets=assets, reward=reward, slash=slash, commission_bps=bps, total_shares=shares)
    assert assets + reward == a.assets_after + a.commission + a.slashed + a.swept
    assert a.slashed == min(slash, assets + a.net_reward)
    if shares is not None and a.shares_after:
        assert a.assets_after * 10**9 >= a.shares_after  # a surviving share is worth >= 1e-9 wei


@given(
    maps=st.lists(st.tuples(st.integers(0, WAD), st.integers(0, WAD)), min_size=1, max_size=8),
    r=st.integers(0, WAD),
)
def test_reputation_stays_a_wad_whatever_the_maps(maps: list[tuple[int, int]], r: int) -> None:
    for mul, add in maps:
        r = apply_reputation(r, mul, min(add, WAD - mul))
        assert 0 <= r <= WAD
