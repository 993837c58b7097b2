"""Shared CLI helpers: settings, error reporting and JSON output."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import UnionType
from typing import Any, Literal, NoReturn, Union, get_args, get_origin

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
    from pydantic_settings import SettingsError

    try:
        return load_settings()
    except ConfigError as exc:
        fail(str(exc))
    except SettingsError as exc:  # a list or table setting whose variable is not JSON: no traceback
        fail(unparsable_env(exc))


def unparsable_env(exc: Exception) -> str:
    """Name the TRUSTNODE_* variables of list or table settings (read as JSON, e.g.
    TRUSTNODE_API__API_KEYS) that are not JSON, without echoing their values (maybe secrets)."""
    bad = sorted(n for n, v in os.environ.items() if _complex_setting(n) and not _is_json(v))
    if not bad:
        return f"invalid configuration: {exc}"
    verb = "is" if len(bad) == 1 else "are"
    return (
        f"invalid configuration: {', '.join(bad)} {verb} not valid JSON: list settings are written as JSON "
        'lists, e.g. TRUSTNODE_API__API_KEYS=\'["key-1", "key-2"]\' or '
        "TRUSTNODE_PROTOCOL__SEATS_PER_TIER='[2, 1, 1]' (in single quotes in the shell)"
    )


def _is_json(value: str) -> bool:
    try:
        json.loads(value)
    except ValueError:
        return False
    return True


def _complex_setting(name: str) -> bool:
    """Whether the environment variable `name` sets a list, set or table field of Settings."""
    from pydantic import BaseModel

    if not name.startswith("TRUSTNODE_"):
        return False
    model: Any = Settings
    parts = name.removeprefix("TRUSTNODE_").lower().split("__")
    for i, part in enumerate(parts):
        field = getattr(model, "model_fields", {}).get(part)
        if field is None:
            return False
        ann = field.annotation
        inner = (
            [a for a in get_args(ann) if a is not type(None)] if get_origin(ann) in (Union, UnionType) else []
        )
        ann = inner[0] if len(inner) == 1 else ann
        if isinstance(ann, type) and issubclass(ann, BaseModel) and i < len(parts) - 1:
            model = ann
            continue
        return i == len(parts) - 1 and (
            get_origin(ann) in (list, set, tuple, dict)
            or (isinstance(ann, type) and issubclass(ann, BaseModel))
        )
    return False


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
