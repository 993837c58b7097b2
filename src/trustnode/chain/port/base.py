"""The chain port: every protocol operation the node performs, at the level of its meaning.

One signer, one deployment. The provider opens, draws, publishes keys and follows a session
to its end; an auditor registers, stakes, finds its seats, commits, reveals, settles and
withdraws; queries read sessions, votes and settlements. Implementations:

- `Web3Port` (`chain.port.evm`): the deployed v2 contracts through `chain.protocol.Protocol`;
- `MemoryPort` (`chain.port.memory`): an in-memory chain that applies `consensus.rules`, for
  unit tests of the node's state machines that run in milliseconds.

Conventions: amounts in token wei, reputation in WAD, deadlines in block numbers, addresses
checksummed. Writes return what they did with their transaction (`TxRef`); a revert raises
`chain.errors.ContractRevertError` with the ABI's error name (`chain.port.reverts`); an action
that is not possible *yet* raises `NotReady`; an unreachable chain `ChainUnavailableError`.
`round` is the panel of a session (0 = the first; issue 15's appeals add rounds).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from trustnode.chain.port.types import (
    AuditorProfile,
    Ballot,
    Capabilities,
    DrawFailure,
    DrawStep,
    EligibleAuditor,
    KeysPublished,
    Opened,
    PoolState,
    SegmentTally,
    SessionInfo,
    Settlement,
    TxRef,
    VoteState,
    Withdrawal,
)
from trustnode.chain.protocol import SessionParams
from trustnode.models.enums import Tier
from trustnode.models.verdict import SessionState


@runtime_checkable
class ChainPort(Protocol):
    """See the module docstring."""

    # -- identity ----------------------------------------------------------------------------
    @property
    def chain_id(self) -> int: ...
    @property
    def contract(self) -> str:
        """Address of the sessions contract (a session id is only meaningful with it)."""
        ...

    @property
    def address(self) -> str:
        """This port's signer."""
        ...

    @property
    def deploy_block(self) -> int: ...
    @property
    def capabilities(self) -> Capabilities: ...

    # -- chain -------------------------------------------------------------------------------
    def block_number(self) -> int: ...
    def chain_time(self) -> int:
        """Timestamp (s) of the latest block."""
        ...

    def block_timestamp(self, block: int) -> int:
        """Timestamp (s) of block `block`."""
        ...

    # -- parameters and auditors ---------------------------------------------------------------
    def params(self, version: int | None = None) -> SessionParams: ...
    def max_segments(self) -> int: ...
    def eligible_auditors(self, tier: Tier) -> list[EligibleAuditor]:
        """Auditors of `tier` a draw could pick now (registered, staked, free stake for a seat)."""
        ...

    def profile(self, auditor: str) -> AuditorProfile: ...
    def pool(self, auditor: str) -> PoolState: ...
    def token_balance(self, holder: str) -> int: ...
    def self_stake(self, auditor: str) -> tuple[int, int]:
        """(shares, their value in token wei) the auditor holds in its own pool."""
        ...

    # -- provider ------------------------------------------------------------------------------
    def open_session(
        self, merkle_root: bytes, tiers: Sequence[int], weights: Sequence[int], fee: int
    ) -> Opened:
        """Pay `fee` (approving the contract if needed) and open a session."""
        ...

    def find_opened(self, merkle_root: bytes) -> Opened | None:
        """A session this signer already opened for `merkle_root` (recovery after a crash)."""
        ...

    def draw(self, session_id: int, max_seats: int) -> DrawStep:
        """Draw up to `max_seats` seats; NotReady while the draw's randomness is not fixed."""
        ...

    def draw_failure(self, session_id: int) -> DrawFailure | None:
        """Why a cancelled draw failed, when the chain records it (protocol v2)."""
        ...

    def seats(self, session_id: int, round: int = 0) -> dict[str, list[int]]:
        """Every drawn auditor's seats (segment indices in seat order)."""
        ...

    def publish_keys(self, session_id: int, manifest_cid: str) -> TxRef: ...
    def keys_published(self, session_id: int) -> KeysPublished | None: ...
    def advance(self, session_id: int) -> tuple[SessionState, TxRef]:
        """Apply due deadline transitions and finalize when due (anyone may call)."""
        ...

    def finalized(self, session_id: int) -> TxRef | None:
        """The transaction that finalized the session, if it is final."""
        ...

    # -- auditor ---------------------------------------------------------------------------------
    def register(self, tier: Tier, expertise: int, encryption_key: bytes) -> TxRef: ...
    def update_profile(self, expertise: int, encryption_key: bytes) -> TxRef: ...
    def stake(self, amount: int) -> TxRef:
        """Add `amount` to this signer's own pool (approving the staking contract if needed)."""
        ...

    def events(self, from_block: int, to_block: int) -> list[KeysPublished]:
        """Key publications in [from_block, to_block], in chain order (what a daemon follows)."""
        ...

    def vote(self, session_id: int, auditor: str, round: int = 0) -> VoteState: ...
    def commitment_matches(self, session_id: int, ballot: Ballot, salt: bytes, round: int = 0) -> bool:
        """Whether this signer's stored commitment (or revealed ballot) is `ballot` with `salt`."""
        ...

    def commit(self, session_id: int, ballot: Ballot, salt: bytes, round: int = 0) -> TxRef:
        """Commit to `ballot`; AbstainNotSupported if it abstains on a chain that cannot say so."""
        ...

    def reveal(self, session_id: int, ballot: Ballot, salt: bytes, round: int = 0) -> TxRef | None:
        """Reveal; None when it was already revealed."""
        ...

    def settle(self, session_id: int, auditor: str, round: int = 0) -> Settlement | None:
        """Settle `auditor`; None when already settled; NotReady while its slash coins are unknown."""
        ...

    def settlements(
        self, *, auditor: str | None = None, session_id: int | None = None
    ) -> list[Settlement]: ...
    def request_withdrawal(self, shares: int) -> int:
        """Redeem `shares` of this signer's own pool; returns the withdrawal id."""
        ...

    def withdrawal(self, withdrawal_id: int) -> Withdrawal: ...
    def claim_withdrawal(self, withdrawal_id: int) -> TxRef: ...

    # -- public reads ---------------------------------------------------------------------------
    def session_count(self) -> int: ...
    def session(self, session_id: int) -> SessionInfo:
        """ContractRevertError UnknownSession (or ChainError) if there is no such session."""
        ...

    def segments(self, session_id: int) -> list[SegmentTally]: ...
    def session_transactions(self, session_id: int) -> dict[str, list[str]]:
        """Transaction hashes by phase: open, draw, publish_keys, commit, reveal, finalize, settle."""
        ...

    def verify_segment(
        self, session_id: int, index: int, cid: str, tier: int, weight: int, proof: Sequence[bytes]
    ) -> bool: ...
