"""`trustnode deploy`: put the protocol on an already running chain (the compose deployment).

`trustnode devnet up` starts its own anvil; a container deployment runs anvil in its own
container, so this command only connects, deploys (once: a deployment file whose contracts
are present on that chain is reused), writes the deployment file every node reads, and
optionally funds accounts with tokens so auditors can stake.
"""

from __future__ import annotations

from pathlib import Path

import typer
from web3 import Web3

from trustnode.chain.accounts import KeyConfigError, load_account
from trustnode.chain.client import ChainClient, wait_for_rpc
from trustnode.chain.deploy import deploy_protocol
from trustnode.chain.deployment import Deployment, DeploymentError
from trustnode.chain.errors import ChainError
from trustnode.chain.protocol import DEVNET_SESSION_PARAMS, Protocol
from trustnode.cli.common import console, errors_as_exit, fail, print_json, settings

TOKEN = 10**18


def _existing(path: Path, client: ChainClient) -> Deployment | None:
    """The deployment in `path` if its contracts are on this chain (so a restart re-deploys nothing)."""
    if not path.is_file():
        return None
    try:
        dep = Deployment.load(path, check_alive=False)
    except DeploymentError:
        return None
    if dep.chain_id != client.chain_id:
        return None
    if all(client.w3.eth.get_code(Web3.to_checksum_address(a)) for a in dep.contracts.values()):
        return dep
    return None


def _seats(text: str) -> tuple[int, int, int]:
    try:
        parts = tuple(int(p) for p in text.split(","))
    except ValueError:
        fail(f"--seats-per-tier must be three integers like 1,1,1, got {text!r}")
    if len(parts) != 3:
        fail(f"--seats-per-tier needs three numbers (computer,llm,human), got {text!r}")
    return parts[0], parts[1], parts[2]


def deploy(
    rpc_url: str = typer.Option(None, "--rpc-url", help="JSON-RPC URL (default: settings chain.rpc_url)."),
    fund: list[str] = typer.Option(
        [], "--fund", help="Address to top up with tokens (repeatable): providers and auditors."
    ),
    amount: int = typer.Option(100_000, "--amount", min=0, help="Tokens each --fund address ends up with."),
    seats_per_tier: str = typer.Option(
        ",".join(map(str, DEVNET_SESSION_PARAMS.seats_per_tier)),
        "--seats-per-tier",
        help="Auditors per segment for computer,llm,human (k_t).",
    ),
    seat_cap: int = typer.Option(
        DEVNET_SESSION_PARAMS.seat_cap, "--seat-cap", min=1, max=64, help="Seats per auditor per session."
    ),
    wait: float = typer.Option(60.0, "--wait", min=0, help="Seconds to wait for the chain to answer."),
    json_out: bool = typer.Option(False, "--json", help="Print the deployment as JSON."),
) -> None:
    """Deploy the contracts to a running chain (once), write the deployment file, fund accounts."""
    s = settings()
    url = rpc_url or s.chain.rpc_url
    if not url:
        fail("give --rpc-url or set TRUSTNODE_CHAIN__RPC_URL")
    bad = [a for a in fund if not Web3.is_address(a)]
    if bad:
        fail(f"not an address: {', '.join(bad)}")
    seats = _seats(seats_per_tier)
    with errors_as_exit(ChainError, KeyConfigError, ValueError):
        chain_id = wait_for_rpc(url, timeout_s=wait)
        account = load_account(s.chain, devnet=chain_id == s.devnet.chain_id)
        client = ChainClient.connect(url, account, tx_timeout_s=s.chain.tx_timeout_s)
        dep = _existing(s.deployment_file, client)
        if dep is None:
            start = client.block_number()
            params = DEVNET_SESSION_PARAMS.model_copy(update={"seats_per_tier": seats, "seat_cap": seat_cap})
            params = type(params).model_validate(params.model_dump())
            contracts = deploy_protocol(client, owner=client.address, session_params=params)
            dep = Deployment(
                chain_id=chain_id,
                rpc_url=url,
                contracts=contracts,
                deploy_block=start,
                deployer=client.address,
            )
            dep.save(s.deployment_file)
            console.print(f"deployed to chain {chain_id} at {url}; deployment in {s.deployment_file}")
        else:
            console.print(f"already deployed on chain {chain_id} (deployment in {s.deployment_file})")
        proto = Protocol(client, dep.contracts)
        want = amount * TOKEN
        for addr in fund:
            have = proto.balance_of(Web3.to_checksum_address(addr))
            if have < want:
                proto.transfer(Web3.to_checksum_address(addr), want - have)
                console.print(f"funded {addr} with {(want - have) // TOKEN} tokens")
    if json_out:
        print_json(dep.model_dump())


def register(app: typer.Typer) -> None:
    app.command("deploy")(deploy)
