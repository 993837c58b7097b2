"""The session shape of appeal rounds (issue 15): a round is the session's appeal number, one appeal
names segments of one depth, and a segment's panels carry increasing session rounds."""

from __future__ import annotations

import pytest
from eth_utils import to_checksum_address

from trustnode.consensus.appeal_admission import check_session_appeal
from trustnode.consensus.appeal_settlement import settle_segment
from trustnode.consensus.appeals import (
    Appeal,
    AppealParams,
    AppealRefused,
    Panel,
    PanelSeat,
    PanelStatus,
    SegmentRecord,
    Vote,
    first_window,
    min_bond,
    window_after_round,
)
from trustnode.consensus.rules import WAD, EconomicRules, slash_coin, slash_probability
from trustnode.models.enums import SegmentOutcome as O
from trustnode.models.enums import Tier

T = 10**18
R = 6 * T
ECON = EconomicRules(reward=R, penalty=8 * T, p_min=WAD // 5, p_max=WAD // 2, gamma=WAD // 10)
PARAMS = AppealParams(appeal_blocks=10, max_rounds=2)
SEED = bytes(range(32))
SEATS = (1, 3, 3)


def addr(i: int) -> str:
    return to_checksum_address(i.to_bytes(20, "big"))


def panel(rnd: int, votes: str, first: int, appealed: O | None = None, k0: int = 3, depth: int = 1) -> Panel:
    kinds = {"P": Vote.PASS, "F": Vote.FAIL, "U": Vote.UNREVEALED}
    seats = [PanelSeat(auditor=addr(first + i), vote=kinds[c], reputation=0) for i, c in enumerate(votes)]
    ap = None
    if appealed is not None:
        ap = Appeal(
            appellant=addr(999), bond=min_bond(k0, depth, R, PARAMS.bond_multiplier_bps), appealed=appealed
        )
    return Panel(round=rnd, seats=seats, appeal=ap)


def seg(index: int, *panels: Panel, tier: Tier = Tier.LLM) -> SegmentRecord:
    return SegmentRecord(index=index, tier=tier, weight=1, panels=list(panels))


def test_a_segments_panels_carry_the_sessions_round_numbers_and_their_slash_coins() -> None:
    # segment 4 was appealed in the session's rounds 3 and 7 (other segments took rounds 1, 2, 4-6)
    s = seg(
        4, panel(0, "PPF", 1), panel(3, "FFFFFFF", 10, O.PASS), panel(7, "F" * 14 + "P", 20, O.FAIL, depth=2)
    )
    st = settle_segment(s, k0=3, tau_bps=6000, appeal=PARAMS, econ=ECON, slash_seed=SEED, budget=10**6 * T)
    assert st.final == O.FAIL and [p.round for p in st.payouts] == [3, 7]
    assert {v.round for v in st.votes} == {0, 3, 7}
    wrong = [v for v in st.votes if v.agreed is False]
    assert {v.round for v in wrong} == {0, 7}
    for v in wrong:  # each coin is keccak(seed, auditor, session round, segment)
        assert v.coin == slash_coin(SEED, v.auditor, 4, v.round)
        assert v.slashed == (8 * T if v.coin < slash_probability(0, ECON.p_min, ECON.p_max) else 0)
    with pytest.raises(ValueError, match="follows a later round"):
        settle_segment(seg(4, panel(0, "PPF", 1), panel(3, "F" * 7, 10, O.PASS), panel(3, "F" * 15, 20, O.FAIL,
                                                                                        depth=2)),
                       k0=3, tau_bps=6000, appeal=PARAMS, econ=ECON, slash_seed=SEED, budget=0)  # fmt: skip


def _session() -> list[SegmentRecord]:
    return [
        seg(0, panel(0, "P", 1, k0=1), tier=Tier.COMPUTER),
        seg(1, panel(0, "PPF", 2)),
        seg(2, panel(0, "PFF", 5), panel(1, "P" * 7, 10, O.FAIL)),
        seg(3, panel(0, "PPP", 30), Panel(round=2, seats=[], status=PanelStatus.UNFILLABLE,
                                          appeal=Appeal(appellant=addr(9), bond=42 * T, appealed=O.PASS))),
    ]  # fmt: skip


def _check(named: list[int], **kw: object) -> object:
    args: dict[str, object] = {
        "seats": SEATS, "appeal": PARAMS, "reward": R, "block": 100, "opens_after": 90, "outcome_final": False,
        "window_ends": [100, 100, 100, 100], "rounds_opened": 2, "running": set(), "canaries": set(),
        "members": lambda tier: 60, "seat_cap": 8,
    }  # fmt: skip
    args.update(kw)
    return check_session_appeal(_session(), named, **args)  # type: ignore[arg-type]


def test_one_appeal_names_segments_of_one_depth_and_pays_the_sum_of_their_bonds() -> None:
    one_tier = [seg(0, panel(0, "PPP", 1)), *_session()[1:]]
    adm = check_session_appeal(one_tier, [0, 1], seats=SEATS, appeal=PARAMS, reward=R, block=100, opens_after=90,
                               outcome_final=False, window_ends=[100] * 4, rounds_opened=2, running=set(),
                               canaries=set(), members=lambda t: 60,
                               seat_cap=8)  # fmt: skip
    assert adm.round == 3 and adm.depth == 1
    assert adm.eligible == 60 - 3 and adm.refusals_charged  # 60 live but the provider, round 0's 3 seats
    assert adm.seats == [7, 7] and adm.bonds == [7 * R, 7 * R] and adm.bond == 14 * R
    deeper = _check([2])
    assert deeper.depth == 2 and deeper.seats == [15] and deeper.bond == 15 * R  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("named", "kw", "name"),
    [
        ([1], {"appeal": AppealParams(appeal_blocks=0, max_rounds=2)}, "AppealsDisabled"),
        ([1], {"opens_after": None}, "AppealWindowNotOpen"),
        ([], {}, "EmptyAppeal"),
        ([1], {"outcome_final": True}, "AppealWindowClosed"),
        ([1], {"block": 90}, "AppealWindowNotOpen"),
        ([1], {"rounds_opened": 8}, "TooManyRounds"),  # max_rounds * 4 segments
        ([9], {}, "InvalidSegment"),
        ([1, 1], {}, "SegmentsNotAscending"),
        ([1, 0], {}, "SegmentsNotAscending"),
        ([1], {"canaries": {1}}, "SegmentIsCanary"),
        ([1, 2], {}, "MixedDepths"),
        ([0, 1], {}, "MixedTiers"),  # one round, one tier: a refusal in one tier ends the whole round
        ([1, 2], {"running": {1}}, "AppealPending"),  # a running panel counts in the depth
        ([1], {"running": {1}}, "AppealPending"),
        ([3], {"window_ends": [100, 100, 100, 0]}, "SegmentFinal"),  # says why before the window
        (
            [2],
            {"appeal": AppealParams(appeal_blocks=10, max_rounds=1), "window_ends": [0] * 4},
            "NoRoundsLeft",
        ),
        ([1], {"window_ends": [100, 99, 100, 100]}, "AppealWindowClosed"),
        ([1], {"members": lambda tier: 9}, "NotEnoughEligibleAuditors"),  # 9 - k_0 = 6 < k_1 = 7
        ([1], {"max_bond": 7 * R - 1}, "BondAboveLimit"),
    ],
)
def test_appeal_refusals_in_the_contracts_order(named: list[int], kw: dict[str, object], name: str) -> None:
    with pytest.raises(AppealRefused) as refused:
        _check(named, **kw)
    assert refused.value.name == name


def test_a_round_above_the_seat_cap_uses_at_most_half_of_what_the_tier_can_seat() -> None:
    """Outside review 9: a round the seat cap can fail ends REFUSED on one busy auditor's refusal."""
    segs = [seg(i, panel(0, "PPP", 1)) for i in range(14)]

    def check(n: int, members: int = 12) -> list[int]:
        return check_session_appeal(segs, list(range(n)), seats=SEATS, appeal=PARAMS, reward=R, block=100,
                                    opens_after=90, outcome_final=False, window_ends=[100] * 14, rounds_opened=0,
                                    running=set(), canaries=set(),
                                    members=lambda t: members, seat_cap=8).seats  # fmt: skip

    assert check(8) == [7] * 8  # no more segments than the cap: an auditor may sit on each
    for n in range(9, 15):  # 7n seats > 0 (E 9: 9 - 4 = 5 < k = 7)
        with pytest.raises(AppealRefused) as refused:
            check(n)
        assert refused.value.name == "PanelTooLarge" and f"{7 * n} seats" in str(refused.value)
    # outside review 17: the capacity counts who can sit, E = members - k_0 (round 0's seats); outside
    # review 20: the auditors at the cap on earlier segments out of the draw; review 22: exact,
    # k + cap (E - E // 2 - k + 1) - 1 (the last segment keeps k iff 8 x 7 // 8 <= free - k)
    assert check(9, members=30) == [7] * 9  # E 27: 63 <= 7 + 8 * (14 - 7 + 1) - 1 = 70
    with pytest.raises(AppealRefused, match="PanelTooLarge.*at most 62"):
        check(
            9, members=29
        )  # E 26: 63 > 7 + 8 * (13 - 7 + 1) - 1 = 62, though 63 <= 26 * 8 / 2 (the old rule)
    with pytest.raises(AppealRefused, match="PanelTooLarge.*at most 22"):
        check(9, members=19)  # E 16: 7 + 8 * (8 - 7 + 1) - 1 = 22, where the old rule admitted 64
    with pytest.raises(AppealRefused, match="PanelTooLarge.*at most 0"):
        check(9, members=15)  # E 12: E - E // 2 = 6 < k = 7, no capped round


def test_windows_open_after_the_canary_reveal_and_reopen_after_each_round() -> None:
    assert first_window(100, 5, 10) == (105, 115)
    assert window_after_round(130, 10, rounds_left=True) == 140
    assert window_after_round(130, 10, rounds_left=False) == 0
