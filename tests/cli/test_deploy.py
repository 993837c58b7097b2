"""`trustnode deploy` against a running anvil (what the compose `deploy` service runs)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import free_port
from trustnode.chain import devnet
from trustnode.chain.accounts import dev_account
from trustnode.chain.client import ChainClient
from trustnode.chain.deployment import Deployment
from trustnode.chain.protocol import Protocol
from trustnode.cli.main import app

pytestmark = pytest.mark.chain


@pytest.fixture
def anvil(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    pid = devnet.start_anvil(port, tmp_path / "anvil.log")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        devnet.stop_pid(pid)


def test_deploy_once_then_reuse_and_fund(anvil: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dep_file = tmp_path / "shared" / "deployment.json"
    monkeypatch.setenv("TRUSTNODE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TRUSTNODE_CHAIN__DEPLOYMENT_FILE", str(dep_file))
    monkeypatch.setenv("TRUSTNODE_CHAIN__RPC_URL", anvil)
    auditor = dev_account(4).address
    args = [
        "deploy",
        "--fund",
        auditor,
        "--amount",
        "2000",
        "--seats-per-tier",
        "1,1,1",
        "--seat-cap",
        "64",
        "--json",
    ]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    dep = Deployment.load(dep_file)
    assert dep.rpc_url == anvil and set(dep.contracts) >= {"AuditSessions", "TrustToken", "Staking"}
    assert json.loads(first.stdout[first.stdout.index("{") :])["contracts"] == dep.contracts
    proto = Protocol(ChainClient.connect(anvil, dev_account(0)), dep.contracts)
    assert proto.balance_of(auditor) == 2000 * 10**18
    params = proto.params()
    assert params.seats_per_tier == (1, 1, 1) and params.seat_cap == 64
    # A restarted deploy service re-deploys nothing and only tops up.
    again = CliRunner().invoke(app, ["deploy", "--fund", auditor, "--amount", "3000"])
    assert again.exit_code == 0, again.output
    assert "already deployed" in again.output
    assert Deployment.load(dep_file).contracts == dep.contracts
    assert proto.balance_of(auditor) == 3000 * 10**18


def test_deploy_errors_are_clear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRUSTNODE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("TRUSTNODE_CHAIN__RPC_URL", raising=False)
    r = CliRunner().invoke(app, ["deploy"])
    assert r.exit_code == 1 and "--rpc-url" in r.output
    r = CliRunner().invoke(app, ["deploy", "--rpc-url", "http://127.0.0.1:1", "--fund", "0x1234"])
    assert r.exit_code == 1 and "not an address: 0x1234" in r.output
    r = CliRunner().invoke(app, ["deploy", "--rpc-url", "http://127.0.0.1:1", "--seats-per-tier", "1,2"])
    assert r.exit_code == 1 and "three numbers" in r.output
    r = CliRunner().invoke(app, ["deploy", "--rpc-url", f"http://127.0.0.1:{free_port()}", "--wait", "0.5"])
    assert r.exit_code == 1 and "did not answer" in r.output


def test_changed_parameters_are_applied_by_the_owner_or_refused(
    anvil: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dep_file = tmp_path / "shared" / "deployment.json"
    monkeypatch.setenv("TRUSTNODE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TRUSTNODE_CHAIN__DEPLOYMENT_FILE", str(dep_file))
    monkeypatch.setenv("TRUSTNODE_CHAIN__RPC_URL", anvil)
    first = CliRunner().invoke(app, ["deploy", "--seats-per-tier", "1,1,1", "--seat-cap", "64"])
    assert first.exit_code == 0, first.output
    proto = Protocol(ChainClient.connect(anvil, dev_account(0)), Deployment.load(dep_file).contracts)
    # The owner (account 0) changes what it is asked to change, and says so.
    owner = CliRunner().invoke(app, ["deploy", "--seats-per-tier", "2,1,1", "--reward", "2.5"])
    assert owner.exit_code == 0, owner.output
    assert "changed seats_per_tier: 1,1,1 -> 2,1,1" in owner.output
    assert "changed reward: 6 TRUST -> 2.5 TRUST" in owner.output
    params = proto.params()
    assert params.seats_per_tier == (2, 1, 1) and params.seat_cap == 64 and params.reward == 25 * 10**17
    # Anyone else is refused loudly, naming the owner; nothing changes.
    monkeypatch.setenv("TRUSTNODE_CHAIN__ACCOUNT_INDEX", "3")
    other = CliRunner().invoke(app, ["deploy", "--seat-cap", "8"])
    assert other.exit_code == 1
    assert "seat_cap is 64 on chain, 8 asked" in other.output and dev_account(0).address in other.output
    assert proto.params().seat_cap == 64
    # Asking for what the chain already runs is fine for anyone.
    same = CliRunner().invoke(app, ["deploy", "--seat-cap", "64"])
    assert same.exit_code == 0, same.output
