"""The in-memory chain's end of a failed appeal draw (`memory_rounds._round_refused` over
`consensus.appeal_draw`): REFUSED iff admission charged refusals (eligible accounts >= 2k) and the
failing segment's counted refusers hold more than half of its eligible weight (rule R, outside review
17); a stake-short refusal is uncounted only when the locks this session holds on the auditor (round 0,
every appeal round, the drawing round's seats so far; settled ones released) alone leave it less than one
lock (rule S', outside reviews 19 and 11), against a stake a withdrawal after the session's seed cannot
shrink.  Same rules as the contracts (`DrawModule`, `AppealModule`)."""

from __future__ import annotations

import pytest
from eth_utils import to_checksum_address

from tests.chain.port_scenarios import ISSUE15_PARAMS, TOKEN, stake_premise_waived, vote_round, when_ready
from tests.chain.test_port_appeals import OPERATOR
from trustnode.chain.port import ChainPort, RoundState, SeatVote
from trustnode.chain.port.memory_rounds import RoundOps
from trustnode.chain.port.memory_state import MemoryChain, Vote
from trustnode.chain.protocol import SessionParams
from trustnode.models.enums import SegmentOutcome, Tier

R = ISSUE15_PARAMS.reward


def _tier(
    n: int, params: SessionParams = ISSUE15_PARAMS, stake: int = 100 * TOKEN, tier: Tier = Tier.COMPUTER
):  # type: ignore[no-untyped-def]
    """`n` auditors of `tier` staking `stake` each, a provider and an appellant."""
    chain = MemoryChain(params)
    chain.port(chain.owner).set_canary_operator(OPERATOR, True)
    provider, appellant = chain.port("0x" + "01" * 20), chain.port("0x" + "02" * 20)
    auditors: dict[str, ChainPort] = {}
    for i in range(n):
        auditors.update(_join(chain, 0x100 + i, tier, stake))
    for port in [provider, appellant]:
        chain.fund(port.address, 10_000 * TOKEN)
    return chain, provider, appellant, auditors


def _join(chain: MemoryChain, i: int, tier: Tier, stake: int) -> dict[str, ChainPort]:
    port = chain.port(to_checksum_address(i.to_bytes(20, "big")))
    chain.fund(port.address, 10_000 * TOKEN)
    port.register(tier, 1, b"\x45" * 32)
    port.stake(stake)
    return {port.address: port}


def _passed(
    chain: MemoryChain, provider: ChainPort, auditors: dict[str, ChainPort], root: bytes, tier: int = 0
) -> int:
    with stake_premise_waived(chain):
        sid = provider.open_session(root, [tier, tier], [1, 1], 100 * TOKEN).session_id
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.PASS, chain.mine)
    chain.mine(ISSUE15_PARAMS.canary_reveal_blocks + 1)
    return sid


def _candidates(provider: ChainPort, sid: int, auditors: dict[str, ChainPort], seg: int) -> list[str]:
    """Who may sit on `seg`'s first appeal panel: everyone but its round-0 auditors."""
    r0 = {a for a, s in provider.seats(sid, 0).items() if seg in s}
    return [a for a in auditors if a not in r0]


@pytest.mark.parametrize(("sybils", "charged"), [(8, True), (7, False)])
def test_review17_light_accounts_refusing_end_the_round_unfillable(sybils: int, charged: bool) -> None:
    """Review 17's tier (`Review17SybilsBuyTheRefusalMargin`): 9 honest auditors of 1,000 TRUST (k_0 = 3,
    so 6 eligible < k_1 = 7: nobody could appeal), then the appellant's S accounts of 100 TRUST.  S = 8:
    eligible 9 + 8 - 3 = 14 = 2 k_1, charged; its accounts refuse, the 6 honest eligible sit, the draw
    fails on the 7th seat.  8 of 14 accounts refused but 800 of 6,800 TRUST of weight: before rule R
    REFUSED (the PASS voided, the bond back); now UNFILLABLE, as with S = 7 (not charged): the PASS
    stands and the appellant pays R per drawn seat (6 x 6 = 36 TRUST)."""
    chain, provider, appellant, honest = _tier(9, stake=1_000 * TOKEN, tier=Tier.LLM)
    sid = _passed(chain, provider, honest, b"\x11" * 32, tier=Tier.LLM)
    accounts: dict[str, ChainPort] = {}
    for i in range(sybils):
        accounts.update(_join(chain, 0x517B00 + i, Tier.LLM, 100 * TOKEN))
    quote = appellant.appeal_quote(sid, [0])
    assert (quote.eligible, quote.refusals_charged) == (6 + sybils, charged)
    before = appellant.token_balance(appellant.address)
    appellant.appeal(sid, [0], 10**30)
    for a in accounts:  # their stake locked elsewhere
        chain.auditors[a].locked = chain.auditors[a].assets
    when_ready(lambda: provider.draw(sid, 16, 1), chain.mine)
    (info,) = provider.rounds(sid)
    assert info.refusals_charged is charged and info.drawn_seats == 6
    assert set(provider.seats(sid, 1)) == set(_candidates(provider, sid, honest, 0))
    assert info.state == RoundState.UNFILLABLE and info.segments[0].outcome == SegmentOutcome.PASS
    for a in accounts:
        chain.auditors[a].locked = 0
    status = provider.appeal_status(sid)
    chain.mine(max(status.window_ends) - chain.block + 1)
    provider.advance(sid)
    everyone = {**honest, **accounts}
    for r in (0, 1):
        for a in provider.seats(sid, r):
            when_ready(lambda a=a, r=r: everyone[a].settle(sid, a, r), chain.mine)  # type: ignore[misc]
    assert before - appellant.token_balance(appellant.address) == 6 * R == 36 * TOKEN


def test_a_weight_majority_refusing_ends_the_round_refused() -> None:
    """The same tier, the 9,000 TRUST busy (locked elsewhere) with 6 light accounts: 9,600 of 10,000
    TRUST refused, the 2 light accounts left sit and the draw fails REFUSED."""
    chain, provider, appellant, auditors = _tier(11)
    sid = _passed(chain, provider, auditors, b"\x12" * 32)
    cands = _candidates(provider, sid, auditors, 0)
    heavy, free, busy = cands[:2], cands[2:4], cands[4:]
    for a in heavy:
        auditors[a].stake(4_400 * TOKEN)
    appellant.appeal(sid, [0], 10**30)
    for a in heavy + busy:
        chain.auditors[a].locked = chain.auditors[a].assets
    when_ready(lambda: provider.draw(sid, 16, 1), chain.mine)
    (info,) = provider.rounds(sid)
    assert info.drawn_seats == 2 and set(provider.seats(sid, 1)) == set(free)
    assert info.state == RoundState.REFUSED and info.segments[0].outcome == SegmentOutcome.INCONCLUSIVE


#: One lock of 60 TRUST leaves 40 of a 100-TRUST stake: every seat exhausts its auditor.
HEAVY_LOCK = ISSUE15_PARAMS.model_copy(update={"slash_amount": 60 * TOKEN})


def _two_rounds(root: bytes, topped_up: int = 0):  # type: ignore[no-untyped-def]
    """7 auditors of 100 TRUST, a 60-TRUST lock per seat: round 0 seats one on each segment (k_0 = 1,
    each exhausted); round 1 (segment 1, k_1 = 3) seats 3 fresh ones F1, exhausted by that round alone;
    then round 2 (segment 0) has 6 eligible (charged: 6 >= 2 k_1), 2 of them free: its draw fails on
    the third seat.
    `topped_up`: F1 each stake that much more before round 2 and then lose all their free stake to
    locks elsewhere."""
    chain, provider, appellant, auditors = _tier(7, HEAVY_LOCK)
    sid = _passed(chain, provider, auditors, root)
    appellant.appeal(sid, [1], 10**30)
    when_ready(lambda: provider.draw(sid, 16, 1), chain.mine)
    f1 = set(provider.seats(sid, 1))
    assert len(f1) == 3 and provider.rounds(sid)[0].state == RoundState.DRAWING
    for a in f1 if topped_up else ():
        auditors[a].stake(topped_up)
        chain.auditors[a].locked = chain.auditors[a].assets
    assert appellant.appeal_quote(sid, [0]).refusals_charged
    appellant.appeal(sid, [0], 10**30)
    when_ready(lambda: provider.draw(sid, 16, 2), chain.mine)
    rnd = provider.rounds(sid)[1]
    assert rnd.drawn_seats == 2 and not set(provider.seats(sid, 2)) & f1
    return rnd


def test_an_auditor_exhausted_only_by_the_sessions_other_rounds_is_not_counted() -> None:
    """Round 2's eligible: segment 1's round-0 auditor (100 - 60 < 60: short by round 0's lock alone,
    uncounted), F1 (100 - 60 < 60: short by round 1's lock alone, uncounted), 2 seated.  Counted 0 of 6
    equal weights: UNFILLABLE, the PASS stands (counting F1 it would be 3 or 4 of 6)."""
    rnd = _two_rounds(b"\x13" * 32)
    assert rnd.state == RoundState.UNFILLABLE and rnd.segments[0].outcome == SegmentOutcome.PASS


def test_an_auditor_seated_elsewhere_in_the_session_that_emptied_its_stake_is_counted() -> None:
    """Review 19's defender: F1 holds a round-1 seat but staked 200 TRUST (200 - 60 >= 60), and its free
    stake went to locks elsewhere: counted (reason 5 left it uncounted as 'session held').  Counted
    3 x 2 = 6 of 9 weight units (segment 1's round-0 auditor, short by round 0's lock, uncounted):
    REFUSED, the PASS voided."""
    rnd = _two_rounds(b"\x14" * 32, topped_up=100 * TOKEN)
    assert rnd.state == RoundState.REFUSED and rnd.segments[0].outcome == SegmentOutcome.INCONCLUSIVE


#: One lock of 40 TRUST: a 100-TRUST auditor backs two seats, the third leaves it short.
LOCK40 = ISSUE15_PARAMS.model_copy(update={"slash_amount": 40 * TOKEN})


def test_an_auditor_exhausted_by_round_0_and_the_rounds_own_seats_is_not_counted() -> None:
    """7 auditors of 100 TRUST, a 40-TRUST lock, 3 PASS segments (k_0 = 1: X, Y, Z sit on segments 0, 1,
    2), one round on segments 1 and 2 (k_1 = 3, eligible 6 >= 6: charged).  Segment 1 seats X, O1, O2
    (the others are busy for that step); for segment 2 Y, O3, O4 are busy elsewhere, so O1 and O2 sit and
    the draw fails on the third seat.  X refused: 100 - (40 round 0 + 40 this round) = 20 < 40, the
    session's own doing, uncounted; Y, O3, O4 counted: 300 of 600 TRUST, no majority: UNFILLABLE.  Under
    rule S (only the other appeal rounds' locks, none here) X counted: 400 of 600, REFUSED."""
    chain, provider, appellant, auditors = _tier(7, LOCK40)
    with stake_premise_waived(chain):
        sid = provider.open_session(b"\x15" * 32, [0, 0, 0], [1, 1, 1], 100 * TOKEN).session_id
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.PASS, chain.mine)
    chain.mine(ISSUE15_PARAMS.canary_reveal_blocks + 1)
    r0 = provider.seats(sid, 0)
    x, y, z = ([a for a, segs in r0.items() if g in segs][0] for g in range(3))
    o = [a for a in auditors if a not in (x, y, z)]
    assert appellant.appeal_quote(sid, [1, 2]).refusals_charged
    appellant.appeal(sid, [1, 2], 10**30)
    held = {a: chain.auditors[a].locked for a in (z, o[2], o[3])}
    for a in held:
        chain.auditors[a].locked = chain.auditors[a].assets
    when_ready(lambda: provider.draw(sid, 3, 1), chain.mine)
    assert set(provider.seats(sid, 1)) == {x, o[0], o[1]}
    for a, locked in held.items():
        chain.auditors[a].locked = locked
    for a in (y, o[2], o[3]):
        chain.auditors[a].locked = chain.auditors[a].assets
    provider.draw(sid, 16, 1)
    (info,) = provider.rounds(sid)
    assert chain.auditors[x].assets - chain.auditors[x].locked == 20 * TOKEN
    assert info.drawn_seats == 5 and info.state == RoundState.UNFILLABLE
    assert info.segments[1].outcome == SegmentOutcome.PASS


def test_the_sessions_locks_are_every_rounds_seats_less_the_settled_ones() -> None:
    """`_held_by_session`: one lock per seat of round 0 and of each appeal round (the drawing one's
    included); a settled panel released its lock."""
    chain, provider, appellant, auditors = _tier(7, LOCK40)
    sid = _passed(chain, provider, auditors, b"\x17" * 32)
    appellant.appeal(sid, [1], 10**30)
    when_ready(lambda: provider.draw(sid, 2, 1), chain.mine)
    s = chain.session(sid)
    held = {a: RoundOps._held_by_session(s, a, LOCK40) for a in auditors}
    seats = {a: len(s.seats.get(a, [])) + len(s.rounds[0].seats.get(a, [])) for a in auditors}
    assert held == {a: n * 40 * TOKEN for a, n in seats.items()} and sum(seats.values()) == 2 + 2
    a = next(iter(s.seats))
    s.votes.setdefault(a, Vote()).settled = True
    assert RoundOps._held_by_session(s, a, LOCK40) == len(s.rounds[0].seats.get(a, [])) * 40 * TOKEN


def test_a_withdrawal_after_the_seed_cannot_make_a_refusal_uncounted() -> None:
    """7 auditors of 100 TRUST, a 40-TRUST lock, 2 PASS segments; W sits on segment 0 in round 0 (40
    locked).  After the seed, before the appeal on segment 1 (eligible 6, charged), W withdraws 30 TRUST of
    its free stake: `assets` 70, free 30 < 40, so it refuses (a withdrawal after the appeal is held while
    the round may draw: `test_a_withdrawal_after_the_appeal_is_held_while_the_round_may_draw`).  Its stake is taken as 70 + the 30 withdrawn since the seed:
    100 - 40 >= 40, counted.  With 3 others busy elsewhere (300) and 2 free ones of 150 TRUST seated,
    counted 70 + 300 = 370 of 670 TRUST of weight: REFUSED.  Had the withdrawal shrunk the stake
    (70 - 40 < 40, uncounted) it would be 300 of 670, UNFILLABLE: the withdrawal would have kept the
    PASS."""
    chain, provider, appellant, auditors = _tier(7, LOCK40)
    chain.min_stake = (
        48 * TOKEN
    )  # the memory chain's 100 would bar w's 70 TRUST after its withdrawal outright
    sid = _passed(chain, provider, auditors, b"\x16" * 32)
    r0 = provider.seats(sid, 0)
    w, x1 = ([a for a, segs in r0.items() if g in segs][0] for g in range(2))
    others = [a for a in auditors if a not in (w, x1)]
    busy, free = others[:3], others[3:]
    for a in free:
        auditors[a].stake(50 * TOKEN)
    auditors[w].request_withdrawal(30 * TOKEN)
    assert (chain.auditors[w].assets, chain.auditors[w].locked) == (70 * TOKEN, 40 * TOKEN)
    assert w != x1 and appellant.appeal_quote(sid, [1]).refusals_charged
    appellant.appeal(sid, [1], 10**30)
    for a in busy:
        chain.auditors[a].locked = chain.auditors[a].assets
    when_ready(lambda: provider.draw(sid, 16, 1), chain.mine)
    (info,) = provider.rounds(sid)
    assert info.drawn_seats == 2 and set(provider.seats(sid, 1)) == set(free)
    assert info.state == RoundState.REFUSED and info.segments[0].outcome == SegmentOutcome.INCONCLUSIVE


def test_a_withdrawal_after_the_appeal_is_held_while_the_round_may_draw() -> None:
    """The round draws from the weights at its appeal (`Round.snapshot`), and stake in a snapshot that may
    still draw cannot refuse (as in the contracts: a withdrawal parks behind an undrawn snapshot).  W asks
    for 30 of its 60 free TRUST after the appeal: nothing leaves `assets` while the round may draw."""
    chain, provider, appellant, auditors = _tier(7, LOCK40)
    sid = _passed(chain, provider, auditors, b"\x17" * 32)
    w = next(iter(provider.seats(sid, 0)))
    appellant.appeal(sid, [1], 10**30)
    auditors[w].request_withdrawal(30 * TOKEN)
    assert chain.auditors[w].assets == 100 * TOKEN and chain.in_undrawn_snapshot(w)
    when_ready(lambda: provider.draw(sid, 16, 1), chain.mine)
    (info,) = provider.rounds(sid)
    assert info.drawn_seats == info.total_seats and chain.auditors[w].assets == 100 * TOKEN


def test_review11_large_tier_own_rounds_cannot_void_the_last_round() -> None:
    """Property (`Review11ConcurrentRoundsExhaustStake.test_LargeTierOwnRoundsLocksVoidTheLastRound`): the
    appellant's own concurrent rounds cannot exhaust the tier and void a PASS.  20 auditors of 100 TRUST
    (tier LLM, k_0 = 3, seat cap 8, lock 8 TRUST), 24 correct PASS segments, three 8-segment rounds
    (eligible 17 >= 14: charged) drawn in turn: 56/56, 56/56, then 48/56.  On the failing segment 11 of
    the 17 eligible (1,100 of 1,700 TRUST of weight) refused, each holding 96 TRUST of this session's
    locks (round 0 + the other two rounds + this round's earlier segments): 100 - 96 < 8, uncounted under
    rule S'; counted 0 of 1,700: UNFILLABLE, the PASS stands.  Under rule S (other appeal rounds only)
    all 11 counted, 1,100 of 1,700: REFUSED (this test was a strict xfail then)."""
    chain, provider, appellant, auditors = _tier(20, tier=Tier.LLM)
    with stake_premise_waived(chain):
        sid = provider.open_session(b"\x21" * 32, [Tier.LLM] * 24, [1] * 24, 1_000 * TOKEN).session_id
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.PASS, chain.mine)
    chain.mine(ISSUE15_PARAMS.canary_reveal_blocks + 1)
    for i in range(3):
        named = list(range(8 * i, 8 * i + 8))
        assert appellant.appeal_quote(sid, named).refusals_charged
        appellant.appeal(sid, named, 10**30)
    for i in range(3):
        when_ready(lambda i=i: provider.draw(sid, 64, i + 1), chain.mine)  # type: ignore[misc]
    assert [r.drawn_seats for r in provider.rounds(sid)] == [56, 56, 48]
    assert provider.rounds(sid)[2].state == RoundState.UNFILLABLE


def _review19(k: int):  # type: ignore[no-untyped-def]
    """Review 19's session: rounds A (segments 0-7) and B (8-15) of 24 PASS segments over 20 auditors of
    100 TRUST (tier LLM); A drawn whole, then the first `k` auditors lock all their free stake
    elsewhere, then B is drawn."""
    chain, provider, appellant, auditors = _tier(20, tier=Tier.LLM)
    with stake_premise_waived(chain):
        sid = provider.open_session(b"\x22" * 32, [Tier.LLM] * 24, [1] * 24, 1_000 * TOKEN).session_id
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.PASS, chain.mine)
    chain.mine(ISSUE15_PARAMS.canary_reveal_blocks + 1)
    appellant.appeal(sid, list(range(8)), 10**30)
    appellant.appeal(sid, list(range(8, 16)), 10**30)
    when_ready(lambda: provider.draw(sid, 64, 1), chain.mine)
    for a in list(auditors)[:k]:
        chain.auditors[a].locked = chain.auditors[a].assets
    when_ready(lambda: provider.draw(sid, 64, 2), chain.mine)
    b = provider.rounds(sid)[1]
    assert b.refusals_charged
    return b


def test_review19_control_without_the_move_round_b_fills() -> None:
    b = _review19(0)
    assert (b.state, b.drawn_seats) == (RoundState.DRAWING, 56)


def test_review19_defender_accounts_emptied_after_round_a_are_charged() -> None:
    """Property (`Review19SeatedDefenderWithholdsUncharged` on the memory port): the defender's accounts,
    seated by sortition in round A, that empty their free stake elsewhere refuse at their own cost: their
    refusals count (rule S'), and a weight majority of them ends B REFUSED (rule R).  k = 10 of 20
    accounts (1,000 of 2,000 TRUST): B drawn 41/56, REFUSED.  Under reason 5 (the contracts before the
    fix) none of them counted, and every k ended UNFILLABLE."""
    b = _review19(10)
    assert (b.state, b.drawn_seats) == (RoundState.REFUSED, 41)


def test_review19_a_weight_minority_of_refusers_cannot_void_the_pass() -> None:
    """Rule R's side of the same world: k = 9 (900 of 2,000 TRUST).  B drawn 48/56, fails on segment 14:
    17 eligible (1,700 TRUST); the 7 eligible defender accounts are counted (700 TRUST), the 4 honest
    refusers are not (96 of their 100 TRUST locked by this session: round 0 + A + B's earlier segments).
    700 of 1,700 is no majority: UNFILLABLE, the PASS stands and the appellant pays R per drawn seat.
    Measuring R against the weight the session has not exhausted (700 of 1,300) would let an appellant
    exhaust the tier with its own rounds and then refuse with light accounts, so the denominator stays
    the segment's whole eligible weight (docs/appeals-canaries.md)."""
    b = _review19(9)
    assert (b.state, b.drawn_seats) == (RoundState.UNFILLABLE, 48)
