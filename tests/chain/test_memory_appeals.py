"""In-memory chain paths of issue 15 that the shared scenarios do not reach: a round nobody draws
(abandoned), a second appeal of one segment (depth 2, k = 7), canary timing refusals, and every
round's money equal to `final_settlement.settle_session`."""

from __future__ import annotations

from tests.chain.port_scenarios import (
    ISSUE15_PARAMS,
    TOKEN,
    revert_name,
    stake_premise_waived,
    vote_round,
    when_ready,
)
from tests.chain.test_port_appeals import OPERATOR, _memory
from trustnode.chain.port import RoundState, SeatVote
from trustnode.consensus.appeals import AppealResult
from trustnode.models.enums import SegmentOutcome, Tier


def _staked(n: int, tier: Tier = Tier.COMPUTER):  # type: ignore[no-untyped-def]
    chain, provider, appellant, auditors = _memory(n)
    for a in auditors.values():
        a.register(tier, 1, b"\x45" * 32)
        a.stake(100 * TOKEN)
    return chain, provider, appellant, auditors


def test_a_round_nobody_draws_is_abandoned_and_forfeits_the_bond() -> None:
    chain, provider, appellant, auditors = _staked(5)
    sid = provider.open_session(b"\x01" * 32, [0, 0], [1, 1], 100 * TOKEN).session_id
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.FAIL, chain.mine)
    before = appellant.token_balance(appellant.address)
    opened = appellant.appeal(sid, [0], 10**30)
    chain.mine(ISSUE15_PARAMS.draw_blocks + 5)
    provider.advance(sid)
    (info,) = provider.rounds(sid)
    # its randomness was obtainable and nobody drew (outside review 6): the chain's Expired drawn short
    assert info.state == RoundState.ABANDONED and info.drawn_seats == 0
    assert info.segments[0].outcome == SegmentOutcome.FAIL
    assert provider.appeal_status(sid).window_ends[0] == 0  # the outcome stands and is final
    status = provider.appeal_status(sid)
    chain.mine(max(status.window_ends) - chain.block + 1)
    provider.advance(sid)
    assert provider.appeal_status(sid).final
    for a in provider.seats(sid, 0):
        when_ready(lambda a=a: auditors[a].settle(sid, a, 0), chain.mine)  # type: ignore[misc]
    (info,) = provider.rounds(sid)
    assert info.segments[0].result == AppealResult.ABANDONED
    # no seat drawn: the whole bond is forfeited (to the pot, which ends in the treasury)
    assert before - appellant.token_balance(appellant.address) == opened.bond
    assert opened.bond == 3 * ISSUE15_PARAMS.reward


def test_a_segment_appealed_twice_gets_a_panel_of_seven_in_a_later_session_round() -> None:
    chain, provider, appellant, auditors = _staked(14)
    sid = provider.open_session(b"\x02" * 32, [0, 0], [1, 1], 200 * TOKEN).session_id
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.FAIL, chain.mine)
    appellant.appeal(sid, [0], 10**30)  # round 1: segment 0, depth 1
    appellant.appeal(sid, [1], 10**30)  # round 2: segment 1, depth 1
    # round 1 overturns segment 0 to PASS, round 2 upholds segment 1's FAIL
    vote_round(provider, auditors, sid, 1, lambda r, g: SeatVote.PASS, chain.mine)
    vote_round(provider, auditors, sid, 2, lambda r, g: SeatVote.FAIL, chain.mine)
    quote = appellant.appeal_quote(sid, [0])
    assert (quote.round, quote.depth, quote.seats) == (3, 2, [7])
    assert appellant.appeal_quote(sid, [0, 1]).refusal is None  # both at depth 1 now
    appellant.appeal(sid, [0], quote.bond)
    vote_round(provider, auditors, sid, 3, lambda r, g: SeatVote.FAIL, chain.mine)  # back to FAIL
    earlier = set().union(*(set(provider.seats(sid, r)) for r in (1,)))
    seg0_r0 = {a for a, s in provider.seats(sid, 0).items() if 0 in s}
    assert not set(provider.seats(sid, 3)) & (earlier | seg0_r0)
    # max_rounds = 2 reached: no window opens on segment 0 again, it says why
    assert provider.appeal_status(sid).window_ends[0] == 0 and not provider.appeal_status(sid).final
    assert appellant.appeal_quote(sid, [0]).refusal == "NoRoundsLeft"
    status = provider.appeal_status(sid)
    assert status.depths == [2, 1] and status.rounds == 3
    chain.mine(max(status.window_ends) - chain.block + 1)
    provider.advance(sid)
    assert appellant.appeal_quote(sid, [1]).refusal == "AppealWindowClosed"  # the outcome is final
    for rnd in range(4):
        for a in provider.seats(sid, rnd):
            when_ready(lambda a=a, rnd=rnd: auditors[a].settle(sid, a, rnd), chain.mine)  # type: ignore[misc]
    results = {(r.round, s.index): s.result for r in provider.rounds(sid) for s in r.segments}
    # judged against the FINAL outcome (FAIL): round 1's appeal of FAIL failed in the end, round 3's
    # appeal of PASS succeeded, round 2 upheld segment 1's FAIL
    assert results == {
        (1, 0): AppealResult.UPHELD,
        (2, 1): AppealResult.UPHELD,
        (3, 0): AppealResult.OVERTURNED,
    }
    # every round's money is the reference settlement's, auditor by auditor
    money = chain.sessions[sid - 1].settlement
    assert money is not None and money.inflow == money.outflow
    for s in provider.settlements(session_id=sid):
        votes = [v for g in money.segments for v in g.votes if v.auditor == s.auditor and v.round == s.round]
        assert s.reward == sum(v.rewarded for v in votes)


def test_canaries_are_committed_before_the_randomness_and_revealed_only_after_round_0() -> None:
    chain, provider, _, auditors = _staked(5)
    operator = chain.port(OPERATOR)
    opened = provider.open_session(b"\x03" * 32, [0] * 5, [1] * 5, 100 * TOKEN)
    late = opened.session_id
    # the draw's randomness target is open + max(delay, canaryCommitBlocks): the whole window is the
    # operator's, a commit landing one block after it is refused
    commit_blocks = provider.params().canary_commit_blocks
    assert commit_blocks > chain.randomness_delay
    assert operator.canaries(late).commit_until == opened.tx.block + commit_blocks
    chain.mine(commit_blocks)
    assert revert_name(lambda: operator.commit_canaries(late, [b"\x01" * 32])) == "CommitTooLate"
    in_time = provider.open_session(b"\x06" * 32, [0] * 5, [1] * 5, 100 * TOKEN)
    chain.mine(commit_blocks - 1)  # the commit lands in the window's last block
    operator.commit_canaries(in_time.session_id, [b"\x01" * 32])
    sid = provider.open_session(b"\x04" * 32, [0] * 5, [1] * 5, 100 * TOKEN).session_id
    assert revert_name(lambda: operator.commit_canaries(sid, [bytes(32)])) == "ZeroCommitment"
    operator.commit_canaries(sid, [b"\x05" * 32])
    from trustnode.chain.port import CanaryReveal

    reveal = CanaryReveal(slot=0, index=1, verdict=SegmentOutcome.PASS, salt=b"\x00" * 32)
    assert revert_name(lambda: operator.reveal_canaries(sid, [reveal])) == "CanaryRevealNotOpen"
    unknown = reveal.model_copy(update={"slot": 3})
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.PASS, chain.mine)
    assert revert_name(lambda: operator.reveal_canaries(sid, [unknown])) == "UnknownCanarySlot"


def test_a_draw_refused_by_locked_stake_ends_a_contested_pass_inconclusive_and_refunds_the_bond() -> None:
    """REFUSED (outside review 3): the round's candidates whose stake is locked elsewhere cannot take a
    seat, the draw fails, and the contested PASS does not survive: INCONCLUSIVE, final, bond back whole.
    Charged because admission found 7 live - 1 round-0 seat = 6 >= 2 k_1 eligible (`refusals_charged`)."""
    chain, provider, appellant, auditors = _staked(7)
    sid = provider.open_session(b"\x05" * 32, [0, 0], [1, 1], 100 * TOKEN).session_id
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.PASS, chain.mine)
    before = appellant.token_balance(appellant.address)
    quote = appellant.appeal_quote(sid, [0])
    assert (quote.eligible, quote.refusals_charged) == (6, True)
    appellant.appeal(sid, [0], 10**30)  # k_1 = 3 seats, 6 candidates (one sat on round 0)
    seg0_r0 = {a for a, s in provider.seats(sid, 0).items() if 0 in s}
    candidates = [a for a in auditors if a not in seg0_r0]
    for a in candidates[:4]:  # their stake locked elsewhere: 2 candidates left for 3 seats
        st_ = chain.auditors[a]
        st_.locked = st_.assets
    when_ready(lambda: provider.draw(sid, 16, 1), chain.mine)
    (info,) = provider.rounds(sid)
    assert info.refusals_charged
    assert info.state == RoundState.REFUSED and info.segments[0].outcome == SegmentOutcome.INCONCLUSIVE
    assert provider.appeal_status(sid).window_ends[0] == 0  # final: no second panel
    assert revert_name(lambda: appellant.appeal(sid, [0], 10**30)) == "SegmentFinal"
    for a in candidates[:4]:
        chain.auditors[a].locked = 0
    status = provider.appeal_status(sid)
    chain.mine(max(status.window_ends) - chain.block + 1)
    provider.advance(sid)
    assert provider.appeal_status(sid).final
    (info,) = provider.rounds(sid)
    assert info.segments[0].result == AppealResult.REFUSED
    for r in (0, 1):
        for a in provider.seats(sid, r):
            when_ready(lambda a=a, r=r: auditors[a].settle(sid, a, r), chain.mine)  # type: ignore[misc]
    assert appellant.token_balance(appellant.address) == before  # the whole bond back


def test_a_round_the_seat_cap_could_fail_is_refused_at_the_quote() -> None:
    """Outside review 9: a round of more segments than the seat cap may use at most half of what the
    tier's members can seat (6 x 8 / 2 = 24), else one busy auditor's refusal fails its draw REFUSED and
    voids every PASS it names; up to the cap, an auditor may sit on every segment, and it is admitted."""
    chain, provider, appellant, auditors = _staked(6)
    with stake_premise_waived(chain):
        sid = provider.open_session(b"\x09" * 32, [0] * 10, [1] * 10, 100 * TOKEN).session_id
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.PASS, chain.mine)
    chain.mine(ISSUE15_PARAMS.canary_reveal_blocks + 1)  # the appeal window opens after the canaries'
    quote = appellant.appeal_quote(sid, list(range(9)))  # 9 segments x k_1 = 3: 27 seats
    assert quote.refusal == "PanelTooLarge" and "27 seats" in quote.reason
    assert revert_name(lambda: appellant.appeal(sid, list(range(9)), 10**30)) == "PanelTooLarge"
    assert appellant.appeal_quote(sid, list(range(8))).refusal is None


def test_a_draw_left_short_past_its_deadline_is_abandoned_and_forfeits_the_bond() -> None:
    """As round 0's DrawAbandoned: a round whose draw started and stopped short (not failed) once the seed
    was public costs the bond; only a failed draw is refunded (UNFILLABLE, REFUSED)."""
    chain, provider, appellant, auditors = _staked(6)
    sid = provider.open_session(b"\x0a" * 32, [0, 0], [1, 1], 100 * TOKEN).session_id
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.PASS, chain.mine)
    chain.mine(ISSUE15_PARAMS.canary_reveal_blocks + 1)
    before = appellant.token_balance(appellant.address)
    opened = appellant.appeal(sid, [0, 1], 10**30)  # 2 x k_1 = 3 seats
    step = when_ready(lambda: provider.draw(sid, 1, 1), chain.mine)
    assert step.drawn_seats == 1 < step.total_seats
    chain.mine(ISSUE15_PARAMS.draw_blocks + 1)
    provider.advance(sid)
    (info,) = provider.rounds(sid)
    assert info.state == RoundState.ABANDONED and info.drawn_seats == 1
    assert [s.outcome for s in info.segments] == [SegmentOutcome.PASS, SegmentOutcome.PASS]
    status = provider.appeal_status(sid)
    chain.mine(max(status.window_ends) - chain.block + 1)
    provider.advance(sid)
    for r in (0, 1):
        for a in provider.seats(sid, r):
            when_ready(lambda a=a, r=r: auditors[a].settle(sid, a, r), chain.mine)  # type: ignore[misc]
    assert before - appellant.token_balance(appellant.address) == opened.bond == 6 * ISSUE15_PARAMS.reward


def test_a_member_who_left_no_longer_counts_at_admission() -> None:
    """Outside review 11, at admission: the tier's members are counted live (weight now, the in-memory
    chain's snapshot), so a round they cannot seat is refused up front instead of admitted and left to
    fail: 3 live - k_0 = 2 < k_1 = 3."""
    chain, provider, appellant, auditors = _staked(4)
    sid = provider.open_session(b"\x0b" * 32, [0, 0], [1, 1], 100 * TOKEN).session_id
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.PASS, chain.mine)
    chain.mine(ISSUE15_PARAMS.canary_reveal_blocks + 1)
    assert appellant.appeal_quote(sid, [0]).eligible == 3
    seated = set(provider.seats(sid, 0))
    gone = next(a for a in auditors if a not in seated)
    chain.auditors[gone].registered = False  # left the tier: its weight is 0
    quote = appellant.appeal_quote(sid, [0])
    assert quote.refusal == "NotEnoughEligibleAuditors" and "2 < k_1 = 3" in (quote.reason or "")
    assert revert_name(lambda: appellant.appeal(sid, [0], 10**30)) == "NotEnoughEligibleAuditors"


def test_refusals_in_a_round_of_fewer_than_2k_eligible_are_not_charged() -> None:
    """k <= eligible < 2k (4 live - 1 round-0 seat = 3 = k_1): admitted with refusals not charged, so one
    busy auditor's refusal fails the draw UNFILLABLE, the PASS stands and R per drawn seat is paid."""
    chain, provider, appellant, auditors = _staked(5)
    sid = provider.open_session(b"\x0c" * 32, [0, 0], [1, 1], 100 * TOKEN).session_id
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.PASS, chain.mine)
    chain.mine(ISSUE15_PARAMS.canary_reveal_blocks + 1)
    seg0_r0 = {a for a, s in provider.seats(sid, 0).items() if 0 in s}
    gone, busy, *_ = [a for a in auditors if a not in seg0_r0]
    chain.auditors[gone].registered = False
    quote = appellant.appeal_quote(sid, [0])
    assert quote.refusal is None and (quote.eligible, quote.refusals_charged) == (3, False)
    before = appellant.token_balance(appellant.address)
    appellant.appeal(sid, [0], 10**30)
    chain.auditors[gone].registered = True  # back after admission: the flag stays as admitted
    chain.auditors[busy].locked = chain.auditors[busy].assets  # its stake locked elsewhere
    chain.auditors[gone].locked = chain.auditors[gone].assets
    when_ready(lambda: provider.draw(sid, 16, 1), chain.mine)
    (info,) = provider.rounds(sid)
    assert not info.refusals_charged
    assert info.state == RoundState.UNFILLABLE and info.segments[0].outcome == SegmentOutcome.PASS
    chain.auditors[busy].locked = chain.auditors[gone].locked = 0
    status = provider.appeal_status(sid)
    chain.mine(max(status.window_ends) - chain.block + 1)
    provider.advance(sid)
    for r in (0, 1):
        for a in provider.seats(sid, r):
            when_ready(lambda a=a, r=r: auditors[a].settle(sid, a, r), chain.mine)  # type: ignore[misc]
    assert before - appellant.token_balance(appellant.address) == info.drawn_seats * ISSUE15_PARAMS.reward
