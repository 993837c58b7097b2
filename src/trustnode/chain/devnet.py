"""A local anvil chain with the protocol deployed: `trustnode devnet up|status|fund|down`.

`up` is idempotent: on a running devnet whose contracts are still there it returns the
existing deployment instead of starting a second chain. `ensure` is what the command runs:
`up`, then the asked protocol parameters applied, then the role accounts funded.

Account roles (anvil's well-known dev keys, `chain.account_index`): 0 deploys and owns the
contracts, 1 is the provider's (the API node pays for sessions from it), 2..19 are auditors, one
account per auditor, and 20 is the devnet's canary operator (authorized at `up`, never a provider
or an auditor: a node runs the operator with `TRUSTNODE_CHAIN__ACCOUNT_INDEX=20`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, Field
from web3 import Web3

from trustnode.chain.accounts import DEVNET_ACCOUNTS, dev_account
from trustnode.chain.client import ChainClient, rpc_alive, wait_for_rpc
from trustnode.chain.deploy import checked_operators, deploy_protocol
from trustnode.chain.deployment import (
    Deployment,
    DeploymentError,
    apply_appeal_params,
    apply_canary_operators,
    apply_params,
    session_params,
)
from trustnode.chain.errors import ChainError, redact_url
from trustnode.chain.paths import INSTALL_HINT, find_tool
from trustnode.chain.protocol import DEVNET_EPOCH_BLOCKS, DEVNET_SESSION_PARAMS, Protocol, SessionParams
from trustnode.config import ProtocolSettings

DEPLOYER_ACCOUNT = 0
PROVIDER_ACCOUNT = 1
FIRST_AUDITOR_ACCOUNT = 2
#: The devnet's canary operator: the last dev account, after every auditor's.
CANARY_OPERATOR_ACCOUNT = DEVNET_ACCOUNTS - 1
ETH = 10**18
#: Gas money: an account below `MIN_ETH` is topped up to `FUND_ETH` (anvil_setBalance).
MIN_ETH = 10 * ETH
FUND_ETH = 1_000 * ETH


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
    if not block_time_s and not automine:
        raise DevnetError("a devnet without automine needs a block time, or it never mines a block")
    anvil = find_tool("anvil")
    if anvil is None:
        raise DevnetError(f"anvil is not installed: {INSTALL_HINT} (it installs npm @foundry-rs/anvil)")
    if port_in_use(port):
        raise DevnetError(
            f"port {port} on 127.0.0.1 is already in use by another program: "
            "stop it or choose another port with --port"
        )
    cmd = [str(anvil), "--host", "127.0.0.1", "--port", str(port), "--chain-id", str(chain_id)]
    cmd += ["--accounts", str(DEVNET_ACCOUNTS), "--balance", "100000", "--gas-limit", "60000000"]
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
    if proc.poll() is not None:  # another program took the port between the check and anvil's bind
        tail = log_path.read_text(errors="replace")[-2000:]
        raise DevnetError(
            f"anvil exited at start (code {proc.returncode}); {rpc} answers for another program\n{tail}"
        )
    return proc.pid


def _diagnosis(rpc: str, pid: int, log_path: Path) -> str:
    """What a failed set-up leaves to read: is our anvil alive, its height, its pool, its log."""
    try:
        alive = os.waitpid(pid, os.WNOHANG)[0] == 0
    except ChildProcessError:
        alive = False
    lines = [f"anvil pid {pid} {'alive' if alive else 'exited'}"]
    try:
        w3 = Web3(Web3.HTTPProvider(rpc, request_kwargs={"timeout": 3}))
        lines.append(f"block {w3.eth.block_number}")
        lines.append(f"txpool {w3.provider.make_request('txpool_status', [])!r}")  # type: ignore[arg-type]
    except Exception as exc:  # noqa: BLE001 - a diagnosis never raises
        lines.append(f"rpc {type(exc).__name__}: {exc}")
    with contextlib.suppress(OSError):
        lines.append("anvil.log tail:\n" + log_path.read_text(errors="replace")[-1500:])
    return "\n".join(lines)


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
    params: SessionParams = DEVNET_SESSION_PARAMS,
    epoch_blocks: int = DEVNET_EPOCH_BLOCKS,
    canary_operators: Sequence[str] = (),
) -> Deployment:
    """Start (or reuse) the devnet and deploy the protocol (`params`, `epoch_blocks` for a new one).

    A new deployment authorizes the devnet's canary operator (dev account 20) and
    `canary_operators`; the deployment record lists them."""
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
        client = ChainClient.connect(rpc, dev_account(DEPLOYER_ACCOUNT))
        start_block = client.block_number()
        with mining_each_transaction(client, None if automine else block_time_s):
            operators = checked_operators([canary_operator_address(), *canary_operators])
            contracts = deploy_protocol(
                client,
                owner=client.address,
                session_params=params,
                epoch_blocks=epoch_blocks,
                canary_operators=operators,
            )
        dep = Deployment(
            chain_id=client.chain_id,
            rpc_url=rpc,
            contracts=contracts,
            deploy_block=start_block,
            deployer=client.address,
            anvil_pid=pid,
            port=port,
            canary_operators=operators,
        )
        dep.save(deployment_file)
        return dep
    except ChainError as exc:
        detail = _diagnosis(rpc, pid, deployment_file.parent / "anvil.log")
        stop_pid(pid)
        raise DevnetError(f"the devnet's deployment failed: {exc}\n{detail}") from exc
    except Exception:
        stop_pid(pid)
        raise


@contextlib.contextmanager
def mining_each_transaction(client: ChainClient, block_time_s: float | None) -> Iterator[None]:
    """On an interval-mined devnet, mine each transaction at once for a while (the set-up's
    dozens of transactions would otherwise wait a block each), then back to interval mining.

    anvil restores interval mining in whole seconds only; other block times keep waiting.
    """
    if not block_time_s or not float(block_time_s).is_integer():
        yield
        return
    client.w3.provider.make_request("evm_setAutomine", [True])  # type: ignore[arg-type]
    try:
        yield
    finally:
        client.w3.provider.make_request("evm_setIntervalMining", [int(block_time_s)])  # type: ignore[arg-type]


def status(deployment_file: Path) -> Deployment:
    """The live deployment, or a DeploymentError saying what is wrong."""
    dep = Deployment.load(deployment_file, check_alive=True)
    if not _contracts_present(dep):
        raise DeploymentError(
            f"the chain at {redact_url(dep.rpc_url)} answers but the contracts of {deployment_file} are not there "
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


class Funded(BaseModel):
    """What `fund` did for one address."""

    address: str
    tokens_added: int = Field(description="Token wei transferred (0: it already held the target).")
    eth_set: bool = Field(description="Its ETH was topped up for gas.")


class DevnetReport(BaseModel):
    """What `ensure` found and did."""

    deployment: Deployment
    created: bool
    params_changed: dict[str, tuple[str, str]] = Field(default_factory=dict)
    funded: list[Funded] = Field(default_factory=list)


def deployer(dep: Deployment) -> Protocol:
    """The contracts seen by the deployer (dev account 0, which holds the token supply)."""
    return Protocol(ChainClient.connect(dep.rpc_url, dev_account(DEPLOYER_ACCOUNT)), dep.contracts)


def fund(dep: Deployment, addresses: list[str], tokens: int) -> list[Funded]:
    """Top `addresses` up to `tokens` token wei each (from the deployer) and give them gas ETH.

    Devnet only: the ETH comes from anvil_setBalance.
    """
    owner = deployer(dep)
    w3 = owner.client.w3
    out: list[Funded] = []
    for raw in addresses:
        address = Web3.to_checksum_address(raw)
        eth_set = int(w3.eth.get_balance(address)) < MIN_ETH
        if eth_set:
            w3.provider.make_request("anvil_setBalance", [address, hex(FUND_ETH)])  # type: ignore[arg-type]
        have = owner.balance_of(address)
        added = max(0, tokens - have)
        if added:
            owner.transfer(address, added)
        out.append(Funded(address=address, tokens_added=added, eth_set=eth_set))
    return out


def canary_operator_address() -> str:
    """The devnet's canary operator (dev account 20), authorized by `up`."""
    return str(dev_account(CANARY_OPERATOR_ACCOUNT).address)


def role_accounts(auditors: int) -> tuple[str, list[str]]:
    """(provider address, auditor addresses) of the dev accounts `devnet up` funds."""
    most = CANARY_OPERATOR_ACCOUNT - FIRST_AUDITOR_ACCOUNT
    if not 0 <= auditors <= most:
        raise DevnetError(
            f"the devnet has {DEVNET_ACCOUNTS} dev accounts: at most {most} auditors (accounts "
            f"2..{CANARY_OPERATOR_ACCOUNT - 1}; {CANARY_OPERATOR_ACCOUNT} is the canary operator)"
        )
    provider = dev_account(PROVIDER_ACCOUNT).address
    return provider, [
        dev_account(i).address for i in range(FIRST_AUDITOR_ACCOUNT, FIRST_AUDITOR_ACCOUNT + auditors)
    ]


def ensure(
    deployment_file: Path,
    protocol: ProtocolSettings,
    asked: set[str],
    *,
    port: int = 8545,
    block_time_s: float | None = 1.0,
    chain_id: int = 31337,
    automine: bool = True,
    auditors: int = 8,
    auditor_tokens: int = 10_000 * 10**18,
    provider_tokens: int = 1_000_000 * 10**18,
    epoch_blocks: int | None = None,
    appeals: Mapping[str, int] | None = None,
) -> DevnetReport:
    """A devnet that runs `protocol` and has its role accounts funded.

    A new chain starts with every value of `protocol` and `appeals` (appeal and canary fields of
    `SessionParams`); a running one gets the `asked` fields and `appeals` applied by the deployer
    (it owns the contracts), so a flag is never silently ignored.
    """
    provider, auditor_addresses = role_accounts(auditors)
    try:
        before: str | None = Deployment.load(deployment_file, check_alive=False).created_at
    except DeploymentError:
        before = None
    dep = up(
        deployment_file,
        port=port,
        block_time_s=block_time_s,
        chain_id=chain_id,
        automine=automine,
        params=SessionParams.model_validate({**session_params(protocol).model_dump(), **(appeals or {})}),
        epoch_blocks=epoch_blocks or DEVNET_EPOCH_BLOCKS,
        canary_operators=protocol.canary_operators,
    )
    created = dep.created_at != before
    owner = deployer(dep)
    if epoch_blocks is not None and owner.epoch_blocks != epoch_blocks:
        raise DevnetError(
            f"the running devnet's staking epochs are {owner.epoch_blocks} blocks, {epoch_blocks} asked: "
            "the epoch length is fixed when Staking is deployed; run `trustnode devnet down` and `up` again"
        )
    with mining_each_transaction(owner.client, None if automine else block_time_s):
        changed = (
            {}
            if created
            else {**apply_params(owner, protocol, asked), **apply_appeal_params(owner, appeals or {})}
        )
        added = [] if created else apply_canary_operators(owner, protocol.canary_operators)
        if added:
            dep = dep.model_copy(update={"canary_operators": [*dep.canary_operators, *added]})
            dep.save(deployment_file)
            changed["canary_operators"] = ("", ",".join(added))
        funded = fund(dep, [provider], provider_tokens) + fund(dep, auditor_addresses, auditor_tokens)
    return DevnetReport(deployment=dep, created=created, params_changed=changed, funded=funded)
