"""Signing keys: a raw key from config, an encrypted keystore, or an anvil dev account."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from eth_account import Account
from eth_account.signers.local import LocalAccount

from trustnode.config import ChainSettings

ANVIL_MNEMONIC = "test test test test test test test test test test test junk"
#: anvil is started with this many dev accounts: 0 deployer, 1 provider, 2..19 auditors, 20 canary operator.
DEVNET_ACCOUNTS = 21


class KeyConfigError(ValueError):
    """No usable key was configured."""


def dev_account(index: int) -> LocalAccount:
    """The anvil dev account `index` (same mnemonic and derivation path as anvil)."""
    if not 0 <= index < DEVNET_ACCOUNTS:
        raise KeyConfigError(f"devnet account index {index} out of range 0..{DEVNET_ACCOUNTS - 1}")
    Account.enable_unaudited_hdwallet_features()
    return Account.from_mnemonic(ANVIL_MNEMONIC, account_path=f"m/44'/60'/0'/0/{index}")


def load_keystore(path: Path, password: str) -> LocalAccount:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError as exc:
        raise KeyConfigError(f"keystore {path} does not exist") from exc
    try:
        return Account.from_key(Account.decrypt(data, password))
    except ValueError as exc:
        raise KeyConfigError(f"cannot decrypt keystore {path}: {exc}") from exc


def write_keystore(account: LocalAccount, path: Path, password: str) -> None:
    """Write an encrypted keystore readable by its owner only, from the first byte on.

    The file is created 0600 under a temporary name in a 0700 directory, then renamed into
    place, so no other user ever sees it, even for a moment, and a crash leaves no half key.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".keystore-")  # mkstemp creates 0600
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(Account.encrypt(account.key, password)))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def load_account(chain: ChainSettings, *, devnet: bool) -> LocalAccount:
    """The configured key; on a devnet with no key configured, anvil's account `account_index`."""
    if chain.private_key is not None:
        try:
            return Account.from_key(chain.private_key.get_secret_value())
        except (ValueError, TypeError) as exc:
            raise KeyConfigError("TRUSTNODE_CHAIN__PRIVATE_KEY is not a valid private key") from exc
    if chain.keystore_path is not None:
        if chain.keystore_password is None:
            raise KeyConfigError("a keystore is configured but TRUSTNODE_CHAIN__KEYSTORE_PASSWORD is not set")
        return load_keystore(chain.keystore_path, chain.keystore_password.get_secret_value())
    if devnet:
        return dev_account(chain.account_index)
    raise KeyConfigError(
        "no signing key: set TRUSTNODE_CHAIN__PRIVATE_KEY or TRUSTNODE_CHAIN__KEYSTORE_PATH (+ _PASSWORD)"
    )
