"""A local anvil chain with the protocol deployed: `trustnode devnet up|status|down`.

`up` is idempotent: on a running devnet whose contracts are still there it returns the
existing deployment instead of starting a second chain.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from web3 import Web3

from trustnode.chain.accounts import dev_account
from trustnode.chain.client import ChainClient, rpc_alive, wait_for_rpc
from trustnode.chain.deploy import deploy_protocol
from trustnode.chain.deployment import Deployment, DeploymentError
from trustnode.chain.errors import ChainError
from trustnode.chain.paths import INSTALL_HINT, find_tool


class DevnetError(ChainError):
    pass


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


def _contracts_present(dep: Deployment) -> bool:
    w3 = Web3(Web3.HTTPProvider(dep.rpc_url, request_kwargs={"timeout": 3}))
    try:
        if int(w3.eth.chain_id) != dep.chain_id:
            return False
        return all(len(w3.eth.get_code(Web3.to_checksum_address(a))) > 0 for a in dep.contracts.values())
    except Exception:  # noqa: BLE001 - any failure means the deployment is not usable
        return False


def start_anvil(
    port: int,
    log_path: Path,
    *,
    block_time_s: float | None = None,
    chain_id: int = 31337,
    automine: bool = True,
) -> int:
    """Start anvil on 127.0.0.1:port in its own process group; returns its pid."""
    anvil = find_tool("anvil")
    if anvil is None:
        raise DevnetError(f"anvil is not installed: {INSTALL_HINT} (it installs npm @foundry-rs/anvil)")
    if port_in_use(port):
        raise DevnetError(
            f"port {port} on 127.0.0.1 is already in use by another program: "
            "stop it or choose another port with --port"
        )
    cmd = [str(anvil), "--host", "127.0.0.1", "--port", str(port), "--chain-id", str(chain_id)]
    cmd += ["--accounts", "20", "--balance", "100000", "--gas-limit", "60000000"]
    if block_time_s:
        # Mixed mining: transactions still mine at once, and blocks also advance with time,
        # so block-counted phases (randomness lookahead, deadlines) pass on an idle chain.
        cmd += ["--block-time", str(block_time_s)]
        if automine:
            cmd.append("--mixed-mining")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    rpc = f"http://127.0.0.1:{port}"
    try:
        wait_for_rpc(rpc, timeout_s=30)
    except ChainError as exc:
        stop_pid(proc.pid)
        tail = log_path.read_text(errors="replace")[-2000:]
        raise DevnetError(f"anvil did not come up on {rpc}: {exc}\n{tail}") from exc
    return proc.pid


def stop_pid(pid: int, timeout_s: float = 5.0) -> None:
    """Terminate a process group politely, then forcibly."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    return
            except ChildProcessError:
                pass
            time.sleep(0.05)


def up(
    deployment_file: Path,
    *,
    port: int = 8545,
    block_time_s: float | None = 1.0,
    chain_id: int = 31337,
    automine: bool = True,
) -> Deployment:
    """Start (or reuse) the devnet and deploy the protocol."""
    if deployment_file.is_file():
        try:
            existing = Deployment.load(deployment_file, check_alive=False)
        except DeploymentError:
            existing = None
        if existing is not None and rpc_alive(existing.rpc_url) and _contracts_present(existing):
            return existing
        if existing is not None and existing.anvil_pid:
            stop_pid(existing.anvil_pid)
        deployment_file.unlink()
    pid = start_anvil(
        port,
        deployment_file.parent / "anvil.log",
        block_time_s=block_time_s,
        chain_id=chain_id,
        automine=automine,
    )
    rpc = f"http://127.0.0.1:{port}"
    try:
        client = ChainClient.connect(rpc, dev_account(0))
        start_block = client.block_number()
        contracts = deploy_protocol(client, owner=client.address)
        dep = Deployment(
            chain_id=client.chain_id,
            rpc_url=rpc,
            contracts=contracts,
            deploy_block=start_block,
            deployer=client.address,
            anvil_pid=pid,
            port=port,
        )
        dep.save(deployment_file)
        return dep
    except Exception:
        stop_pid(pid)
        raise


def status(deployment_file: Path) -> Deployment:
    """The live deployment, or a DeploymentError saying what is wrong."""
    dep = Deployment.load(deployment_file, check_alive=True)
    if not _contracts_present(dep):
        raise DeploymentError(
            f"the chain at {dep.rpc_url} answers but the contracts of {deployment_file} are not there "
            "(a different or restarted chain): run `trustnode devnet down && trustnode devnet up`"
        )
    return dep


def down(deployment_file: Path) -> bool:
    """Stop the devnet started by `up`; returns False when none was recorded."""
    if not deployment_file.is_file():
        return False
    try:
        dep = Deployment.load(deployment_file, check_alive=False)
    except DeploymentError:
        deployment_file.unlink()
        return False
    if dep.anvil_pid:
        stop_pid(dep.anvil_pid)
    deployment_file.unlink()
    return True
