"""The in-memory chain admits appeals as `consensus.appeal_admission` says, over a table of tier sizes,
members who left, the provider's own membership, k_0 and depth: the quote's refusal, `eligible` and
`refusals_charged` are `eligible_auditors` / `refusals_charged` of the tier's live members but the
provider, and the opened round stores the flag."""

from __future__ import annotations

import pytest

from tests.chain.port_scenarios import ISSUE15_PARAMS, TOKEN, vote_round
from tests.chain.test_port_appeals import _memory
from trustnode.chain.port import SeatVote
from trustnode.consensus.appeal_admission import eligible_auditors, refusals_charged
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
