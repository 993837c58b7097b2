"""`trustnode contracts build|check`."""

from __future__ import annotations

import typer

from trustnode.chain.build import BuildError, build, stale_reasons
from trustnode.cli.common import console, errors_as_exit, fail

contracts_app = typer.Typer(
    help="Compile the Solidity contracts into the package's artifacts.", no_args_is_help=True
)


@contracts_app.command("build")
def build_cmd() -> None:
    """Compile contracts/src (pinned solc 0.8.28, optimizer on, cancun) into artifacts."""
    with console.status("compiling contracts/src ..."), errors_as_exit(BuildError):
        manifest = build()
    console.print(f"built {len(manifest.contracts)} contracts: {', '.join(manifest.contracts)}")


@contracts_app.command("check")
def check_cmd() -> None:
    """Recompile and fail if the committed artifacts are stale."""
    with console.status("recompiling to compare ..."), errors_as_exit(BuildError):
        reasons = stale_reasons()
    if reasons:
        fail("artifacts are stale (run `trustnode contracts build`):\n  " + "\n  ".join(reasons))
    console.print("artifacts are up to date")


def register(app: typer.Typer) -> None:
    app.add_typer(contracts_app, name="contracts")
