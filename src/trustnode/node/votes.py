"""An auditor account's durable state: its sessions (votes and salts), withdrawals, and the lock
that keeps two daemons of one account off the same data directory.

Everything lives under `paths.auditor_dir(settings, address)`, so daemons of different
accounts can share a data dir; the vote store also holds the event follower's checkpoint.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import tempfile
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, Field

from trustnode.chain.errors import ContractRevertError
from trustnode.chain.port import Ballot, ChainPort, SeatVote, reverts
from trustnode.chain.port.types import PENDING_READY_AT
from trustnode.chain.units import format_trust
from trustnode.node.sqlite import PRIVATE_FILE_MODE, Database

log = logging.getLogger("trustnode.node.auditor")

#: Rewards are withdrawn once the pool holds at least this much above the target stake.
MIN_WITHDRAWAL = 10**18

SCHEMA = """
CREATE TABLE IF NOT EXISTS ballots (
    session_id INTEGER NOT NULL, round INTEGER NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (session_id, round)
);
CREATE TABLE IF NOT EXISTS withdrawals (id INTEGER PRIMARY KEY, amount TEXT NOT NULL, claimed INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS drawn (
    session_id INTEGER NOT NULL, round INTEGER NOT NULL, PRIMARY KEY (session_id, round)
);
"""


class VoteState(StrEnum):
    AUDITING = "auditing"  # keys seen; seats being audited (a human seat may wait here)
    DECIDED = "decided"  # every seat has a vote; salt chosen; nothing sent yet
    COMMITTED = "committed"
    REVEALED = "revealed"
    SETTLED = "settled"
    ABANDONED = "abandoned"


class VoteRecord(BaseModel):
    """One session round from this auditor's point of view; written before anything is sent."""

    session_id: int
    round: int = 0
    manifest_cid: str
    seats: list[int]
    votes: list[SeatVote | None] = Field(default_factory=list, description="Per seat, in seat order.")
    reasons: dict[int, str] = Field(default_factory=dict, description="Seat -> why it abstains.")
    evidence_hashes: list[str | None] = Field(default_factory=list)
    salt: str | None = None
    state: VoteState = VoteState.AUDITING
    tx_hashes: dict[str, str] = Field(default_factory=dict)
    note: str = ""

    def ballot(self, *, abstain_supported: bool) -> Ballot:
        """The ballot sent on chain. Where the contracts cannot record an abstention (protocol v1),
        an abstaining seat goes out as PASS, v1's only neutral vote; the daemon says so in its log."""
        votes = [v or SeatVote.ABSTAIN for v in self.votes]
        if not abstain_supported:
            votes = [SeatVote.PASS if v == SeatVote.ABSTAIN else v for v in votes]
        return Ballot(votes=tuple(votes))

    @property
    def salt_bytes(self) -> bytes:
        if self.salt is None:
            raise ValueError(f"session {self.session_id}: no salt before the ballot is decided")
        return bytes.fromhex(self.salt[2:])


class VoteStore:
    def __init__(self, path: Path) -> None:
        self.db = Database(path, SCHEMA)

    def get(self, session_id: int, round: int = 0) -> VoteRecord | None:
        row = (
            self.db.conn()
            .execute("SELECT doc FROM ballots WHERE session_id = ? AND round = ?", (session_id, round))
            .fetchone()
        )
        return None if row is None else VoteRecord.model_validate_json(row["doc"])

    def put(self, rec: VoteRecord) -> None:
        with self.db.tx() as conn:
            conn.execute(
                "INSERT INTO ballots (session_id, round, doc) VALUES (?, ?, ?) "
                "ON CONFLICT(session_id, round) DO UPDATE SET doc = excluded.doc",
                (rec.session_id, rec.round, rec.model_dump_json()),
            )

    def all(self) -> list[VoteRecord]:
        rows = self.db.conn().execute("SELECT doc FROM ballots ORDER BY session_id, round").fetchall()
        return [VoteRecord.model_validate_json(r["doc"]) for r in rows]

    def active(self) -> list[VoteRecord]:
        return [r for r in self.all() if r.state not in (VoteState.SETTLED, VoteState.ABANDONED)]

    # -- seats drawn whose keys have not come (node.seat_release) -----------------------------------
    def add_drawn(self, session_id: int, round: int) -> None:
        with self.db.tx() as conn:
            conn.execute("INSERT OR IGNORE INTO drawn (session_id, round) VALUES (?, ?)", (session_id, round))

    def drawn(self, limit: int) -> list[tuple[int, int]]:
        rows = (
            self.db.conn()
            .execute("SELECT session_id, round FROM drawn ORDER BY session_id, round LIMIT ?", (limit,))
            .fetchall()
        )
        return [(int(r["session_id"]), int(r["round"])) for r in rows]

    def drop_drawn(self, session_id: int, round: int) -> None:
        with self.db.tx() as conn:
            conn.execute("DELETE FROM drawn WHERE session_id = ? AND round = ?", (session_id, round))

    # -- withdrawals -----------------------------------------------------------------------------
    def add_withdrawal(self, withdrawal_id: int, amount: int) -> None:
        with self.db.tx() as conn:
            conn.execute("INSERT INTO withdrawals (id, amount) VALUES (?, ?)", (withdrawal_id, str(amount)))

    def open_withdrawals(self) -> list[int]:
        rows = self.db.conn().execute("SELECT id FROM withdrawals WHERE claimed = 0").fetchall()
        return [int(r["id"]) for r in rows]

    def close_withdrawal(self, withdrawal_id: int) -> None:
        with self.db.tx() as conn:
            conn.execute("UPDATE withdrawals SET claimed = 1 WHERE id = ?", (withdrawal_id,))

    def withdrawals(self) -> list[tuple[int, int, bool]]:
        rows = self.db.conn().execute("SELECT id, amount, claimed FROM withdrawals ORDER BY id").fetchall()
        return [(int(r["id"]), int(r["amount"]), bool(r["claimed"])) for r in rows]


def withdraw_rewards(port: ChainPort, votes: VoteStore, address: str, target_stake: int) -> None:
    """Take earnings above `target_stake` out of the account's pool, and claim matured withdrawals."""
    now = port.chain_time()
    for wid in votes.open_withdrawals():
        w = port.withdrawal(wid)
        if not w.claimed and w.ready_at == PENDING_READY_AT and port.release_withdrawal(wid) is not None:
            w = port.withdrawal(wid)
            log.info("auditor %s: withdrawal %d left its hold; claimable from %d", address, wid, w.ready_at)
        if not w.claimed and w.ready_at <= now:
            port.claim_withdrawal(wid)
            log.info("auditor %s: claimed withdrawal %d: %s", address, wid, format_trust(w.amount))
        if w.claimed or w.ready_at <= now:
            votes.close_withdrawal(wid)
    shares, value = port.self_stake(address)
    excess = value - target_stake
    if shares == 0 or excess < MIN_WITHDRAWAL:
        return
    try:
        wid = port.request_withdrawal(shares * excess // value)
    except ContractRevertError as exc:
        if reverts.is_revert(exc, reverts.INSUFFICIENT_SHARES):
            return  # shares not withdrawable yet (a deposit or seats pending); try again later
        raise
    votes.add_withdrawal(wid, excess)
    log.info("auditor %s: withdrawing rewards: %s (withdrawal %d)", address, format_trust(excess), wid)


class AccountInUseError(ValueError):
    """Another daemon of the same account already runs (on this data directory, or on this machine
    against the same chain: a misconfiguration, node commands refuse to start and say so)."""


def host_lock_dir() -> Path:
    """Per-user directory of the machine-wide account locks (outside every data directory)."""
    return Path(tempfile.gettempdir()) / f"trustnode-{os.getuid()}" / "account-locks"


class AccountLock:
    """An exclusive lock on one account's state directory, held while the daemon runs.

    Two daemons of one account would commit different salts for the same seats and lose the
    reveal; the second one is refused at start-up instead. `chain` (the RPC URL and contract
    address the daemon serves) also locks the account machine-wide, so a second daemon given
    another data directory is refused too. The OS drops the locks when the process dies
    (SIGKILL included), so a crash never leaves a stale lock.
    """

    def __init__(self, directory: Path, address: str, chain: str | None = None) -> None:
        self.path = directory / "daemon.lock"
        self.address = address
        self.chain = chain
        self._fds: list[int] = []

    def acquire(self) -> AccountLock:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._take(self.path, "on this data directory", f"{self.path.parent}, pid {{}}")
        if self.chain is not None:
            digest = hashlib.sha256(f"{self.chain}|{self.address.lower()}".encode()).hexdigest()[:32]
            host = host_lock_dir()
            host.mkdir(mode=0o700, parents=True, exist_ok=True)
            try:
                self._take(host / f"{digest}.lock", f"on this machine for the chain {self.chain}", "{}")
            except AccountInUseError:
                self.release()
                raise
        return self

    def _take(self, path: Path, where: str, holder_fmt: str) -> None:
        fd = os.open(path, os.O_CREAT | os.O_RDWR, PRIVATE_FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 512, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise AccountInUseError(
                f"another auditor daemon of account {self.address} already runs {where} "
                f"({holder_fmt.format(holder)}); two daemons of one account commit different salts for "
                "the same seats and lose the reveal: stop it, or give each daemon its own account"
            ) from None
        os.ftruncate(fd, 0)
        mine = (
            str(os.getpid()) if path == self.path else f"data directory {self.path.parent}, pid {os.getpid()}"
        )
        os.pwrite(fd, mine.encode(), 0)
        self._fds.append(fd)

    def release(self) -> None:
        for fd in self._fds:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        self._fds = []
