"""One full audit session on a real anvil chain, from opening to every auditor settled.

Nine auditors of all three tiers, a delegator, a provider paying with a permit and a relayer
batching signed commits, reveals and settlements, on protocol v2 (the draw samples the staking
snapshot of the opening epoch; the slash coins come from randomness requested at finalization;
a delegation made after the draw gets nothing of the session). Outcomes, balances, reputations and events
are checked against the Python reference of the rules (`trustnode.consensus.rules`), which
is written independently of the contracts.
"""

from __future__ import annotations

from collections import Counter

import pytest
from eth_utils import keccak

from tests.conftest import client_for
from trustnode.chain.accounts import dev_account
from trustnode.chain.deployment import Deployment
from trustnode.chain.errors import ContractRevertError
from trustnode.chain.protocol import (
    TOKEN,
    Protocol,
    RevealItem,
    SessionStatus,
    compute_commitment,
    new_salt,
    segment_leaf,
    verdict_bitmap,
)
from trustnode.consensus import rules
from trustnode.models.enums import SegmentOutcome
from trustnode.storage.unixfs import compute_cid

pytestmark = pytest.mark.chain

TIERS = [1, 1, 0, 2, 1, 2, 0, 1]
WEIGHTS = [3, 2, 1, 4, 2, 3, 1, 2]
CIDS = [compute_cid(f"encrypted segment {i}".encode()) for i in range(len(TIERS))]
TRUTH_FAIL = {2, 5}  # segments whose true verdict is FAIL
AUDITORS = {1: 0, 2: 0, 3: 1, 4: 1, 5: 1, 6: 1, 7: 2, 8: 2, 9: 2}  # dev account -> tier
PROVIDER, DELEGATOR = 10, 11
STAKE = 200 * TOKEN
FEE = 1_000 * TOKEN


def _hash_pair(a: bytes, b: bytes) -> bytes:
    return keccak(min(a, b) + max(a, b))


def _merkle(leaves: list[bytes]) -> tuple[bytes, list[list[bytes]]]:
    """Root and per-leaf proofs of a sorted-pair tree (what OpenZeppelin MerkleProof verifies)."""
    levels = [leaves]
    while len(levels[-1]) > 1:
        cur = levels[-1]
        nxt = [_hash_pair(cur[i], cur[i + 1]) if i + 1 < len(cur) else cur[i] for i in range(0, len(cur), 2)]
        levels.append(nxt)
    proofs: list[list[bytes]] = []
    for idx in range(len(leaves)):
        proof, i = [], idx
        for level in levels[:-1]:
            sibling = i ^ 1
            if sibling < len(level):
                proof.append(level[sibling])
            i //= 2
        proofs.append(proof)
    return levels[-1][0], proofs


def _time_travel(p: Protocol, seconds: int) -> None:
    p.client.w3.provider.make_request("evm_increaseTime", [seconds])  # type: ignore[arg-type]
    p.client.mine(1)


def test_full_session_open_to_every_auditor_settled(fresh_devnet: Deployment) -> None:
    dep = fresh_devnet
    admin = Protocol(client_for(dep, 0), dep.contracts)
    by_acct = {i: admin.as_signer(client_for(dep, i)) for i in [*AUDITORS, PROVIDER, DELEGATOR]}
    treasury = dep.contracts["Treasury"]

    # --- auditors register and stake; the LLM auditors take a commission ------------------
    for acct, tier in AUDITORS.items():
        admin.transfer(by_acct[acct].address, STAKE + 50 * TOKEN)
        me = by_acct[acct]
        me.register(tier, 1 << tier, keccak(text=f"x25519-{acct}"))
        me.stake(me.address, STAKE)
        if tier == 1:
            me.set_commission(1_000)
    _time_travel(admin, 61)  # commission delay
    admin.mine_to_next_epoch()  # the draw samples the snapshot at the start of the opening epoch

    # --- the provider opens a session paying with a permit ---------------------------------
    provider = by_acct[PROVIDER]
    admin.transfer(provider.address, 2 * FEE)
    leaves = [segment_leaf(i, CIDS[i], TIERS[i], WEIGHTS[i]) for i in range(len(TIERS))]
    root, proofs = _merkle(leaves)
    treasury_before = admin.balance_of(treasury)
    sid = provider.open_session(root, TIERS, WEIGHTS, FEE, permit=True)
    assert admin.balance_of(treasury) - treasury_before == FEE // 5
    assert admin.balance_of(admin.sessions.address) == FEE * 4 // 5
    info = admin.session(sid)
    assert info.status == SessionStatus.CREATED and info.total_seats == 4 * 3 + 2 * 1 + 2 * 3
    assert provider.verify_segment(sid, 3, CIDS[3], TIERS[3], WEIGHTS[3], proofs[3])
    assert not provider.verify_segment(sid, 3, CIDS[4], TIERS[3], WEIGHTS[3], proofs[3])

    # --- draw: too early is refused, then paginated by anyone --------------------------------
    with pytest.raises(ContractRevertError) as early:
        admin.draw(sid, 4)
    assert early.value.name == "TooEarly"
    admin.client.mine(admin.blocks_until_drawable(sid))
    receipts = admin.draw_all(sid, page=5)
    assert len(receipts) == 3  # 20 seats, at least 5 per transaction, whole segments (3+3, 1+3+3, 3+1+3)
    info = admin.session(sid)
    assert info.status == SessionStatus.DRAWING and info.draw_complete
    drawn = admin.auditors_of(sid)
    seats = {a: admin.seats_of(sid, a) for a in drawn}
    assert sum(len(s) for s in seats.values()) == info.total_seats
    tier_of = {by_acct[acct].address: tier for acct, tier in AUDITORS.items()}
    per_segment = Counter(seg for s in seats.values() for seg in s)
    assert per_segment == Counter({i: (1 if t == 0 else 3) for i, t in enumerate(TIERS)})
    for a, segs in seats.items():
        assert segs == sorted(set(segs)), "distinct segments in seat order"
        assert all(TIERS[s] == tier_of[a] for s in segs), "seats only in the auditor's tier"
        assert len(segs) <= 8
        assert admin.pool(a).locked == len(segs) * 8 * TOKEN

    # The first drawn LLM auditor votes the opposite everywhere; the first drawn human auditor
    # commits but never reveals (every human is drawn: 3 seats per human segment, 3 humans).
    acct_of = {by_acct[acct].address: acct for acct in AUDITORS}
    dishonest = next(a for a in drawn if tier_of[a] == 1)
    silent = next(a for a in drawn if tier_of[a] == 2)
    # Another drawn LLM auditor (10% commission) receives a delegation after the draw: it waits in
    # the pool's ledger behind this session and gets nothing of it.
    honest = next(a for a in drawn if tier_of[a] == 1 and a != dishonest)
    assert admin.pool(honest).commission_bps == 1_000
    admin.transfer(by_acct[DELEGATOR].address, 500 * TOKEN)
    by_acct[DELEGATOR].stake(honest, 300 * TOKEN)
    pool = admin.pool(honest)
    assert (pool.assets, pool.pending_deposits, pool.backing) == (STAKE, 300 * TOKEN, STAKE + 300 * TOKEN)
    assert admin.shares_of(honest, by_acct[DELEGATOR].address) == 0

    provider.publish_keys(sid, "bafy-key-manifest")
    assert admin.status(sid) == SessionStatus.KEYS_PUBLISHED

    # --- commits: some direct, the rest signed and relayed in one batch ----------------------
    openings: dict[str, tuple[int, bytes]] = {}
    relayed = []
    for i, a in enumerate(drawn):
        acct = acct_of[a]
        votes = [(s in TRUTH_FAIL) != (a == dishonest) for s in seats[a]]
        verdicts, salt = verdict_bitmap(votes), new_salt()
        openings[a] = (verdicts, salt)
        commitment = compute_commitment(dep.chain_id, admin.voting.address, sid, a, verdicts, salt)
        if i % 2 == 0:
            by_acct[acct].commit(sid, commitment)
        else:
            relayed.append(admin.sign_commit(dev_account(acct), sid, commitment))
    admin.commit_batch(sid, relayed)
    assert admin.status(sid) == SessionStatus.REVEAL, "everyone committed: reveal opens early"

    # --- reveals: a wrong opening is refused; the silent auditor never reveals ------------------
    a0 = drawn[0]
    with pytest.raises(ContractRevertError) as bad:
        admin.reveal(sid, a0, openings[a0][0] ^ 1, openings[a0][1])
    assert bad.value.name == "CommitmentMismatch"
    items = [RevealItem(auditor=a, verdicts=v, salt=s) for a, (v, s) in openings.items() if a != silent]
    admin.reveal_batch(sid, items)
    with pytest.raises(ContractRevertError) as open_:
        admin.finalize(sid)
    assert open_.value.name == "RevealOpen"
    admin.client.mine(admin.params().reveal_blocks + 1)
    admin.advance(sid)
    info = admin.session(sid)
    assert info.status == SessionStatus.FINALIZED

    # --- outcomes and trace verdict equal the reference recount ------------------------------
    params = admin.params(info.params_version)
    revealed_seats = [
        [
            rules.Seat(segment_index=s, vote_fail=bool((openings[a][0] >> j) & 1))
            for j, s in enumerate(seats[a])
        ]
        for a in drawn
        if a != silent
    ]
    tallies = rules.tally(revealed_seats, len(TIERS))
    expected = [
        rules.segment_outcome(pv, fv, params.seats_per_tier[TIERS[i]], params.tau_bps)
        for i, (pv, fv) in enumerate(tallies)
    ]
    segments = admin.segments(sid)
    assert [s.outcome for s in segments] == expected
    assert [(s.pass_votes, s.fail_votes) for s in segments] == tallies
    assert [s.outcome for s in segments if s.index in TRUTH_FAIL] == [SegmentOutcome.FAIL] * 2
    verdict = rules.trace_verdict(expected, WEIGHTS, params.beta_bps)
    fin = admin.events("AuditSessions", "SessionFinalized", session_id=sid)[0]["args"]
    assert (info.passed, fin["passWeight"], fin["totalWeight"], info.score_bps) == (
        verdict.passed,
        verdict.weight_passed,
        verdict.total_weight,
        verdict.score_bps,
    )

    # --- settlement by a relayer, checked auditor by auditor against the reference -------------
    econ = rules.EconomicRules(
        reward=params.reward,
        penalty=params.slash_amount,
        p_min=params.p_min,
        p_max=params.p_max,
        gamma=params.gamma,
    )
    # The slash coins' randomness was requested at finalization: settling waits for it.
    with pytest.raises(ContractRevertError) as pending:
        admin.settle(sid, drawn[0])
    assert pending.value.name == "SlashSeedPending"
    admin.client.mine(admin.blocks_until_settleable(sid))
    before = {a: admin.pool(a) for a in drawn}
    commission = {a: before[a].commission_bps for a in drawn}  # fixed at the draw, unchanged since
    draw_rep = {a: admin.vote(sid, a).draw_reputation for a in drawn}
    wallets_before = {a: admin.balance_of(a) for a in drawn}
    treasury_before = admin.balance_of(treasury)
    receipt = admin.settle_batch(sid, drawn)
    seed = bytes(admin.client.call(admin.randomness.functions.valueOf(admin.session(sid).slash_request)))
    expected_settlement = {}
    for a in drawn:
        my_seats = (
            [rules.Seat(segment_index=s) for s in seats[a]]
            if a == silent
            else [
                rules.Seat(segment_index=s, vote_fail=bool((openings[a][0] >> j) & 1))
                for j, s in enumerate(seats[a])
            ]
        )
        expected_settlement[a] = rules.settle_auditor(
            auditor=a,
            seats=my_seats,
            outcomes=expected,
            reputation=before[a].reputation,
            draw_reputation=draw_rep[a],
            pool_assets=before[a].assets,
            commission_bps=commission[a],
            slash_seed=seed,
            rules=econ,
        )
    for a in drawn:
        exp = expected_settlement[a]
        pool = admin.pool(a)
        pending = 300 * TOKEN if a == honest else 0  # the delegation applies after the session
        assert pool.assets == exp.pool_assets_after + pending, a
        assert pool.reputation == exp.reputation_after, a
        assert pool.locked == 0
        assert admin.balance_of(a) - wallets_before[a] == exp.commission
        assert admin.vote(sid, a).settled
    assert expected_settlement[silent].slashed == len(seats[silent]) * params.slash_amount
    assert expected_settlement[silent].reputation_after < expected_settlement[silent].reputation_before
    assert expected_settlement[dishonest].correct < len(seats[dishonest]), "the dishonest auditor lost votes"
    assert expected_settlement[honest].commission > 0
    delegated = admin.shares_of(honest, by_acct[DELEGATOR].address)
    value = admin.preview_redeem(honest, delegated)
    assert 0 <= 300 * TOKEN - value < 10**9, "the delegation bought in after the draw: no share of its reward"
    gross = sum(e.gross_reward for e in expected_settlement.values())
    slashed = sum(e.slashed for e in expected_settlement.values())
    assert admin.balance_of(treasury) - treasury_before == slashed + (FEE * 4 // 5 - gross)
    assert admin.balance_of(admin.sessions.address) == 0
    assert admin.session(sid).settled_count == len(drawn)
    with pytest.raises(ContractRevertError) as twice:
        admin.settle(sid, drawn[0])
    assert twice.value.name == "AlreadySettled"

    # --- events tell the whole story -------------------------------------------------------
    def ev(contract: str, name: str) -> list:
        return admin.events(contract, name, from_block=dep.deploy_block, session_id=sid)

    assert len(ev("AuditSessions", "SessionOpened")) == 1
    assert len(ev("AuditSessions", "DrawStarted")) == 1
    assert sum(len(e["args"]["auditors"]) for e in ev("DrawModule", "SeatsDrawn")) == info.total_seats
    for a in drawn:
        assert admin.assignments(a, from_block=dep.deploy_block) == [(sid, s) for s in seats[a]]
    assert ev("AuditSessions", "KeysPublished")[0]["args"]["manifestCid"] == "bafy-key-manifest"
    assert len(ev("VotingModule", "Committed")) == len(drawn)
    assert len(ev("VotingModule", "Revealed")) == len(drawn) - 1
    assert len(ev("AuditSessions", "SlashSeedRequested")) == 1
    fin = ev("AuditSessions", "SessionFinalized")[0]["args"]
    assert list(fin["outcomes"]) == [int(o) for o in expected]
    settled = {e["args"]["auditor"]: e["args"] for e in ev("SettlementModule", "AuditorSettled")}
    assert set(settled) == set(drawn)
    for a, args in settled.items():
        assert args["reward"] == expected_settlement[a].gross_reward
        assert args["slashes"] == expected_settlement[a].slashes
        assert (args["repMul"], args["repAdd"]) == (
            expected_settlement[a].rep_mul,
            expected_settlement[a].rep_add,
        )
    statuses = [SessionStatus(e["args"]["status"]) for e in ev("AuditSessions", "StatusChanged")]
    assert statuses == [
        SessionStatus.CREATED,
        SessionStatus.DRAWING,
        SessionStatus.KEYS_PUBLISHED,
        SessionStatus.COMMIT,
        SessionStatus.REVEAL,
        SessionStatus.FINALIZED,
    ]
    assert receipt["status"] == 1


def test_withdrawal_after_settlement_and_cooldown(fresh_devnet: Deployment) -> None:
    dep = fresh_devnet
    admin = Protocol(client_for(dep, 0), dep.contracts)
    me = admin.as_signer(client_for(dep, 1))
    admin.transfer(me.address, 200 * TOKEN)
    me.register(1, 2, keccak(text="key"))
    me.stake(me.address, 200 * TOKEN)  # the devnet's minimum stake: weight in the snapshot
    me.mine_to_next_epoch()  # the pool stands in a readable snapshot: a withdrawal is held (protocol-v2 5.1)
    shares = me.shares_of(me.address, me.address)
    wid = me.request_withdrawal(me.address, shares // 4)
    with pytest.raises(ContractRevertError) as parked:
        me.claim_withdrawal(wid)
    assert parked.value.name == "WithdrawalPending"
    assert me.pool(me.address).assets == 200 * TOKEN, "parked shares stay in the pool (lockable, slashable)"
    for _ in range(3):  # until no draw can read a snapshot that counted the stake
        me.mine_to_next_epoch()
    me.drain(me.address)  # the hold is over: queued and, with an empty ledger, redeemed at once
    with pytest.raises(ContractRevertError) as early:
        me.claim_withdrawal(wid)
    assert early.value.name == "WithdrawalNotReady"
    _time_travel(admin, 61)
    before = me.balance_of(me.address)
    me.claim_withdrawal(wid)
    assert me.balance_of(me.address) - before == 50 * TOKEN
    assert me.pool(me.address).assets == 150 * TOKEN
    me.deregister()
    assert not me.profile(me.address).registered
