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
`round` is the panel of a session: 0 = the session's own panel, `a >= 1` = its `a`-th appeal
(issue 15, `chain.port.types_appeals` explains the shape). Every vote of every round is settled
against the session's final outcome, so `settle` waits (NotReady) until `appeal_status(...).final`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from trustnode.chain.errors import ChainError
from trustnode.chain.port.types import (
    AuditorProfile,
    Ballot,
    Capabilities,
    DrawFailure,
    DrawStep,
    EligibleAuditor,
    KeysPublished,
    Opened,
    OpenRequest,
    PoolState,
    SeatsDrawn,
    SegmentTally,
    SessionInfo,
    Settlement,
    TxRef,
    VoteState,
    Withdrawal,
)
from trustnode.chain.port.types_appeals import (
    AppealOpened,
    AppealQuote,
    AppealStatus,
    CanaryReveal,
    CanaryState,
    RoundInfo,
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
    def params(self, version: int | None = None) -> SessionParams:
        """Parameters of `version` (default: current), appeal and canary fields included
        (`SessionParams.appeal`, `SessionParams.canary`)."""
        ...

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

    def send_opens(self, requests: Sequence[OpenRequest]) -> list[str | ChainError]:
        """Send one open per request, back to back in the given order (consecutive nonces), paying
        each fee (approving the contract once if needed), without waiting for any receipt.

        Returns, per request, its transaction hash, or the error that kept it from being sent: a
        ContractRevertError at estimation (nothing sent, no nonce taken) or a ChainError from the
        send. Raises NotReady, sending nothing, while auditors who joined this epoch are not in
        the draw's snapshot yet. `open_receipt` tells what became of each hash.
        """
        ...

    def open_receipt(self, tx_hash: str, *, wait: bool = True) -> Opened | None:
        """The session an open sent by `send_opens` created, read from its own receipt's event.

        ContractRevertError if it was mined and reverted (its nonce is spent, nothing opened).
        With `wait`, waits up to the transaction timeout (ChainError after); without, None when
        there is no receipt now (still pending, dropped, or unknown to this chain).
        """
        ...

    def draw(self, session_id: int, max_seats: int, round: int = 0) -> DrawStep:
        """Draw up to `max_seats` seats of `round`'s panel; NotReady while its randomness is not fixed.

        For an appeal round the step's state is the session's (FINALIZED) and the seat counts are
        the round's; `rounds()` tells the round's own state (UNFILLABLE when the draw ran out).
        """
        ...

    def draw_failure(self, session_id: int) -> DrawFailure | None:
        """Why a cancelled draw failed, when the chain records it (protocol v2)."""
        ...

    def seats(self, session_id: int, round: int = 0) -> dict[str, list[int]]:
        """Every drawn auditor's seats (segment indices in seat order)."""
        ...

    def publish_keys(self, session_id: int, manifest_cid: str, round: int = 0) -> TxRef:
        """Publish the key manifest of `round` (the provider; one manifest per round)."""
        ...

    def keys_published(self, session_id: int, round: int = 0) -> KeysPublished | None: ...
    def advance(self, session_id: int) -> tuple[SessionState, TxRef]:
        """Apply due deadline transitions and finalize when due (anyone may call).

        Also ends due appeal rounds (finalizes a round whose votes are in or whose reveal phase
        closed, marks KEYS_WITHHELD a round without keys by its key deadline) and closes the
        appeal phase, so that the session's outcome becomes final.
        """
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
        """Key publications of every round in [from_block, to_block], in chain order (what a daemon
        follows: a round-r event means the auditors of `seats(session, r)` can start)."""
        ...

    def seats_drawn(self, from_block: int, to_block: int) -> list[SeatsDrawn]:
        """Draw calls of every round in [from_block, to_block], in chain order (an auditor follows
        them to learn of seats whose keys may never come)."""
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
        """Settle `auditor`'s seats of `round`; None when already settled; NotReady while the
        session's outcome can still change (appeals) or its slash coins are unknown."""
        ...

    def settlements(
        self, *, auditor: str | None = None, session_id: int | None = None
    ) -> list[Settlement]: ...
    def request_withdrawal(self, shares: int) -> int:
        """Redeem `shares` of this signer's own pool; returns the withdrawal id."""
        ...

    def withdrawal(self, withdrawal_id: int) -> Withdrawal: ...
    def claim_withdrawal(self, withdrawal_id: int) -> TxRef: ...
    def release_withdrawal(self, withdrawal_id: int) -> TxRef | None:
        """Move a held request on once its hold is over (protocol-v2 5.1: parked shares leave only at
        the pool's next touch, so an idle pool must be touched); None when there is nothing to do."""
        ...

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

    # -- gold canaries (issue 15) ---------------------------------------------------------------
    def set_canary_operator(self, address: str, allowed: bool) -> TxRef:
        """Authorize (or revoke) a canary operator; only the core's owner, this port's signer
        (reverts: NotCoreOwner, ZeroOperator). Revoking takes effect at once: the operator can
        then neither commit nor reveal (its open sessions' canaries stay unrevealed)."""
        ...

    def is_canary_operator(self, address: str) -> bool:
        """Whether `address` is an authorized canary operator (False without a CanaryModule)."""
        ...

    def commit_canaries(self, session_id: int, commitments: Sequence[bytes]) -> TxRef:
        """A canary operator (this port's signer) commits one `canaries.canary_commitment` per
        canary, all at once, while the draw's randomness is pending; the count must be
        `CanaryState.required` (reverts: NotCanaryOperator, ProviderIsCanaryOperator,
        WrongCanaryCount, CanariesAlreadyCommitted, CommitTooLate)."""
        ...

    def reveal_canaries(self, session_id: int, reveals: Sequence[CanaryReveal]) -> TxRef:
        """The committing operator reveals (slot, index, verdict, salt) of canaries inside the
        canary reveal window (after round 0 finalized); each must match its slot's commitment
        (else its named revert, nothing sent). Slots revealed already are skipped
        (CanaryAlreadyRevealed if every one is). Reverts NotCanaryOperator / NotCommittingOperator
        for anyone else. Canaries never revealed never block settlement."""
        ...

    def canaries(self, session_id: int) -> CanaryState:
        """Committed count and hashes, the committing operator, revealed canaries, and the commit
        and reveal windows."""
        ...

    # -- appeals (issue 15) ---------------------------------------------------------------------
    def appeal_quote(self, session_id: int, segments: Sequence[int]) -> AppealQuote:
        """What an appeal of `segments` by this signer would open and cost now, or the named
        refusal it would hit; sends nothing."""
        ...

    def appeal(
        self, session_id: int, segments: Sequence[int], max_bond: int, require_charged: bool = False
    ) -> AppealOpened:
        """Appeal `segments` (one depth), paying their bond (approving it if needed); refused
        with BondAboveLimit when the bond exceeds `max_bond`, and with RefusalsNotCharged when
        `require_charged` (the quote's `refusals_charged`) and the round, judged in the block it is
        mined in, would not charge lock refusals (outside review 17). Anyone may appeal."""
        ...

    def appeal_status(self, session_id: int) -> AppealStatus:
        """Appealable until block N (or not), rounds opened and running, and whether the
        session's outcome is final."""
        ...

    def rounds(self, session_id: int) -> list[RoundInfo]:
        """Every appeal round of the session (rounds 1, 2, ...; round 0 is `session` and
        `segments`): segments, depth, appellant, bond, state, deadlines, tallies, outcomes and,
        once the session is final, each segment's appeal result."""
        ...
