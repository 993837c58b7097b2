"""A web3.py client that deploys and calls our contracts, safely from many threads.

Nonces are handed out by one manager per (chain, sender) in the process, so concurrent
senders never collide; a revert (at estimation or after mining) becomes a
`ContractRevertError` naming the custom error.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from eth_account.signers.local import LocalAccount
from hexbytes import HexBytes
from web3 import Web3
from web3.contract import Contract
from web3.contract.contract import ContractFunction
from web3.exceptions import ContractLogicError, TimeExhausted, TransactionNotFound
from web3.types import RPCEndpoint, TxReceipt

from trustnode.chain.artifacts_io import load_artifact
from trustnode.chain.errors import (
    ChainError,
    ChainUnavailableError,
    ContractRevertError,
    decode_revert,
    redact,
    redact_url,
)

_NONCE_MANAGERS: dict[tuple[str, int, str], _NonceManager] = {}
_NONCE_MANAGERS_LOCK = threading.Lock()

log = logging.getLogger(__name__)


class _NonceManager:
    """Hands out consecutive nonces; resynchronises from the chain after a failed send."""

    def __init__(self, w3: Web3, address: str) -> None:
        self.w3 = w3
        self.address = address
        self.lock = threading.Lock()
        self._next: int | None = None

    def sync(self) -> None:
        self._next = self.w3.eth.get_transaction_count(self.address, "pending")  # type: ignore[arg-type]

    def take(self) -> int:
        """The next nonce: never below the chain's pending count (another process may send too)."""
        pending = self.w3.eth.get_transaction_count(self.address, "pending")  # type: ignore[arg-type]
        n = max(self._next or 0, pending)
        self._next = n + 1
        return n


def _nonce_manager(w3: Web3, chain_id: int, address: str) -> _NonceManager:
    with _NONCE_MANAGERS_LOCK:
        key = (str(getattr(w3.provider, "endpoint_uri", "")), chain_id, address)
        if key not in _NONCE_MANAGERS:
            _NONCE_MANAGERS[key] = _NonceManager(w3, address)
        return _NONCE_MANAGERS[key]


# A key may sign in two processes at once (a daemon and the operator's CLI): between reading the
# pending count and sending, the other may take the nonce. The node's message says which.
_NONCE_CLASHES = ("nonce too low", "replacement transaction underpriced")
_NONCE_ATTEMPTS = 5


def _nonce_taken(exc: Exception) -> bool:
    return any(m in str(exc).lower() for m in _NONCE_CLASHES)


def _revert_data(exc: ContractLogicError) -> str | None:
    data = exc.data
    if isinstance(data, dict):
        data = data.get("data")
    if isinstance(data, str) and data.startswith("0x"):
        return data
    return None


class ChainClient:
    """One signer on one chain."""

    def __init__(self, w3: Web3, account: LocalAccount, *, tx_timeout_s: float = 60.0) -> None:
        self.w3 = w3
        self.account = account
        self.tx_timeout_s = tx_timeout_s
        try:
            self.chain_id = int(w3.eth.chain_id)
        except Exception as exc:  # requests/connection errors vary by transport
            raise ChainUnavailableError(
                f"chain at {self.rpc_url} is not reachable: {self._say(exc)}"
            ) from exc
        self._nonces = _nonce_manager(w3, self.chain_id, account.address)
        self.tx_sent = 0
        self.tx_failed = 0
        self.on_transaction: Callable[[str, TxReceipt | None], None] | None = None

    @classmethod
    def connect(
        cls, rpc_url: str, account: LocalAccount, *, timeout_s: float = 10.0, tx_timeout_s: float = 60.0
    ) -> ChainClient:
        # web3 asks eth_chainId before every call and transaction (half of all requests in a
        # busy node); an endpoint's chain id does not change, so that one answer is cached.
        provider = Web3.HTTPProvider(
            rpc_url,
            request_kwargs={"timeout": timeout_s},
            cache_allowed_requests=True,
            cacheable_requests={RPCEndpoint("eth_chainId")},
        )
        return cls(Web3(provider), account, tx_timeout_s=tx_timeout_s)

    @property
    def address(self) -> str:
        return str(self.account.address)

    @property
    def rpc_url(self) -> str:
        """The RPC URL without credentials (safe to print, log or show on a page)."""
        return redact_url(self._endpoint)

    @property
    def _endpoint(self) -> str:
        return str(getattr(self.w3.provider, "endpoint_uri", "?"))

    def _say(self, exc: BaseException) -> str:
        """An exception's text with the endpoint's credentials removed."""
        return redact(str(exc), self._endpoint)

    # -- contracts -------------------------------------------------------------------------

    def contract(self, name: str, address: str) -> Contract:
        """A contract object for artifact `name` deployed at `address`."""
        return self.w3.eth.contract(address=Web3.to_checksum_address(address), abi=load_artifact(name).abi)

    def deploy(self, name: str, *args: Any) -> Contract:
        """Deploy artifact `name` with constructor `args`; returns the bound contract."""
        art = load_artifact(name)
        factory = self.w3.eth.contract(abi=art.abi, bytecode=art.bytecode)
        receipt = self.transact(factory.constructor(*args))
        address = receipt["contractAddress"]
        if address is None:
            raise ChainError(f"deployment of {name} produced no contract address")
        return self.contract(name, address)

    # -- calls and transactions -----------------------------------------------------------

    def call(self, fn: ContractFunction, *, block: int | str = "latest") -> Any:
        """Read-only call; a revert raises ContractRevertError."""
        try:
            return fn.call({"from": self.address}, block_identifier=block)  # type: ignore[arg-type]
        except ContractLogicError as exc:
            raise decode_revert(_revert_data(exc)) from exc
        except OSError as exc:  # requests' transport errors quote the URL's path (and any key in it)
            raise ChainUnavailableError(
                f"chain at {self.rpc_url} is not reachable: {self._say(exc)}"
            ) from exc

    def transact(
        self, fn: Any, *, value: int = 0, gas: int | None = None, wait: bool = True, _retried: bool = False
    ) -> TxReceipt:
        """Estimate, sign, send and (by default) wait for the receipt of `fn`.

        `fn` is a ContractFunction or a contract constructor. Estimation runs first, so a
        call that would revert fails before it costs gas or takes a nonce. It runs against the
        pending block, the one the transaction lands in: a call whose work depends on the block
        number (a deadline that passes, a window that opens) is estimated as it will execute.
        """
        base: dict[str, Any] = {"from": self.address, "value": value, "chainId": self.chain_id}
        estimated = gas is None
        if gas is None:
            margin = 2.0 if _retried else 1.25
            try:
                gas = int(fn.estimate_gas(base, block_identifier="pending") * margin) + 10_000
            except ContractLogicError as exc:
                self.tx_failed += 1
                raise decode_revert(_revert_data(exc)) from exc
            except (ConnectionError, OSError) as exc:
                raise ChainUnavailableError(
                    f"chain at {self.rpc_url} is not reachable: {self._say(exc)}"
                ) from exc
        with self._nonces.lock:
            for attempt in range(_NONCE_ATTEMPTS):
                nonce = self._nonces.take()
                tx = fn.build_transaction({**base, "gas": gas, "nonce": nonce})
                signed = self.account.sign_transaction(tx)
                try:
                    tx_hash = self.w3.eth.send_raw_transaction(signed.raw_transaction)
                    break
                except Exception as exc:
                    self._nonces.sync()
                    if _nonce_taken(exc) and attempt + 1 < _NONCE_ATTEMPTS:
                        continue  # another process with this key sent first: take the next nonce
                    self.tx_failed += 1
                    if isinstance(exc, ContractLogicError):
                        raise decode_revert(_revert_data(exc)) from exc
                    raise ChainError(f"sending transaction failed: {self._say(exc)}") from exc
        self.tx_sent += 1
        if not wait:
            return TxReceipt({"transactionHash": HexBytes(tx_hash)})  # type: ignore[typeddict-item]
        receipt = self.wait(tx_hash)
        if self.on_transaction is not None:
            self.on_transaction(receipt["transactionHash"].hex(), receipt)
        if receipt["status"] != 1:
            self.tx_failed += 1
            if estimated and receipt["gasUsed"] * 100 >= gas * 95 and not _retried:
                # It ran out of gas: transactions mined ahead of it in its block made its work
                # dearer than the estimate (three auditors staking in one block did). Once more,
                # estimated afresh with a wider margin; unused gas is refunded.
                log.info(
                    "transaction %s ran out of its gas estimate (%d): sending it again",
                    receipt["transactionHash"].hex(),
                    gas,
                )
                return self.transact(fn, value=value, gas=None, wait=wait, _retried=True)
            raise self._replay_revert(tx, receipt)
        return receipt

    def receipt(self, tx_hash: bytes | str, *, wait: bool = True) -> TxReceipt | None:
        """The receipt of a transaction sent with `transact(..., wait=False)`; a reverted one raises
        its decoded ContractRevertError. With `wait`, waits up to the transaction timeout
        (ChainError after); without, None when there is no receipt now."""
        if wait:
            receipt = self.wait(tx_hash)
        else:
            try:
                receipt = self.w3.eth.get_transaction_receipt(HexBytes(tx_hash))
            except TransactionNotFound:
                return None
            except OSError as exc:
                raise ChainUnavailableError(
                    f"chain at {self.rpc_url} is not reachable: {self._say(exc)}"
                ) from exc
        if self.on_transaction is not None:
            self.on_transaction(receipt["transactionHash"].hex(), receipt)
        if receipt["status"] != 1:
            self.tx_failed += 1
            tx = dict(self.w3.eth.get_transaction(HexBytes(tx_hash)))
            raise self._replay_revert({**tx, "data": tx.get("input")}, receipt)
        return receipt

    def wait(self, tx_hash: bytes | str) -> TxReceipt:
        try:
            return self.w3.eth.wait_for_transaction_receipt(
                HexBytes(tx_hash), timeout=self.tx_timeout_s, poll_latency=0.05
            )
        except TimeExhausted as exc:
            with self._nonces.lock:  # it may have been dropped: the next send may need its nonce
                self._nonces.sync()
            raise ChainError(f"no receipt for {HexBytes(tx_hash).hex()} after {self.tx_timeout_s}s") from exc

    def _replay_revert(self, tx: dict[str, Any], receipt: TxReceipt) -> ContractRevertError:
        """Re-run a mined failed transaction as a call to recover its revert data."""
        call = {k: tx[k] for k in ("from", "to", "data", "value", "gas") if k in tx}
        tx_hash = receipt["transactionHash"].hex()
        try:
            self.w3.eth.call(call, block_identifier=receipt["blockNumber"] - 1)  # type: ignore[arg-type]
        except ContractLogicError as exc:
            return decode_revert(_revert_data(exc), tx_hash)
        except Exception:  # noqa: BLE001 - best effort: the receipt already says it failed
            pass
        return ContractRevertError("Reverted", {}, "0x", tx_hash)

    def mine(self, blocks: int = 1) -> None:
        """Devnet only: mine `blocks` empty blocks (anvil_mine)."""
        self.w3.provider.make_request("anvil_mine", [hex(blocks)])  # type: ignore[arg-type]

    def block_number(self) -> int:
        try:
            return int(self.w3.eth.block_number)
        except OSError as exc:
            raise ChainUnavailableError(
                f"chain at {self.rpc_url} is not reachable: {self._say(exc)}"
            ) from exc


def wait_for_rpc(rpc_url: str, timeout_s: float = 30.0) -> int:
    """Poll until the RPC answers eth_chainId; returns the chain id."""
    deadline = time.monotonic() + timeout_s
    last: Exception | None = None
    w3 = Web3(Web3.HTTPProvider(rpc_url, request_kwargs={"timeout": 2}))
    while time.monotonic() < deadline:
        try:
            return int(w3.eth.chain_id)
        except Exception as exc:  # noqa: BLE001 - any transport error means "not yet"
            last = exc
            time.sleep(0.1)
    raise ChainUnavailableError(
        f"chain at {redact_url(rpc_url)} did not answer within {timeout_s}s: {redact(str(last), rpc_url)}"
    )


def rpc_alive(rpc_url: str) -> bool:
    try:
        wait_for_rpc(rpc_url, timeout_s=1.0)
        return True
    except ChainUnavailableError:
        return False
