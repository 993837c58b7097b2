"""The in-memory chain admits appeals as `consensus.appeal_admission` says, over a table of tier sizes,
members who left, the provider's own membership, k_0 and depth: the quote's refusal, `eligible` and
`refusals_charged` are `eligible_auditors` / `refusals_charged` of the tier's live members but the
provider, and the opened round stores the flag; past the seat cap PanelTooLarge counts the eligible
auditors only (`check_capacity`, outside review 17) and bounds the round by k + seat_cap (E - E // 2 - k)
(`capped_capacity`, outside review 20)."""

from __future__ import annotations

import pytest
from eth_utils import to_checksum_address

from tests.chain.port_scenarios import ISSUE15_PARAMS, TOKEN, vote_round
from tests.chain.test_port_appeals import _memory
from trustnode.chain.port import SeatVote
from trustnode.chain.port.memory_state import MemoryChain
from trustnode.consensus.appeal_admission import (
    check_capacity,
    earlier_seats,
    eligible_auditors,
    refusals_charged,
)
from trustnode.consensus.appeals import panel_seats
from trustnode.models.enums import Tier


def _expected(live: int, k0: int, depth: int) -> tuple[str | None, int | None, bool]:
    k = panel_seats(k0, depth)
    eligible = eligible_auditors(live, k0, depth)
    if eligible < k:
        return "NotEnoughEligibleAuditors", None, False
    return None, eligible, refusals_charged(eligible, k)


CASES = [
    (tier, n, left, provider_member, 1)
    for tier, sizes in ((Tier.COMPUTER, range(2, 10)), (Tier.LLM, (7, 10, 13, 16, 17, 20)))
    for n in sizes
    for left in (0, 1, 2)
    for provider_member in (False, True)
    if n - left >= ISSUE15_PARAMS.seats_per_tier[tier]  # round 0 can be seated
] + [(Tier.COMPUTER, n, left, False, 2) for n in (9, 11, 12, 15, 18) for left in (0, 1)]


@pytest.mark.parametrize(("tier", "n", "left", "provider_member", "depth"), CASES)
def test_memory_admission_agrees_with_consensus(
    tier: Tier, n: int, left: int, provider_member: bool, depth: int
) -> None:
    chain, provider, appellant, auditors = _memory(n)
    staked = [*auditors.values(), provider] if provider_member else list(auditors.values())
    for a in staked:
        a.register(tier, 1, b"\x47" * 32)
        a.stake(100 * TOKEN)
    root = bytes([n, left, depth]) + b"\x01" * 29
    sid = provider.open_session(root, [int(tier)] * 2, [1, 1], 100 * TOKEN).session_id
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.PASS, chain.mine)
    k0 = ISSUE15_PARAMS.seats_per_tier[tier]
    if depth == 2:
        appellant.appeal(sid, [0], 10**30)
        vote_round(provider, auditors, sid, 1, lambda r, g: SeatVote.PASS, chain.mine)
    sat = {a for r in range(depth) for a, segs in provider.seats(sid, r).items() if 0 in segs}
    for a in [a for a in auditors if a not in sat][:left]:
        chain.auditors[a].registered = False
    quote = appellant.appeal_quote(sid, [0])
    want = _expected(n - left, k0, depth)
    assert (quote.refusal, quote.eligible, quote.refusals_charged) == want
    if want[0] is None:
        appellant.appeal(sid, [0], 10**30)
        assert provider.rounds(sid)[-1].refusals_charged is want[2]


CAPACITY_CASES = [(members, segments) for members in range(7, 17) for segments in (2, 3)]


@pytest.mark.parametrize(("members", "segments"), CAPACITY_CASES)
def test_memory_capacity_counts_who_can_sit(members: int, segments: int) -> None:
    """Outside reviews 17, 20: past the seat cap (1 here) a round is admitted only if its seats fit in
    k + seat_cap (E - E // 2 - k), E the eligible auditors (members - earlier seats), as `check_capacity`
    and AppealAdmission say (for seat cap 1: ceil(E / 2), seats every segment once at most half refuse)."""
    params = ISSUE15_PARAMS.model_copy(update={"seat_cap": 1})
    chain = MemoryChain(params)
    provider, appellant = chain.port("0x" + "01" * 20), chain.port("0x" + "02" * 20)
    auditors = {}
    for i in range(members):
        port = chain.port(to_checksum_address((0x100 + i).to_bytes(20, "big")))
        auditors[port.address] = port
    for port in [provider, appellant, *auditors.values()]:
        chain.fund(port.address, 10_000 * TOKEN)
    for a in auditors.values():
        a.register(Tier.COMPUTER, 1, b"\x47" * 32)
        a.stake(100 * TOKEN)
    root = bytes([members, segments, 17]) + b"\x01" * 29
    tiers, weights = [int(Tier.COMPUTER)] * segments, [1] * segments
    sid = provider.open_session(root, tiers, weights, 100 * TOKEN).session_id
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.PASS, chain.mine)
    k0 = params.seats_per_tier[Tier.COMPUTER]
    k, eligible = panel_seats(k0, 1), eligible_auditors(members, k0, 1)
    quote = appellant.appeal_quote(sid, list(range(segments)))
    free = members - earlier_seats(k0, 1) - (members - earlier_seats(k0, 1)) // 2  # left after half refuse
    capacity = k + params.seat_cap * (free - k) if free >= k else 0
    want: str | None = None
    if eligible < k:
        want = "NotEnoughEligibleAuditors"
    elif segments * k > capacity:
        want = "PanelTooLarge"
    assert quote.refusal == want, (quote.refusal, quote.reason)
    if want == "PanelTooLarge":
        assert f"at most {capacity} per round" in (quote.reason or "")
    elif want is None:  # the consensus rule admits it too
        check_capacity(segments, segments * k, eligible=eligible, seat_cap=params.seat_cap)
