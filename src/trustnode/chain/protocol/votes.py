"""Commit-reveal on the VotingModule: one full 256-bit commitment per (panel, auditor).

The verdicts word: bit j = seat j votes FAIL, bit 128 + j = seat j abstains (`Verdicts`).
`commitment = keccak256(abi.encode(chainid, votingModule, sessionId, round, auditor, verdicts,
salt))`. Relayed commits carry an EIP-712 signature (domain "TrustAuditSessions" version "2",
verifying contract the VotingModule) over `Commit(sessionId, round, auditor, commitment, nonce)`.
Batches skip bad items with `ItemSkipped` instead of reverting.
"""

from __future__ import annotations

from collections.abc import Sequence

from eth_account.signers.local import LocalAccount
from eth_utils import to_checksum_address
from web3.types import TxReceipt

from trustnode.chain.protocol.base import ProtocolBase
from trustnode.chain.protocol.models import RevealItem, SignedCommit
from trustnode.consensus import rules

EIP712_NAME = "TrustAuditSessions"
EIP712_VERSION = "2"


def compute_commitment(
    chain_id: int,
    voting_address: str,
    session_id: int,
    auditor: str,
    verdicts: int,
    salt: bytes,
    round: int = 0,
) -> bytes:
    """The VotingModule's commitment (see the module docstring)."""
    return rules.commitment(
        chain_id,
        to_checksum_address(voting_address),
        session_id,
        to_checksum_address(auditor),
        verdicts,
        salt,
        round=round,
    )


class VoteOps(ProtocolBase):
    """Commit, reveal and their batches (mixed into `Protocol`)."""

    def compute_commitment(
        self, session_id: int, auditor: str, verdicts: int, salt: bytes, round: int = 0
    ) -> bytes:
        return compute_commitment(
            self.client.chain_id, self.voting.address, session_id, auditor, verdicts, salt, round
        )

    def commit_nonce(self, session_id: int, auditor: str, round: int = 0) -> int:
        return int(
            self._call(self.voting.functions.commitNonce(session_id, round, to_checksum_address(auditor)))
        )

    def commit(self, session_id: int, commitment: bytes, round: int = 0) -> TxReceipt:
        """Commit (or re-commit during the commit phase) this signer's commitment."""
        return self._tx(self.voting.functions.commit(session_id, round, commitment))

    def sign_commit(
        self,
        account: LocalAccount,
        session_id: int,
        commitment: bytes,
        nonce: int | None = None,
        round: int = 0,
    ) -> SignedCommit:
        """An auditor's EIP-712 signature over its commitment, for a relayer's commitBatch."""
        if nonce is None:
            nonce = self.commit_nonce(session_id, account.address, round)
        signed = account.sign_typed_data(
            domain_data={
                "name": EIP712_NAME,
                "version": EIP712_VERSION,
                "chainId": self.client.chain_id,
                "verifyingContract": self.voting.address,
            },
            message_types={
                "Commit": [
                    {"name": "sessionId", "type": "uint256"},
                    {"name": "round", "type": "uint256"},
                    {"name": "auditor", "type": "address"},
                    {"name": "commitment", "type": "bytes32"},
                    {"name": "nonce", "type": "uint256"},
                ]
            },
            message_data={
                "sessionId": session_id,
                "round": round,
                "auditor": account.address,
                "commitment": commitment,
                "nonce": nonce,
            },
        )
        signature = (
            int(signed.r).to_bytes(32, "big") + int(signed.s).to_bytes(32, "big") + bytes([int(signed.v)])
        )
        return SignedCommit(auditor=account.address, commitment=commitment, signature=signature)

    def commit_batch(self, session_id: int, items: Sequence[SignedCommit], round: int = 0) -> TxReceipt:
        return self._tx(self.voting.functions.commitBatch(session_id, round, [i.as_abi() for i in items]))

    def reveal(self, session_id: int, auditor: str, verdicts: int, salt: bytes, round: int = 0) -> TxReceipt:
        """Open one commitment (reverts with the named error on a bad opening)."""
        item = RevealItem(auditor=auditor, verdicts=verdicts, salt=salt)
        return self._tx(self.voting.functions.reveal(session_id, round, item.as_abi()))

    def reveal_batch(self, session_id: int, items: Sequence[RevealItem], round: int = 0) -> TxReceipt:
        """Open many commitments; bad or already revealed items are skipped (`ItemSkipped`)."""
        return self._tx(self.voting.functions.revealBatch(session_id, round, [i.as_abi() for i in items]))
