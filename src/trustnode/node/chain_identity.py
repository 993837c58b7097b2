"""Which chain a data directory served: a devnet restarted from scratch is another chain.

`trustnode devnet up` after the chain stopped deploys the contracts again at the same addresses on
a new chain, so an auditor daemon left running (or restarted on its old data directory) followed
it with the old chain's state: withdrawal ids the new chain never issued (UnknownWithdrawal),
event checkpoints past its head, and no registration, while saying nothing. The daemon records
the chain's genesis block hash in its data directory and refuses another chain, saying why.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from trustnode.chain.client import ChainClient
from trustnode.chain.errors import ChainError
from trustnode.chain.port import ChainPort
from trustnode.node.sqlite import PRIVATE_FILE_MODE

log = logging.getLogger(__name__)

#: What a daemon's data directory holds for its chain, named in the refusal.
AUDITOR_STATE = "votes, withdrawals and event checkpoints"
PROVIDER_STATE = "trace jobs, their sessions and appeal duties"
PAGE_STATE = "trace jobs and seats its pages show"
CANARY_STATE = "canary tickets (the verdicts and salts it reveals)"
#: A long-running node re-reads the genesis hash this often (and after every chain error).
CHECK_EVERY_S = 30.0


class ChainReplacedError(RuntimeError):
    """The chain behind the RPC URL is not the one this data directory's state belongs to."""


def check_same_chain(client: ChainClient, home: Path, state: str = AUDITOR_STATE) -> None:
    """Record the genesis hash on first use; ChainReplacedError when the chain is another one."""
    genesis = "0x" + bytes(client.w3.eth.get_block(0)["hash"]).hex()
    path = home / "chain.json"
    if not path.is_file():
        home.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"chain_id": client.chain_id, "genesis": genesis}) + "\n")
        path.chmod(PRIVATE_FILE_MODE)
        return
    known = json.loads(path.read_text())
    if known.get("genesis") != genesis:
        raise ChainReplacedError(
            f"the chain at {client.rpc_url} is not the one this data directory served: its genesis block "
            f"was {known.get('genesis')}, it is now {genesis} (a devnet restarted from scratch, e.g. anvil "
            f"restarted, is a new chain). This node's {state} in {home} belong to the old chain and are "
            "kept as they are: nothing was sent to the new chain. If the old chain comes back (anvil "
            "restarted from its saved state), start this node again unchanged; to serve the new chain, "
            "start it with a new data directory (TRUSTNODE_DATA_DIR), keeping this one"
        )


class ChainGuard:
    """Whether a long-running node's chain is still the one its data directory served.

    `check()` re-reads the genesis hash at most every `every_s` (one cheap RPC call), and at once
    after `suspect()` (a chain error: the node may have reconnected to a restarted anvil). A chain
    that cannot be read now is left to the caller's outage handling and checked again next time.
    `stop(exc)` records the refusal and calls `on_replaced` (the CLI stops the process with it).
    """

    def __init__(
        self,
        client: Callable[[], ChainClient] | None,
        home: Path,
        state: str = PROVIDER_STATE,
        every_s: float = CHECK_EVERY_S,
    ) -> None:
        self._client, self.home, self.state, self.every_s = client, home, state, every_s
        self._lock = threading.Lock()
        self._due = 0.0  # monotonic time of the next check (0: now)
        self.replaced: ChainReplacedError | None = None
        self._stopping = False
        self.on_replaced: Callable[[ChainReplacedError], None] | None = None

    def suspect(self) -> None:
        """A chain error happened: check at the next `check()`."""
        self._due = 0.0

    def check(self, *, force: bool = False) -> None:
        """ChainReplacedError when the chain is another one (raised again on every later call)."""
        if self.replaced is not None:
            raise self.replaced
        if self._client is None or (not force and time.monotonic() < self._due):
            return
        with self._lock:
            try:
                check_same_chain(self._client(), self.home, self.state)
            except ChainReplacedError as exc:
                self.replaced = exc
                raise
            except (ChainError, OSError, ValueError) as exc:  # an outage: the caller's to handle
                log.debug("chain identity not checked now: %s", exc)
                self._due = 0.0
                return
            self._due = time.monotonic() + self.every_s

    def stop(self, exc: ChainReplacedError) -> None:
        """Record the refusal (once) and tell the process to stop."""
        with self._lock:  # every worker thread and the appeal duties get here: say it once
            first, self._stopping = not self._stopping, True
            self.replaced = self.replaced or exc
        if first:
            log.error("stopping: %s", self.replaced)
        if self.on_replaced is not None:
            self.on_replaced(self.replaced)


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
