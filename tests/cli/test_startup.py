"""Node commands refuse what cannot work at start-up, and say why (issue 13 items 2, 8, 10).

Real anvil, real CLI processes, real HTTP endpoints on 127.0.0.1.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import clean_env, run_cli
from tests.conftest import free_port
from trustnode.chain.accounts import dev_account
from trustnode.chain.client import ChainClient
from trustnode.chain.deployment import Deployment
from trustnode.chain.protocol import Protocol
from trustnode.models.enums import Tier
from trustnode.models.jobs import ChainBinding
from trustnode.models.trace import TraceInput
from trustnode.node.jobs import JobQueue
from trustnode.node.provider import fee_for

pytestmark = pytest.mark.chain


def _env(dep: Deployment, tmp: Path, **extra: str) -> dict[str, str]:
    return {
        "TRUSTNODE_DATA_DIR": str(tmp),
        "TRUSTNODE_CHAIN__DEPLOYMENT_FILE": str(_dep_file(dep, tmp)),
        **extra,
    }


def _dep_file(dep: Deployment, tmp: Path) -> Path:
    path = tmp / "deployment.json"
    if not path.exists():
        dep.save(path)
    return path


@pytest.fixture
def not_an_llm() -> Iterator[str]:
    """An HTTP server on 127.0.0.1 that is not an OpenAI-compatible endpoint (HTML 404s)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(404)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<html>not here</html>")

        do_POST = do_GET  # noqa: N815

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()


def test_an_auditor_must_be_given_its_own_account(tmp_path: Path) -> None:
    res = run_cli(["auditor", "run", "--tier", "computer"], TRUSTNODE_DATA_DIR=str(tmp_path))
    assert res.returncode == 1
    assert "an auditor needs its own account" in res.stderr and "2..19" in res.stderr


def test_an_unset_deployment_file_is_named(tmp_path: Path) -> None:
    """The README operator forgot the export in one shell: "run `trustnode devnet up` first" misled."""
    res = run_cli(
        ["auditor", "run", "--tier", "computer"],
        TRUSTNODE_DATA_DIR=str(tmp_path),
        TRUSTNODE_CHAIN__ACCOUNT_INDEX="2",
    )
    assert res.returncode == 1, res.stdout + res.stderr
    assert "TRUSTNODE_CHAIN__DEPLOYMENT_FILE is unset" in " ".join(res.stderr.split()), res.stderr


def test_an_unfunded_auditor_is_told_how_to_fund_it(devnet: Deployment, tmp_path: Path) -> None:
    address = dev_account(15).address
    res = run_cli(
        ["auditor", "run", "--tier", "computer", "--once"],
        **_env(devnet, tmp_path, TRUSTNODE_CHAIN__ACCOUNT_INDEX="15"),
    )
    assert res.returncode == 1, res.stdout
    assert f"auditor {address} needs 1,000 TRUST to stake but holds 0 TRUST" in res.stderr
    assert f"trustnode devnet fund --address {address}" in res.stderr


def test_an_auditor_on_the_providers_account_is_refused_unless_told(
    devnet: Deployment, tmp_path: Path
) -> None:
    """The README operator's `auditor run` on account 1 was only warned and went on staking for
    nothing (a provider is never drawn into its own sessions), racing the provider for its nonces."""
    env = _env(devnet, tmp_path, TRUSTNODE_CHAIN__ACCOUNT_INDEX="1")
    args = ["auditor", "run", "--tier", "computer", "--once", "--stake", "1000"]
    refused = run_cli(args, **env)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "devnet account 1 is the provider's" in refused.stderr, refused.stderr
    assert "never draws a provider into its own sessions" in refused.stderr, refused.stderr
    assert "--share-provider-account" in refused.stderr and "registered" not in refused.stdout
    told = run_cli([*args, "--share-provider-account"], **env)  # past the refusal, to its other checks
    assert "warning: --share-provider-account: devnet account 1 is the provider's" in told.stderr
    assert "Refused" not in told.stderr, told.stderr


def test_an_llm_auditor_probes_its_endpoint(devnet: Deployment, tmp_path: Path, not_an_llm: str) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    for url in (dead, not_an_llm):
        res = run_cli(
            ["auditor", "run", "--tier", "llm", "--once"],
            **_env(
                devnet,
                tmp_path,
                TRUSTNODE_CHAIN__ACCOUNT_INDEX="16",
                TRUSTNODE_LLM__BASE_URL=url,
                TRUSTNODE_LLM__MAX_RETRIES="0",
            ),
        )
        assert res.returncode == 1, res.stdout
        assert "the LLM judge's endpoint failed the start-up probe" in res.stderr
        assert "TRUSTNODE_LLM__BASE_URL" in res.stderr
    missing = run_cli(
        ["auditor", "run", "--tier", "llm"], **_env(devnet, tmp_path, TRUSTNODE_CHAIN__ACCOUNT_INDEX="16")
    )
    assert missing.returncode == 1 and "needs TRUSTNODE_LLM__BASE_URL" in missing.stderr


def test_api_refuses_a_broken_llm_decomposer_unless_told_to_fall_back(
    fresh_devnet: Deployment, tmp_path: Path
) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    env = _env(
        fresh_devnet,
        tmp_path,
        TRUSTNODE_DECOMPOSER__MODE="llm-single",
        TRUSTNODE_DECOMPOSER__LLM__BASE_URL=dead,
        TRUSTNODE_DECOMPOSER__LLM__MAX_RETRIES="0",
        TRUSTNODE_API__API_KEYS='["k"]',
    )
    port = str(free_port())
    refused = run_cli(["api", "serve", "--port", port], **env)
    assert refused.returncode == 1
    assert "the llm-single decomposer cannot run" in refused.stderr
    assert "TRUSTNODE_DECOMPOSER__OFFLINE_FALLBACK" in refused.stderr

    # The provider's account (1) also registered as an auditor: said loudly at start-up.
    owner = Protocol(ChainClient.connect(fresh_devnet.rpc_url, dev_account(0)), fresh_devnet.contracts)
    provider = owner.as_signer(ChainClient.connect(fresh_devnet.rpc_url, dev_account(1)))
    provider.register(int(Tier.COMPUTER), 1, b"\x01" * 32)

    proc = subprocess.Popen(
        [sys.executable, "-m", "trustnode.cli.main", "api", "serve", "--port", port],
        env=clean_env(**env, TRUSTNODE_DECOMPOSER__OFFLINE_FALLBACK="true"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        out = ""
        assert proc.stdout is not None
        while "trustnode API on" not in out and time.monotonic() < deadline and proc.poll() is None:
            out += proc.stdout.readline()
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "trustnode API on" in out, out + err
    assert "decomposer: offline rules, because the llm-single decomposer cannot run" in out
    assert f"the provider's account {dev_account(1).address} is also a registered auditor" in err


def test_query_of_a_cancelled_session_exits_non_zero_with_its_status(
    fresh_devnet: Deployment, tmp_path: Path
) -> None:
    """No auditor is registered: the draw cancels the session."""
    owner = Protocol(ChainClient.connect(fresh_devnet.rpc_url, dev_account(0)), fresh_devnet.contracts)
    provider = owner.as_signer(ChainClient.connect(fresh_devnet.rpc_url, dev_account(1)))
    params = owner.params()
    tiers = [int(Tier.COMPUTER), int(Tier.HUMAN)]
    fee = fee_for(params, tiers)
    owner.transfer(provider.address, fee)
    sid = provider.open_session(os.urandom(32), tiers, [1, 1], fee)
    provider.client.mine(provider.blocks_until_drawable(sid) + 1)
    provider.draw_all(sid)
    assert provider.session(sid).status.name == "CANCELLED"

    res = run_cli(["query", str(sid)], **_env(fresh_devnet, tmp_path))
    assert res.returncode == 2, res.stdout + res.stderr
    assert f"session {sid} cancelled, no verdict: " in res.stderr
    assert "not enough eligible auditors of tier computer" in res.stderr
    assert "None" not in res.stdout + res.stderr and "PENDING" not in res.stdout + res.stderr
    assert "TRUST (refunded)" in res.stdout
    as_json = run_cli(["query", str(sid), "--json"], **_env(fresh_devnet, tmp_path))
    assert as_json.returncode == 2
    outcome = json.loads(as_json.stdout)["outcome"]
    assert outcome["state"] == "cancelled" and outcome["verdict"] is None
    assert "not enough eligible auditors" in outcome["reason"]
    assert {s["tier"] for s in outcome["segments"]} == {"computer", "human"}

    # An auditor given the provider's key itself (not the devnet's index) is refused too: it opened a session.
    key = "0x" + bytes(dev_account(1).key).hex()
    res = run_cli(
        ["auditor", "run", "--tier", "computer", "--once"],
        **_env(fresh_devnet, tmp_path / "auditor", TRUSTNODE_CHAIN__PRIVATE_KEY=key),
    )
    assert res.returncode == 1, res.stdout + res.stderr
    assert f"account {provider.address} opened 1 session(s) on this chain as a provider" in res.stderr


def test_query_of_a_trace_whose_chain_was_reset_says_so(fresh_devnet: Deployment, tmp_path: Path) -> None:
    """Issue 13 item 7 on the CLI: a trace's link names (chain id, contract, root); `query tr_...`
    shows its session only while all three hold, and says the chain was reset otherwise."""
    owner = Protocol(ChainClient.connect(fresh_devnet.rpc_url, dev_account(0)), fresh_devnet.contracts)
    provider = owner.as_signer(ChainClient.connect(fresh_devnet.rpc_url, dev_account(1)))
    tiers = [int(Tier.COMPUTER)]
    fee = fee_for(owner.params(), tiers)
    owner.transfer(provider.address, fee)
    root = os.urandom(32)
    sid = provider.open_session(root, tiers, [1], fee)
    contract = fresh_devnet.contracts["AuditSessions"]
    jobs = JobQueue(tmp_path / "provider" / "jobs.db")

    def linked(merkle_root: bytes, chain_contract: str = contract) -> str:
        job, _ = jobs.submit(TraceInput(problem="p", thinking=f"t {merkle_root.hex()}", output="o"), "key:t")
        job.session_id = sid
        job.chain = ChainBinding(
            chain_id=31337, contract=chain_contract, merkle_root="0x" + merkle_root.hex()
        )
        jobs.save(job)
        return job.id

    env = _env(fresh_devnet, tmp_path)
    same = run_cli(["query", linked(root), "--json"], **env)
    assert same.returncode in (0, 2), same.stderr
    assert json.loads(same.stdout)["outcome"]["session_id"] == sid

    reset = run_cli(["query", linked(os.urandom(32))], **env)
    assert reset.returncode == 1 and "the chain was reset" in reset.stderr, reset.stdout + reset.stderr
    assert reset.stdout == "", "nothing of the other session is shown"
    moved = run_cli(["query", linked(root, "0x" + "77" * 20)], **env)
    assert moved.returncode == 1 and "redeployed" in moved.stderr, moved.stderr


def _serve_until_up(env: dict[str, str], *args: str) -> tuple[str, str]:
    """Start `api serve`, wait for its banner, stop it; (stdout, stderr)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "trustnode.cli.main", "api", "serve", "--port", str(free_port()), *args],
        env=clean_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out = ""
    try:
        deadline = time.monotonic() + 60
        assert proc.stdout is not None
        while "trustnode API on" not in out and time.monotonic() < deadline and proc.poll() is None:
            out += proc.stdout.readline()
    finally:
        proc.terminate()
        rest, err = proc.communicate(timeout=30)
    return out + rest, err


def test_api_refuses_open_spending_and_says_so_when_allowed(tmp_path: Path) -> None:
    env = {"TRUSTNODE_DATA_DIR": str(tmp_path)}
    refused = run_cli(["api", "serve", "--port", str(free_port())], **env)
    assert refused.returncode == 1
    assert "the API cannot start as configured" in refused.stderr and "nobody can submit" in refused.stderr
    out, err = _serve_until_up({**env, "TRUSTNODE_API__ACCEPT_ANY_SIGNER": "true"})
    assert "trustnode API on" in out
    assert "ANYONE who signs a request can submit traces and spend" in err
    # A page-only node (a human auditor's audit page) runs no pipeline and spends nothing.
    out, _ = _serve_until_up(env, "--no-worker")
    assert "(worker: off)" in out
