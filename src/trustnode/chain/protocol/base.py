"""The deployment seen by one signer: every v2 contract bound by name, token calls, chain helpers.

A v2 deployment is the core (`AuditSessions`) with its three modules (`DrawModule`,
`VotingModule`, `SettlementModule`), `Staking` with its `SortitionTrees`, `AuditorRegistry`,
`TrustToken`, `Treasury` and a randomness source behind `IRandomness` (`LookaheadRandomness`
on local chains, `VRFRandomness` with Chainlink).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any

from eth_utils import to_checksum_address
from web3.contract import Contract
from web3.types import TxReceipt

from trustnode.chain.client import ChainClient
from trustnode.chain.errors import ChainError
from trustnode.chain.protocol.models import RandomnessState
from trustnode.chain.protocol.params import RequestStatus

TOKEN_NAME = "Trust Audit Token"

#: Contracts every v2 deployment has (besides one randomness source).
REQUIRED = (
    "TrustToken",
    "Treasury",
    "Staking",
    "AuditorRegistry",
    "AuditSessions",
    "DrawModule",
    "VotingModule",
    "SettlementModule",
)
RANDOMNESS_SOURCES = ("LookaheadRandomness", "VRFRandomness")


class ProtocolBase:
    """Contract handles and the plumbing the other parts of `Protocol` share."""

    def __init__(self, client: ChainClient, addresses: Mapping[str, str]) -> None:
        self.client = client
        self.addresses = dict(addresses)
        missing = [n for n in REQUIRED if n not in self.addresses]
        if not any(n in self.addresses for n in RANDOMNESS_SOURCES):
            missing.append(" or ".join(RANDOMNESS_SOURCES))
        if missing:
            raise ChainError(
                f"deployment lacks protocol v2 contracts: {', '.join(missing)} "
                "(a protocol v1 deployment? redeploy with `trustnode deploy` or `trustnode devnet up`)"
            )
        c = client.contract
        self.token: Contract = c("TrustToken", self.addresses["TrustToken"])
        self.staking: Contract = c("Staking", self.addresses["Staking"])
        if "SortitionTrees" not in self.addresses:  # deployed by Staking's constructor
            self.addresses["SortitionTrees"] = str(client.call(self.staking.functions.sortition()))
        self.sortition: Contract = c("SortitionTrees", self.addresses["SortitionTrees"])
        self.registry: Contract = c("AuditorRegistry", self.addresses["AuditorRegistry"])
        self.sessions: Contract = c("AuditSessions", self.addresses["AuditSessions"])
        self.draw_module: Contract = c("DrawModule", self.addresses["DrawModule"])
        self.voting: Contract = c("VotingModule", self.addresses["VotingModule"])
        self.settlement: Contract = c("SettlementModule", self.addresses["SettlementModule"])
        name = next(n for n in RANDOMNESS_SOURCES if n in self.addresses)
        self.randomness: Contract = c(name, self.addresses[name])

    @property
    def address(self) -> str:
        return self.client.address

    def _tx(self, fn: Any) -> TxReceipt:
        return self.client.transact(fn)

    def _call(self, fn: Any) -> Any:
        return self.client.call(fn)

    def contract_named(self, name: str) -> Contract:
        """The bound contract of deployment entry `name` (events and raw calls)."""
        by_name = {
            "TrustToken": self.token,
            "Staking": self.staking,
            "SortitionTrees": self.sortition,
            "AuditorRegistry": self.registry,
            "AuditSessions": self.sessions,
            "DrawModule": self.draw_module,
            "VotingModule": self.voting,
            "SettlementModule": self.settlement,
            "LookaheadRandomness": self.randomness,
            "VRFRandomness": self.randomness,
        }
        if name not in by_name:
            raise ChainError(f"no contract named {name!r} in this deployment")
        return by_name[name]

    # -- chain ------------------------------------------------------------------------------

    def block_timestamp(self, block: int | None = None) -> int:
        """Timestamp (s) of block `block` (the latest when None)."""
        return int(self.client.w3.eth.get_block("latest" if block is None else block)["timestamp"])

    @cached_property
    def epoch_blocks(self) -> int:
        return int(self._call(self.sortition.functions.epochBlocks()))

    def current_epoch(self) -> int:
        return int(self._call(self.sortition.functions.currentEpoch()))

    def next_epoch_block(self) -> int:
        """First block of the next snapshot epoch (stake changed now is drawn from there on)."""
        return self.current_epoch() * self.epoch_blocks

    def snapshot_readable_until(self, epoch: int) -> int:
        """Last block a draw can read snapshot `epoch` (SortitionTrees)."""
        return int(self._call(self.sortition.functions.snapshotReadableUntil(epoch)))

    def mine_to_next_epoch(self) -> None:
        """Devnet only: mine empty blocks until the next snapshot epoch starts."""
        need = self.next_epoch_block() - self.client.block_number()
        if need > 0:
            self.client.mine(need)

    # -- randomness ---------------------------------------------------------------------------

    def source_of(self, session_id: int) -> Contract:
        """The randomness source a session pinned at opening (usually the deployment's)."""
        address = str(self._call(self.sessions.functions.sourceOf(session_id)))
        if address.lower() == str(self.randomness.address).lower():
            return self.randomness
        return self.client.contract("IRandomness", address)

    def randomness_state(self, source: Contract, request_id: int) -> RandomnessState:
        status = RequestStatus(int(self._call(source.functions.status(request_id))))
        target = 0
        if status == RequestStatus.PENDING and hasattr(source.functions, "targetBlockOf"):
            target = int(self._call(source.functions.targetBlockOf(request_id)))
        return RandomnessState(request_id=request_id, status=status, target_block=target)

    # -- token ------------------------------------------------------------------------------

    def balance_of(self, holder: str) -> int:
        return int(self._call(self.token.functions.balanceOf(to_checksum_address(holder))))

    def allowance(self, spender: str) -> int:
        return int(self._call(self.token.functions.allowance(self.address, to_checksum_address(spender))))

    def transfer(self, to: str, amount: int) -> TxReceipt:
        return self._tx(self.token.functions.transfer(to_checksum_address(to), amount))

    def approve(self, spender: str, amount: int) -> TxReceipt:
        return self._tx(self.token.functions.approve(to_checksum_address(spender), amount))

    def ensure_allowance(self, spender: str, amount: int) -> None:
        """Approve `spender` for good when its allowance is below `amount`."""
        if self.allowance(spender) < amount:
            self.approve(spender, 2**256 - 1)

    def sign_permit(self, spender: str, value: int, deadline: int) -> tuple[int, bytes, bytes]:
        """EIP-2612 permit signature (v, r, s) by this signer for `spender`."""
        nonce = int(self._call(self.token.functions.nonces(self.address)))
        signed = self.client.account.sign_typed_data(
            domain_data={
                "name": TOKEN_NAME,
                "version": "1",
                "chainId": self.client.chain_id,
                "verifyingContract": self.token.address,
            },
            message_types={
                "Permit": [
                    {"name": "owner", "type": "address"},
                    {"name": "spender", "type": "address"},
                    {"name": "value", "type": "uint256"},
                    {"name": "nonce", "type": "uint256"},
                    {"name": "deadline", "type": "uint256"},
                ]
            },
            message_data={
                "owner": self.address,
                "spender": to_checksum_address(spender),
                "value": value,
                "nonce": nonce,
                "deadline": deadline,
            },
        )
        return int(signed.v), int(signed.r).to_bytes(32, "big"), int(signed.s).to_bytes(32, "big")
