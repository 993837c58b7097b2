"""The auditor daemon: register and stake, follow sessions, audit own seats, commit, reveal,
settle, withdraw.

Crash safety: a session's verdicts and salt are written to SQLite before the commit
transaction is sent; every later step first reads the chain to learn whether it already
happened. So a daemon killed at any point (SIGKILL included) restarts, finds the same
verdicts and salt, and its reveal still matches its commitment.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from trustnode.audit.base import Auditor
from trustnode.chain.errors import ChainError, ContractRevertError
from trustnode.chain.protocol import Protocol, SessionStatus
from trustnode.models.audit import AuditResult, AuditTask, ContextSegment, SegmentContext
from trustnode.models.enums import Tier, Verdict
from trustnode.node.context import NodeContext
from trustnode.node.events import ChainEvent, EventFollower
from trustnode.node.sqlite import Database
from trustnode.node.structure import SegmentPlaintext, SessionBundle
from trustnode.storage.envelopes import EncryptionKeyPair, open_envelopes
from trustnode.storage.errors import StorageError
from trustnode.storage.segments import fetch_segment

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS votes (session_id INTEGER PRIMARY KEY, doc TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS withdrawals (id INTEGER PRIMARY KEY, amount TEXT NOT NULL, claimed INTEGER NOT NULL DEFAULT 0);
"""
#: Rewards are withdrawn once the pool holds at least this much above the target stake.
MIN_WITHDRAWAL = 10**18
WITHDRAW_EVERY_S = 10.0


class VoteRecord(BaseModel):
    """One session from this auditor's point of view; written before anything is sent."""

    session_id: int
    manifest_cid: str
    seats: list[int]
    verdicts: list[Verdict | None] = Field(default_factory=list, description="Per seat, in seat order.")
    evidence_hashes: list[str | None] = Field(default_factory=list)
    salt: str | None = None
    state: str = "auditing"  # auditing -> decided -> committed -> revealed -> settled | abandoned
    tx_hashes: dict[str, str] = Field(default_factory=dict)
    note: str = ""

    @property
    def bitmap(self) -> int:
        return sum(1 << j for j, v in enumerate(self.verdicts) if v == Verdict.FAIL)


class VoteStore:
    def __init__(self, path: Path) -> None:
        self.db = Database(path, SCHEMA)

    def get(self, session_id: int) -> VoteRecord | None:
        row = self.db.conn().execute("SELECT doc FROM votes WHERE session_id = ?", (session_id,)).fetchone()
        return None if row is None else VoteRecord.model_validate_json(row["doc"])

    def put(self, rec: VoteRecord) -> None:
        with self.db.tx() as conn:
            conn.execute(
                "INSERT INTO votes (session_id, doc) VALUES (?, ?) ON CONFLICT(session_id) DO UPDATE SET doc = excluded.doc",
                (rec.session_id, rec.model_dump_json()),
            )

    def active(self) -> list[VoteRecord]:
        rows = self.db.conn().execute("SELECT doc FROM votes ORDER BY session_id").fetchall()
        recs = [VoteRecord.model_validate_json(r["doc"]) for r in rows]
        return [r for r in recs if r.state not in ("settled", "abandoned")]

    def all(self) -> list[VoteRecord]:
        rows = self.db.conn().execute("SELECT doc FROM votes ORDER BY session_id").fetchall()
        return [VoteRecord.model_validate_json(r["doc"]) for r in rows]


BackendFactory = Callable[[VoteRecord], Auditor]


class AuditorDaemon:
    """One auditor's node process."""

    def __init__(
        self,
        ctx: NodeContext,
        tier: Tier,
        backend: Auditor | BackendFactory,
        *,
        undecided_policy: Verdict | None = Verdict.PASS,
        poll_s: float | None = None,
        max_parallel: int = 8,
    ) -> None:
        """`undecided_policy`: the vote cast for a seat the backend could not decide (None: wait)."""
        self.ctx = ctx
        self.tier = tier
        self._backend = backend
        self.undecided_policy = undecided_policy
        self.poll_s = poll_s if poll_s is not None else ctx.settings.chain.poll_interval_s
        root = ctx.settings.data_dir / "auditor"
        self.votes = VoteStore(root / "votes.db")
        self.keys = EncryptionKeyPair.load_or_create(root / "encryption.key")
        self._follower: EventFollower | None = None
        self.last_error: str | None = None
        self._last_withdraw = 0.0
        self._pool = ThreadPoolExecutor(max_workers=max_parallel, thread_name_prefix="auditor-session")

    @property
    def protocol(self) -> Protocol:
        return self.ctx.protocol()

    @property
    def address(self) -> str:
        return self.protocol.client.address

    def backend_for(self, rec: VoteRecord) -> Auditor:
        if callable(self._backend) and not hasattr(self._backend, "audit"):
            return self._backend(rec)
        return self._backend  # type: ignore[return-value]

    # -- setup ---------------------------------------------------------------------------------

    def ensure_registered(self, *, stake: int | None = None, domains: int | None = None) -> None:
        """Register with this tier and encryption key, and stake up to the configured amount."""
        p = self.protocol
        c = p.client
        want = self.ctx.settings.auditor.stake if stake is None else stake
        if not c.call(p.registry.functions.isRegistered(c.address)):
            c.transact(
                p.registry.functions.register(
                    int(self.tier),
                    self.ctx.settings.auditor.domains if domains is None else domains,
                    self.keys.public_key,
                )
            )
        elif bytes(c.call(p.registry.functions.encryptionKeyOf(c.address))) != self.keys.public_key:
            c.transact(
                p.registry.functions.updateProfile(self.ctx.settings.auditor.domains, self.keys.public_key)
            )
        have = int(
            c.call(
                p.staking.functions.previewRedeem(
                    c.address, c.call(p.staking.functions.sharesOf(c.address, c.address))
                )
            )
        )
        if have < want:
            need = want - have
            balance = int(c.call(p.token.functions.balanceOf(c.address)))
            if balance < need:
                raise ChainError(f"auditor {c.address} needs {need} token wei to stake but holds {balance}")
            if int(c.call(p.token.functions.allowance(c.address, p.staking.address))) < need:
                c.transact(p.token.functions.approve(p.staking.address, 2**256 - 1))
            c.transact(p.staking.functions.stake(c.address, need))

    # -- loop ----------------------------------------------------------------------------------

    def run(self, stop: threading.Event, *, on_tick: Callable[[AuditorDaemon], None] | None = None) -> None:
        """Follow the chain until `stop`; outages back off and never lose state."""
        backoff = self.poll_s
        while not stop.is_set():
            try:
                self.tick()
                self.last_error = None
                backoff = self.poll_s
            except Exception as exc:  # noqa: BLE001 - an outage or a bug must not end the daemon
                self.last_error = f"{type(exc).__name__}: {exc}"
                outage = isinstance(exc, ChainError | StorageError | OSError)
                log.log(
                    logging.WARNING if outage else logging.ERROR,
                    "auditor %s: %s (retrying in %.1fs)",
                    self.tier.name.lower(),
                    exc,
                    backoff,
                    exc_info=not outage,
                )
                self._follower = None
                self.ctx.reset_client()
                backoff = min(30.0, backoff * 2)
            if on_tick is not None:
                on_tick(self)
            stop.wait(backoff)

    def tick(self) -> None:
        self._follow_events()
        recs = self.votes.active()
        # Cheap, deadline-bound steps (commit, reveal, settle) first; new audits after.
        recs.sort(key=lambda r: r.state == "auditing")
        # Sessions are independent: drive them concurrently so one session's wait for a
        # block does not delay the others (the nonce manager orders our transactions).
        list(self._pool.map(self._drive_guarded, recs))
        if time.monotonic() - self._last_withdraw >= WITHDRAW_EVERY_S:
            self._last_withdraw = time.monotonic()
            self.withdraw_rewards()

    def withdraw_rewards(self) -> None:
        """Take earnings above the target stake out of the pool, and claim matured withdrawals."""
        p = self.protocol
        me = self.address
        conn = self.votes.db.conn()
        now = int(p.client.w3.eth.get_block("latest")["timestamp"])
        for row in conn.execute("SELECT id FROM withdrawals WHERE claimed = 0").fetchall():
            w = p.client.call(p.staking.functions.withdrawalOf(int(row["id"])))
            if not w[4] and int(w[3]) <= now:
                p.claim_withdrawal(int(row["id"]))
            if w[4] or int(w[3]) <= now:
                with self.votes.db.tx() as tx:
                    tx.execute("UPDATE withdrawals SET claimed = 1 WHERE id = ?", (int(row["id"]),))
        shares = p.shares_of(me, me)
        if shares == 0:
            return
        value = int(p.client.call(p.staking.functions.previewRedeem(me, shares)))
        excess = value - self.ctx.settings.auditor.stake
        if excess < MIN_WITHDRAWAL:
            return
        try:
            wid = p.request_withdrawal(me, shares * excess // value)
        except ContractRevertError as exc:
            if exc.name == "StakeLocked":
                return  # earnings back open seats for now; try again later
            raise
        with self.votes.db.tx() as tx:
            tx.execute("INSERT INTO withdrawals (id, amount) VALUES (?, ?)", (wid, str(excess)))

    def withdrawals(self) -> list[dict[str, Any]]:
        rows = (
            self.votes.db.conn().execute("SELECT id, amount, claimed FROM withdrawals ORDER BY id").fetchall()
        )
        return [{"id": r["id"], "amount": int(r["amount"]), "claimed": bool(r["claimed"])} for r in rows]

    def _drive_guarded(self, rec: VoteRecord) -> None:
        try:
            self.drive(rec)
        except ContractRevertError as exc:
            # One session's refusal (a phase just closed) must not stall the others.
            log.warning("auditor %s: session %d: %s", self.tier.name.lower(), rec.session_id, exc)
            rec.note = str(exc)
            self.votes.put(rec)

    def _follow_events(self) -> None:
        if self._follower is None:
            self._follower = EventFollower(
                self.protocol.client.w3,
                self.votes.db,
                [self.protocol.sessions],
                name="sessions",
                start_block=self.ctx.deploy_block,
            )
        self._follower.poll(self._on_event)

    def _on_event(self, ev: ChainEvent) -> None:
        if ev.name != "KeysPublished":
            return
        sid = int(ev.args["sessionId"])
        if self.votes.get(sid) is not None:
            return
        seats = self.protocol.seats_of(sid, self.address)
        if not seats:
            return
        self.votes.put(VoteRecord(session_id=sid, manifest_cid=str(ev.args["manifestCid"]), seats=seats))

    # -- one session ------------------------------------------------------------------------------

    def drive(self, rec: VoteRecord) -> None:
        """Take the next step the session allows (idempotent; safe after any crash)."""
        p = self.protocol
        sid = rec.session_id
        status = p.status(sid)
        if status in (SessionStatus.CANCELLED, SessionStatus.EXPIRED):
            rec.state = "abandoned"
            rec.note = f"session {status.name.lower()}"
            self.votes.put(rec)
            return
        if rec.state == "auditing":
            if status in (SessionStatus.KEYS_PUBLISHED, SessionStatus.COMMIT):
                self._audit(rec)
            else:
                rec.state = "abandoned"
                rec.note = f"keys seen too late (session {status.name.lower()})"
                self.votes.put(rec)
                return
        if rec.state == "decided":
            self._commit(rec, status)
        if rec.state == "committed" and status == SessionStatus.REVEAL:
            self._reveal(rec)
        elif rec.state == "committed" and status in (SessionStatus.KEYS_PUBLISHED, SessionStatus.COMMIT):
            state = p.session(sid)
            if p.client.block_number() > state.commit_deadline:
                p.client.transact(p.sessions.functions.advance(sid))
        if rec.state in ("committed", "revealed") and status == SessionStatus.FINALIZED:
            self._settle(rec)

    def _tasks(self, rec: VoteRecord) -> tuple[list[AuditTask], int]:
        p = self.protocol
        bundle = SessionBundle.model_validate_json(self.ctx.store.cat(rec.manifest_cid))
        keys = open_envelopes(bundle.manifest, self.address, self.keys.private_key)
        root = bytes.fromhex(p.session(rec.session_id).merkle_root[2:])

        def plain(i: int) -> SegmentPlaintext:
            data = fetch_segment(self.ctx.store, bundle.manifest, i, keys[i], onchain_root=root)
            return SegmentPlaintext.model_validate_json(data)

        shape = bundle.shape
        goal = [plain(i) for i in shape.goal_indices() if i in keys]
        problem = goal[0].content if goal else ""
        tasks = []
        for seg in rec.seats:
            node = shape.nodes[seg]
            own = plain(seg)

            def ctx_list(indices: list[int]) -> list[ContextSegment]:
                out = []
                for i in indices:
                    if i in keys:
                        pt = plain(i)
                        out.append(ContextSegment(node_id=pt.node_id, level=pt.level, content=pt.content))
                return out

            tasks.append(
                AuditTask(
                    segment_index=seg,
                    node_id=own.node_id,
                    level=own.level,
                    auditor_type=own.auditor,
                    content=own.content,
                    context=SegmentContext(
                        problem=problem, parents=ctx_list(node.parents), children=ctx_list(node.children)
                    ),
                )
            )
        return tasks, p.session(rec.session_id).commit_deadline

    def _audit(self, rec: VoteRecord) -> None:
        tasks, _ = self._tasks(rec)
        backend = self.backend_for(rec)
        verdicts: list[Verdict | None] = []
        hashes: list[str | None] = []
        evidence_dir = self.ctx.settings.data_dir / "auditor" / "evidence"
        evidence_dir.mkdir(parents=True, exist_ok=True)
        for task in tasks:
            result: AuditResult = backend.audit(task)
            verdict: Verdict | None = result.verdict if result.decided else self.undecided_policy
            verdicts.append(verdict)
            hashes.append("0x" + result.evidence_hash().hex())
            (evidence_dir / f"{rec.session_id}-{task.segment_index}.json").write_text(
                json.dumps(
                    {"decided": result.decided, "verdict": verdict, "result": result.model_dump(mode="json")},
                    default=str,
                )
            )
        rec.verdicts = verdicts
        rec.evidence_hashes = hashes
        if all(v is not None for v in verdicts):
            rec.salt = "0x" + secrets.token_bytes(32).hex()
            rec.state = "decided"
        self.votes.put(rec)  # durable before any commit is sent

    def _commit(self, rec: VoteRecord, status: SessionStatus) -> None:
        p = self.protocol
        assert rec.salt is not None
        salt = bytes.fromhex(rec.salt[2:])
        commitment = p.compute_commitment(rec.session_id, self.address, rec.bitmap, salt)
        vote = p.vote(rec.session_id, self.address)
        if vote.committed and (vote.revealed or vote.commitment_prefix == "0x" + commitment[:24].hex()):
            rec.state = "committed"
            self.votes.put(rec)
            return
        if status not in (SessionStatus.KEYS_PUBLISHED, SessionStatus.COMMIT):
            rec.state = "abandoned"
            rec.note = "commit phase over before the vote was committed"
            self.votes.put(rec)
            return
        receipt = p.client.transact(p.sessions.functions.commit(rec.session_id, commitment))
        rec.tx_hashes["commit"] = "0x" + bytes(receipt["transactionHash"]).hex()
        rec.state = "committed"
        self.votes.put(rec)

    def _reveal(self, rec: VoteRecord) -> None:
        p = self.protocol
        if p.vote(rec.session_id, self.address).revealed:
            rec.state = "revealed"
            self.votes.put(rec)
            return
        assert rec.salt is not None
        item = (self.address, rec.bitmap, bytes.fromhex(rec.salt[2:]))
        try:
            receipt = p.client.transact(p.sessions.functions.revealBatch(rec.session_id, [item]))
        except ContractRevertError as exc:
            if exc.name == "AlreadyRevealed":
                rec.state = "revealed"
                self.votes.put(rec)
                return
            raise
        rec.tx_hashes["reveal"] = "0x" + bytes(receipt["transactionHash"]).hex()
        rec.state = "revealed"
        self.votes.put(rec)

    def _settle(self, rec: VoteRecord) -> None:
        p = self.protocol
        if not p.vote(rec.session_id, self.address).settled:
            try:
                receipt = p.client.transact(p.sessions.functions.settleBatch(rec.session_id, [self.address]))
                rec.tx_hashes["settle"] = "0x" + bytes(receipt["transactionHash"]).hex()
            except ContractRevertError as exc:
                if exc.name != "AlreadySettled":
                    raise
        rec.state = "settled"
        self.votes.put(rec)

    def status(self) -> dict[str, Any]:
        recs = self.votes.all()
        return {
            "address": self.address,
            "tier": self.tier.name.lower(),
            "sessions": {s: sum(1 for r in recs if r.state == s) for s in {r.state for r in recs}},
            "last_error": self.last_error,
            "time": time.time(),
        }
