"""Outside review 17: an appeal quoted with lock refusals charged is never mined as an uncharged round.

The contract's `appeal(sessionId, segments, maxBond, requireCharged)` reverts RefusalsNotCharged when
the round, judged in the block it is mined in, would not charge refusals; the in-memory chain mirrors
it, the node's appellant passes the quote's flag, and on that revert hands back a fresh quote with a
reason that says nothing was paid and to quote again. The live count changing between the quote and
the transaction (the contracts: a new epoch's snapshot) is an eligible auditor leaving in between."""

from __future__ import annotations

from typing import Any

import pytest

from tests.chain.port_scenarios import ISSUE15_PARAMS, TOKEN, vote_round
from tests.chain.test_port_appeals import _memory
from trustnode.chain.errors import ContractRevertError
from trustnode.chain.port import ChainPort, SeatVote
from trustnode.chain.port.memory_state import MemoryChain
from trustnode.consensus.appeals import panel_seats
from trustnode.models.enums import Tier
from trustnode.node.appellant import REFUSALS_NOT_CHARGED, AppealRefused
from trustnode.node.appellant import appeal as node_appeal

K0 = ISSUE15_PARAMS.seats_per_tier[Tier.COMPUTER]
K1 = panel_seats(K0, 1)


def _at_the_margin() -> tuple[MemoryChain, ChainPort, ChainPort, int, str]:
    """A session whose segment 0 has exactly 2 k_1 eligible auditors (charged), and one of them."""
    chain, provider, appellant, auditors = _memory(2 * K1 + K0)
    for a in auditors.values():
        a.register(Tier.COMPUTER, 1, b"\x47" * 32)
        a.stake(100 * TOKEN)
    sid = provider.open_session(b"\x17" * 32, [int(Tier.COMPUTER)] * 2, [1, 1], 100 * TOKEN).session_id
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.PASS, chain.mine)
    sat = {a for a, segs in provider.seats(sid, 0).items() if 0 in segs}
    leaver = next(a for a in auditors if a not in sat)
    return chain, provider, appellant, sid, leaver


def test_the_memory_chain_refuses_an_uncharged_round_the_appellant_required_charged() -> None:
    chain, provider, appellant, sid, leaver = _at_the_margin()
    quote = appellant.appeal_quote(sid, [0])
    assert quote.refusal is None and quote.eligible == 2 * K1 and quote.refusals_charged
    chain.auditors[leaver].registered = False  # the live count drops before the appeal is mined
    before = chain.balances[appellant.address]
    with pytest.raises(ContractRevertError) as refused:
        appellant.appeal(sid, [0], quote.bond, require_charged=True)
    assert refused.value.name == REFUSALS_NOT_CHARGED
    assert refused.value.args_by_name["eligible"] == 2 * K1 - 1
    assert refused.value.args_by_name["needed"] == 2 * K1
    assert chain.balances[appellant.address] == before and provider.rounds(sid) == []
    # Without the requirement (the appellant accepts the new terms) it is admitted, uncharged.
    appellant.appeal(sid, [0], quote.bond)
    assert provider.rounds(sid)[-1].refusals_charged is False


def test_a_charged_round_is_admitted_with_the_requirement() -> None:
    _, provider, appellant, sid, _ = _at_the_margin()
    appellant.appeal(sid, [0], 10**30, require_charged=True)
    assert provider.rounds(sid)[-1].refusals_charged is True


def test_the_node_appellant_passes_the_quotes_flag_and_hands_back_the_new_terms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    chain, provider, appellant, sid, leaver = _at_the_margin()
    sent: list[bool] = []
    send = appellant.appeal

    def mined_after_the_count_moved(*args: Any, **kw: Any) -> Any:
        sent.append(kw["require_charged"])
        chain.auditors[leaver].registered = False
        return send(*args, **kw)

    monkeypatch.setattr(appellant, "appeal", mined_after_the_count_moved)
    before = chain.balances[appellant.address]
    with pytest.raises(AppealRefused) as refused:
        node_appeal(appellant, sid, [0])
    assert sent == [True]  # the quote said charged
    assert refused.value.name == REFUSALS_NOT_CHARGED
    reason = str(refused.value)
    assert f"only {2 * K1 - 1} auditors" in reason and f"2k = {2 * K1}" in reason, reason
    assert "no bond was taken" in reason and "quote again" in reason, reason
    fresh = refused.value.quote
    assert fresh is not None and fresh.refusal is None and fresh.refusals_charged is False
    assert chain.balances[appellant.address] == before and provider.rounds(sid) == []
    # Asked again on the new terms: sent without the requirement, admitted uncharged.
    _, opened = node_appeal(appellant, sid, [0])
    assert sent[-1] is False and provider.rounds(sid)[-1].refusals_charged is False and opened.round == 1
