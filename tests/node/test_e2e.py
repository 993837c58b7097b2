"""End to end on anvil with real processes: an API node, four auditor daemons (two computer,
one LLM judge against the fake endpoint, one human answered by a script), js-ipfs.

Checks verdicts, the failing segment, settlements against the reference rules, a proof
verified on chain, and crash safety of both the auditor daemon and the provider worker.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from trustnode.chain.accounts import dev_account
from trustnode.chain.protocol import SessionStatus
from trustnode.consensus.rules import EconomicRules, Seat, settle_auditor
from trustnode.models.enums import Tier
from trustnode.node.cluster import AuditorSpec, ClusterConfig, LocalCluster
from trustnode.node.samples import Sample, load_samples

pytestmark = [pytest.mark.chain, pytest.mark.ipfs, pytest.mark.slow]

AUDITORS = [
    AuditorSpec(name="computer-1", tier=Tier.COMPUTER, account=2),
    AuditorSpec(name="computer-2", tier=Tier.COMPUTER, account=3),
    AuditorSpec(name="llm-1", tier=Tier.LLM, account=4),
    AuditorSpec(name="human-1", tier=Tier.HUMAN, account=5),
]


@pytest.fixture(scope="module")
def samples() -> dict[str, Sample]:
    return {s.name: s for s in load_samples()}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, samples: dict[str, Sample]) -> Iterator[LocalCluster]:
    cfg = ClusterConfig(
        workdir=tmp_path_factory.mktemp("cluster"),
        auditors=AUDITORS,
        flawed_phrases=[p for s in samples.values() for p in s.flawed_phrases],
        batch_size=4,
        batch_wait_s=1.0,
    )
    with LocalCluster(cfg) as c:
        yield c


@pytest.fixture(scope="module")
def finished(cluster: LocalCluster, samples: dict[str, Sample]) -> dict[str, dict[str, Any]]:
    ids = {cluster.submit(s.payload()): name for name, s in samples.items()}
    views = cluster.wait(list(ids), timeout_s=240)
    return {ids[t]: v for t, v in views.items()}


def _wait_all_settled(cluster: LocalCluster, session_ids: list[int], timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    p = cluster.owner
    while time.monotonic() < deadline:
        pending = [(sid, a) for sid in session_ids for a in p.auditors_of(sid) if not p.vote(sid, a).settled]
        if not pending:
            return
        time.sleep(0.5)
    raise AssertionError(f"auditors not settled in {timeout_s}s: {pending}")


def test_sound_traces_pass_and_flawed_traces_fail(
    finished: dict[str, dict[str, Any]], samples: dict[str, Sample]
) -> None:
    for name, view in finished.items():
        assert view["status"] == "done", (name, view["error"])
        assert view["outcome"]["verdict"] == samples[name].expected_verdict, (name, view["outcome"])
        assert set(view["tx_hashes"]) >= {"open", "draw", "publish_keys", "finalize"}


def test_flawed_tunnel_fails_on_the_wrong_multiplication(finished: dict[str, dict[str, Any]]) -> None:
    view = finished["tunnel-flawed"]
    failing = view["outcome"]["failing_segments"]
    assert len(failing) == 1
    node = next(n for n in view["hdag"]["nodes"] if n["id"] == failing[0]["node_id"])
    assert "1.2 × 0.8 = 1.06" in node["content"]
    # Every other segment passed.
    outcomes = [s["outcome"] for s in view["outcome"]["segments"]]
    assert outcomes.count("FAIL") == 1 and set(outcomes) <= {"PASS", "FAIL"}
    assert {s["tier"] for s in view["outcome"]["segments"]} <= {"computer", "llm", "human"}


def test_clinical_trace_with_right_answer_fails_on_its_reasoning(finished: dict[str, dict[str, Any]]) -> None:
    view = finished["clinical-right-answer-flawed-steps"]
    failing_text = [
        next(n for n in view["hdag"]["nodes"] if n["id"] == f["node_id"])["content"]
        for f in view["outcome"]["failing_segments"]
    ]
    assert any("creatinine of 1.4 suggests" in t for t in failing_text)
    assert all("The total is" not in t for t in failing_text), "the arithmetic of the total is right"


def test_settlements_follow_the_reference_rules(
    cluster: LocalCluster, finished: dict[str, dict[str, Any]]
) -> None:
    p = cluster.owner
    sessions = sorted(v["session_id"] for v in finished.values())
    _wait_all_settled(cluster, sessions)
    params = p.params()
    rules = EconomicRules(
        reward=params.reward,
        penalty=params.slash_amount,
        p_min=params.p_min,
        p_max=params.p_max,
        gamma=params.gamma,
    )
    # Results apply in each auditor's ledger order (the order it was drawn), whatever the settle order.
    entry_of = {
        (str(e["args"]["auditor"]), int(e["args"]["key"])): int(e["args"]["entry"])
        for e in p.events("Staking", "SessionEntryOpened")
    }
    events = sorted(
        (ev for sid in sessions for ev in p.events("SettlementModule", "AuditorSettled", session_id=sid)),
        key=lambda ev: entry_of[(str(ev["args"]["auditor"]), int(ev["args"]["sessionId"]))],
    )
    reputation: dict[str, int] = {}
    initial = 10**18 // 2
    checked = 0
    for ev in events:
        sid, auditor = int(ev["args"]["sessionId"]), str(ev["args"]["auditor"])
        info = p.session(sid)
        outcomes = [s.outcome for s in p.segments(sid)]
        vote = p.vote(sid, auditor)
        seats = p.seats_of(sid, auditor)
        word = vote.verdicts if vote.revealed else None
        slash_seed = bytes(p.client.call(p.randomness.functions.valueOf(info.slash_request)))
        expected = settle_auditor(
            auditor=auditor,
            seats=[
                Seat(
                    segment_index=s,
                    vote_fail=None if word is None else bool(word >> j & 1),
                    abstain=word is not None and bool(word >> (128 + j) & 1),
                )
                for j, s in enumerate(seats)
            ],
            outcomes=outcomes,
            reputation=reputation.get(auditor, initial),
            draw_reputation=vote.draw_reputation,
            pool_assets=10**30,
            commission_bps=0,
            slash_seed=slash_seed,
            rules=rules,
        )
        assert int(ev["args"]["correct"]) == expected.correct
        assert int(ev["args"]["slashes"]) == expected.slashes
        assert int(ev["args"]["reward"]) == expected.gross_reward
        assert (int(ev["args"]["repMul"]), int(ev["args"]["repAdd"])) == (expected.rep_mul, expected.rep_add)
        reputation[auditor] = expected.reputation_after
        checked += 1
    assert checked == sum(len(p.auditors_of(s)) for s in sessions)
    # Honest auditors agreed with every decided verdict here, so they earned and gained reputation.
    for spec in AUDITORS:
        addr = dev_account(spec.account).address
        if addr in reputation:
            assert reputation[addr] > initial
            assert p.pool(addr).reputation == reputation[addr]


def test_public_api_and_query_command(cluster: LocalCluster, finished: dict[str, dict[str, Any]]) -> None:
    sid = finished["tunnel-flawed"]["session_id"]
    view = httpx.get(f"{cluster.api_url}/v1/sessions/{sid}", timeout=30).json()
    assert view["outcome"]["verdict"] == "FAIL" and view["outcome"]["state"] == "finalized"
    assert all(seg["cid"].startswith("b") for seg in view["outcome"]["segments"])
    assert "finalize" in view["tx_hashes"] and "commit" in view["tx_hashes"]
    assert "content" not in json.dumps(view), "no plaintext for the public"
    proof = httpx.get(f"{cluster.api_url}/v1/sessions/{sid}/segments/2/proof", timeout=30).json()
    assert proof["verifies_locally"] is True
    assert httpx.get(f"{cluster.api_url}/v1/sessions/999", timeout=30).status_code == 404
    auditor = httpx.get(f"{cluster.api_url}/v1/auditors/{dev_account(2).address}", timeout=30).json()
    assert auditor["tier"] == "computer" and auditor["history"]
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("TRUSTNODE_")},
        "TRUSTNODE_DATA_DIR": str(cluster.work / "query"),
        "TRUSTNODE_CHAIN__DEPLOYMENT_FILE": str(cluster.dep_file),
        "TRUSTNODE_IPFS__API_URL": cluster.ipfs.api_url if cluster.ipfs else "",
    }
    res = subprocess.run(
        [sys.executable, "-m", "trustnode.cli.main", "query", str(sid), "--json", "--proof", "2"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["outcome"]["verdict"] == "FAIL"
    assert out["proof"]["verifies_on_chain"] is True


def _committed(cluster: LocalCluster, auditor: str) -> list[int]:
    return [
        int(ev["args"]["sessionId"])
        for ev in cluster.owner.events("VotingModule", "Committed")
        if ev["args"]["auditor"] == auditor
    ]


def test_auditor_killed_between_commit_and_reveal_still_reveals(
    cluster: LocalCluster, finished: dict[str, dict[str, Any]], samples: dict[str, Sample]
) -> None:
    victim = "computer-1"
    victim_addr = dev_account(2).address
    before = set(_committed(cluster, victim_addr))
    cluster.human_answers.clear()  # the human holds the reveal phase back until we say so
    try:
        tid = cluster.submit(samples["clinical-right-answer-flawed-steps"].payload())
        deadline = time.monotonic() + 120
        sid = None
        while time.monotonic() < deadline:
            new = set(_committed(cluster, victim_addr)) - before
            if new:
                sid = new.pop()
                break
            time.sleep(0.2)
        assert sid is not None, "the computer auditor never committed"
        assert cluster.owner.status(sid) in (SessionStatus.KEYS_PUBLISHED, SessionStatus.COMMIT)
        cluster.auditors[victim].kill(signal.SIGKILL)
        cluster.start_auditor(victim)
    finally:
        cluster.human_answers.set()
    view = cluster.wait([tid], timeout_s=180)[tid]
    assert view["status"] == "done"
    revealed = [
        ev
        for ev in cluster.owner.events("VotingModule", "Revealed", session_id=sid)
        if ev["args"]["auditor"] == victim_addr
    ]
    assert len(revealed) == 1, "the restarted daemon revealed its committed vote"
    assert cluster.owner.vote(sid, victim_addr).revealed


def test_provider_killed_mid_pipeline_completes_once(
    cluster: LocalCluster, samples: dict[str, Sample]
) -> None:
    count_before = cluster.owner.session_count()
    tid = cluster.submit(samples["tunnel-sound"].payload())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if cluster.trace(tid)["stage"] in ("pinned", "batched", "opened", "drawn"):
            break
        time.sleep(0.05)
    assert cluster.api is not None
    cluster.api.kill(signal.SIGKILL)
    cluster.start_api()
    view = cluster.wait([tid], timeout_s=180)[tid]
    assert view["status"] == "done" and view["outcome"]["verdict"] == "PASS"
    roots = [
        ev
        for ev in cluster.owner.events("AuditSessions", "SessionOpened", from_block=0)
        if "0x" + bytes(ev["args"]["merkleRoot"]).hex() == view["merkle_root"]
    ]
    assert len(roots) == 1, "exactly one session for the trace"
    assert cluster.owner.session_count() == count_before + 1


def test_auditors_withdraw_their_rewards(cluster: LocalCluster, finished: dict[str, dict[str, Any]]) -> None:
    """Earnings above the configured stake leave the pool through a (cooldown-bound) withdrawal."""
    addr = dev_account(3).address  # computer-2: agreed with every verdict
    deadline = time.monotonic() + 60
    requested: list[Any] = []
    while time.monotonic() < deadline and not requested:
        requested = [
            ev
            for ev in cluster.owner.staking.events.WithdrawalRequested().get_logs(from_block=0)
            if ev["args"]["auditor"] == addr and ev["args"]["owner"] == addr
        ]
        time.sleep(0.5)
    assert requested, "the daemon requested the withdrawal of its rewards"
    pool = cluster.owner.pool(addr)
    shares = cluster.owner.shares_of(addr, addr)
    value = int(cluster.owner.client.call(cluster.owner.staking.functions.previewRedeem(addr, shares)))
    assert value - cluster.cfg.auditor_stake < 10**18 + cluster.owner.params().reward * 4
    assert pool.assets >= cluster.cfg.auditor_stake


def test_submit_command_waits_for_the_verdict(
    cluster: LocalCluster, finished: dict[str, dict[str, Any]]
) -> None:
    sample = (
        Path(__file__).resolve().parents[2] / "src" / "trustnode" / "node" / "samples" / "tunnel_flawed.json"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRUSTNODE_")}
    env["TRUSTNODE_DATA_DIR"] = str(cluster.work / "submitter")
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "trustnode.cli.main",
            "submit",
            str(sample),
            "--api",
            cluster.api_url,
            "--key",
            cluster.cfg.api_key,
            "--wait",
            "--json",
            "--timeout",
            "180",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    view = json.loads(res.stdout)
    assert view["status"] == "done" and view["outcome"]["verdict"] == "FAIL"
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "trustnode.cli.main",
            "submit",
            str(sample),
            "--api",
            cluster.api_url,
            "--key",
            "wrong",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert bad.returncode == 1 and "401" in bad.stderr and "unknown API key" in bad.stderr
