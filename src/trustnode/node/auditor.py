"""The auditor daemon: register and stake, follow sessions, audit own seats, commit, reveal,
settle, withdraw; every protocol call through the chain port.

Crash safety: a session's votes and salt are written to SQLite before the commit is sent;
every later step first reads the chain to learn whether it already happened. So a daemon
killed at any point (SIGKILL included) restarts, finds the same votes and salt, and its
reveal still matches its commitment. Its state lives under the account's own directory
(`paths.auditor_dir`), locked while it runs: a second daemon of the same account on the same
data dir is refused at start-up, daemons of other accounts share the dir safely.

Undecided seats (issue 16): a machine seat the backend could not decide (or whose LLM judge
never got a valid answer) ABSTAINS, with the reason in its evidence and a log line; a human
seat waits for the person. Nothing undecided is voted PASS, except where the contracts cannot
record an abstention (protocol v1), which the daemon says each time it happens.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent import futures
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, runtime_checkable

from pydantic import ValidationError

from trustnode.audit.base import Auditor
from trustnode.chain.errors import ChainError, ContractRevertError
from trustnode.chain.port import ChainPort, KeysPublished, NotReady, SeatsDrawn, reverts
from trustnode.chain.units import format_trust
from trustnode.models.enums import Tier
from trustnode.models.verdict import SessionState
from trustnode.node.chain_identity import (
    CHECK_EVERY_S,
    ChainReplacedError,
    check_same_chain,
    foreign_key_reason,
)
from trustnode.node.context import NodeContext
from trustnode.node.events import EventFollower
from trustnode.node.panels import panel_phase, watch_appeals
from trustnode.node.paths import auditor_dir
from trustnode.node.seat_audit import SeatAuditor, UndecidedRule, audit_seats
from trustnode.node.seat_release import SeatRelease
from trustnode.node.votes import (
    AccountLock,
    VoteRecord,
    VoteState,
    VoteStore,
    withdraw_rewards,
)
from trustnode.storage.crypto import DecryptionError
from trustnode.storage.envelopes import EncryptionKeyPair, ManifestError
from trustnode.storage.errors import StorageError

log = logging.getLogger(__name__)

WITHDRAW_EVERY_S = 10.0
COMMIT_PHASE = (SessionState.KEYS_PUBLISHED, SessionState.COMMIT)
#: Seconds between two looks at the appeal rounds of a session whose outcome is not final yet.
WATCH_EVERY_S = 5.0


BackendFactory = Callable[[VoteRecord], Auditor]


@runtime_checkable
class SeatLifecycle(Protocol):
    """A backend that wants to know what became of its decisions (the human queue does)."""

    def committed(self, rec: VoteRecord) -> None: ...
    def abandoned(self, rec: VoteRecord, reason: str) -> None: ...


def chain_identity(ctx: NodeContext) -> str | None:
    """The chain this daemon serves, for the machine-wide account lock: its RPC URL and the
    AuditSessions address (tests run many devnets with the same addresses on other ports).
    None for an injected port (in-memory tests), which has no deployment to name."""
    if ctx.fixed_port is not None:
        return None
    dep = ctx.deployment()
    return f"at {dep.rpc_url.rstrip('/')} (AuditSessions {dep.contracts.get('AuditSessions', '?')})"


class AuditorDaemon:
    """One auditor account's node process."""

    def __init__(
        self,
        ctx: NodeContext,
        tier: Tier,
        backend: Auditor | BackendFactory,
        *,
        undecided_policy: UndecidedRule | None = None,
        poll_s: float | None = None,
        max_parallel: int = 8,
    ) -> None:
        self.ctx = ctx
        self.tier = tier
        self._backend = backend
        self.undecided = undecided_policy or (
            UndecidedRule.WAIT if tier == Tier.HUMAN else UndecidedRule.ABSTAIN
        )
        self.poll_s = poll_s if poll_s is not None else ctx.settings.chain.poll_interval_s
        self.address = ctx.address
        self.home = auditor_dir(ctx.settings, self.address)
        self.lock = AccountLock(self.home, self.address, chain_identity(ctx)).acquire()
        self.votes = VoteStore(self.home / "votes.db")
        self.keys = EncryptionKeyPair.load_or_create(self.home / "encryption.key")
        self.evidence_dir = self.home / "evidence"
        self._follower: EventFollower[KeysPublished] | None = None
        self._seats_follower: EventFollower[SeatsDrawn] | None = None
        self.release = SeatRelease(lambda: self.ctx.port(), self.votes, self.address)
        self.last_error: str | None = None
        self._last_withdraw = 0.0
        self._pool = ThreadPoolExecutor(max_workers=max_parallel, thread_name_prefix="auditor-session")
        self._inflight: dict[tuple[int, int], futures.Future[None]] = {}
        self._watched: dict[int, float] = {}  # session -> when its appeals were last watched

    @property
    def port(self) -> ChainPort:
        return self.ctx.port()

    def close(self) -> None:
        """Stop the session threads and release the account lock."""
        self._pool.shutdown(wait=True)
        self.lock.release()

    def backend_for(self, rec: VoteRecord) -> Auditor:
        if callable(self._backend) and not hasattr(self._backend, "audit"):
            return self._backend(rec)
        return self._backend  # type: ignore[return-value]

    def _abandon(self, rec: VoteRecord, note: str, *, level: int = logging.WARNING) -> None:
        rec.state, rec.note = VoteState.ABANDONED, note
        self.votes.put(rec)
        self._say(rec.session_id, "%s", note, level=level)
        if isinstance(self._backend, SeatLifecycle):
            self._backend.abandoned(rec, note)

    def _committed(self, rec: VoteRecord) -> None:
        rec.state = VoteState.COMMITTED
        self.votes.put(rec)
        if isinstance(self._backend, SeatLifecycle):
            self._backend.committed(rec)

    def _say(self, sid: int, message: str, *args: Any, level: int = logging.INFO) -> None:
        log.log(
            level, "auditor %s (%s) session %d: " + message, self.address, self.tier.name.lower(), sid, *args
        )

    # -- setup ---------------------------------------------------------------------------------
    def check_chain(self) -> None:
        """ChainReplacedError when the chain is not the one this data directory served."""
        if self.ctx.fixed_port is None:
            check_same_chain(self.ctx.client(), self.home)

    def ensure_registered(self, *, stake: int | None = None, domains: int | None = None) -> None:
        """Register with this tier and encryption key, and stake up to the configured amount."""
        self.check_chain()
        p = self.port
        want = self.ctx.settings.auditor.stake if stake is None else stake
        expertise = self.ctx.settings.auditor.domains if domains is None else domains
        prof = p.profile(self.address)
        if not prof.registered:
            try:
                p.register(self.tier, expertise, self.keys.public_key)
            except ContractRevertError as exc:
                # e.g. TierHeld / TierLocked: a move to another tier waits for its hold or its seats.
                raise ChainError(
                    f"auditor {self.address} cannot register in tier {self.tier.name.lower()}: "
                    f"{reverts.explain(exc)}"
                ) from exc
        elif prof.encryption_key.lower() != self.keys.public_hex.lower():
            p.update_profile(expertise, self.keys.public_key)
        have = p.self_stake(self.address)[1]
        if have < want:
            need = want - have
            balance = p.token_balance(self.address)
            if balance < need:
                raise ChainError(
                    f"auditor {self.address} needs {format_trust(need)} to stake but holds {format_trust(balance)}"
                )
            p.stake(need)

    # -- loop ----------------------------------------------------------------------------------
    def run(self, stop: threading.Event, *, on_tick: Callable[[AuditorDaemon], None] | None = None) -> None:
        """Follow the chain until `stop`; outages back off and never lose state."""
        backoff = self.poll_s
        after_outage = False
        checked = time.monotonic()
        while not stop.is_set():
            try:
                # After an outage the chain came back: the same one, or a devnet restarted from
                # scratch; a restart between two polls shows no outage, so look now and then too.
                if after_outage or time.monotonic() - checked >= CHECK_EVERY_S:
                    self.check_chain()
                    checked = time.monotonic()
                self.tick(wait=False)
                self.last_error = None
                backoff, after_outage = self.poll_s, False
            except ChainReplacedError:
                raise  # not an outage: this daemon's state belongs to another chain
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
                self._follower = self._seats_follower = None
                self.ctx.reset_client()
                after_outage = after_outage or outage
                backoff = min(30.0, backoff * 2)
            if on_tick is not None:
                on_tick(self)
            stop.wait(backoff)

    def tick(self, *, wait: bool = True) -> None:
        """Follow the chain and give every active session its next step.

        Sessions are independent: each step runs on the pool, so one session's audit or wait for a
        block delays no other (the nonce manager orders our transactions). With `wait=False` (the
        daemon's loop) the tick returns at once and a session still busy from an earlier tick is
        left to finish, so new keys are seen within one poll however long an audit takes; an
        error of a finished step is raised by the next tick, so the loop backs off as before.
        """
        self._reap()
        self._follow_events()
        recs = [r for r in self.votes.active() if (r.session_id, r.round) not in self._inflight]
        # Cheap, deadline-bound steps (commit, reveal, settle) first; new audits after.
        recs.sort(key=lambda r: r.state == VoteState.AUDITING)
        for r in recs:
            self._inflight[(r.session_id, r.round)] = self._pool.submit(self._drive_guarded, r)
        if wait:
            futures.wait(list(self._inflight.values()))
            self._reap()
        self.release.tick()  # seats of rounds that ended before their keys
        if time.monotonic() - self._last_withdraw >= WITHDRAW_EVERY_S:
            self._last_withdraw = time.monotonic()
            self.withdraw_rewards()

    def _reap(self) -> None:
        """Forget finished session steps; raise the first error one of them ended with."""
        done = [k for k, f in self._inflight.items() if f.done()]
        errors = [e for k in done if (e := self._inflight.pop(k).exception()) is not None]
        if errors:
            raise errors[0]

    def withdraw_rewards(self) -> None:
        """Take earnings above the target stake out of the pool, and claim matured withdrawals."""
        withdraw_rewards(self.port, self.votes, self.address, self.ctx.settings.auditor.stake)

    def withdrawals(self) -> list[dict[str, Any]]:
        return [{"id": i, "amount": a, "claimed": c} for i, a, c in self.votes.withdrawals()]

    def _drive_guarded(self, rec: VoteRecord) -> None:
        try:
            self.drive(rec)
        except NotReady as exc:
            log.debug("session %d: %s", rec.session_id, exc)
        except ContractRevertError as exc:
            # One session's refusal (a phase just closed) must not stall the others.
            self._say(rec.session_id, "%s", reverts.explain(exc), level=logging.WARNING)
            rec.note = str(exc)
            self.votes.put(rec)
        except (ValidationError, ManifestError, DecryptionError) as exc:
            # A malformed or forged bundle: it will not get better by retrying.
            why = self._foreign_key() if isinstance(exc, DecryptionError) else None
            self._abandon(rec, why or f"cannot audit (bad session bundle): {exc}", level=logging.ERROR)

    def _foreign_key(self) -> str | None:
        return foreign_key_reason(self.port, self.address, self.keys.public_hex, self.home)

    def _follow_events(self) -> None:
        port = self.port
        if self._follower is None or self._seats_follower is None:
            start = port.deploy_block
            self._follower = EventFollower(port, self.votes.db, port.events, start_block=start)
            self._seats_follower = EventFollower(
                port, self.votes.db, port.seats_drawn, name="seats", start_block=start
            )
        self._seats_follower.poll(self.release.on_drawn)  # before keys: a key event finds the seat known
        self._follower.poll(self._on_keys)

    def _on_keys(self, ev: KeysPublished) -> None:
        if self.votes.get(ev.session_id, ev.round) is not None:
            return
        seats = self.port.seats(ev.session_id, ev.round).get(self.address, [])
        if not seats:
            return
        self.votes.put(
            VoteRecord(session_id=ev.session_id, round=ev.round, manifest_cid=ev.manifest_cid, seats=seats)
        )
        self._say(
            ev.session_id,
            "drawn for %d seat(s) (segments %s); keys published in %s",
            len(seats),
            seats,
            ev.tx.tx_hash,
        )

    # -- one session ------------------------------------------------------------------------------
    def drive(self, rec: VoteRecord) -> None:
        """Take the next step the session (or its appeal round) allows (idempotent; safe after any crash)."""
        p = self.port
        phase = panel_phase(p, rec.session_id, rec.round)
        if phase.ended:
            self._abandon(rec, phase.ended, level=logging.INFO)
            return
        if rec.state == VoteState.AUDITING:
            if phase.state not in COMMIT_PHASE:
                self._abandon(rec, f"keys seen too late ({phase.name} {phase.state.value})")
                return
            self._audit(rec, phase.commit_deadline)
        if rec.state == VoteState.DECIDED:
            self._commit(rec, phase.state)
        if rec.state == VoteState.COMMITTED and phase.state == SessionState.REVEAL:
            self._reveal(rec)
        elif (
            rec.state == VoteState.COMMITTED
            and phase.state in COMMIT_PHASE
            and p.block_number() > phase.commit_deadline
        ):
            p.advance(rec.session_id)
        if rec.state in (VoteState.COMMITTED, VoteState.REVEALED) and phase.state == SessionState.FINALIZED:
            if p.appeal_status(rec.session_id).final:  # every round is scored against the final outcome
                self._settle(rec)
            elif time.monotonic() - self._watched.get(rec.session_id, -WATCH_EVERY_S) >= WATCH_EVERY_S:
                self._watched[rec.session_id] = time.monotonic()
                watch_appeals(p, rec.session_id)  # rounds nobody drew; the phase's end when due

    def _audit(self, rec: VoteRecord, commit_deadline: int) -> None:
        audit_seats(self._seat_auditor(), rec, self.backend_for(rec))
        self.votes.put(rec)  # durable before any commit is sent

    def _seat_auditor(self) -> SeatAuditor:
        return SeatAuditor(
            store=self.ctx.store,
            port=self.port,
            address=self.address,
            private_key=self.keys.private_key,
            undecided=self.undecided,
            evidence_dir=self.evidence_dir,
            say=self._say,
        )

    def _commit(self, rec: VoteRecord, state: SessionState) -> None:
        p = self.port
        supported = p.capabilities.abstain
        ballot = rec.ballot(abstain_supported=supported)
        if p.commitment_matches(rec.session_id, ballot, rec.salt_bytes, rec.round):
            self._committed(rec)
            return
        if state not in COMMIT_PHASE:
            self._abandon(rec, "commit phase over before the vote was committed")
            return
        if not supported and rec.reasons:
            self._say(
                rec.session_id,
                "these contracts (protocol v%d) cannot record an abstention: seats %s go out as PASS",
                p.capabilities.protocol_version,
                sorted(rec.reasons),
                level=logging.WARNING,
            )
        tx = p.commit(rec.session_id, ballot, rec.salt_bytes, rec.round)
        rec.tx_hashes["commit"] = tx.tx_hash
        self._committed(rec)
        self._say(rec.session_id, "committed %s (tx %s)", ballot.describe(), tx.tx_hash)

    def _reveal(self, rec: VoteRecord) -> None:
        p = self.port
        ballot = rec.ballot(abstain_supported=p.capabilities.abstain)
        tx = p.reveal(rec.session_id, ballot, rec.salt_bytes, rec.round)
        if tx is not None:
            rec.tx_hashes["reveal"] = tx.tx_hash
            self._say(rec.session_id, "revealed %s (tx %s)", ballot.describe(), tx.tx_hash)
        rec.state = VoteState.REVEALED
        self.votes.put(rec)

    def _settle(self, rec: VoteRecord) -> None:
        p = self.port
        done = p.settle(rec.session_id, self.address, rec.round)
        if done is None:
            found = p.settlements(auditor=self.address, session_id=rec.session_id)
            done = next((f for f in found if f.round == rec.round), None)
        if done is not None:
            rec.tx_hashes["settle"] = done.tx.tx_hash
            slash = p.params(p.session(rec.session_id).params_version).slash_amount
            self._say(
                rec.session_id,
                "settled"
                + (f" appeal round {rec.round}" if rec.round else "")
                + ": %d correct, %d incorrect, reward %s, %d slashes (%s), reputation %.4f",
                done.correct,
                done.incorrect,
                format_trust(done.reward),
                done.slashes,
                format_trust(done.slashes * slash),
                done.reputation / 10**18,
            )
        rec.state = VoteState.SETTLED
        self.votes.put(rec)

    def status(self) -> dict[str, Any]:
        recs = self.votes.all()
        return {
            "address": self.address,
            "tier": self.tier.name.lower(),
            "sessions": {s.value: sum(1 for r in recs if r.state == s) for s in {r.state for r in recs}},
            "last_error": self.last_error,
            "time": time.time(),
        }
