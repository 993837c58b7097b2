"""`trustnode devnet up|status|down`: a local anvil chain with the protocol deployed."""

from __future__ import annotations

import typer

from trustnode.chain import devnet
from trustnode.chain.errors import ChainError
from trustnode.cli.common import console, errors_as_exit, print_json, settings

devnet_app = typer.Typer(help="Run a local chain (anvil) with the contracts deployed.", no_args_is_help=True)


@devnet_app.command("up")
def up_cmd(
    port: int = typer.Option(None, "--port", help="RPC port on 127.0.0.1 (default: settings, 8545)."),
    json_out: bool = typer.Option(False, "--json", help="Print the deployment as JSON."),
) -> None:
    """Start anvil, deploy the contracts and write the deployment file (idempotent)."""
    s = settings()
    with console.status("starting devnet ..."), errors_as_exit(ChainError):
        dep = devnet.up(
            s.deployment_file,
            port=port or s.devnet.port,
            block_time_s=s.devnet.block_time_s,
            chain_id=s.devnet.chain_id,
        )
    if json_out:
        print_json(dep.model_dump())
    else:
        console.print(f"devnet up: chain {dep.chain_id} at {dep.rpc_url}; deployment in {s.deployment_file}")
        for name, addr in dep.contracts.items():
            console.print(f"  {name:<22} {addr}")


@devnet_app.command("status")
def status_cmd(json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Show the running devnet, or say clearly why there is none."""
    s = settings()
    with errors_as_exit(ChainError):
        dep = devnet.status(s.deployment_file)
    if json_out:
        print_json({"chain_id": dep.chain_id, "rpc_url": dep.rpc_url, "contracts": dep.contracts})
    else:
        console.print(f"chain {dep.chain_id} at {dep.rpc_url} (deployed at block {dep.deploy_block})")
        for name, addr in dep.contracts.items():
            console.print(f"  {name:<22} {addr}")


@devnet_app.command("down")
def down_cmd() -> None:
    """Stop the devnet and remove its deployment file."""
    s = settings()
    stopped = devnet.down(s.deployment_file)
    console.print("devnet stopped" if stopped else "no devnet was running")


def register(app: typer.Typer) -> None:
    app.add_typer(devnet_app, name="devnet")
