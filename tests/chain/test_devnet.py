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
from trustnode.chain.errors import ChainError

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


def test_a_failed_deployment_says_what_anvil_was_doing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A set-up that fails inside the chain (CI once saw a deployment transaction never mined)
    reports anvil's state, pool and log, and leaves no anvil running."""

    def stuck(*_args: object, **_kwargs: object) -> None:
        raise ChainError("no receipt for 0xabc after 60.0s")

    monkeypatch.setattr(devnet, "deploy_protocol", stuck)
    dep_file = tmp_path / "devnet" / "deployment.json"
    with pytest.raises(devnet.DevnetError) as err:
        devnet.up(dep_file, port=free_port())
    text = str(err.value)
    assert "no receipt for 0xabc" in text and "alive" in text and "block 0" in text, text
    assert "txpool" in text and "anvil.log tail" in text, text
    assert not dep_file.exists()
    pid = int(text.split("anvil pid ", 1)[1].split()[0])
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


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


def _params(dep_file: Path) -> tuple[tuple[int, int, int], int, int, int]:
    from trustnode.chain.devnet import deployer

    p = deployer(Deployment.load(dep_file)).params()
    return p.seats_per_tier, p.seat_cap, p.beta_bps, p.commit_blocks


def test_default_devnet_funds_the_roles_and_applies_asked_parameters(tmp_path: Path) -> None:
    """`devnet up` runs the configured parameters, funds the provider and auditors, and a
    changed parameter on a running devnet is applied (never "already deployed" and ignored)."""
    from eth_account import Account

    from trustnode.chain.accounts import dev_account
    from trustnode.chain.devnet import deployer

    port = str(free_port())
    env = {"TRUSTNODE_DEVNET__PORT": port}
    dep_file = tmp_path / "devnet" / "deployment.json"
    try:
        first = run_cli(["devnet", "up", "--auditors", "4", "--json"], tmp_path, **env)
        assert first.returncode == 0, first.stderr
        out = json.loads(first.stdout)
        assert out["created"] is True and out["params_changed"] == {}
        # The README's network: 2 computer, 1 LLM and 1 human auditor can fill every seat.
        assert _params(dep_file) == ((2, 1, 1), 32, 9000, 120)
        owner = deployer(Deployment.load(dep_file))
        w3 = owner.client.w3
        assert owner.balance_of(dev_account(1).address) == 1_000_000 * 10**18
        for i in range(2, 6):
            assert owner.balance_of(dev_account(i).address) == 10_000 * 10**18
            assert w3.eth.get_balance(dev_account(i).address) > 0
        assert owner.balance_of(dev_account(6).address) == 0, "--auditors 4 funds accounts 2..5"

        again = run_cli(
            ["devnet", "up", "--seats-per-tier", "1,3,3", "--commit-blocks", "60"], tmp_path, **env
        )
        assert again.returncode == 0, again.stderr
        assert "already running" in again.stdout
        assert "changed seats_per_tier: 2,1,1 -> 1,3,3" in again.stdout
        assert "changed commit_blocks: 120 -> 60" in again.stdout
        assert _params(dep_file) == ((1, 3, 3), 32, 9000, 60)

        # A value from the configuration is asked for too; values nobody asked for stay.
        conf = run_cli(["devnet", "up"], tmp_path, **env, TRUSTNODE_PROTOCOL__BETA_BPS="8000")
        assert conf.returncode == 0, conf.stderr
        assert "changed beta_bps: 9000 -> 8000" in conf.stdout
        assert _params(dep_file) == ((1, 3, 3), 32, 8000, 60)
        same = run_cli(["devnet", "up", "--seats-per-tier", "1,3,3"], tmp_path, **env)
        assert same.returncode == 0 and "changed" not in same.stdout

        bad = run_cli(["devnet", "up", "--seats-per-tier", "0,1,1"], tmp_path, **env)
        assert bad.returncode == 1 and "1..31" in bad.stderr

        stranger = Account.create().address
        funded = run_cli(["devnet", "fund", "--address", stranger, "--amount", "250.5"], tmp_path, **env)
        assert funded.returncode == 0, funded.stderr
        assert "gas ETH topped up" in funded.stdout and "+250.5 TRUST" in funded.stdout
        assert owner.balance_of(stranger) == 2505 * 10**17 and w3.eth.get_balance(stranger) > 0
    finally:
        run_cli(["devnet", "down"], tmp_path, **env)


def test_devnet_runs_the_asked_appeal_and_canary_parameters(tmp_path: Path) -> None:
    """The issue-15 flags reach the AppealSettlement on a new devnet and are applied to a running
    one; parameters under which spoiling a panel and appealing it pays are refused before anything."""
    from trustnode.chain.devnet import deployer

    env = {"TRUSTNODE_DEVNET__PORT": str(free_port())}
    dep_file = tmp_path / "devnet" / "deployment.json"
    flags = [
        "--appeal-blocks",
        "40",
        "--max-rounds",
        "2",
        "--appeal-reward-bps",
        "1500",
        "--canary-rate-bps",
        "1000",
    ]
    try:
        first = run_cli(["devnet", "up", "--auditors", "2", "--json", *flags], tmp_path, **env)
        assert first.returncode == 0, first.stderr
        params = json.loads(first.stdout)["params"]
        assert (params["appeal_blocks"], params["max_rounds"], params["appeal_reward_bps"]) == (40, 2, 1500)
        assert params["canary_rate_bps"] == 1000
        assert params["canary_commit_blocks"] == 8  # the devnet's canary commit window
        owner = deployer(Deployment.load(dep_file))
        window = run_cli(["devnet", "up", "--canary-commit-blocks", "12"], tmp_path, **env)
        assert window.returncode == 0, window.stderr
        assert "changed canary_commit_blocks: 8 -> 12" in window.stdout, window.stdout
        assert "committed within 12 blocks of the opening" in window.stdout
        assert owner.params().canary_commit_blocks == 12
        beyond_vrf = run_cli(["devnet", "up", "--canary-commit-blocks", "200"], tmp_path, **env)
        assert beyond_vrf.returncode == 1 and "canary_commit_blocks" in beyond_vrf.stderr
        beyond_epoch = run_cli(["devnet", "up", "--canary-commit-blocks", "13"], tmp_path, **env)
        assert beyond_epoch.returncode == 1, beyond_epoch.stdout
        assert "longer than an epoch (12 blocks)" in beyond_epoch.stderr, beyond_epoch.stderr
        assert owner.params().canary_commit_blocks == 12, "nothing changed"
        assert owner.appeal_params_of(owner.session_count() + 1).appeal_blocks == 40
        again = run_cli(["devnet", "up", "--appeal-blocks", "20"], tmp_path, **env)
        assert again.returncode == 0, again.stderr
        assert (
            "changed appeal_blocks: 40 -> 20" in again.stdout
            and "appeal windows of 20 blocks" in again.stdout
        )
        assert owner.appeal_params_of(owner.session_count() + 1).appeal_blocks == 20
        farming = run_cli(["devnet", "up", "--appeal-reward-bps", "9000"], tmp_path, **env)
        assert farming.returncode == 1 and "would pay" in farming.stderr
        # The same parameters from the configuration ([protocol] / TRUSTNODE_PROTOCOL__*): a
        # configured value is asked for like its option, and an option wins over it.
        configured = {
            **env,
            "TRUSTNODE_PROTOCOL__APPEAL_BLOCKS": "30",
            "TRUSTNODE_PROTOCOL__CANARY_GAMMA": "0.25",
        }
        third = run_cli(["devnet", "up"], tmp_path, **configured)
        assert third.returncode == 0, third.stderr
        assert "changed appeal_blocks: 20 -> 30" in third.stdout
        pinned = owner.appeal_params_of(owner.session_count() + 1)
        assert pinned.appeal_blocks == 30 and pinned.canary_gamma == 10**18 // 4
        flag_wins = run_cli(["devnet", "up", "--appeal-blocks", "25"], tmp_path, **configured)
        assert flag_wins.returncode == 0, flag_wins.stderr
        assert owner.appeal_params_of(owner.session_count() + 1).appeal_blocks == 25
        bad_config = run_cli(["devnet", "up"], tmp_path, **env, TRUSTNODE_PROTOCOL__APPEAL_REWARD_BPS="9000")
        assert bad_config.returncode == 1 and "would pay" in bad_config.stderr
        out_of_range = run_cli(["devnet", "up"], tmp_path, **env, TRUSTNODE_PROTOCOL__MAX_ROUNDS="9")
        assert out_of_range.returncode != 0 and "max_rounds" in out_of_range.stderr
    finally:
        run_cli(["devnet", "down"], tmp_path, **env)


def test_devnet_authorizes_its_canary_operator_and_the_configured_ones(tmp_path: Path) -> None:
    """`devnet up` authorizes dev account 20 as the canary operator (never the provider or an
    auditor) and lists it in the deployment file; `protocol.canary_operators` on a running devnet
    are authorized by the owner and added; a canary refund above 2500 bps is refused."""
    from eth_account import Account

    from trustnode.chain.accounts import dev_account
    from trustnode.chain.devnet import CANARY_OPERATOR_ACCOUNT, deployer

    env = {"TRUSTNODE_DEVNET__PORT": str(free_port())}
    dep_file = tmp_path / "devnet" / "deployment.json"
    try:
        first = run_cli(["devnet", "up", "--auditors", "3"], tmp_path, **env)
        assert first.returncode == 0, first.stderr
        dep = Deployment.load(dep_file)
        operator = dev_account(CANARY_OPERATOR_ACCOUNT).address
        assert CANARY_OPERATOR_ACCOUNT == 20 and dep.canary_operators == [operator]
        assert json.loads(dep_file.read_text())["canary_operators"] == [operator]
        owner = deployer(dep)
        assert owner.is_canary_operator(operator)
        for i in range(0, 20):  # deployer, provider and every auditor account
            assert not owner.is_canary_operator(dev_account(i).address)

        extra = Account.create().address
        again = run_cli(
            ["devnet", "up"], tmp_path, **env, TRUSTNODE_PROTOCOL__CANARY_OPERATORS=f'["{extra}"]'
        )
        assert again.returncode == 0, again.stderr
        assert f"changed canary_operators:  -> {extra}" in again.stdout
        assert owner.is_canary_operator(extra)
        assert Deployment.load(dep_file).canary_operators == [operator, extra]
        same = run_cli(["devnet", "up"], tmp_path, **env, TRUSTNODE_PROTOCOL__CANARY_OPERATORS=f'["{extra}"]')
        assert same.returncode == 0 and "changed" not in same.stdout
        bad = run_cli(["devnet", "up"], tmp_path, **env, TRUSTNODE_PROTOCOL__CANARY_OPERATORS='["0x1234"]')
        assert bad.returncode == 1 and "not a non-zero address" in bad.stderr

        refund = run_cli(["devnet", "up", "--canary-refund-bps", "2501"], tmp_path, **env)
        assert refund.returncode == 1 and "2500" in refund.stderr
        assert owner.appeal_params_of(owner.session_count() + 1).canary_refund_bps <= 2500
    finally:
        run_cli(["devnet", "down"], tmp_path, **env)
