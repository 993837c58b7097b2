"""A round the tier's live auditors cannot seat (outside review 11's dead leaves, node side): the
contract admits it (it counts every leaf), the quote says why its draw would end UNFILLABLE, and the
node refuses to pay for it unless forced.  Shared by the in-memory chain and the deployed contracts."""

from __future__ import annotations

from tests.chain.port_scenarios import TOKEN, Mine, open_session, vote_round
from trustnode.chain.port import ChainPort, SeatVote
from trustnode.models.enums import Tier
from trustnode.node.appellant import LIVE_TIER_TOO_SMALL, AppealRefused, appeal


def unseatable_scenario(
    provider: ChainPort, appellant: ChainPort, auditors: dict[str, ChainPort], mine: Mine
) -> dict[str, object]:
    """Four computer auditors (k_0 = 1, so a first appeal panel has 3 seats); one that sat on no
    round-0 panel leaves; the next snapshot has 3 live auditors, one of them on segment 0's panel."""
    for a in auditors.values():
        a.register(Tier.COMPUTER, 1, b"\x46" * 32)
        a.stake(100 * TOKEN)
    sid = open_session(provider, 2, 100 * TOKEN, mine, canaries=None)
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.PASS, mine)
    before = appellant.appeal_quote(sid, [0])
    seated = set(provider.seats(sid, 0))
    leaver = next(a for a in auditors if a not in seated)
    auditors[leaver].request_withdrawal(auditors[leaver].pool(leaver).total_shares)
    mine(13)  # past the next epoch boundary (devnet epochs are 12 blocks): its snapshot lacks the leaver
    after = appellant.appeal_quote(sid, [0])
    try:
        appeal(appellant, sid, [0])
        refused = None
    except AppealRefused as exc:
        refused = exc.name
    forced = appeal(appellant, sid, [0], force=True)[1]
    return {
        "before": (before.admissible, before.unseatable),
        "after_admissible": after.admissible,
        "after_reason": after.unseatable,
        "node_refusal": refused,
        "forced_round": forced.round,
    }


def expected_unseatable() -> dict[str, object]:
    return {
        "before": (True, None),
        "after_admissible": True,
        "after_reason": "named segment 1 of 1: 2 live auditors of its tier sat on none of its panels, its new "
        "panel needs 3",
        "node_refusal": LIVE_TIER_TOO_SMALL,
        "forced_round": 1,
    }
