"""The state of an in-memory chain shared by every `MemoryPort` bound to it (one per signer).

Blocks are counted, not mined: every transaction advances the chain by one block (like the
test devnet's automine), `mine(n)` lets time pass. Time is `genesis + block * block_time_s`.
`down = True` makes every port call fail as an unreachable RPC does, for outage tests.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from eth_utils import keccak, to_checksum_address

from trustnode.chain.errors import ChainUnavailableError, ContractRevertError
from trustnode.chain.port import reverts
from trustnode.chain.port.types import DrawFailure, TxRef
from trustnode.chain.port.types_appeals import RevealedCanary, RoundState
from trustnode.chain.protocol import DEVNET_SESSION_PARAMS, SessionParams
from trustnode.consensus.appeals import PanelStatus
from trustnode.consensus.final_settlement import SessionSettlement
from trustnode.consensus.rules import WAD
from trustnode.models.enums import SegmentOutcome
from trustnode.models.verdict import SessionState

TOKEN = 10**18
#: The in-memory chain's minimum stake (one for every tier): 12 segments of a tier per session with appeals
#: at the devnet's 8-TRUST lock (outside review 22), below the devnet's 200 so worlds of 100-TRUST auditors run.
MEMORY_MIN_STAKE = 100 * TOKEN
#: Fast phases for unit tests (blocks); everything else as the devnet.
MEMORY_SESSION_PARAMS = DEVNET_SESSION_PARAMS.model_copy(
    update={"draw_blocks": 20, "key_blocks": 20, "commit_blocks": 20, "reveal_blocks": 20}
)


def revert(name: str, **args: Any) -> ContractRevertError:
    """The revert a contract would raise; only names some shipped ABI declares."""
    if name not in reverts.declared():
        raise AssertionError(f"{name} is not a custom error of any shipped contract")
    return ContractRevertError(name, args, "0x")


def weighted_pick(pool: list[str], weights: list[int], seed: bytes, drawn: int) -> str | None:
    """The in-memory chain's sortition: one auditor of `pool` with probability proportional to its
    weight, from the word keccak(seed, drawn) (the draw and appeal panels share it)."""
    if not pool:
        return None
    value = int.from_bytes(keccak(seed + drawn.to_bytes(32, "big")), "big") % sum(weights)
    for a, w in zip(pool, weights, strict=True):
        if value < w:
            return a
        value -= w
    return pool[-1]


@dataclass
class Auditor:
    tier: int
    expertise: int
    key: str
    registered: bool = True
    assets: int = 0
    locked: int = 0
    total_shares: int = 0
    shares: dict[str, int] = field(default_factory=dict)
    reputation: int = WAD // 2
    parked: int = 0  # shares of held withdrawals: still in the pool (lockable, slashable), no weight

    def value(self, shares: int) -> int:
        """Token value of `shares` of this pool at its current price."""
        return shares * (self.assets + 1) // (self.total_shares + 1)


@dataclass
class Vote:
    commitment: bytes | None = None
    word: int | None = None  # the revealed verdict word
    settled: bool = False


@dataclass
class Session:
    id: int
    provider: str
    version: int
    root: str
    tiers: list[int]
    weights: list[int]
    fee: int
    pool: int
    target: int
    total_seats: int
    state: SessionState = SessionState.CREATED
    seed: bytes | None = None
    seats: dict[str, list[int]] = field(default_factory=dict)  # auditor -> segments, seat order
    segment_auditors: list[set[str]] = field(default_factory=list)
    cursor: tuple[int, int] = (0, 0)  # (segment, seat within segment)
    drawn: int = 0
    votes: dict[str, Vote] = field(default_factory=dict)
    draw_deadline: int = 0
    key_deadline: int = 0
    commit_deadline: int = 0
    reveal_deadline: int = 0
    tally: list[list[int]] = field(default_factory=list)  # [pass, fail] per segment
    outcomes: list[SegmentOutcome] = field(default_factory=list)
    passed: bool = False
    score_bps: int = 0
    pass_weight: int = 0
    total_weight: int = 0
    failure: DrawFailure | None = None
    refusers: set[str] = field(default_factory=set)  # candidates of a drawn segment that lacked free stake
    termination: str | None = None  # IAuditSessions.Termination, lower case
    draw_reputation: dict[str, int] = field(default_factory=dict)  # fixed at the auditor's first seat
    snapshot: dict[str, int] = field(default_factory=dict)  # auditor -> weight when opened (the draw's)
    withdrawn_at_seed: dict[str, int] = field(default_factory=dict)  # `MemoryChain.withdrawn()` at the seed
    slash_target: int | None = None
    txs: dict[str, list[str]] = field(default_factory=dict)
    # issue 15: canaries, the appeal phase and its rounds
    canary_commitments: list[bytes] | None = None  # None: never committed
    canary_operator: str | None = None  # the operator that committed (only it reveals)
    canaries_revealed: list[RevealedCanary] = field(default_factory=list)
    finalized_at: int = 0  # block round 0 finalized (0: not yet)
    canary_end: int = 0
    window_ends: list[int] = field(default_factory=list)  # per segment, 0: not appealable
    rounds: list[Round] = field(default_factory=list)  # rounds[a - 1] is round a
    outcome_final: bool = False
    settlement: SessionSettlement | None = None  # every round's money, once final and seeded

    def note(self, phase: str, tx: TxRef) -> None:
        hashes = self.txs.setdefault(phase, [])
        if tx.tx_hash not in hashes:
            hashes.append(tx.tx_hash)


@dataclass
class Round:
    """One appeal round (a panel over segments of one depth), kept like a session's round 0 so the
    voting code serves both: `seats`, `votes`, `tally`, `state` and the phase deadlines."""

    number: int
    appellant: str
    depth: int
    segments: list[int]  # ascending
    seats_k: list[int]  # k_depth per named segment
    bonds: list[int]
    appealed: list[SegmentOutcome]
    opened_block: int
    target: int
    tally: list[list[int]]  # [pass, fail] over every segment of the session
    state: RoundState = RoundState.CREATED
    seed: bytes | None = None
    seats: dict[str, list[int]] = field(default_factory=dict)
    segment_auditors: dict[int, set[str]] = field(default_factory=dict)
    cursor: tuple[int, int] = (0, 0)  # (position in `segments`, seat within that segment)
    drawn: int = 0
    votes: dict[str, Vote] = field(default_factory=dict)
    draw_deadline: int = 0
    key_deadline: int = 0
    commit_deadline: int = 0
    reveal_deadline: int = 0
    outcomes: dict[int, SegmentOutcome] = field(default_factory=dict)
    status: PanelStatus | None = None
    draw_reputation: dict[str, int] = field(default_factory=dict)
    manifest: str | None = None
    refusals_charged: bool = False  # decided at admission (`appeal_admission.refusals_charged`)
    # auditor -> weight at the appeal: the round draws from it and weighs rule R with it, as the contract
    # reads its round's epoch snapshot (stake moved after the appeal moves neither; outside review 24)
    snapshot: dict[str, int] = field(default_factory=dict)

    @property
    def total_seats(self) -> int:
        return sum(self.seats_k)

    @property
    def bond(self) -> int:
        return sum(self.bonds)


@dataclass
class WithdrawalRow:
    owner: str
    auditor: str
    amount: int
    ready_at: int
    claimed: bool = False
    shares: int = 0  # while held: the parked shares (amount and ready_at are set when they leave)
    held: bool = False


@dataclass
class Log:
    name: str
    tx: TxRef
    log_index: int
    data: Any


class MemoryChain:
    """One simulated deployment; `port(address)` gives a signer's view of it."""

    def __init__(
        self,
        params: SessionParams = MEMORY_SESSION_PARAMS,
        *,
        chain_id: int = 31337,
        contract: str = "0x" + "5e" * 20,
        randomness_delay: int = 2,
        slash_delay: int = 2,
        min_stake: int = MEMORY_MIN_STAKE,
        initial_reputation: int = WAD // 2,
        reputation_floor: int = WAD // 2,
        cooldown_s: int = 60,
        block_time_s: int = 1,
        max_segments: int = 1024,
        abstain: bool = True,
        owner: str = "0x" + "0a" * 20,
        canary_operators: Sequence[str] = (),
    ) -> None:
        self.chain_id = chain_id
        self.contract = to_checksum_address(contract)
        self.versions: list[SessionParams] = [params]
        self.randomness_delay = randomness_delay
        self.slash_delay = slash_delay
        self.min_stake = min_stake
        #: The minimum stake the opening's stake-premise check reads (None: `min_stake`); tests of the
        #: draw's session-held rule set it to open a session as if the minimum were lowered after it opened.
        self.premise_min_stake: int | None = None
        self.initial_reputation = initial_reputation
        self.reputation_floor = reputation_floor
        self.cooldown_s = cooldown_s
        self.block_time_s = block_time_s
        self.max_segments = max_segments
        self.abstain = abstain  # False: behave like protocol v1, which cannot record an abstention
        self.genesis = 1_700_000_000
        self.block = 1
        self.balances: dict[str, int] = {}
        self.auditors: dict[str, Auditor] = {}
        self.sessions: list[Session] = []
        self.withdrawals: list[WithdrawalRow] = []
        self.logs: list[Log] = []
        self.treasury = 0  # what the treasury holds to grant appeal budgets and canary refunds
        self.owner = to_checksum_address(owner)  # the core's owner (governance)
        self.canary_operators: set[str] = {to_checksum_address(a) for a in canary_operators}
        self.down = False
        self.lock = threading.RLock()
        self._tx_count = 0

    # -- test controls -----------------------------------------------------------------------
    def port(self, address: str) -> Any:
        from trustnode.chain.port.memory import MemoryPort

        return MemoryPort(self, address, abstain=self.abstain)

    def fund(self, address: str, amount: int) -> None:
        with self.lock:
            a = to_checksum_address(address)
            self.balances[a] = self.balances.get(a, 0) + amount

    def mine(self, blocks: int = 1) -> None:
        with self.lock:
            self.block += blocks

    def set_params(self, params: SessionParams) -> None:
        """A new parameter version (sessions opened from now on use it)."""
        with self.lock:
            self.versions.append(params)

    # -- helpers for the port ------------------------------------------------------------------
    @contextmanager
    def op(self) -> Iterator[None]:
        with self.lock:
            if self.down:
                raise ChainUnavailableError("chain at memory:// is not reachable: the test took it down")
            yield

    def tx(self) -> TxRef:
        """A transaction: one new block."""
        self._tx_count += 1
        self.block += 1
        return TxRef(tx_hash="0x" + keccak(self._tx_count.to_bytes(8, "big")).hex(), block=self.block)

    def emit(self, name: str, tx: TxRef, data: Any) -> None:
        self.logs.append(Log(name=name, tx=tx, log_index=len(self.logs), data=data))

    def now(self) -> int:
        return self.genesis + self.block * self.block_time_s

    def session(self, session_id: int) -> Session:
        if not 1 <= session_id <= len(self.sessions):
            raise revert("UnknownSession", sessionId=session_id)
        return self.sessions[session_id - 1]

    def params_of(self, s: Session) -> SessionParams:
        return self.versions[s.version]

    def weight(self, a: Auditor) -> int:
        """Live sortition weight: parked shares count for nothing (the next snapshots drop them)."""
        stake = a.assets - a.value(a.parked)
        if not a.registered or stake < self.min_stake:
            return 0
        return stake * (a.reputation + self.reputation_floor) // WAD

    def snapshot(self) -> dict[str, int]:
        """The weights a session opened now draws from (protocol-v2 section 1, one snapshot per
        session here instead of per epoch)."""
        return {addr: w for addr, a in self.auditors.items() if (w := self.weight(a)) > 0}

    def in_undrawn_snapshot(self, auditor: str) -> bool:
        """Whether a session that may still draw counts `auditor` (its stake cannot refuse a lock)."""
        undrawn = (RoundState.CREATED, RoundState.DRAWING)
        return any(
            (auditor in s.snapshot and s.state in (SessionState.CREATED, SessionState.DRAWING))
            or any(auditor in r.snapshot and r.state in undrawn for r in s.rounds)
            for s in self.sessions
        )

    def withdrawn(self) -> dict[str, int]:
        """Tokens that have left each pool by withdrawal so far (a row's amount is set when its tokens
        leave `assets`: at the request, or at the release of a held one).  The appeal draw adds what left
        after the session's seed back to an auditor's stake (`memory_rounds`, rule S')."""
        out: dict[str, int] = {}
        for w in self.withdrawals:
            out[w.auditor] = out.get(w.auditor, 0) + w.amount
        return out

    def release_held(self, auditor: str) -> list[int]:
        """End the holds of `auditor`'s withdrawals once no drawable snapshot counts it and its free
        stake covers them (protocol-v2 5.1: the parked shares are redeemed at the price of then, so they
        bore every result in between); returns the released withdrawal ids."""
        a = self.auditors.get(auditor)
        if a is None or not a.parked or self.in_undrawn_snapshot(auditor):
            return []
        released = []
        for i, w in enumerate(self.withdrawals):
            if not (w.held and w.auditor == auditor):
                continue
            amount = a.value(w.shares)
            if amount > a.assets - a.locked:
                break  # waits behind the seats it backs, as a FLOW entry behind its sessions
            a.assets -= amount
            a.total_shares -= w.shares
            a.parked -= w.shares
            w.amount, w.ready_at, w.held, w.shares = amount, self.now() + self.cooldown_s, False, 0
            released.append(i)
        return released
