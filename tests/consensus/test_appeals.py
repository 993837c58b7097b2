"""Appeal reference rules (issue 15): panel sizes, bonds, the farming inequality, every appeal path by hand."""

from __future__ import annotations

import pytest
from eth_abi import encode
from eth_utils import keccak, to_checksum_address

from trustnode.consensus.appeal_settlement import apply_effects, settle_segment
from trustnode.consensus.appeals import (
    Appeal,
    AppealParams,
    AppealResult,
    Effect,
    Panel,
    PanelSeat,
    PanelStatus,
    SegmentRecord,
    Vote,
    cheapest_spoil,
    check_appeal_params,
    farming_loses,
    min_bond,
    panel_seats,
)
from trustnode.consensus.rules import WAD, EconomicRules, reputation_update, slash_coin, slash_probability
from trustnode.models.enums import SegmentOutcome as O
from trustnode.models.enums import Tier

T = 10**18
R = 6 * T
ECON = EconomicRules(reward=R, penalty=8 * T, p_min=WAD // 5, p_max=WAD // 2, gamma=WAD // 10)
PARAMS = AppealParams()
SEED = bytes(range(32))
APPELLANT = to_checksum_address("0x" + "aa" * 20)
PROVIDER = to_checksum_address("0x" + "bb" * 20)


def addr(i: int) -> str:
    return to_checksum_address(i.to_bytes(20, "big"))


def panel(
    r: int, votes: str, first: int, *, appeal: Appeal | None = None, status: PanelStatus = PanelStatus.DECIDED
) -> Panel:
    """votes: one letter per seat, P / F / A (abstain) / U (never revealed); auditors first, first+1, ..."""
    kinds = {"P": Vote.PASS, "F": Vote.FAIL, "A": Vote.ABSTAIN, "U": Vote.UNREVEALED}
    seats = [
        PanelSeat(auditor=addr(first + i), vote=kinds[c], reputation=WAD // 2) for i, c in enumerate(votes)
    ]
    return Panel(round=r, seats=seats, status=status, appeal=appeal)


def appeal(r: int, against: O, who: str = APPELLANT, k0: int = 3) -> Appeal:
    return Appeal(appellant=who, bond=min_bond(k0, r, R, PARAMS.bond_multiplier_bps), appealed=against)


def settle(panels: list[Panel], budget: int = 10**6 * T):
    seg = SegmentRecord(index=4, tier=Tier.LLM, weight=2, panels=panels)
    return settle_segment(seg, k0=3, tau_bps=6000, appeal=PARAMS, econ=ECON, slash_seed=SEED, budget=budget)


def conserved(st) -> None:  # type: ignore[no-untyped-def]
    out = st.rewards + sum(p.refund + p.reward_paid for p in st.payouts) + st.to_treasury
    assert st.reserved + st.bonds + st.budget_used == out


# --- sizes, bonds, farming -------------------------------------------------------------------------


def test_panels_grow_two_k_plus_one() -> None:
    assert [panel_seats(3, r) for r in range(5)] == [3, 7, 15, 31, 63]
    assert [panel_seats(1, r) for r in range(4)] == [1, 3, 7, 15]
    assert [panel_seats(5, r) for r in range(4)] == [5, 11, 23, 47]
    with pytest.raises(ValueError):
        panel_seats(0, 1)


def test_min_bond_is_k_r_times_R_times_multiplier() -> None:
    assert min_bond(3, 1, R, 10_000) == 7 * R
    assert min_bond(3, 2, R, 15_000) == 15 * R * 3 // 2
    assert min_bond(5, 1, 7, 12_345) == 11 * 7 * 12_345 // 10_000  # integer floor
    with pytest.raises(ValueError):
        min_bond(3, 0, R, 10_000)


def test_cheapest_spoil_is_the_inconclusive_route_when_tau_above_half() -> None:
    # k=3, q=2: 2 wrong votes leave 1 PASS < q; k=7, q=5: 3 wrong votes leave 4 < 5.
    assert cheapest_spoil(3, 6000) == 2
    assert cheapest_spoil(7, 6000) == 3
    assert cheapest_spoil(15, 6000) == 7
    assert cheapest_spoil(1, 6000) == 1


def test_farming_inequality_by_hand() -> None:
    # Round 0 of a 3-seat tier: m=2 wrong votes cost 2 * (R + pMin P) = 2 * 7.6 = 15.2;
    # the appellant reward on the 7 R bond is 0.2 * 42 = 8.4 < 15.2.
    assert farming_loses(3, 0, 6000, PARAMS, ECON)
    # Round 2 (k=15 -> 31): m = 7, cost 53.2 vs 0.2 * 186 = 37.2.
    assert farming_loses(3, 2, 6000, PARAMS, ECON)
    # A reward of 50% of the bond pays off at round 1 (k=7: cost 22.8 vs 0.5 * 90 = 45).
    greedy = AppealParams(reward_bps=5000)
    assert not farming_loses(3, 1, 6000, greedy, ECON)
    # Counting only cash (no forgone R), devnet's small P does not deter: 2 * 1.6 < 8.4.
    assert not farming_loses(3, 0, 6000, PARAMS, ECON, count_forgone=False)


def test_check_params_rejects_a_greedy_reward_and_oversized_panels() -> None:
    check_appeal_params(PARAMS, (1, 3, 3), 6000, ECON)
    check_appeal_params(PARAMS, (3, 3, 5), 6000, ECON)
    with pytest.raises(ValueError, match="would pay"):
        check_appeal_params(AppealParams(reward_bps=5000), (1, 3, 3), 6000, ECON)
    with pytest.raises(ValueError, match="> 63"):
        check_appeal_params(AppealParams(max_rounds=4), (1, 3, 5), 6000, ECON)


def test_slash_coin_is_the_v2_abi_encoding() -> None:
    a = addr(7)
    digest = keccak(
        bytes(SEED) + bytes(12) + bytes.fromhex(a[2:]) + (2).to_bytes(32, "big") + (9).to_bytes(32, "big")
    )
    assert digest == keccak(encode(["bytes32", "address", "uint256", "uint256"], [SEED, a, 2, 9]))
    assert slash_coin(SEED, a, 9, 2) == int.from_bytes(digest, "big") % WAD
    assert slash_coin(SEED, a, 9, 2) != slash_coin(SEED, a, 9, 1)  # rounds draw separately


# --- every path -----------------------------------------------------------------------------------


def test_no_appeal_round_zero_scored_as_before() -> None:
    st = settle([panel(0, "PPF", 1)])
    assert st.final == O.PASS and st.payouts == []
    assert [v.rewarded for v in st.votes] == [R, R, 0]
    dissent = st.votes[2]
    assert dissent.agreed is False and dissent.effect is Effect.INCORRECT
    assert dissent.coin == slash_coin(SEED, addr(3), 4, 0)
    assert dissent.slashed == (
        8 * T if dissent.coin < slash_probability(WAD // 2, ECON.p_min, ECON.p_max) else 0
    )
    assert st.to_treasury == R and st.budget_used == 0
    conserved(st)


def test_upheld_appeal_bond_pays_the_panel_rest_to_treasury() -> None:
    st = settle([panel(0, "PPF", 1), panel(1, "PPPPPPF", 10, appeal=appeal(1, O.PASS))])
    assert st.final == O.PASS
    (p,) = st.payouts
    assert p.result is AppealResult.UPHELD and p.refund == 0 and p.reward_paid == 0
    r1 = [v.rewarded for v in st.votes if v.round == 1]
    assert r1 == [R] * 6 + [0]
    # pot = round-0 leftover R + bond surplus (7R - 6R) = 2R -> treasury; no budget touched
    assert st.to_treasury == 2 * R and st.budget_used == 0
    conserved(st)


def test_overturned_appeal_refund_reward_from_freed_rewards_then_budget() -> None:
    st = settle([panel(0, "PPF", 1), panel(1, "PFFFFFF", 10, appeal=appeal(1, O.PASS))])
    assert st.final == O.FAIL
    (p,) = st.payouts
    assert p.result is AppealResult.OVERTURNED
    assert p.refund == 7 * R and p.reward_due == 7 * R * 2000 // 10_000 == p.reward_paid
    # first-round PASS voters are now wrong: no R, slash coins with round 0; the FAIL voter earns R
    r0 = [v for v in st.votes if v.round == 0]
    assert [v.agreed for v in r0] == [False, False, True] and [v.rewarded for v in r0] == [0, 0, R]
    assert [v.rewarded for v in st.votes if v.round == 1] == [0] + [R] * 6
    # pot = 3R - R = 2R pays 2R of the panel's 6R; the budget pays 4R + the 1.4R reward
    assert st.budget_used == 4 * R + 7 * R // 5
    assert st.to_treasury == 0 and st.shortfall == 0
    conserved(st)


def test_budget_shortfall_is_reported_and_paid_pro_rata() -> None:
    st = settle([panel(0, "PPF", 1), panel(1, "PFFFFFF", 10, appeal=appeal(1, O.PASS))], budget=3 * R)
    per = (2 * R + 3 * R) // 6
    assert st.reward_per_vote[1] == per
    assert [v.rewarded for v in st.votes if v.round == 1] == [0] + [per] * 6
    (p,) = st.payouts
    assert p.refund == 7 * R  # the bond always comes back whole
    assert p.reward_paid == 5 * R - 6 * per  # whatever dust is left
    assert st.shortfall == 6 * (R - per) + p.reward_due - p.reward_paid
    assert st.budget_used == 3 * R
    conserved(st)


def test_two_rounds_first_appeal_fails_second_succeeds() -> None:
    st = settle(
        [
            panel(0, "PPF", 1),
            panel(1, "PPFFFFF", 10, appeal=appeal(1, O.PASS)),
            panel(2, "P" * 12 + "FFF", 20, appeal=appeal(2, O.FAIL, PROVIDER)),
        ]
    )
    assert st.resolution.outcomes == [O.PASS, O.FAIL, O.PASS] and st.final == O.PASS
    up, over = st.payouts
    assert up.result is AppealResult.UPHELD and up.refund == 0
    assert over.result is AppealResult.OVERTURNED and over.refund == 15 * R and over.reward_paid == 3 * R
    # round 1 is scored against the FINAL outcome: its two PASS voters are right
    assert [v.rewarded for v in st.votes if v.round == 1] == [R, R, 0, 0, 0, 0, 0]
    # pot = (3R - 2R) + (7R - 2R) = 6R pays 6 of round 2's 12 R; budget 6R + reward 3R
    assert st.budget_used == 9 * R and st.to_treasury == 0
    conserved(st)


def test_keys_withheld_makes_inconclusive_scores_as_fail_returns_bond_and_pays_from_the_pot_only() -> None:
    st = settle(
        [
            panel(0, "PPF", 1),
            panel(1, "U" * 7, 10, appeal=appeal(1, O.PASS), status=PanelStatus.KEYS_WITHHELD),
        ]
    )
    assert st.final == O.INCONCLUSIVE and st.resolution.scoring == O.FAIL
    (p,) = st.payouts
    assert p.result is AppealResult.KEYS_WITHHELD and p.refund == 7 * R and p.reward_due == 0
    # round 0 is scored against FAIL (only the provider can withhold: adverse inference): the FAIL vote
    # is paid R, the two PASS votes are wrong; the panel's 7 seats share the pot (round 0's other 2R)
    # and nothing from the budget (review finding 2); the rest is a shortfall
    zero = [v for v in st.votes if v.round == 0]
    assert [(v.agreed, v.rewarded) for v in zero] == [(False, 0), (False, 0), (True, R)]
    assert all(v.rewarded == 2 * R // 7 and v.effect is Effect.NONE for v in st.votes if v.round == 1)
    assert st.budget_used == 0 and st.to_treasury == 2 * R - 7 * (2 * R // 7)
    assert st.shortfall == 7 * R - 7 * (2 * R // 7)
    conserved(st)


def test_a_coalition_withholding_keys_on_its_own_appeal_draws_nothing_from_the_budget() -> None:
    """Review finding 2: whatever the budget, a withheld panel gets at most its segment's pot, so a
    coalition holding every seat earns at most k_0 R, below the 3.75 R fee of the segment."""
    for budget in (0, 4 * R, 10**6 * T):
        st = settle(
            [
                panel(0, "PPP", 1),
                panel(1, "U" * 7, 10, appeal=appeal(1, O.PASS), status=PanelStatus.KEYS_WITHHELD),
            ],
            budget=budget,
        )
        assert st.budget_used == 0
        assert sum(v.rewarded for v in st.votes if v.round == 1) <= 3 * R < 3 * R * 10_000 // 8000


def test_unfillable_panel_refunds_bond_minus_drawn_seats_and_outcome_stands() -> None:
    st = settle(
        [panel(0, "PPF", 1), panel(1, "UUUU", 10, appeal=appeal(1, O.PASS), status=PanelStatus.UNFILLABLE)]
    )
    assert st.final == O.PASS
    (p,) = st.payouts
    assert p.result is AppealResult.UNFILLABLE and p.refund == 3 * R
    assert [v.rewarded for v in st.votes if v.round == 1] == [R] * 4
    assert st.to_treasury == R and st.budget_used == 0
    conserved(st)


def test_inconclusive_panel_voids_the_appeal_without_reward() -> None:
    st = settle([panel(0, "PPF", 1), panel(1, "PPPFFFA", 10, appeal=appeal(1, O.PASS))])
    assert st.final == O.INCONCLUSIVE
    (p,) = st.payouts
    assert p.result is AppealResult.VOIDED and p.refund == 7 * R and p.reward_paid == 0
    assert st.rewards == 0 and st.to_treasury == 3 * R
    abstain = st.votes[-1]
    # SettlementModule scores nothing on an INCONCLUSIVE segment, abstentions included
    assert abstain.vote is Vote.ABSTAIN and abstain.effect is Effect.NONE and abstain.slashed == 0
    conserved(st)


def test_appeal_against_inconclusive_that_decides_is_overturned() -> None:
    st = settle([panel(0, "PFA", 1), panel(1, "FFFFFFP", 10, appeal=appeal(1, O.INCONCLUSIVE))])
    assert st.resolution.outcomes == [O.INCONCLUSIVE, O.FAIL]
    assert st.payouts[0].result is AppealResult.OVERTURNED
    conserved(st)


def test_unrevealed_seat_is_always_slashed_even_on_inconclusive() -> None:
    st = settle([panel(0, "PFU", 1)])
    assert st.final == O.INCONCLUSIVE
    assert [v.slashed for v in st.votes] == [0, 0, 8 * T]


@pytest.mark.parametrize(
    ("panels", "message"),
    [
        ([panel(0, "PPF", 1), panel(1, "PPPPPPP", 3, appeal=appeal(1, O.PASS))], "exclusion"),
        ([panel(0, "PPF", 1), panel(1, "PPPPPPP", 10, appeal=appeal(1, O.FAIL))], "must contest PASS"),
        ([panel(0, "PPF", 1), panel(1, "PPPPPP", 10, appeal=appeal(1, O.PASS))], "k_d = 7"),
        (
            [
                panel(0, "PPF", 1),
                panel(1, "PPPPPPP", 10, appeal=Appeal(appellant=APPELLANT, bond=R, appealed=O.PASS)),
            ],
            "minimum bond",
        ),
        (
            [
                panel(0, "PPF", 1),
                panel(1, "UU", 10, appeal=appeal(1, O.PASS), status=PanelStatus.UNFILLABLE),
                panel(2, "P" * 15, 20, appeal=appeal(2, O.PASS)),
            ],
            "not allowed",
        ),
        ([panel(0, "PPF", 1, appeal=appeal(1, O.PASS))], "round 0"),
    ],
)
def test_histories_the_contract_refuses(panels: list[Panel], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        settle(panels)


def test_rounds_beyond_max_rounds_are_refused() -> None:
    seg = SegmentRecord(
        index=0,
        tier=Tier.LLM,
        weight=1,
        panels=[panel(0, "PPF", 1), panel(1, "P" * 7, 10, appeal=appeal(1, O.PASS))],
    )
    with pytest.raises(ValueError, match="not allowed"):
        settle_segment(
            seg, k0=3, tau_bps=6000, appeal=AppealParams(max_rounds=0), econ=ECON, slash_seed=SEED, budget=0
        )


def test_apply_effects_matches_the_v1_reputation_rule() -> None:
    r = WAD // 2
    seq = [(Effect.CORRECT, WAD // 10), (Effect.NONE, WAD // 10), (Effect.INCORRECT, WAD // 5)]
    expected = reputation_update(reputation_update(r, True, WAD // 10), False, WAD // 5)
    assert apply_effects(r, seq) == expected
