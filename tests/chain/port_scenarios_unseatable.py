"""Admission counts the tier's live members (outside review 11's dead leaves, now at admission): the quote
says how many auditors are eligible and whether a failed draw's lock refusals would be charged
(eligible >= 2k), the node warns when they would not, and a round the live members cannot seat is refused
up front.  Shared by the in-memory chain and the deployed contracts."""

from __future__ import annotations

from collections.abc import Iterable

from tests.chain.port_scenarios import TOKEN, Mine, open_session, vote_round
from trustnode.chain.port import ChainPort, SeatVote
from trustnode.chain.port.types_appeals import AppealQuote
from trustnode.models.enums import Tier
from trustnode.node.appellant import AppealRefused, appeal, refusal_warning


def _leave(auditors: dict[str, ChainPort], who: Iterable[str], mine: Mine) -> None:
    for a in who:
        auditors[a].request_withdrawal(auditors[a].pool(a).total_shares)
    mine(13)  # past the next epoch boundary (devnet epochs are 12 blocks): its snapshot lacks them


def _seen(q: AppealQuote) -> tuple[object, ...]:
    return q.refusal, q.eligible, q.refusals_charged, refusal_warning(q) is not None


def unseatable_scenario(
    provider: ChainPort, appellant: ChainPort, auditors: dict[str, ChainPort], mine: Mine
) -> dict[str, object]:
    """Seven computer auditors (k_0 = 1, so a first appeal panel has k_1 = 3 seats), two segments; auditors
    who sat on no round-0 panel leave: one before segment 0's appeal, three more before segment 1's."""
    for a in auditors.values():
        a.register(Tier.COMPUTER, 1, b"\x46" * 32)
        a.stake(200 * TOKEN)
    sid = open_session(provider, 2, 100 * TOKEN, mine, canaries=None)
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.PASS, mine)
    before = appellant.appeal_quote(sid, [0])
    seated = set(provider.seats(sid, 0))
    free = [a for a in auditors if a not in seated]
    _leave(auditors, free[:1], mine)
    after = appellant.appeal_quote(sid, [0])
    q, opened = appeal(appellant, sid, [0])  # sent despite the warning
    (rnd,) = provider.rounds(sid)
    _leave(auditors, free[1:4], mine)
    thin = appellant.appeal_quote(sid, [1])
    try:
        appeal(appellant, sid, [1])
        refused = None
    except AppealRefused as exc:
        refused = exc.name
    return {
        "before": _seen(before),
        "after": _seen(after),
        "opened": (opened.round, rnd.refusals_charged),
        "thin": _seen(thin),
        "node_refusal": refused,
    }


def expected_unseatable() -> dict[str, object]:
    return {
        "before": (None, 6, True, False),  # 7 live - k_0 = 6 = 2 k_1: charged
        "after": (None, 5, False, True),  # 6 live: k_1 <= 5 < 2 k_1, warned
        "opened": (1, False),
        "thin": ("NotEnoughEligibleAuditors", None, False, False),  # 3 live - k_0 = 2 < k_1
        "node_refusal": "NotEnoughEligibleAuditors",
    }
