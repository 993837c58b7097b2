"""`trustnode devnet up|status|down` as a user runs it: real anvil, real CLI processes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import free_port
from trustnode.chain import devnet
from trustnode.chain.deployment import Deployment, DeploymentError

pytestmark = pytest.mark.chain


def run_cli(args: list[str], data_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "TRUSTNODE_DATA_DIR": str(data_dir), **env}
    return subprocess.run(
        [sys.executable, "-m", "trustnode.cli.main", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
        check=False,
    )


def test_up_status_down_up_again(tmp_path: Path) -> None:
    port = str(free_port())
    env = {"TRUSTNODE_DEVNET__PORT": port}
    try:
        first = run_cli(["devnet", "up"], tmp_path, **env)
        assert first.returncode == 0, first.stderr
        status = run_cli(["devnet", "status", "--json"], tmp_path, **env)
        assert status.returncode == 0, status.stderr
        info = json.loads(status.stdout)
        assert info["chain_id"] == 31337
        assert info["rpc_url"] == f"http://127.0.0.1:{port}"
        token = info["contracts"]["TrustToken"]
        assert token.startswith("0x") and len(token) == 42

        # A second `up` on a running devnet is not an error and keeps the same chain.
        again = run_cli(["devnet", "up", "--json"], tmp_path, **env)
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["contracts"]["TrustToken"] == token
        assert (
            json.loads(again.stdout)["anvil_pid"]
            == json.loads((tmp_path / "devnet" / "deployment.json").read_text())["anvil_pid"]
        )

        down = run_cli(["devnet", "down"], tmp_path, **env)
        assert down.returncode == 0 and "stopped" in down.stdout
        gone = run_cli(["devnet", "status", "--json"], tmp_path, **env)
        assert gone.returncode == 1
        assert "no deployment file" in gone.stderr and "devnet up" in gone.stderr

        back = run_cli(["devnet", "up"], tmp_path, **env)
        assert back.returncode == 0, back.stderr
        assert run_cli(["devnet", "status", "--json"], tmp_path, **env).returncode == 0
    finally:
        run_cli(["devnet", "down"], tmp_path, **env)


def test_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        res = run_cli(["devnet", "up", "--port", str(port)], tmp_path)
    assert res.returncode == 1
    assert f"port {port}" in res.stderr and "already in use" in res.stderr


def test_anvil_not_installed_names_the_install_command(tmp_path: Path) -> None:
    res = run_cli(
        ["devnet", "up", "--port", str(free_port())],
        tmp_path,
        TRUSTNODE_ANVIL="/nonexistent/anvil",
        PATH="/usr/bin:/bin",
        TRUSTNODE_REPO=str(tmp_path),
    )
    assert res.returncode == 1
    assert "anvil is not installed" in res.stderr and "npm ci" in res.stderr


def test_deployment_pointing_at_dead_chain(tmp_path: Path) -> None:
    dep_file = tmp_path / "devnet" / "deployment.json"
    Deployment(
        chain_id=31337,
        rpc_url=f"http://127.0.0.1:{free_port()}",
        contracts={"TrustToken": "0x" + "11" * 20},
        deploy_block=0,
        deployer="0x" + "22" * 20,
    ).save(dep_file)
    with pytest.raises(DeploymentError, match="does not answer"):
        devnet.status(dep_file)
    res = run_cli(["devnet", "status"], tmp_path)
    assert res.returncode == 1 and "the chain is down" in res.stderr


def test_malformed_deployment_file(tmp_path: Path) -> None:
    dep_file = tmp_path / "deployment.json"
    dep_file.write_text("{not json")
    with pytest.raises(DeploymentError, match="malformed"):
        Deployment.load(dep_file)


def test_deployment_on_a_restarted_chain_is_detected(tmp_path: Path) -> None:
    """Contracts recorded in the file but absent from the live chain are reported."""
    dep_file = tmp_path / "devnet" / "deployment.json"
    dep = devnet.up(dep_file, port=free_port())
    try:
        stale = dep.model_copy(update={"contracts": {"TrustToken": "0x" + "33" * 20}})
        stale.save(dep_file)
        with pytest.raises(DeploymentError, match="contracts .* are not there"):
            devnet.status(dep_file)
        # `up` repairs it: the recorded anvil is replaced by a fresh deployment.
        fixed = devnet.up(dep_file, port=free_port())
        assert devnet.status(dep_file).contracts == fixed.contracts
    finally:
        devnet.down(dep_file)
