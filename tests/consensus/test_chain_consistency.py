"""The deployed contracts and `trustnode.consensus.rules` agree to the wei and to the WAD.

A short horizon of audit sessions runs on a real anvil chain with scripted auditors of every
tier (honest, malicious, a random guesser that also skips a reveal, a delegated pool, and
auditors taking a commission).  A Python ledger settles the same votes with the reference
rules, starting only from the chain's parameters, the drawn seats and the session seeds, and
after every session every auditor's pool assets, reputation and token balance, the treasury,
the session pool and the verdicts must be equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from eth_utils import keccak
from web3.contract import Contract

from tests.conftest import client_for
from trustnode.chain.client import ChainClient
from trustnode.chain.deployment import Deployment
from trustnode.consensus.rules import (
    BPS,
    WAD,
    EconomicRules,
    Seat,
    commitment,
    fee_split,
    pack_tiers_weights,
    segment_outcome,
    settle_auditor,
    trace_verdict,
    verdict_bitmap,
)
from trustnode.models.enums import SegmentOutcome, Tier

pytestmark = pytest.mark.chain

K = 3  # seats per segment, every tier
WEIGHTS = (1, 2, 3)
SESSIONS = 8
SEGMENTS = 6
PER_TIER = ("honest", "honest", "malicious", "random")  # four auditors per tier
COMMISSION = {"honest": 1500, "malicious": 0, "random": 700}
SKIP_REVEAL = {(1, "random")}  # (session index, behaviour): commits, never reveals


def _struct(contract: Contract, fn: str, value: Any) -> dict[str, Any]:
    """Name the fields of a returned struct from the ABI (robust to field order)."""
    abi = next(x for x in contract.abi if x.get("type") == "function" and x["name"] == fn)
    comps = abi["outputs"][0]["components"]
    return {c["name"]: v for c, v in zip(comps, value, strict=True)}


@dataclass
class Agent:
    client: ChainClient
    tier: Tier
    behaviour: str
    assets: int = 0
    reputation: int = 0
    balance: int = 0
    commission_bps: int = 0


@dataclass
class Ledger:
    agents: dict[str, Agent] = field(default_factory=dict)
    treasury: int = 0


def _vote_fail(behaviour: str, flawed: bool, rng: np.random.Generator) -> bool:
    if behaviour == "honest":
        return flawed
    if behaviour == "malicious":
        return not flawed
    return bool(rng.random() < 0.5)


def test_contracts_match_reference_rules(fresh_devnet: Deployment) -> None:
    dep = fresh_devnet
    owner = client_for(dep, 0)
    token = owner.contract("TrustToken", dep.address("TrustToken"))
    sessions = owner.contract("AuditSessions", dep.address("AuditSessions"))
    staking = owner.contract("Staking", dep.address("Staking"))
    registry = owner.contract("AuditorRegistry", dep.address("AuditorRegistry"))
    randomness = owner.contract("LookaheadRandomness", owner.call(sessions.functions.randomness()))
    treasury = owner.call(sessions.functions.treasury())
    assert owner.call(staking.functions.treasury()) == treasury

    # protocol parameters chosen by the test (owner = deployer), within the contracts' bounds
    current = _struct(
        sessions,
        "paramsAt",
        owner.call(sessions.functions.paramsAt(owner.call(sessions.functions.paramsVersion()))),
    )
    params = dict(current)
    params.update(
        tauBps=6000,
        betaBps=6000,
        seatCap=8,
        seatsPerTier=[K, K, K],
        tierWeight=list(WEIGHTS),
        gamma=WAD // 10,
        pMin=WAD // 5,
        pMax=WAD // 2,
        reward=6 * 10**18,
        slashAmount=8 * 10**18,
    )
    owner.transact(sessions.functions.setParams(tuple(params[c] for c in current)))
    rules = EconomicRules(
        reward=params["reward"],
        penalty=params["slashAmount"],
        p_min=params["pMin"],
        p_max=params["pMax"],
        gamma=params["gamma"],
    )
    sp = _struct(staking, "params", owner.call(staking.functions.params()))

    ledger = Ledger(treasury=owner.call(token.functions.balanceOf(treasury)))
    index = 2
    for t in Tier:
        for b in PER_TIER:
            c = client_for(dep, index)
            index += 1
            stake = int(sp["minStake"][int(t)]) + 200 * 10**18
            owner.transact(token.functions.transfer(c.address, stake + 10**18))
            c.transact(registry.functions.register(int(t), 1, keccak(c.address.encode())))
            c.transact(token.functions.approve(staking.address, stake))
            c.transact(staking.functions.stake(c.address, stake))
            if COMMISSION[b]:
                c.transact(staking.functions.setCommission(COMMISSION[b]))
            ledger.agents[c.address] = Agent(client=c, tier=t, behaviour=b)
    # a delegator buys shares of the first honest computer auditor's pool
    delegator = client_for(dep, index)
    first = next(iter(ledger.agents))
    owner.transact(token.functions.transfer(delegator.address, 50 * 10**18))
    delegator.transact(token.functions.approve(staking.address, 50 * 10**18))
    delegator.transact(staking.functions.stake(first, 50 * 10**18))
    # let the commissions take effect
    owner.w3.provider.make_request("evm_increaseTime", [int(sp["commissionDelay"]) + 1])  # type: ignore[arg-type]
    owner.mine(1)
    for a, ag in ledger.agents.items():
        pool = owner.call(staking.functions.poolOf(a))
        ag.assets, ag.reputation, ag.commission_bps = pool[0], pool[3], pool[4]
        assert ag.reputation == sp["initialReputation"]
        assert ag.commission_bps == COMMISSION[ag.behaviour]
        ag.balance = owner.call(token.functions.balanceOf(a))

    provider = client_for(dep, 1)
    owner.transact(token.functions.transfer(provider.address, 10_000 * 10**18))
    provider.transact(token.functions.approve(sessions.address, 2**256 - 1))
    rng = np.random.default_rng(2024)
    slashed_events = 0
    disagree_slashed = disagree_spared = 0
    outcomes_seen: set[SegmentOutcome] = set()
    for n in range(SESSIONS):
        tiers = [Tier(i % 3) for i in range(SEGMENTS)]
        weights = [WEIGHTS[int(t)] for t in tiers]
        flawed = [bool(x) for x in rng.random(SEGMENTS) < 0.4]
        seats_total = K * SEGMENTS
        fee = -((-seats_total * rules.reward * BPS) // 8000) + 12_345 + n
        provider.transact(
            sessions.functions.openSession(
                keccak(f"trace-{n}".encode()), pack_tiers_weights(tiers, weights), fee
            )
        )
        sid = owner.call(sessions.functions.sessionCount())
        pool, to_treasury = fee_split(fee)
        ledger.treasury += to_treasury
        req = _struct(sessions, "sessionOf", owner.call(sessions.functions.sessionOf(sid)))["randomnessId"]
        target = owner.call(randomness.functions.targetBlockOf(req))
        owner.mine(max(1, target - owner.block_number() + 1))
        owner.transact(sessions.functions.draw(sid, seats_total))
        provider.transact(sessions.functions.publishKeys(sid, f"manifest-{n}"))
        seed = _struct(sessions, "sessionOf", owner.call(sessions.functions.sessionOf(sid)))["seed"]

        # every seated auditor commits to its bitmap; most reveal
        seated = owner.call(sessions.functions.auditorsOf(sid))
        seats: dict[str, list[Seat]] = {}
        reveals = []
        for a in seated:
            ag = ledger.agents[a]
            segs = [int(x) for x in owner.call(sessions.functions.seatsOf(sid, a))]
            assert segs == sorted(segs) and all(tiers[s] == ag.tier for s in segs)
            votes = [_vote_fail(ag.behaviour, flawed[s], rng) for s in segs]
            bitmap = verdict_bitmap(votes)
            salt = keccak(f"salt-{n}-{a}".encode())
            digest = commitment(owner.chain_id, sessions.address, sid, a, bitmap, salt)
            assert digest == owner.call(sessions.functions.computeCommitment(sid, a, bitmap, salt))
            ag.client.transact(sessions.functions.commit(sid, digest))
            skip = (n, ag.behaviour) in SKIP_REVEAL
            seats[a] = [
                Seat(segment_index=s, vote_fail=None if skip else v) for s, v in zip(segs, votes, strict=True)
            ]
            if not skip:
                reveals.append((a, bitmap, salt))
        owner.transact(sessions.functions.revealBatch(sid, reveals))
        if len(reveals) < len(seated):
            deadline = _struct(sessions, "sessionOf", owner.call(sessions.functions.sessionOf(sid)))[
                "revealDeadline"
            ]
            owner.mine(max(1, deadline - owner.block_number() + 1))
        owner.transact(sessions.functions.finalize(sid))

        # segment and trace verdicts
        counts = [[0, 0] for _ in range(SEGMENTS)]
        for ss in seats.values():
            for s in ss:
                if s.vote_fail is not None:
                    counts[s.segment_index][1 if s.vote_fail else 0] += 1
        outcomes = [segment_outcome(p_, f_, K, params["tauBps"]) for p_, f_ in counts]
        outcomes_seen.update(outcomes)
        chain_outcomes = []
        for i in range(SEGMENTS):
            word = owner.call(sessions.functions.segmentWord(sid, i // 8))
            chain_outcomes.append(SegmentOutcome((word >> ((i % 8) * 32 + 12)) & 3))
        assert chain_outcomes == outcomes, n
        verdict = trace_verdict(outcomes, weights, params["betaBps"])
        sess = _struct(sessions, "sessionOf", owner.call(sessions.functions.sessionOf(sid)))
        assert (sess["passed"], sess["scoreBps"], sess["passWeight"], sess["totalWeight"]) == (
            verdict.passed,
            verdict.score_bps,
            verdict.weight_passed,
            verdict.total_weight,
        )

        # settle everyone through the chain and through the reference
        owner.transact(sessions.functions.settleBatch(sid, seated))
        for a in seated:
            ag = ledger.agents[a]
            res = settle_auditor(
                auditor=a,
                seats=seats[a],
                outcomes=outcomes,
                reputation=ag.reputation,
                pool_assets=ag.assets,
                commission_bps=ag.commission_bps,
                session_seed=bytes(seed),
                rules=rules,
            )
            ag.assets = res.pool_assets_after
            ag.reputation = res.reputation_after
            ag.balance += res.commission
            pool -= res.gross_reward
            ledger.treasury += res.slashed
            slashed_events += res.slashes
            for x in res.seats:
                if x.agreed is False:
                    disagree_slashed += x.slashed > 0
                    disagree_spared += x.slashed == 0
        ledger.treasury += pool  # remainder swept after the last settlement

        for a, ag in ledger.agents.items():
            chain_pool = owner.call(staking.functions.poolOf(a))
            assert (chain_pool[0], chain_pool[3]) == (ag.assets, ag.reputation), (n, ag.behaviour, ag.tier)
            assert owner.call(staking.functions.reputationOf(a)) == ag.reputation
            assert owner.call(token.functions.balanceOf(a)) == ag.balance, (n, ag.behaviour)
        assert owner.call(token.functions.balanceOf(treasury)) == ledger.treasury, n
        assert owner.call(token.functions.balanceOf(sessions.address)) == 0
        assert _struct(sessions, "sessionOf", owner.call(sessions.functions.sessionOf(sid)))["pool"] == 0

    # the horizon exercised what it claims to: slashes, rewards and several outcome kinds
    assert slashed_events > 0
    assert disagree_slashed > 0 and disagree_spared > 0  # both sides of the slash draw
    assert {SegmentOutcome.PASS, SegmentOutcome.FAIL} <= outcomes_seen
