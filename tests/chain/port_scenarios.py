"""Issue-15 scenarios run on every `ChainPort` (the in-memory chain and the deployed contracts).

Each scenario drives a session through the port only and returns what it observed, so one test
compares it with the same expected values on both implementations. Voters follow a policy by
segment and round, never by who was drawn, so the draw's randomness cannot change the answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

import pytest

from trustnode.chain.errors import ContractRevertError
from trustnode.chain.port import Ballot, CanaryReveal, ChainPort, NotReady, RoundState, SeatVote
from trustnode.chain.port.memory_state import MemoryChain
from trustnode.chain.protocol import DEVNET_SESSION_PARAMS, SessionParams
from trustnode.consensus.canaries import canary_commitment
from trustnode.consensus.rules import WAD, apply_reputation, reputation_step
from trustnode.models.enums import SegmentOutcome, Tier
from trustnode.models.verdict import SessionState

T = TypeVar("T")
TOKEN = 10**18
SALT = b"\x11" * 32
Mine = Callable[[int], None]

#: Appeals and canaries on, with short windows (blocks) so a test runs through them.
ISSUE15_PARAMS = DEVNET_SESSION_PARAMS.model_copy(
    update={
        "draw_blocks": 20, "key_blocks": 20, "commit_blocks": 20, "reveal_blocks": 20,
        "appeal_blocks": 40, "max_rounds": 2, "appeal_bond_multiplier_bps": 10_000, "appeal_reward_bps": 2000,
        "appeal_budget": 50 * TOKEN, "canary_rate_bps": 2000, "canary_reveal_blocks": 10,
        "canary_gamma": WAD // 5, "canary_refund_bps": 2500,
    }
)  # fmt: skip


def when_ready(action: Callable[[], T], mine: Mine, tries: int = 12) -> T:
    """Run `action`, mining the blocks a NotReady asks for."""
    for _ in range(tries):
        try:
            return action()
        except NotReady as exc:
            mine(exc.retry_blocks)
    raise AssertionError(f"still not ready after {tries} waits")


def revert_name(action: Callable[[], object]) -> str:
    with pytest.raises(ContractRevertError) as err:
        action()
    return err.value.name


Policy = Callable[[int, int], SeatVote]  # (round, segment) -> vote


def vote_round(
    provider: ChainPort, auditors: dict[str, ChainPort], sid: int, rnd: int, policy: Policy, mine: Mine
) -> None:
    """Draw the round's panel, publish its keys, every seated auditor commits and reveals `policy`."""
    while True:
        step = when_ready(lambda: provider.draw(sid, 64, round=rnd), mine)
        seats = provider.seats(sid, rnd)
        if sum(len(v) for v in seats.values()) >= step.total_seats or step.state != SessionState.DRAWING:
            break
    provider.publish_keys(sid, f"bafy-round-{rnd}", round=rnd)
    ballots = {a: Ballot(votes=tuple(policy(rnd, g) for g in segs)) for a, segs in seats.items()}
    for a, b in ballots.items():
        auditors[a].commit(sid, b, SALT, round=rnd)
    for a, b in ballots.items():
        auditors[a].reveal(sid, b, SALT, round=rnd)
    provider.advance(sid)


def open_session(
    provider: ChainPort,
    n: int,
    fee: int,
    mine: Mine,
    canaries: Sequence[bytes] | None,
    operator: ChainPort | None = None,
) -> int:
    """Open a session; the canary operator (never the provider) commits `canaries`."""
    root = bytes([n]) + b"\xab" * 31
    opened = when_ready(lambda: provider.open_session(root, [0] * n, [1] * n, fee), mine)
    if canaries is not None:
        assert operator is not None, "canaries are committed by a canary operator"
        operator.commit_canaries(opened.session_id, list(canaries))
    return opened.session_id


def settle_all(ports: dict[str, ChainPort], provider: ChainPort, sid: int, rounds: int, mine: Mine) -> dict:  # type: ignore[type-arg]
    """Settle every seated auditor of every round once the outcome is final; (round, auditor) -> Settlement."""
    out = {}
    for rnd in range(rounds + 1):
        for a in provider.seats(sid, rnd):
            out[(rnd, a)] = when_ready(lambda a=a, rnd=rnd: ports[a].settle(sid, a, rnd), mine)  # type: ignore[misc]
    return out


def appeal_scenario(
    provider: ChainPort, appellant: ChainPort, auditors: dict[str, ChainPort], mine: Mine
) -> dict[str, object]:
    """Two computer segments; round 0 wrongly FAILs segment 0; an appeal overturns it; settle every round."""
    p = provider.params()
    for a in auditors.values():
        a.register(Tier.COMPUTER, 1, b"\x42" * 32)
        a.stake(200 * TOKEN)
    sid = open_session(provider, 2, 100 * TOKEN, mine, canaries=None)
    assert provider.canaries(sid).required == 0
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.FAIL if g == 0 else SeatVote.PASS, mine)
    assert provider.session(sid).state == SessionState.FINALIZED and not provider.session(sid).passed
    status = provider.appeal_status(sid)
    assert status.enabled and not status.final and status.appealable_until is not None
    assert status.appealable == [0, 1]
    quote = appellant.appeal_quote(sid, [0])
    assert quote.admissible and (quote.round, quote.depth, quote.seats) == (1, 1, [3])
    assert quote.bond == 3 * p.reward * p.appeal_bond_multiplier_bps // 10_000
    refusals = {
        "duplicate": appellant.appeal_quote(sid, [0, 0]).refusal,
        "unknown": appellant.appeal_quote(sid, [5]).refusal,
        "bond": revert_name(lambda: appellant.appeal(sid, [0], quote.bond - 1)),
    }
    before = appellant.token_balance(appellant.address)
    opened = when_ready(lambda: appellant.appeal(sid, [0], quote.bond), mine)
    assert (opened.round, opened.segments, opened.bond) == (1, [0], quote.bond)
    assert appellant.token_balance(appellant.address) == before - quote.bond
    refusals["pending"] = appellant.appeal_quote(sid, [0]).refusal
    assert provider.appeal_status(sid).running == [1]
    with pytest.raises(NotReady):
        provider.draw(sid, 64, round=1)  # the round's own randomness is not fixed in the appeal's block
    vote_round(provider, auditors, sid, 1, lambda r, g: SeatVote.PASS, mine)
    (info,) = provider.rounds(sid)
    panel = set(provider.seats(sid, 1))
    seg0_r0 = {a for a, segs in provider.seats(sid, 0).items() if 0 in segs}
    assert not panel & seg0_r0 and provider.address not in panel  # exclusions
    keys = provider.keys_published(sid, round=1)
    assert keys is not None and keys.round == 1 and keys.manifest_cid == "bafy-round-1"
    events = provider.events(opened.tx.block, provider.block_number())
    assert [(e.session_id, e.round) for e in events] == [(sid, 1)]
    after = provider.session(sid)
    refusals["deeper"] = appellant.appeal_quote(sid, [0]).refusal  # k_2 = 7 > eligible left
    with pytest.raises(NotReady):
        auditors[next(iter(panel))].settle(sid, next(iter(panel)), 1)  # the window reopened on segment 0
    status = provider.appeal_status(sid)
    mine(max(0, max(status.window_ends) - provider.block_number()) + 1)
    provider.advance(sid)
    assert provider.appeal_status(sid).final
    settled = settle_all(auditors, provider, sid, 1, mine)
    (info,) = provider.rounds(sid)
    return {
        "round": (info.round, info.state, info.depth, [s.index for s in info.segments], info.total_seats),
        "segment": (info.segments[0].appealed, info.segments[0].outcome, info.segments[0].result),
        "tally": (info.segments[0].pass_votes, info.segments[0].fail_votes),
        "outcomes": [s.outcome for s in provider.segments(sid)],
        "verdict": (after.passed, after.score_bps),
        "refusals": refusals,
        "round0": tuple(
            sum(x)
            for x in zip(
                *[(s.correct, s.incorrect, s.reward) for (r, _), s in settled.items() if r == 0], strict=True
            )
        ),  # fmt: skip
        "round1": sorted((s.correct, s.incorrect, s.reward) for (r, _), s in settled.items() if r == 1),
        "appellant_net": appellant.token_balance(appellant.address) - before,
        "panel": len(panel),
    }


def expected_appeal(p: SessionParams) -> dict[str, object]:
    r = p.reward
    bond = 3 * r
    return {
        "round": (1, RoundState.FINALIZED, 1, [0], 3),
        "segment": (SegmentOutcome.FAIL, SegmentOutcome.PASS, "overturned"),
        "tally": (3, 0),
        "outcomes": [SegmentOutcome.PASS, SegmentOutcome.PASS],
        "verdict": (True, 10_000),
        "refusals": {
            "duplicate": "SegmentsNotAscending",
            "unknown": "InvalidSegment",
            "bond": "BondAboveLimit",
            "pending": "AppealPending",
            "deeper": "NotEnoughEligibleAuditors",
        },
        # round 0: segment 0's voter is wrong against the final PASS, segment 1's is right
        "round0": (1, 1, r),
        # the overturning panel is paid R each: the pot (R) first, then the treasury's budget
        "round1": [(1, 0, r)] * 3,
        # bond back plus appealRewardBps of it, from the budget
        "appellant_net": bond * p.appeal_reward_bps // 10_000,
        "panel": 3,
    }


def canary_scenario(
    provider: ChainPort, operator: ChainPort, owner: ChainPort, auditors: dict[str, ChainPort], mine: Mine
) -> dict[str, object]:
    """Five computer segments, one canary (segment 4, truth FAIL) that a lazy auditor passes. The
    canary operator (authorized by the core's owner, `owner`) commits and reveals it; the provider,
    authorized or not, and an auditor are refused."""
    p = provider.params()
    for a in auditors.values():
        a.register(Tier.COMPUTER, 1, b"\x43" * 32)
        a.stake(200 * TOKEN)
    # governance authorizes the provider as an operator (for other providers' sessions) before it opens
    errors = {"set_not_owner": revert_name(lambda: provider.set_canary_operator(provider.address, True))}
    owner.set_canary_operator(provider.address, True)
    assert provider.is_canary_operator(provider.address)
    root = b"\xcd" * 32
    opened = when_ready(lambda: provider.open_session(root, [0] * 5, [1] * 5, 100 * TOKEN), mine)
    sid = opened.session_id
    salt = b"\x07" * 32
    commitment = canary_commitment(sid, 4, SegmentOutcome.FAIL, salt)
    someone = next(iter(auditors.values()))
    errors["provider_operator"] = revert_name(lambda: provider.commit_canaries(sid, [commitment]))
    owner.set_canary_operator(provider.address, False)
    assert not someone.is_canary_operator(provider.address)
    assert someone.is_canary_operator(operator.address)
    errors["provider"] = revert_name(lambda: provider.commit_canaries(sid, [commitment]))
    errors["not_operator"] = revert_name(lambda: someone.commit_canaries(sid, [commitment]))
    errors["count"] = revert_name(lambda: operator.commit_canaries(sid, [commitment, commitment]))
    operator.commit_canaries(sid, [commitment])
    errors["again"] = revert_name(lambda: operator.commit_canaries(sid, [commitment]))
    state = provider.canaries(sid)
    assert state.required == 1 and state.commitments == ["0x" + commitment.hex()]
    assert state.operator == operator.address
    # the operator's window: the draw's randomness waits canaryCommitBlocks after the opening
    assert p.canary_commit_blocks > 0 and state.commit_until >= opened.tx.block + p.canary_commit_blocks
    assert state.reveal_from is None
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.PASS, mine)  # lazy: PASS everywhere
    good = CanaryReveal(slot=0, index=4, verdict=SegmentOutcome.FAIL, salt=salt)
    bad = good.model_copy(update={"salt": b"\x08" * 32})
    unrevealed_verdict = provider.session(sid).pass_weight  # the commitment takes max weight off W
    mine(1)  # the reveal window opens the block after round 0 finalized
    errors["provider_reveal"] = revert_name(lambda: provider.reveal_canaries(sid, [good]))
    errors["mismatch"] = revert_name(lambda: operator.reveal_canaries(sid, [bad]))
    owner.set_canary_operator(someone.address, True)  # another operator never reveals this session's
    errors["other_operator"] = revert_name(lambda: someone.reveal_canaries(sid, [good]))
    owner.set_canary_operator(someone.address, False)
    owner.set_canary_operator(operator.address, False)  # revoked: it cannot reveal until authorized again
    errors["revoked"] = revert_name(lambda: operator.reveal_canaries(sid, [good]))
    owner.set_canary_operator(operator.address, True)
    operator.reveal_canaries(sid, [good])
    state = provider.canaries(sid)
    assert [(c.slot, c.index, c.verdict) for c in state.revealed] == [(0, 4, SegmentOutcome.FAIL)]
    info = provider.session(sid)
    errors["appeal_canary_early"] = provider.appeal_quote(sid, [4]).refusal
    mine(max(0, (state.reveal_until or 0) - provider.block_number()) + 1)
    errors["appeal_canary"] = provider.appeal_quote(sid, [4]).refusal
    errors["closed"] = revert_name(lambda: operator.reveal_canaries(sid, [good]))
    status = provider.appeal_status(sid)
    mine(max(0, max(status.window_ends) - provider.block_number()) + 1)
    provider.advance(sid)
    settled = settle_all(auditors, provider, sid, 0, mine)
    seats = provider.seats(sid, 0)
    lazy = next(a for a in seats if 4 in seats[a])
    mul, add = WAD, 0
    for g in seats[lazy]:  # its map: gamma on real segments (all right), canaryGamma on the canary (wrong)
        mul, add = reputation_step(mul, add, g != 4, p.canary_gamma if g == 4 else p.gamma)
    mine_ = settled[(0, lazy)]
    return {
        "errors": errors,
        "weights_before_reveal": (unrevealed_verdict, provider.segments(sid)[4].outcome),
        "verdict": (info.passed, info.pass_weight, info.total_weight),
        "lazy": (mine_.incorrect, mine_.reputation == apply_reputation(WAD // 2, mul, add)),
        "totals": (
            sum(x.correct for x in settled.values()),
            sum(x.incorrect for x in settled.values()),
            sum(x.reward for x in settled.values()),
        ),
    }


def expected_canary(p: SessionParams) -> dict[str, object]:
    return {
        "errors": {
            "set_not_owner": "NotCoreOwner",
            "provider": "NotCanaryOperator",
            "not_operator": "NotCanaryOperator",
            "count": "WrongCanaryCount",
            "provider_operator": "ProviderIsCanaryOperator",
            "again": "CanariesAlreadyCommitted",
            "provider_reveal": "NotCanaryOperator",
            "mismatch": "CanaryMismatch",
            "other_operator": "NotCommittingOperator",
            "revoked": "NotCanaryOperator",
            "appeal_canary_early": "AppealWindowNotOpen",
            "appeal_canary": "SegmentIsCanary",
            "closed": "CanaryRevealClosed",
        },
        # before the reveal: 5 PASS segments, one commitment outstanding takes the max weight (1) off
        "weights_before_reveal": (4, SegmentOutcome.PASS),
        "verdict": (True, 4, 4),  # the revealed canary leaves both sums
        "lazy": (1, True),  # scored against the truth FAIL, reputation by canaryGamma
        "totals": (4, 1, 4 * p.reward),
    }


def withheld_scenario(
    provider: ChainPort, appellant: ChainPort, operator: ChainPort, auditors: dict[str, ChainPort], mine: Mine
) -> dict[str, object]:
    """Two segments appealed in one round; the provider never publishes the round's keys: both become
    INCONCLUSIVE and final, the appellant gets the bond back, the locked panel is paid from the pot
    only, and a canary
    committed but never revealed blocks nothing (it takes the largest weight off W)."""
    for a in auditors.values():
        a.register(Tier.COMPUTER, 1, b"\x44" * 32)
        a.stake(200 * TOKEN)
    # a fee of 300 leaves the treasury 60 (its 20% share): enough budget to pay the withheld panel;
    # the one canary required is committed (any hash: it is never revealed)
    sid = open_session(provider, 5, 300 * TOKEN, mine, canaries=[b"\x99" * 32], operator=operator)
    vote_round(provider, auditors, sid, 0, lambda r, g: SeatVote.PASS, mine)
    assert provider.canaries(sid).revealed == []
    status = provider.appeal_status(sid)
    mine(max(0, (status.opens_at or 0) - provider.block_number()))
    quote = appellant.appeal_quote(sid, [3, 1])
    assert quote.admissible and quote.segments == [1, 3] and quote.seats == [3, 3]
    before = appellant.token_balance(appellant.address)
    opened = appellant.appeal(sid, [1, 3], quote.bond)
    assert opened.segments == [1, 3] and opened.bond == quote.bond
    step = when_ready(lambda: provider.draw(sid, 64, round=1), mine)
    assert step.drawn_seats == step.total_seats == 6
    panel = provider.seats(sid, 1)
    (info,) = provider.rounds(sid)
    assert info.state == RoundState.DRAWING and info.key_deadline > provider.block_number()
    mine(info.key_deadline - provider.block_number() + 1)
    provider.advance(sid)
    (info,) = provider.rounds(sid)
    status = provider.appeal_status(sid)
    refusal = appellant.appeal_quote(sid, [1]).refusal
    mine(max(0, max([0, *status.window_ends]) - provider.block_number()) + 1)
    provider.advance(sid)
    final = provider.appeal_status(sid).final
    settled = settle_all(auditors, provider, sid, 1, mine)
    (info,) = provider.rounds(sid)
    seg = provider.session(sid)
    return {
        "round": (info.state, [(s.outcome, s.status, s.result) for s in info.segments]),
        "outcomes": [s.outcome for s in provider.segments(sid)],
        "window_ends": [status.window_ends[i] for i in (1, 3)],
        "refusal": refusal,
        "final": final,
        "verdict": (seg.pass_weight, seg.total_weight),
        "panel_paid": sum(settled[(1, a)].reward for a in panel),
        "panel_size": sum(len(v) for v in panel.values()),
        "appellant_net": appellant.token_balance(appellant.address) - before,
    }


def expected_withheld(p: SessionParams) -> dict[str, object]:
    inc = SegmentOutcome.INCONCLUSIVE
    return {
        "round": (RoundState.KEYS_WITHHELD, [(inc, "keys_withheld", "keys_withheld")] * 2),
        "outcomes": [SegmentOutcome.PASS, inc, SegmentOutcome.PASS, inc, SegmentOutcome.PASS],
        "window_ends": [0, 0],
        "refusal": "SegmentFinal",  # its last panel did not decide: the outcome is final
        "final": True,
        # 3 PASS of weight 1 out of 5; the canary never revealed takes the largest weight (1) off
        "verdict": (2, 5),
        # a withheld panel is paid from its segment's pot only, never the treasury's budget (review
        # finding 2): round 0's one computer seat voted PASS, the final outcome is INCONCLUSIVE, so each
        # pot is that seat's k_0 R = R, shared by the panel's 3 seats (R // 3 each), on two segments
        "panel_paid": 2 * 3 * (p.reward * p.seats_per_tier[0] // 3),
        "panel_size": 6,
        "appellant_net": 0,
    }


@contextmanager
def stake_premise_waived(chain: MemoryChain) -> Iterator[None]:
    """Open a session the stake premise (outside review 22, `MinStakeBelowSessionLocks`) refuses: the
    check reads a minimum out of reach at the opening only, as if the owner lowered the minimum
    after the session opened.  For tests of the draw's rules for stake the session's own locks hold (rule S', reason 5)
    and of admission figures in worlds of few locks per auditor, which only such a session reaches."""
    chain.premise_min_stake = 2**96
    try:
        yield
    finally:
        chain.premise_min_stake = None
