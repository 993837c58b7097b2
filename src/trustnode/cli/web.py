"""`trustnode web`: helpers for the node's web pages (sign in to the human audit page)."""

from __future__ import annotations

import sys

import typer
from eth_account.messages import encode_defunct

from trustnode.chain.accounts import KeyConfigError, load_account
from trustnode.chain.deployment import Deployment
from trustnode.chain.errors import ChainError
from trustnode.cli.common import errors_as_exit, fail, node_settings, settings

web_app = typer.Typer(help="Helpers for the node's web pages.", no_args_is_help=True)


def _on_devnet() -> bool:
    """Whether the configured deployment is a local devnet (then anvil dev keys are allowed)."""
    s = settings()
    if not s.deployment_file.is_file():
        return False
    try:
        return Deployment.load(s.deployment_file, check_alive=False).chain_id == s.devnet.chain_id
    except (ChainError, ValueError, OSError):
        return False


@web_app.command("sign")
def sign(
    message: str = typer.Argument(..., help="The exact message shown on the sign-in page."),
    show_address: bool = typer.Option(False, "--address", help="Also print the signing address (to stderr)."),
) -> None:
    """Sign a sign-in challenge (EIP-191 personal_sign) with this node's key; prints the signature."""
    if not message.strip():
        fail("the message is empty: copy it from the sign-in page")
    with errors_as_exit(KeyConfigError):
        account = load_account(node_settings("auditor").chain, devnet=_on_devnet())
    signed = account.sign_message(encode_defunct(text=message))
    if show_address:
        sys.stderr.write(f"signed by {account.address}\n")
    sys.stdout.write("0x" + signed.signature.hex().removeprefix("0x") + "\n")


def register(app: typer.Typer) -> None:
    app.add_typer(web_app, name="web")
