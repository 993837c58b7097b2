"""Keys withheld on a deeper appeal, on every `ChainPort` (second review): a decided FAIL stands.

Round 0 passes a wrong segment, the appellant's depth-1 panel overturns it to FAIL, the provider
appeals it at depth 2 and never publishes that panel's keys.  What everyone reads (segments,
rounds, results) and what everyone is paid must show the decided FAIL kept and the round withheld.
"""

from __future__ import annotations

from tests.chain.port_scenarios import TOKEN, Mine, open_session, settle_all, vote_round, when_ready
from trustnode.chain.port import ChainPort, RoundState, SeatVote
from trustnode.chain.protocol import SessionParams
from trustnode.consensus.appeals import min_bond, panel_seats
from trustnode.models.enums import SegmentOutcome, Tier


def withheld_deeper_scenario(
    provider: ChainPort, appellant: ChainPort, auditors: dict[str, ChainPort], mine: Mine
) -> dict[str, object]:
    for a in auditors.values():
        a.register(Tier.COMPUTER, 1, b"\x45" * 32)
        a.stake(200 * TOKEN)
    sid = open_session(provider, 1, 300 * TOKEN, mine, canaries=None)
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.PASS, mine)
    mine(max(0, (provider.appeal_status(sid).opens_at or 0) - provider.block_number()))
    appellant_before = appellant.token_balance(appellant.address)
    when_ready(lambda: appellant.appeal(sid, [0], 10**30), mine)
    vote_round(provider, auditors, sid, 1, lambda r, g: SeatVote.FAIL, mine)  # overturned
    provider_before = provider.token_balance(provider.address)
    opened = provider.appeal(sid, [0], 10**30)
    assert (opened.round, opened.segments) == (2, [0])
    while True:
        step = when_ready(lambda: provider.draw(sid, 64, round=2), mine)
        if step.drawn_seats >= step.total_seats:
            break
    info = provider.rounds(sid)[1]
    mine(info.key_deadline - provider.block_number() + 1)
    provider.advance(sid)  # keys withheld: the round ends
    outcome_now = provider.segments(sid)[0].outcome
    status = provider.appeal_status(sid)
    # the contracts wait for the session's latest window (round 1's), the memory chain for the open
    # ones only: advance until final either way
    for _ in range(4):
        provider.advance(sid)
        if provider.appeal_status(sid).final:
            break
        mine(provider.params().appeal_blocks)
    final = provider.appeal_status(sid).final
    settled = settle_all(auditors, provider, sid, 2, mine)
    r1, r2 = provider.rounds(sid)
    return {
        "rounds": [
            (r.round, r.state, r.depth, [(s.appealed, s.outcome, s.status, s.result) for s in r.segments])
            for r in (r1, r2)
        ],
        "outcome": (outcome_now, provider.segments(sid)[0].outcome),
        "closed": (status.window_ends[0], 0 in status.appealable),
        "final": final,
        "round0": sorted((s.correct, s.incorrect, s.reward) for (r, _), s in settled.items() if r == 0),
        "round1": sorted((s.correct, s.incorrect, s.reward) for (r, _), s in settled.items() if r == 1),
        # (the memory port counts a never-revealed seat of an undecided panel as incorrect, the
        # contracts do not score it at all: only what both agree on is compared)
        "round2": sorted((s.correct, s.slashes, s.reward) for (r, _), s in settled.items() if r == 2),
        "appellant_net": appellant.token_balance(appellant.address) - appellant_before,
        "provider_net": provider.token_balance(provider.address) - provider_before,
    }


def expected_withheld_deeper(p: SessionParams) -> dict[str, object]:
    r, k0 = p.reward, p.seats_per_tier[0]
    fail, passed = SegmentOutcome.FAIL, SegmentOutcome.PASS
    bond1 = min_bond(k0, 1, r, p.appeal_bond_multiplier_bps)
    bond2 = min_bond(k0, 2, r, p.appeal_bond_multiplier_bps)
    return {
        "rounds": [
            (1, RoundState.FINALIZED, 1, [(passed, fail, "decided", "overturned")]),
            (2, RoundState.KEYS_WITHHELD, 2, [(fail, fail, "keys_withheld", "keys_withheld")]),
        ],
        # the decided FAIL stands, and is final: the segment has no window and cannot be appealed again
        "outcome": (fail, fail),
        "closed": (0, False),
        "final": True,
        # round 0's PASS is scored wrong against the kept FAIL
        "round0": [(0, 1, 0)] * k0,
        # the overturning panel is paid R per seat, as without the withheld appeal
        "round1": [(1, 0, r)] * panel_seats(k0, 1),
        # the withheld panel's locked seats: R each from the forfeited bond, never scored nor slashed
        "round2": [(0, 0, r)] * panel_seats(k0, 2),
        "appellant_net": bond1 * p.appeal_reward_bps // 10_000,
        "provider_net": -bond2,
    }
