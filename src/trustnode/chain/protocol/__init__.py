"""Typed Python wrappers over the protocol v2 contracts, for nodes, the CLI and tests.

One `Protocol` object is bound to one signer (a `ChainClient`) and one deployment (addresses
by contract name, as returned by `deploy_protocol`). Writes return the transaction receipt
(or what the transaction created); reads return pydantic models. Reverts surface as the
client's `ContractRevertError` carrying the contract's custom-error name.

Conventions (mirrored in `trustnode.consensus.rules`): tiers Computer=0, LLM=1, Human=2;
outcomes NONE=0, PASS=1, FAIL=2, INCONCLUSIVE=3; WAD (1e18) for reputation and
probabilities; basis points for tau, beta and commission; verdicts word bit j = seat j votes
FAIL, bit 128 + j = seat j abstains (seat order = segment index ascending); commitment =
keccak256(abi.encode(chainid, VotingModule, sessionId, round, auditor, verdicts, salt));
segment leaf = keccak256(bytes.concat(keccak256(abi.encode(index, cid, tier, weight)))).

The parts, one concept each: `base` (wiring, token, chain), `sessions` (open, draw, keys,
finalize), `votes` (commit-reveal), `staking` (registry, pools, ledger, settlement), `views`
(reads), `appeals` (issue 15: appeal rounds and canaries), `params`, `models` and
`models_appeals` (what they exchange).
"""

from __future__ import annotations

from collections.abc import Mapping

from trustnode.chain.client import ChainClient
from trustnode.chain.protocol.appeals import AppealBindings
from trustnode.chain.protocol.base import REQUIRED, TOKEN_NAME
from trustnode.chain.protocol.models import (
    AuditorProfile,
    PoolInfo,
    RandomnessState,
    RevealItem,
    SegmentInfo,
    SessionInfo,
    SignedCommit,
    VoteInfo,
    WithdrawalInfo,
    new_salt,
)
from trustnode.chain.protocol.params import (
    DEVNET_EPOCH_BLOCKS,
    DEVNET_RANDOMNESS_DELAY,
    DEVNET_SESSION_PARAMS,
    DEVNET_STAKING_PARAMS,
    TOKEN,
    WAD,
    RequestStatus,
    SessionParams,
    SessionStatus,
    StakingParams,
    Termination,
    check_stake_premise,
)
from trustnode.chain.protocol.sessions import SessionOps
from trustnode.chain.protocol.staking import StakingOps
from trustnode.chain.protocol.votes import EIP712_NAME, EIP712_VERSION, VoteOps, compute_commitment
from trustnode.consensus.rules import pack_tiers_weights, verdict_bitmap
from trustnode.storage.merkle import segment_leaf


class Protocol(SessionOps, VoteOps, StakingOps, AppealBindings):
    """The protocol's contracts seen by one signer."""

    def __init__(self, client: ChainClient, addresses: Mapping[str, str]) -> None:
        super().__init__(client, addresses)
        self._fees: dict[int, int] = {}

    def as_signer(self, client: ChainClient) -> Protocol:
        """The same deployment seen by another signer."""
        return Protocol(client, self.addresses)


__all__ = [
    "DEVNET_EPOCH_BLOCKS",
    "DEVNET_RANDOMNESS_DELAY",
    "DEVNET_SESSION_PARAMS",
    "DEVNET_STAKING_PARAMS",
    "check_stake_premise",
    "EIP712_NAME",
    "EIP712_VERSION",
    "REQUIRED",
    "TOKEN",
    "TOKEN_NAME",
    "WAD",
    "AuditorProfile",
    "PoolInfo",
    "Protocol",
    "RandomnessState",
    "RequestStatus",
    "RevealItem",
    "SegmentInfo",
    "SessionInfo",
    "SessionParams",
    "SessionStatus",
    "SignedCommit",
    "StakingParams",
    "Termination",
    "VoteInfo",
    "WithdrawalInfo",
    "compute_commitment",
    "new_salt",
    "pack_tiers_weights",
    "segment_leaf",
    "verdict_bitmap",
]
