"""Which chain a data directory served: a devnet restarted from scratch is another chain.

`trustnode devnet up` after the chain stopped deploys the contracts again at the same addresses on
a new chain, so an auditor daemon left running (or restarted on its old data directory) followed
it with the old chain's state: withdrawal ids the new chain never issued (UnknownWithdrawal),
event checkpoints past its head, and no registration, while saying nothing. The daemon records
the chain's genesis block hash in its data directory and refuses another chain, saying why.
"""

from __future__ import annotations

import json
from pathlib import Path

from trustnode.chain.client import ChainClient
from trustnode.chain.errors import ChainError
from trustnode.chain.port import ChainPort
from trustnode.node.sqlite import PRIVATE_FILE_MODE


class ChainReplacedError(RuntimeError):
    """The chain behind the RPC URL is not the one this data directory's state belongs to."""


def check_same_chain(client: ChainClient, home: Path) -> None:
    """Record the genesis hash on first use; ChainReplacedError when the chain is another one."""
    genesis = "0x" + bytes(client.w3.eth.get_block(0)["hash"]).hex()
    path = home / "chain.json"
    if not path.is_file():
        path.write_text(json.dumps({"chain_id": client.chain_id, "genesis": genesis}) + "\n")
        path.chmod(PRIVATE_FILE_MODE)
        return
    known = json.loads(path.read_text())
    if known.get("genesis") != genesis:
        raise ChainReplacedError(
            f"the chain at {client.rpc_url} is not the one this data directory served (genesis "
            f"{str(known.get('genesis'))[:18]}..., now {genesis[:18]}...): a devnet restarted from "
            f"scratch is a new chain, and this daemon's votes, withdrawals and event checkpoints ({home}) "
            "belong to the old one. Start the daemon with a new data directory (or remove "
            f"{home}) to serve the new chain"
        )


def foreign_key_reason(port: ChainPort, address: str, own_key_hex: str, home: Path) -> str | None:
    """Why an envelope did not open when the chain holds another encryption key for this account:
    another daemon of the account (another data directory or machine) registered its own, and every
    seat sealed to it is lost to this one. Not the provider's fault: say whose it is. None when the
    key on chain is this daemon's (then the bundle itself is bad)."""
    try:
        on_chain = port.profile(address).encryption_key.lower()
    except ChainError:
        return None
    if on_chain == own_key_hex.lower():
        return None
    return (
        f"cannot open my seats: the encryption key registered on chain for account {address} "
        f"({on_chain[:18]}...) is not this daemon's ({home / 'encryption.key'}): another daemon of "
        "this account registered its own. Stop every other daemon of this account, then restart this "
        "one (it registers its key again)"
    )
