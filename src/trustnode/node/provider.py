"""The provider pipeline: decompose -> validate -> encrypt and pin -> batch and shuffle ->
open session (fee paid) -> draw -> publish key envelopes -> follow to Finalized.

Every stage stores its outputs together with the stage in the job queue before the next
starts, and every on-chain stage first looks at the chain to see whether its action already
happened (a crash between sending a transaction and recording it), so a restarted worker
resumes where the last one stopped and never opens a session twice. Every protocol call goes
through the chain port (`NodeContext.port`).

Gold canaries come from an authorized canary operator (`node.canary_steps`): texts before
pinning, the placement after the open, the truths from the chain after the vote. A provider whose
chain wants canaries and that names no operator does not start (`NoOperator`).

Failures (`node.job_failures`): an outage (chain, IPFS, the canary operator) is retried for as
long as it lasts; a revert that can never succeed (`chain.port.reverts.PERMANENT`, e.g.
InvalidSegments, FeeTooLow) ends the job at once with the reason; a session that cannot be drawn
is not opened (the job fails saying which tier lacks auditors); a session that ends without a
verdict ends the job with its reason.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Any, Literal

from trustnode.chain.errors import ChainError
from trustnode.chain.port import ChainPort, DrawFailure, NotReady, SessionInfo
from trustnode.hdag.offline import decompose_offline_report
from trustnode.hdag.spans import privacy_problem
from trustnode.models.hdag import HDAG
from trustnode.models.jobs import ChainBinding, JobStatus, TraceJob, TraceStage
from trustnode.models.verdict import SessionOutcome, SessionState
from trustnode.node import canary_steps, opening
from trustnode.node.batching import join_batch
from trustnode.node.canary_client import CanaryClient, NoOperator, OperatorError
from trustnode.node.chain_identity import ChainReplacedError
from trustnode.node.context import NodeContext
from trustnode.node.job_failures import WAIT_S, PermanentFailure, Waiting, handle
from trustnode.node.panels import DRAW_PAGE
from trustnode.node.pinning import TooManySegments, job_outcome, pin, seal_panel
from trustnode.node.pinning import fee_for as fee_for  # re-exported: tests and the CLI import it here
from trustnode.node.seating import cancel_reason
from trustnode.storage.errors import StorageError

log = logging.getLogger(__name__)

LEASE_S = 120.0
#: How soon a job waiting for the canary operator's placement asks again (the window is short).
OPERATOR_RETRY_S = 1.0
__all__ = ["PermanentFailure", "ProviderPipeline", "Waiting", "fee_for"]


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
        privacy_share: float | None = None,
        canary_rate_bps: int | None = None,
        canary_rng: random.Random | None = None,
        canary_client: CanaryClient | None = None,
    ) -> None:
        self.ctx = ctx
        self.decomposer = decomposer
        self.observe = observe
        #: The privacy rule's share (None: the node's `privacy.max_decrypt_share` setting).
        self.privacy_share = (
            ctx.settings.privacy.max_decrypt_share if privacy_share is None else privacy_share
        )
        if not 0 < self.privacy_share <= 1:
            raise ValueError(f"privacy_share must be in (0, 1], got {self.privacy_share}")
        #: Gold canaries per 10,000 segments (None: the chain's `canaryRateBps`; see `_canary_rate`).
        self.canary_rate_bps = canary_rate_bps
        #: Where canaries go and what they say (None: the OS's randomness; tests pass a seeded one).
        self.canary_rng = canary_rng
        #: The canary operator (None: `canaries.operator_url` unset; then the chain's rate must be 0).
        self.canary_client = canary_client or CanaryClient.from_settings(ctx.settings)
        self._refuse_without_operator()
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
    def port(self) -> ChainPort:
        return self.ctx.port()

    # -- driving ---------------------------------------------------------------------------

    def run(self, stop: threading.Event, *, idle_s: float = 0.2) -> None:
        """Work until `stop` is set, or until the chain turns out to be another one (then the
        guard's `on_replaced` stops the process; every job stays in the store as it was)."""
        while not stop.is_set():
            try:
                ran = self.step()
            except ChainReplacedError as exc:
                self.ctx.chain_guard.stop(exc)
                return
            if not ran:
                self.ctx.new_job.wait(idle_s)
                self.ctx.new_job.clear()

    def step(self) -> bool:
        """Advance one runnable job as far as it goes; False when none was runnable.

        ChainReplacedError (checked before a claimed job is advanced, every `CHECK_EVERY_S` when
        idle, and after any chain error before it is held against the job) leaves the job in its stage: on a devnet restarted from
        scratch the old sessions' calls revert for good and would have failed every job."""
        guard = self.ctx.chain_guard
        guard.check()  # idle: every CHECK_EVERY_S
        job = self.ctx.jobs.claim(LEASE_S)
        if job is None:
            return False
        try:  # before acting for a job: one cheap read (a restart between two polls shows no error)
            guard.check(force=True)
        except ChainReplacedError:
            self.ctx.jobs.release(job)
            raise
        try:
            self.advance(job)
        except Exception as exc:  # noqa: BLE001 - outages and bugs alike must not kill the worker
            if isinstance(exc, ChainError | OSError):
                guard.suspect()
                try:
                    guard.check()
                except ChainReplacedError:
                    self.ctx.jobs.release(job)  # back in the queue at the stage it reached, for the old chain
                    raise
            self._handle(job, exc)
        return True

    def _handle(self, job: TraceJob, exc: Exception) -> None:
        handle(self.ctx.jobs, job, exc)

    def _refuse_without_operator(self) -> None:
        """Raise `NoOperator` when the chain wants canaries and no operator is named. A chain that
        cannot be read now is checked per job instead (such a job waits, saying why)."""
        if self.canary_client is not None:
            return
        try:
            rate = self._canary_rate()
        except (ChainError, OSError):
            return
        if rate > 0:
            raise NoOperator(rate)

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
                hdag, report = decompose(
                    job.trace,
                    mode=self.decomposer,
                    client=client,
                    trace_id=job.id,
                    max_share=self.privacy_share,
                )
                if self.on_llm_usage is not None:
                    self.on_llm_usage(client.usage(job.id))
            else:
                hdag, report = decompose_offline_report(job.trace, max_share=self.privacy_share)
        except ValueError as exc:
            raise PermanentFailure(f"decomposition failed: {exc}") from exc
        too_open = privacy_problem(hdag.document, hdag.nodes, self.privacy_share)
        if too_open is not None:  # one seat would read more of the trace than the privacy share
            raise PermanentFailure(f"not audited, to keep the privacy share: {too_open}")
        job.hdag = hdag
        job.report = report
        job.stage = TraceStage.DECOMPOSED

    def _pin(self, job: TraceJob) -> None:
        self._hdag(job)
        batch = canary_steps.texts(self.canary_client, self.port, job, self._canary_rate())
        try:
            prepared = pin(job, self.ctx.store, self.port, batch=batch, rng=self.canary_rng)
        except TooManySegments as exc:
            raise PermanentFailure(str(exc)) from exc
        job.stage = TraceStage.PINNED
        if prepared.pending:
            # Kept locally under the same CIDs; opening must wait until auditors can fetch them.
            self.ctx.jobs.save(job)
            raise StorageError(f"{len(prepared.pending)} segments are not on IPFS yet (kept locally)")

    def _canary_rate(self) -> int:
        """Canaries per 10,000 segments: the chain's `canaryRateBps` (the contract checks the count).

        `canary_rate_bps` overrides it for tests of the injection path only: on a chain that takes
        no commitments the canaries would count as trace segments there."""
        return self.port.params().canary_rate_bps if self.canary_rate_bps is None else self.canary_rate_bps

    def _batch(self, job: TraceJob) -> None:
        """Join a batch of waiting traces (any provider's) with a random opening rank."""
        join_batch(self.ctx, job, self._batch_lock)
        job.stage = TraceStage.BATCHED

    def _open(self, job: TraceJob) -> None:
        """Open this job's session and those of the batch members ranked after it that are ready,
        back to back (see `node.opening`); each follower is saved and handed back to the queue."""
        # Open in the batch's shuffled order: wait until every lower rank has opened.
        if not self.ctx.jobs.is_turn(job.id):
            raise Waiting("earlier traces of the batch open first", delay_s=0.1)
        followers = self.ctx.jobs.claim_followers(job.id, LEASE_S)
        started = time.monotonic()
        try:
            results = opening.open_jobs(self.ctx.jobs, self.port, [job, *followers], LEASE_S)
        except BaseException:
            for other in followers:  # nothing of theirs is lost: they open again from their stage
                self.ctx.jobs.release(other)
            raise
        for other in followers:
            self._follower_opened(other, results[other.id], time.monotonic() - started)
        if followers:
            self.ctx.notify_new_job()
        self._adopt(job, results[job.id])

    def _adopt(self, job: TraceJob, result: opening.OpenResult) -> None:
        """Record an open's session in the job, or raise what kept it from opening."""
        if isinstance(result, DrawFailure):
            raise PermanentFailure(f"no session opened (nothing paid): {result.reason}")
        if isinstance(result, NotReady):  # protocol v2: new auditors enter the draw's snapshot next epoch
            raise Waiting(str(result), delay_s=WAIT_S * max(1, result.retry_blocks)) from result
        if isinstance(result, Exception):
            raise result
        port = self.port
        job.session_id = result.session_id
        job.chain = ChainBinding(
            chain_id=port.chain_id, contract=port.contract, merkle_root=result.merkle_root
        )
        job.tx_hashes["open"] = result.tx.tx_hash
        self.ctx.jobs.mark_opened(job.id)
        job.stage = TraceStage.OPENED
        log.info("trace %s: opened session %d (tx %s)", job.id, result.session_id, result.tx.tx_hash)

    def _follower_opened(self, job: TraceJob, result: opening.OpenResult, took_s: float) -> None:
        """Finish a follower's open stage as `advance` would, and give its lease back."""
        try:
            self._adopt(job, result)
        except Exception as exc:  # noqa: BLE001 - handled as the job's own stage failure
            self._handle(job, exc)
            return
        if self.observe is not None:
            self.observe(str(TraceStage.BATCHED), took_s)
        now = time.time()
        entered = job.stage_entered_at if job.stage_entered_at is not None else job.created_at.timestamp()
        job.stage_times[str(job.stage)] = round(now - entered, 4)
        job.stage_entered_at = now
        self.ctx.jobs.release(job)

    def _session(self, job: TraceJob) -> SessionInfo:
        """The job's session, after checking the link still names it; ended sessions end the job."""
        port = self.port
        sid = self._sid(job)
        if job.chain is not None and (job.chain.chain_id, job.chain.contract.lower()) != (
            port.chain_id,
            port.contract.lower(),
        ):
            raise PermanentFailure(
                f"session {sid} was opened on chain {job.chain.chain_id} at {job.chain.contract}; this node "
                f"now follows chain {port.chain_id} at {port.contract} (was the chain reset?)"
            )
        info = port.session(sid)
        if job.merkle_root and info.merkle_root.lower() != job.merkle_root.lower():
            raise PermanentFailure(
                f"session {sid} on this chain commits to root {info.merkle_root}, not this trace's "
                f"{job.merkle_root} (was the chain reset?)"
            )
        if info.state.ended_without_verdict:
            reason = cancel_reason(port, info, [s.tier for s in job.segments])
            job.outcome = self._outcome(job, info, reason=reason)
            self._release_seats(sid)
            raise PermanentFailure(f"session {sid} {info.state.value}: {reason}")
        return info

    def _release_seats(self, sid: int) -> None:
        """Settle every drawn auditor of a session that ended without a verdict (protocol v2): each
        seat is paid R and its stake unlocked, and the auditors' ledgers move on. Auditors never saw
        keys for it, so nobody else would. Best effort: a refusal is logged, the job fails anyway."""
        port = self.port
        for auditor in port.seats(sid):
            try:
                port.settle(sid, auditor)
            except (ChainError, NotReady) as exc:
                log.warning("session %d: could not settle drawn auditor %s: %s", sid, auditor, exc)

    def _draw(self, job: TraceJob) -> None:
        info = self._session(job)
        self._place_canaries(job)  # before the draw's randomness is known
        if info.state not in (SessionState.CREATED, SessionState.DRAWING) or info.draw_complete:
            job.stage = TraceStage.DRAWN
            return
        try:
            step = self.port.draw(info.session_id, DRAW_PAGE)
        except NotReady as exc:
            raise Waiting(str(exc)) from exc
        job.tx_hashes.setdefault("draw", step.tx.tx_hash)
        if step.state.ended_without_verdict:
            self._session(job)  # raises with the reason
        if step.drawn_seats < step.total_seats:
            raise Waiting("draw continues", delay_s=0.0)
        job.stage = TraceStage.DRAWN

    def _place_canaries(self, job: TraceJob) -> None:
        """The operator commits the canaries before the draw; the job waits for it, shown on the trace."""
        try:
            committed = canary_steps.place(self.canary_client, self.port, job)
        except OperatorError as exc:
            self.ctx.jobs.save(job, lease_s=LEASE_S)
            raise Waiting(f"waiting for the canary operator: {exc}", OPERATOR_RETRY_S, show=True) from exc
        if committed is not None:
            job.tx_hashes["commit_canaries"] = committed
        self.ctx.jobs.save(job, lease_s=LEASE_S)

    def _publish_keys(self, job: TraceJob) -> None:
        port = self.port
        info = self._session(job)
        sid = info.session_id
        if info.state == SessionState.DRAWING:
            bundle = seal_panel(port, job, share=self.privacy_share)
            cid = self.ctx.store.add(bundle.model_dump_json().encode(), pin=True)
            tx = port.publish_keys(sid, cid)
            job.manifest_cid = cid
            job.tx_hashes["publish_keys"] = tx.tx_hash
        elif job.manifest_cid is None:
            published = port.keys_published(sid)
            if published is not None:
                job.manifest_cid = published.manifest_cid
                job.tx_hashes["publish_keys"] = published.tx.tx_hash
        job.stage = TraceStage.KEYS_PUBLISHED

    @staticmethod
    def _hdag(job: TraceJob) -> HDAG:
        if job.hdag is None:
            raise PermanentFailure("job has no HDAG at a stage that needs one")
        return job.hdag

    def _follow(self, job: TraceJob) -> None:
        port = self.port
        info = self._session(job)
        sid = info.session_id
        if info.state == SessionState.REVEAL:
            due = port.block_number() > info.reveal_deadline or info.revealed_count == info.auditor_count
            if not due:
                raise Waiting("reveal phase open", delay_s=WAIT_S)
            _, tx = port.advance(sid)
            job.tx_hashes["finalize"] = tx.tx_hash
            info = self._session(job)
        if info.state in (SessionState.KEYS_PUBLISHED, SessionState.COMMIT):
            if port.block_number() > info.commit_deadline:
                port.advance(sid)
            raise Waiting("commit phase open", delay_s=WAIT_S)
        if info.state != SessionState.FINALIZED:
            raise Waiting(f"session is {info.state.value}", delay_s=WAIT_S)
        try:
            canary_steps.read_reveals(port, job)  # the operator reveals; the job learns the truths
        except NotReady as exc:
            self.ctx.jobs.save(job, lease_s=LEASE_S)
            raise Waiting(str(exc), delay_s=WAIT_S * max(1, exc.retry_blocks)) from exc
        info = self._session(job)
        final = port.finalized(sid)
        if final is not None:
            job.tx_hashes["finalize"] = final.tx_hash
        job.outcome = self._outcome(job, info)
        job.stage = TraceStage.FINALIZED
        log.info("trace %s: session %d %s", job.id, sid, job.outcome.summary)

    def _outcome(self, job: TraceJob, info: SessionInfo, *, reason: str | None = None) -> SessionOutcome:
        return job_outcome(self.port, job, info, reason=reason)

    @staticmethod
    def _sid(job: TraceJob) -> int:
        if job.session_id is None:
            raise PermanentFailure("job has no session id at a stage that needs one")
        return job.session_id
