"""`trustnode demo`: the main job on a local devnet."""

from __future__ import annotations

import tempfile
from pathlib import Path

import typer

from trustnode.chain import devnet
from trustnode.chain.errors import ChainError
from trustnode.cli.common import console, errors_as_exit


def demo(
    port: int = typer.Option(8545, "--port", help="RPC port of the demo chain on 127.0.0.1."),
    keep: bool = typer.Option(False, "--keep", help="Leave the devnet running afterwards."),
) -> None:
    """Start a devnet, deploy the contracts, show their status, and shut down."""
    dep_file = Path(tempfile.mkdtemp(prefix="trustnode-demo-")) / "deployment.json"
    with errors_as_exit(ChainError):
        with console.status("starting anvil and deploying the contracts ..."):
            dep = devnet.up(dep_file, port=port)
        try:
            live = devnet.status(dep_file)
            console.print(f"[bold]devnet[/]: chain {live.chain_id} at {live.rpc_url}")
            for name, addr in live.contracts.items():
                console.print(f"  {name:<22} {addr}")
        finally:
            if not keep:
                devnet.down(dep_file)
                console.print("devnet stopped")
    _ = dep


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
