"""Outside review 24: does the in-memory chain's rule R (`memory_rounds._round_refused` over
`consensus.appeal_draw`) measure the same W_E as `DrawModule._fail`?

The contract reads every weight from the snapshot "start of the round's epoch" (`Round.epoch`, fixed at
the appeal), so stake added or withdrawn after the appeal moves neither W_E nor W_R.  The port weighs
the failing segment's candidates with `MemoryChain.weight`, the CURRENT stake.  So a defender whose
refusers hold most of W_E can still, after the appeal and before the draw, top up one of its accounts
that sits (not on the segment's earlier panels) and the port ends the round UNFILLABLE where the
contract ends it REFUSED (its W_E and W_R are `leafWeightAt(tier, Round.epoch, leaf)` sums; stake changes
after the snapshot left W_E exact in `Review24CappedEarlierEligibleExact`).  Review 21's capped-earlier
case agrees: the port leaves every earlier-panel auditor out of its candidates, capped or not, as the
fixed contract does; and both keep a capped non-earlier account in W_E
(`Review24FreshCappedAccountInflatesEligible`).
"""

from __future__ import annotations

import pytest

from tests.chain.port_scenarios import TOKEN, when_ready
from tests.chain.test_memory_refusal_weight import _candidates, _passed, _tier
from trustnode.chain.port import RoundState
from trustnode.consensus.appeal_draw import DrawCandidate, failed_draw_refused, refusals_decisive

TOP_UP = 20_000 * TOKEN


def _weight_majority_refuses(top_up_after_appeal: int, root: bytes):  # type: ignore[no-untyped-def]
    """`test_a_weight_majority_refusing_ends_the_round_refused`'s tier (9,600 of 10,000 TRUST refuse on
    segment 0, two light auditors sit), with one sitting auditor topping up after the appeal."""
    chain, provider, appellant, auditors = _tier(11)
    sid = _passed(chain, provider, auditors, root)
    cands = _candidates(provider, sid, auditors, 0)
    heavy, free, busy = cands[:2], cands[2:4], cands[4:]
    for a in heavy:
        auditors[a].stake(4_400 * TOKEN)
    appellant.appeal(sid, [0], 10**30)
    weights_at_appeal = {a: chain.weight(chain.auditors[a]) for a in cands}
    if top_up_after_appeal:
        chain.fund(free[0], top_up_after_appeal)
        auditors[free[0]].stake(top_up_after_appeal)
    for a in heavy + busy:
        chain.auditors[a].locked = chain.auditors[a].assets
    when_ready(lambda: provider.draw(sid, 16, 1), chain.mine)
    (info,) = provider.rounds(sid)
    w_r = sum(weights_at_appeal[a] for a in heavy + busy)
    w_e = sum(weights_at_appeal.values())
    return info, w_r, w_e, set(provider.seats(sid, 1)) == set(free)


def test_control_no_top_up_refused() -> None:
    """Without a top-up the port and the contract agree: REFUSED."""
    info, w_r, w_e, free_sat = _weight_majority_refuses(0, b"\x24" * 32)
    assert free_sat and refusals_decisive(w_r, w_e)
    assert info.state == RoundState.REFUSED


def test_top_up_after_the_appeal_moves_nothing() -> None:
    """The contract's W_E is the snapshot's (the top-up is in a later epoch): W_R 9,600 of W_E 10,000 weight
    units at the appeal, REFUSED.  The port now draws and weighs a round from the weights at its appeal
    (`Round.snapshot`); before, it counted the sitting auditor's 20,000-TRUST top-up: UNFILLABLE."""
    info, w_r, w_e, free_sat = _weight_majority_refuses(TOP_UP, b"\x25" * 32)
    assert free_sat and refusals_decisive(w_r, w_e), "setup: a weight majority at the snapshot"
    assert info.state == RoundState.REFUSED


def _fresh_capped_pool(whale: int) -> list[DrawCandidate]:
    """`Review24FreshCappedAccountInflatesEligible`'s segment s as rule R's twin sees it (TRUST of weight):
    7 honest non-earlier auditors of 300 (sitting or capped), 20 refusers of 125 (stake locked outside the
    session: counted), and the defender's fresh account W at the cap (refused nothing)."""
    pool = [DrawCandidate(weight=300) for _ in range(7)]
    pool += [DrawCandidate(weight=125, refused=True, stake=125, locked_by_session=0) for _ in range(20)]
    if whale:
        pool.append(DrawCandidate(weight=whale))
    return pool


def test_rule_r_twin_without_fresh_account_refused() -> None:
    """Control: W_R 2,500 of W_E 4,600: REFUSED (the contract measured the same)."""
    assert failed_draw_refused(_fresh_capped_pool(0), lock_amount=100, refusals_charged=True)


@pytest.mark.xfail(strict=True, reason="KNOWN (review 24): a capped fresh account counts in W_E by rule R")
def test_rule_r_twin_fresh_capped_account_does_not_rescue_the_pass_KNOWN() -> None:  # noqa: N802
    """The twin agrees with the contract (no differential): W 600 at the cap makes W_E 5,200 and the round
    UNFILLABLE, so the defender's 2,500 TRUST of refusals keep the contested PASSes."""
    assert failed_draw_refused(_fresh_capped_pool(600), lock_amount=100, refusals_charged=True)
