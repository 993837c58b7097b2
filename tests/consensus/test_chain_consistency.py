"""The deployed v2 contracts and `trustnode.consensus.rules` agree to the wei and to the WAD.

Fuzzed audit sessions run on a real anvil chain against the v2 contracts compiled from
`contracts/src` (core, draw, voting and settlement modules, Staking v2, lookahead randomness),
with scripted auditors of every tier (honest, malicious, a random voter that abstains and
sometimes never reveals), random stakes, commissions and a delegated pool.  Sessions open in
overlapping pairs and are settled in both orders, so p_slash must come from the reputation
fixed at the draw and the reputation maps must compose in draw order; one pair lets its slash
randomness lapse (every incorrect vote slashed) and one session is abandoned by its provider
(keys withheld: R per drawn seat, the rest to the treasury, no refund).  A Python ledger settles
the same votes with the reference rules, from the chain's parameters, the drawn seats and the
randomness only, and every auditor's score, pool assets, reputation and balance, the treasury,
the provider and the verdicts must be equal.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pytest
from eth_utils import keccak

from tests.conftest import free_port
from tests.consensus.v2_chain import V2Chain, v2_chain
from trustnode.consensus.encoding import SegmentLane
from trustnode.consensus.rules import (
    BPS,
    WAD,
    EconomicRules,
    Seat,
    Termination,
    apply_reputation,
    apply_result,
    fee_split,
    pack_tiers_weights,
    pool_remainder,
    score_auditor,
    segment_outcome,
    tally,
    termination_payout,
    trace_verdict,
    verdicts_word,
)
from trustnode.models.enums import SegmentOutcome

pytestmark = pytest.mark.chain

K = 3
WEIGHTS = (1, 2, 3)
SEGMENTS = 6
PAIRS = int(os.environ.get("TRUSTNODE_CONSISTENCY_PAIRS", "4"))
# The seed only picks the scripted horizon; 7 draws seats (with the issue-15 DrawModule) such that
# every path the final assertions ask for occurs (2024 no longer revealed an abstention).
SEED = int(os.environ.get("TRUSTNODE_CONSISTENCY_SEED", "7"))
PER_TIER = ("honest", "honest", "malicious", "random")
PARAMS = {"seatsPerTier": [K, K, K], "tierWeight": list(WEIGHTS), "gamma": WAD // 8, "seatCap": 8}


@dataclass
class Agent:
    address: str
    tier: int
    behaviour: str
    assets: int
    shares: int
    reputation: int
    balance: int
    commission_bps: int


def _votes(behaviour: str, flawed: list[bool], segs: list[int], rng: np.random.Generator) -> list[str]:
    if behaviour == "honest":
        return ["fail" if flawed[s] else "pass" for s in segs]
    if behaviour == "malicious":
        return ["pass" if flawed[s] else "fail" for s in segs]
    # The random voter abstains on its first seat of each session, so every run exercises an
    # abstention whichever seats the chain's randomness gives it; its other seats are coin flips.
    return ["abstain" if i == 0 else str(rng.choice(["pass", "fail", "abstain"])) for i, _ in enumerate(segs)]


class Run:
    """The chain, the Python ledger and the session steps that keep both in step."""

    def __init__(self, ch: V2Chain, rng: np.random.Generator) -> None:
        self.ch, self.rng = ch, rng
        p = ch.call(ch.c["sessions"].functions.paramsAt(0))
        self.params = dict(
            zip(("tau", "beta", "cap", "k", "tw", "gamma", "pmin", "pmax", "R", "P"), p[:10], strict=True)
        )
        self.rules = EconomicRules(
            reward=self.params["R"], penalty=self.params["P"], p_min=self.params["pmin"],
            p_max=self.params["pmax"], gamma=self.params["gamma"],
        )  # fmt: skip
        self.agents: dict[str, Agent] = {}
        self.provider = ch.client(1)
        self.treasury = ch.balance(ch.c["treasury"].address)
        self.slashes_seen = self.spared_seen = self.abstains_seen = 0

    def setup(self) -> None:
        ch, rng = self.ch, self.rng
        index = 2
        for tier in range(3):
            for b in PER_TIER:
                stake = 100 * 10**18 + int(rng.integers(20, 400)) * 10**18
                bps = int(rng.choice([0, 500, 1500, 2000]))
                a = ch.register(index, tier, stake, bps)
                self.agents[a] = Agent(a, tier, b, stake, 0, 0, 0, bps)
                index += 1
        first = next(iter(self.agents))
        delegator = ch.client(index)
        ch.fund(delegator.address, 77 * 10**18)
        delegator.transact(ch.c["token"].functions.approve(ch.c["staking"].address, 77 * 10**18))
        delegator.transact(ch.c["staking"].functions.stake(first, 77 * 10**18))
        self.agents[first].assets += 77 * 10**18
        ch.owner.w3.provider.make_request("evm_increaseTime", [3601])  # type: ignore[arg-type]
        ch.next_epoch()
        for a, ag in self.agents.items():
            pool = ch.pool(a)
            assert pool["assets"] == ag.assets and pool["reputation"] == 5 * 10**17
            ag.reputation, ag.shares, ag.balance = pool["reputation"], pool["totalShares"], ch.balance(a)
            assert ch.call(ch.c["staking"].functions.auditorOf(a))[2] == ag.commission_bps
        ch.fund(self.provider.address, 100_000 * 10**18)
        self.provider.transact(ch.c["token"].functions.approve(ch.c["sessions"].address, 2**256 - 1))

    def open(self, n: int) -> tuple[int, list[bool], dict[str, list[int]], dict[str, int]]:
        ch = self.ch
        tiers = [i % 3 for i in range(SEGMENTS)]
        fee = -((-K * SEGMENTS * self.rules.reward * BPS) // 8000) + int(self.rng.integers(0, 10**6))
        sid, _ = ch.open(
            self.provider,
            keccak(f"trace-{n}".encode()),
            pack_tiers_weights(tiers, [WEIGHTS[t] for t in tiers]),
            fee,
        )
        self.treasury += fee_split(fee)[1]
        flawed = [bool(x) for x in self.rng.random(SEGMENTS) < 0.4]
        return sid, flawed, {}, {"fee": fee}

    def draw(self, sid: int) -> tuple[dict[str, list[int]], dict[str, int]]:
        """Draw every seat; the draw-time reputation stored with the seats is the ledger's."""
        ch = self.ch
        ch.wait_draw_randomness(sid)
        ch.draw_all(sid, K * SEGMENTS)
        seats, draw_rep = {}, {}
        for a, ag in self.agents.items():
            segs = ch.seats_of(sid, a)
            if segs:
                assert all(s % 3 == ag.tier for s in segs) and segs == sorted(segs)
                seats[a] = segs
                draw_rep[a] = ch.seat_word(sid, a) >> 128 & (2**64 - 1)
                assert draw_rep[a] == ag.reputation, "p_slash must use the reputation in force at the draw"
        assert sum(len(s) for s in seats.values()) == K * SEGMENTS
        return seats, draw_rep

    def vote(self, sid: int, flawed: list[bool], seats: dict[str, list[int]]) -> dict[str, list[Seat]]:
        """Commit every seated auditor (one relayed batch), reveal most of them (keys already out)."""
        ch = self.ch
        ballots, openings, out = {}, [], {}
        for a, segs in seats.items():
            votes = _votes(self.agents[a].behaviour, flawed, segs, self.rng)
            word = verdicts_word([v == "fail" for v in votes], [v == "abstain" for v in votes])
            salt = keccak(f"salt-{sid}-{a}".encode())
            ballots[a] = (word, salt)
            hidden = self.agents[a].behaviour == "random" and self.rng.random() < 0.3
            if not hidden:
                openings.append((a, word, salt))
            out[a] = [
                Seat(
                    segment_index=s,
                    vote_fail=None if hidden else v == "fail",
                    abstain=not hidden and v == "abstain",
                )
                for s, v in zip(segs, votes, strict=True)
            ]
        ch.commit_signed(sid, ballots)
        ch.reveal_batch(sid, openings)
        return out

    def finalize(self, sids: list[int]) -> None:
        """Finalize once every reveal phase is over (or everyone revealed)."""
        ch = self.ch
        ch.mine_to(max(ch.session(sid)["revealDeadline"] + 1 for sid in sids))
        for sid in sids:
            ch.owner.transact(ch.c["sessions"].functions.finalize(sid))

    def check_verdicts(self, sid: int, seats: dict[str, list[Seat]]) -> list[SegmentOutcome]:
        counts = tally(seats.values(), SEGMENTS)
        outcomes = [segment_outcome(p, f, K, self.params["tau"]) for p, f in counts]
        words = self.ch.segment_words(sid, SEGMENTS)
        lanes = [SegmentLane(words[i // 8], i) for i in range(SEGMENTS)]
        assert [(x.pass_votes, x.fail_votes) for x in lanes] == counts
        assert [x.outcome for x in lanes] == outcomes
        v = trace_verdict(outcomes, [WEIGHTS[i % 3] for i in range(SEGMENTS)], self.params["beta"])
        s = self.ch.session(sid)
        assert (s["passed"], s["scoreBps"]) == (v.passed, v.score_bps)
        return outcomes

    def settle(self, sid: int, seats: dict[str, list[Seat]], outcomes: list[SegmentOutcome] | None,
               draw_rep: dict[str, int], lapse: bool) -> dict[str, tuple[int, int, int, int]]:  # fmt: skip
        """Settle on chain, check each auditor's score, pay commissions; return the results to apply."""
        ch = self.ch
        s = ch.session(sid)
        if outcomes is not None:
            ch.mine_to(
                ch.call(ch.c["randomness"].functions.targetBlockOf(s["slashRequest"])) + (300 if lapse else 1)
            )
        receipt = ch.settle_batch(sid, list(seats))
        seed = None if outcomes is None or lapse else ch.randomness_value(s["slashRequest"])
        events = {e["auditor"]: e for e in ch.events("settlement", "AuditorSettled", receipt)}
        results = {}
        for a, ss in seats.items():
            sc = score_auditor(
                auditor=a, seats=ss, outcomes=outcomes or [SegmentOutcome.NONE] * SEGMENTS,
                draw_reputation=draw_rep[a], slash_seed=seed, rules=self.rules, finalized=outcomes is not None,
            )  # fmt: skip
            e = events[a]
            got = (
                e["correct"],
                e["incorrect"],
                e["abstained"],
                e["slashes"],
                e["reward"],
                e["repMul"],
                e["repAdd"],
            )
            assert got == (
                sc.correct,
                sc.incorrect,
                sc.abstained,
                sc.slashes,
                sc.reward,
                sc.rep_mul,
                sc.rep_add,
            ), a
            ag = self.agents[a]
            ag.balance += sc.reward * ag.commission_bps // BPS  # commission of the draw, paid at once
            results[a] = (sc.reward, sc.slash, sc.rep_mul, sc.rep_add)
            self.slashes_seen += sc.slashes
            self.spared_seen += sum(1 for x in sc.seats if x.agreed is False and not x.slashed)
            self.abstains_seen += sc.abstained
        if outcomes is not None:
            self.treasury += pool_remainder(s["pool"], [r[0] for r in results.values()])
        return results

    def apply(self, results: dict[str, tuple[int, int, int, int]]) -> None:
        """Staking applies each result when its ledger entry reaches the head (draw order)."""
        for a, (reward, slash, mul, add) in results.items():
            ag = self.agents[a]
            r = apply_result(assets=ag.assets, reward=reward, slash=slash, commission_bps=ag.commission_bps,
                             total_shares=ag.shares)  # fmt: skip
            ag.assets, ag.shares = r.assets_after, r.shares_after or 0
            ag.reputation = apply_reputation(ag.reputation, mul, add)
            self.treasury += r.slashed + r.swept

    def check_ledger(self, label: str) -> None:
        ch = self.ch
        for a, ag in self.agents.items():
            pool = ch.pool(a)
            assert pool["assets"] == ag.assets, (label, ag.behaviour, "assets")
            assert pool["reputation"] == ag.reputation, (
                label,
                ag.behaviour,
                "reputation",
                pool["reputation"],
                ag.reputation,
            )
            assert ch.balance(a) == ag.balance, (label, ag.behaviour, "balance")
            assert pool["locked"] == 0, (label, "locks released")
        assert ch.balance(ch.c["treasury"].address) == self.treasury, label
        assert ch.balance(ch.c["sessions"].address) == 0, label


def test_contracts_match_reference_rules() -> None:
    rng = np.random.default_rng(SEED)
    with v2_chain(session_params=PARAMS, port=free_port()) as ch:
        run = Run(ch, rng)
        run.setup()
        outcomes_seen: set[SegmentOutcome] = set()
        for pair in range(PAIRS):
            opened = [run.open(2 * pair + i) for i in range(2)]
            drawn = [run.draw(o[0]) for o in opened]
            for i, o in enumerate(opened):
                run.provider.transact(
                    ch.c["sessions"].functions.publishKeys(o[0], f"manifest-{2 * pair + i}")
                )
            voted = [run.vote(o[0], o[1], d[0]) for o, d in zip(opened, drawn, strict=True)]
            run.finalize([o[0] for o in opened])
            outs = [run.check_verdicts(o[0], v) for o, v in zip(opened, voted, strict=True)]
            outcomes_seen.update(outs[0] + outs[1])
            order = [0, 1] if pair % 2 == 0 else [1, 0]  # settle the later session first on odd pairs
            lapse = pair == PAIRS - 1
            results = {i: run.settle(opened[i][0], voted[i], outs[i], drawn[i][1], lapse) for i in order}
            run.apply(results[0])  # ledger order: the first session was drawn first
            run.apply(results[1])
            run.check_ledger(f"pair {pair}")
        # The provider withholds the keys: drawn seats are paid R, the rest goes to the treasury.
        sid, _, _, meta = run.open(99)
        seats, draw_rep = run.draw(sid)
        before = ch.balance(run.provider.address)
        ch.mine_to(ch.session(sid)["keyDeadline"] + 1)
        receipt = ch.owner.transact(ch.c["sessions"].functions.advance(sid))
        s = ch.session(sid)
        assert (s["status"], s["termination"]) == (8, Termination.KEYS_WITHHELD)  # Expired
        pay = termination_payout(
            fee_split(meta["fee"])[0], run.rules.reward, K * SEGMENTS, Termination.KEYS_WITHHELD
        )
        ev = ch.events("sessions", "SessionTerminated", receipt)[0]
        assert (ev["refunded"], ev["forfeited"], ev["reserved"]) == (
            pay.refunded,
            pay.forfeited,
            pay.reserved,
        )
        run.treasury += pay.forfeited
        run.apply(
            run.settle(
                sid, {a: [Seat(segment_index=x) for x in v] for a, v in seats.items()}, None, draw_rep, False
            )
        )
        run.check_ledger("keys withheld")
        assert ch.balance(run.provider.address) == before  # no refund once the randomness target is fixed
        # the horizon exercised what it claims to
        assert run.slashes_seen > 0 and run.spared_seen > 0 and run.abstains_seen > 0
        assert {SegmentOutcome.PASS, SegmentOutcome.FAIL} <= outcomes_seen
