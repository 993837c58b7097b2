"""The provider pipeline: decompose -> validate -> encrypt and pin -> batch and shuffle ->
open session (fee paid) -> draw -> publish key envelopes -> follow to Finalized.

Every stage stores its outputs together with the stage in the job queue before the next
starts, and every on-chain stage first looks at the chain to see whether its action already
happened (a crash between sending a transaction and recording it), so a restarted worker
resumes where the last one stopped and never opens a session twice.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any, Literal

from web3.logs import DISCARD

from trustnode.chain.errors import ChainError, ContractRevertError
from trustnode.chain.protocol import Protocol, SessionParams, SessionStatus
from trustnode.hdag.offline import decompose_offline_report
from trustnode.models.hdag import HDAG
from trustnode.models.jobs import JobStatus, SegmentRecord, TraceJob, TraceStage
from trustnode.models.verdict import SessionOutcome
from trustnode.node.context import NodeContext
from trustnode.node.structure import SegmentPlaintext, SessionBundle, SessionShape
from trustnode.node.verdict import build_outcome, legacy_facts
from trustnode.storage.errors import StorageError
from trustnode.storage.segments import PreparedSession, SegmentSecret, prepare_session

log = logging.getLogger(__name__)

LEASE_S = 120.0
MAX_ATTEMPTS = 5
WAIT_S = 0.25


def weight_of(params: SessionParams, tier: int) -> int:
    """The weight a segment of `tier` must carry (1 where the provider may choose)."""
    return params.tier_weight[tier] or 1


def fee_for(params: SessionParams, tiers: list[int]) -> int:
    """The smallest fee whose 80% audit pool covers R for every seat."""
    need = sum(params.seats_per_tier[t] for t in tiers) * params.reward
    return -(-need * 10_000 // 8_000)


class Waiting(Exception):
    """The job cannot advance yet (chain phase not reached); try again after `delay_s`."""

    def __init__(self, reason: str, delay_s: float = WAIT_S) -> None:
        super().__init__(reason)
        self.delay_s = delay_s


class PermanentFailure(Exception):
    """The job can never complete (invalid trace, session cancelled or expired)."""


StageObserver = Callable[[str, float], None]
DecomposerMode = Literal["offline", "llm-five-step", "llm-single"]


class ProviderPipeline:
    """Runs trace jobs through the stages; safe to run in several threads or processes."""

    def __init__(
        self,
        ctx: NodeContext,
        *,
        decomposer: DecomposerMode = "offline",
        observe: StageObserver | None = None,
    ) -> None:
        self.ctx = ctx
        self.decomposer = decomposer
        self.observe = observe
        self._batch_lock = threading.Lock()
        self._llm: Any = None
        self.on_llm_usage: Callable[[Any], None] | None = None

    @property
    def llm_client(self) -> Any:
        """One client per pipeline, so its cache, accounting and concurrency bound are shared."""
        if self._llm is None:
            from trustnode.llm.client import LLMClient

            self._llm = LLMClient(self.ctx.settings.decomposer.llm, self.ctx.settings.llm_cache_dir)
        return self._llm

    @property
    def protocol(self) -> Protocol:
        return self.ctx.protocol()

    # -- driving ---------------------------------------------------------------------------

    def run(self, stop: threading.Event, *, idle_s: float = 0.2) -> None:
        """Work until `stop` is set."""
        while not stop.is_set():
            if not self.step():
                self.ctx.new_job.wait(idle_s)
                self.ctx.new_job.clear()

    def step(self) -> bool:
        """Advance one runnable job as far as it goes; False when none was runnable."""
        job = self.ctx.jobs.claim(LEASE_S)
        if job is None:
            return False
        try:
            self.advance(job)
        except Waiting as w:
            self.ctx.jobs.release(job, delay_s=w.delay_s)
        except PermanentFailure as exc:
            log.warning("trace %s failed: %s", job.id, exc)
            self.ctx.jobs.finish(job, JobStatus.FAILED, str(exc))
        except Exception as exc:  # noqa: BLE001 - outages and bugs alike must not kill the worker
            # Keep everything, back off, try again; the error is visible on the trace.
            # Outages are retried for as long as they last; anything else a few times.
            delay = min(30.0, 1.0 * 2 ** min(job.attempts, 5))
            expected = isinstance(exc, ChainError | StorageError | OSError)
            if not expected and job.attempts + 1 >= MAX_ATTEMPTS:
                log.error("trace %s failed at stage %s: %s", job.id, job.stage, exc, exc_info=True)
                self.ctx.jobs.finish(job, JobStatus.FAILED, f"{type(exc).__name__}: {exc}")
                return True
            log.log(
                logging.WARNING if expected else logging.ERROR,
                "trace %s stage %s will retry in %.1fs: %s",
                job.id,
                job.stage,
                delay,
                exc,
                exc_info=not expected,
            )
            self.ctx.jobs.release(job, delay_s=delay, error=f"{type(exc).__name__}: {exc}")
        return True

    def advance(self, job: TraceJob) -> None:
        stages: dict[TraceStage, Callable[[TraceJob], None]] = {
            TraceStage.RECEIVED: self._decompose,
            TraceStage.DECOMPOSED: self._pin,
            TraceStage.PINNED: self._batch,
            TraceStage.BATCHED: self._open,
            TraceStage.OPENED: self._draw,
            TraceStage.DRAWN: self._publish_keys,
            TraceStage.KEYS_PUBLISHED: self._follow,
        }
        while job.stage != TraceStage.FINALIZED:
            if job.stage_entered_at is None:
                job.stage_entered_at = job.created_at.timestamp()
            started = time.monotonic()
            before = job.stage
            stages[job.stage](job)
            if self.observe is not None:
                self.observe(str(before), time.monotonic() - started)
            now = time.time()
            job.stage_times[str(job.stage)] = round(now - job.stage_entered_at, 4)
            job.stage_entered_at = now
            job.error = None
            self.ctx.jobs.save(job, lease_s=LEASE_S)
        self.ctx.jobs.finish(job, JobStatus.DONE)

    # -- stages ------------------------------------------------------------------------------

    def _decompose(self, job: TraceJob) -> None:
        try:
            if self.decomposer != "offline" and self.ctx.settings.decomposer.llm.base_url:
                from trustnode.hdag import decompose

                client = self.llm_client
                hdag, report = decompose(job.trace, mode=self.decomposer, client=client, trace_id=job.id)
                if self.on_llm_usage is not None:
                    self.on_llm_usage(client.usage(job.id))
            else:
                hdag, report = decompose_offline_report(job.trace)
        except ValueError as exc:
            raise PermanentFailure(f"decomposition failed: {exc}") from exc
        job.hdag = hdag
        job.report = report.model_dump(mode="json")
        job.stage = TraceStage.DECOMPOSED

    def _pin(self, job: TraceJob) -> None:
        hdag = self._hdag(job)
        params = self.protocol.params()
        tiers = [int(n.primary_auditor.tier) for n in hdag.nodes]
        weights = [weight_of(params, t) for t in tiers]
        plaintexts = [
            SegmentPlaintext(
                index=i,
                node_id=n.id,
                level=n.abstraction_level,
                type=n.type,
                auditor=n.primary_auditor,
                content=n.content,
                summary=n.summary,
                domain=job.trace.domain,
            )
            .model_dump_json()
            .encode()
            for i, n in enumerate(hdag.nodes)
        ]
        prepared = prepare_session(
            self.ctx.store, plaintexts, tiers, weights, chain_id=self.protocol.client.chain_id
        )
        job.session_nonce = prepared.session_nonce
        job.merkle_root = "0x" + prepared.merkle_root.hex()
        job.segments = [
            SegmentRecord(
                index=s.index,
                node_id=hdag.nodes[s.index].id,
                cid=s.cid,
                key_hex=s.key,
                tier=s.tier,
                weight=s.weight,
            )
            for s in prepared.segments
        ]
        job.stage = TraceStage.PINNED
        if prepared.pending:
            # Kept locally under the same CIDs; opening must wait until auditors can fetch them.
            self.ctx.jobs.save(job)
            raise StorageError(f"{len(prepared.pending)} segments are not on IPFS yet (kept locally)")

    def _prepared(self, job: TraceJob) -> PreparedSession:
        assert job.session_nonce is not None
        return PreparedSession(
            chain_id=self.protocol.client.chain_id,
            session_nonce=job.session_nonce,
            segments=[
                SegmentSecret(index=s.index, cid=s.cid, tier=s.tier, weight=s.weight, key=s.key_hex)
                for s in job.segments
            ],
        )

    def _batch(self, job: TraceJob) -> None:
        """Form a batch from waiting traces (any provider) and give each a random opening slot."""
        flush = getattr(self.ctx.store, "flush", None)
        if flush is not None:
            result = flush()
            if not result.complete:
                raise StorageError("IPFS still unreachable: segments stay spooled locally")
        settings = self.ctx.settings.batch
        with self._batch_lock:
            existing = self.ctx.jobs.batch_of(job.id)
            if existing is not None:
                job.stage = TraceStage.BATCHED
                return
            waiting = self.ctx.jobs.unbatched()
            oldest = min((j.created_at for j in waiting), default=job.created_at)
            age = time.time() - oldest.timestamp()
            if len(waiting) < settings.size and age < settings.max_wait_s:
                raise Waiting("batch not full", delay_s=min(WAIT_S, settings.max_wait_s - age))
            members = waiting[: settings.size] if waiting else [job]
            if job.id not in {m.id for m in members}:
                members.append(job)
            batch_id = "b_" + secrets.token_hex(6)
            order = list(range(len(members)))
            secrets.SystemRandom().shuffle(order)
            self.ctx.jobs.assign_batch(batch_id, {m.id: rank for m, rank in zip(members, order, strict=True)})
        job.stage = TraceStage.BATCHED

    def _open(self, job: TraceJob) -> None:
        # Open in the batch's shuffled order: wait until every lower rank has opened.
        if not self.ctx.jobs.is_turn(job.id):
            raise Waiting("earlier traces of the batch open first", delay_s=0.1)
        proto = self.protocol
        root = bytes.fromhex(job.merkle_root[2:]) if job.merkle_root else b""
        existing = self._find_opened(root)
        if existing is None:
            prepared = self._prepared(job)
            params = proto.params()
            fee = fee_for(params, [s.tier for s in job.segments])
            me = proto.client.address
            allowance = proto.client.call(proto.token.functions.allowance(me, proto.sessions.address))
            if allowance < fee:
                proto.client.transact(proto.token.functions.approve(proto.sessions.address, 2**256 - 1))
            receipt = proto.client.transact(
                proto.sessions.functions.openSession(root, prepared.tiers_weights, fee)
            )
            events = proto.sessions.events.SessionOpened().process_receipt(receipt, errors=DISCARD)
            job.session_id = int(events[0]["args"]["sessionId"])
            job.tx_hashes["open"] = "0x" + bytes(receipt["transactionHash"]).hex()
        else:
            job.session_id, job.tx_hashes["open"] = existing
        self.ctx.jobs.mark_opened(job.id)
        job.stage = TraceStage.OPENED

    def _find_opened(self, root: bytes) -> tuple[int, str] | None:
        """A session this node already opened for `root` (recovery after a crash mid-open)."""
        proto = self.protocol
        logs = proto.sessions.events.SessionOpened().get_logs(
            from_block=self.ctx.deploy_block, argument_filters={"provider": proto.client.address}
        )
        for ev in logs:
            if bytes(ev["args"]["merkleRoot"]) == root:
                return int(ev["args"]["sessionId"]), "0x" + bytes(ev["transactionHash"]).hex()
        return None

    def _draw(self, job: TraceJob) -> None:
        proto = self.protocol
        sid = self._sid(job)
        state = proto.session(sid)
        if state.status in (SessionStatus.CANCELLED, SessionStatus.EXPIRED):
            raise PermanentFailure(
                f"session {sid} was {state.status.name.lower()} (not enough eligible auditors?)"
            )
        if state.status == SessionStatus.DRAWING and state.drawn_seats == state.total_seats:
            job.stage = TraceStage.DRAWN
            return
        if state.status not in (SessionStatus.CREATED, SessionStatus.DRAWING):
            job.stage = TraceStage.DRAWN
            return
        try:
            receipt = proto.client.transact(proto.sessions.functions.draw(sid, 64))
        except ContractRevertError as exc:
            if exc.name in ("TooEarly", "NotReady", "RandomnessNotReady"):
                raise Waiting("randomness not ready yet") from exc
            raise
        job.tx_hashes.setdefault("draw", "0x" + bytes(receipt["transactionHash"]).hex())
        state = proto.session(sid)
        if state.status in (SessionStatus.CANCELLED, SessionStatus.EXPIRED):
            raise PermanentFailure(f"session {sid} was {state.status.name.lower()} during the draw")
        if state.drawn_seats < state.total_seats:
            raise Waiting("draw continues", delay_s=0.0)
        job.stage = TraceStage.DRAWN

    def _publish_keys(self, job: TraceJob) -> None:
        proto = self.protocol
        sid = self._sid(job)
        status = proto.status(sid)
        if status in (SessionStatus.CANCELLED, SessionStatus.EXPIRED):
            raise PermanentFailure(f"session {sid} was {status.name.lower()} before its keys were published")
        if status == SessionStatus.DRAWING:
            shape = self._shape(job)
            seats: list[tuple[str, int]] = []
            keys: dict[str, str] = {}
            for auditor in proto.auditors_of(sid):
                keys[auditor] = proto.profile(auditor).encryption_key
                for seg in proto.seats_of(sid, auditor):
                    seats.append((auditor, seg))
                    seats.extend((auditor, c) for c in sorted(shape.context_of(seg)))
            manifest = self._prepared(job).manifest(session_id=sid, seats=seats, auditor_keys=keys)
            bundle = SessionBundle(manifest=manifest, shape=shape)
            cid = self.ctx.store.add(bundle.model_dump_json().encode(), pin=True)
            receipt = proto.client.transact(proto.sessions.functions.publishKeys(sid, cid))
            job.manifest_cid = cid
            job.tx_hashes["publish_keys"] = "0x" + bytes(receipt["transactionHash"]).hex()
        elif job.manifest_cid is None:
            logs = proto.sessions.events.KeysPublished().get_logs(
                from_block=self.ctx.deploy_block, argument_filters={"sessionId": sid}
            )
            if logs:
                job.manifest_cid = str(logs[0]["args"]["manifestCid"])
                job.tx_hashes["publish_keys"] = "0x" + bytes(logs[0]["transactionHash"]).hex()
        job.stage = TraceStage.KEYS_PUBLISHED

    def _shape(self, job: TraceJob) -> SessionShape:
        return SessionShape.from_hdag(self._hdag(job), [s.weight for s in job.segments])

    @staticmethod
    def _hdag(job: TraceJob) -> HDAG:
        if job.hdag is None:
            raise PermanentFailure("job has no HDAG at a stage that needs one")
        return job.hdag

    def _follow(self, job: TraceJob) -> None:
        proto = self.protocol
        sid = self._sid(job)
        state = proto.session(sid)
        if state.status in (SessionStatus.CANCELLED, SessionStatus.EXPIRED):
            raise PermanentFailure(f"session {sid} ended {state.status.name.lower()}")
        if state.status == SessionStatus.REVEAL:
            due = (
                proto.client.block_number() > state.reveal_deadline
                or state.revealed_count == state.auditor_count
            )
            if not due:
                raise Waiting("reveal phase open", delay_s=WAIT_S)
            receipt = proto.client.transact(proto.sessions.functions.advance(sid))
            job.tx_hashes["finalize"] = "0x" + bytes(receipt["transactionHash"]).hex()
            state = proto.session(sid)
        if state.status in (SessionStatus.KEYS_PUBLISHED, SessionStatus.COMMIT):
            if proto.client.block_number() > state.commit_deadline:
                proto.client.transact(proto.sessions.functions.advance(sid))
            raise Waiting("commit phase open", delay_s=WAIT_S)
        if state.status != SessionStatus.FINALIZED:
            raise Waiting(f"session is {state.status.name.lower()}", delay_s=WAIT_S)
        if "finalize" not in job.tx_hashes:
            logs = proto.sessions.events.SessionFinalized().get_logs(
                from_block=self.ctx.deploy_block, argument_filters={"sessionId": sid}
            )
            if logs:
                job.tx_hashes["finalize"] = "0x" + bytes(logs[0]["transactionHash"]).hex()
        job.outcome = self._outcome(job)
        job.stage = TraceStage.FINALIZED

    def _outcome(self, job: TraceJob) -> SessionOutcome:
        proto = self.protocol
        sid = self._sid(job)
        info = proto.session(sid)
        return build_outcome(
            legacy_facts(info),
            proto.segments(sid),
            beta_bps=proto.params(info.params_version).beta_bps,
            hdag=job.hdag,
            cids={s.index: s.cid for s in job.segments},
        )

    @staticmethod
    def _sid(job: TraceJob) -> int:
        if job.session_id is None:
            raise PermanentFailure("job has no session id at a stage that needs one")
        return job.session_id
