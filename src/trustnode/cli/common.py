"""Shared CLI helpers: settings, error reporting and JSON output."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from trustnode.config import ConfigError, Settings, load_settings, secure_data_dir

console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)

#: Files a node creates (job queue with segment keys, human queue, evidence, keystores) are
#: readable by their owner only: every node command sets this umask once, before any file exists.
PRIVATE_UMASK = 0o077

Role = Literal["deployer", "provider", "auditor"]
#: The devnet account a role signs with when `chain.account_index` is not set (auditors must choose).
ROLE_ACCOUNTS: dict[Role, int] = {"deployer": 0, "provider": 1}

ROLES_HELP = (
    "Devnet accounts (TRUSTNODE_CHAIN__ACCOUNT_INDEX): 0 deploys and owns the contracts, "
    "1 is the provider's (the API node pays for sessions), 2 and up are auditors, one each."
)


def settings() -> Settings:
    """The node's settings; a bad configured value stops the command with its name and source."""
    try:
        return load_settings()
    except ConfigError as exc:
        fail(str(exc))


def _has_key(s: Settings) -> bool:
    return s.chain.private_key is not None or s.chain.keystore_path is not None


def node_settings(role: Role | None = None) -> Settings:
    """Settings of a node process: private umask, a 0700 data directory, the role's account.

    On the devnet a role without `chain.account_index` gets its conventional account
    (deployer 0, provider 1); an auditor must be given one, since two auditors sharing an
    account (or the provider's) corrupt each other's votes.
    """
    os.umask(PRIVATE_UMASK)
    s = settings()
    try:
        secure_data_dir(s.data_dir)
    except OSError as exc:
        fail(f"cannot prepare the data directory {s.data_dir}: {exc}")
    if role is None or _has_key(s) or "account_index" in s.chain.model_fields_set:
        return s
    if role == "auditor":
        fail(
            "an auditor needs its own account: on the devnet set TRUSTNODE_CHAIN__ACCOUNT_INDEX to one of "
            "2..19 (0 deploys, 1 is the provider's, 20 the canary operator's; each auditor its own), elsewhere "
            "TRUSTNODE_CHAIN__PRIVATE_KEY or TRUSTNODE_CHAIN__KEYSTORE_PATH"
        )
    chain = s.chain.model_copy(update={"account_index": ROLE_ACCOUNTS[role]})
    return s.model_copy(update={"chain": chain})


def fail(message: str, code: int = 1) -> NoReturn:
    """Print the reason (as plain text: a "[section]" in it is not markup) and exit."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False)
    raise typer.Exit(code)


def warn(message: str) -> None:
    err_console.print(f"[bold yellow]warning:[/] {escape(message)}", highlight=False)


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")


@contextmanager
def errors_as_exit(*kinds: type[BaseException]) -> Iterator[None]:
    """Turn expected failures into a one-line error and exit code 1 (no traceback)."""
    try:
        yield
    except kinds as exc:
        fail(str(exc))
