"""The provider node's duties after round 0 (issue 15): serve the appeal rounds of its sessions.

A trace job ends (DONE) when round 0 finalizes and its canaries are revealed; its session can
still change while an appeal window is open or a round runs. For each such session this
service draws a round's panel (anyone may; the provider does so it does not wait on others),
publishes the round's key manifest (the appealed segments' keys and their context sealed to
the panel's auditors under the same privacy share as round 0), ends due rounds and the appeal
phase (`advance`), refreshes the job's verdict when a round ended, and once the outcome is
final settles every seat of every round still unsettled (its own auditors settle theirs too;
seats of a round whose keys never came out have nobody else to do it).

Every step reads the chain first, so a restarted provider resumes without repeating one.
"""

from __future__ import annotations

import logging
import threading

from trustnode.chain.errors import ChainError
from trustnode.chain.port import ChainPort, NotReady
from trustnode.chain.port.types_appeals import RoundInfo, RoundState
from trustnode.models.jobs import TraceJob
from trustnode.node.chain_identity import ChainReplacedError
from trustnode.node.context import NodeContext
from trustnode.node.panels import advance_if_due, close_if_due, draw_round
from trustnode.node.pinning import job_outcome, seal_panel
from trustnode.storage.errors import StorageError

log = logging.getLogger(__name__)


class ProviderAppeals:
    """Serves the appeal rounds of the sessions this node's provider opened."""

    def __init__(self, ctx: NodeContext, *, privacy_share: float | None = None) -> None:
        self.ctx = ctx
        self.privacy_share = (
            ctx.settings.privacy.max_decrypt_share if privacy_share is None else privacy_share
        )

    @property
    def port(self) -> ChainPort:
        return self.ctx.port()

    def run(self, stop: threading.Event, *, idle_s: float = 0.5) -> None:
        """Serve until `stop` is set; an outage or a bug in one session never stops the others."""
        while not stop.is_set():
            try:
                self.step()
            except ChainReplacedError as exc:  # the sessions are the old chain's: stop, keep them
                self.ctx.chain_guard.stop(exc)
                return
            stop.wait(idle_s)

    def step(self) -> int:
        """One pass over every open session; how many were served without error.
        ChainReplacedError when the chain is another one (see `ChainGuard`)."""
        guard = self.ctx.chain_guard
        jobs = self.ctx.jobs.open_sessions()
        guard.check(force=bool(jobs))  # before acting for a session; idle, every CHECK_EVERY_S
        served = 0
        for job in jobs:
            try:
                self.serve(job)
                served += 1
            except NotReady as exc:
                log.debug("trace %s: %s", job.id, exc)
            except (ChainError, StorageError, OSError) as exc:
                if not isinstance(exc, StorageError):
                    guard.suspect()
                    guard.check()
                log.warning("trace %s: appeal duties will retry: %s", job.id, exc)
            except Exception:  # noqa: BLE001 - one session's bug must not stop the others
                log.exception("trace %s: appeal duties failed", job.id)
        return served

    def serve(self, job: TraceJob) -> None:
        port = self.port
        assert job.session_id is not None
        sid = job.session_id
        status = port.appeal_status(sid)
        rounds = port.rounds(sid) if status.rounds else []
        ended_before = {r.round for r in rounds if r.state.ended}
        for rnd in rounds:
            if not rnd.state.ended:
                self._drive_round(job, rnd)
        if close_if_due(port, sid, status, rounds) or rounds:  # read again what this pass changed
            status = port.appeal_status(sid)
            rounds = port.rounds(sid) if status.rounds else []
        if {r.round for r in rounds if r.state.ended} != ended_before or status.final or job.outcome is None:
            job.outcome = job_outcome(port, job, port.session(sid))
            for r in rounds:
                if r.state.ended and r.round not in ended_before:
                    log.info(
                        "session %d: appeal round %d %s; verdict now %s",
                        sid,
                        r.round,
                        r.state.value,
                        job.outcome.summary,
                    )
        if status.final and self._settle_all(sid, len(rounds)):
            job.final = True
        self.ctx.jobs.save(job)

    # -- one round -------------------------------------------------------------------------------

    def _drive_round(self, job: TraceJob, rnd: RoundInfo) -> None:
        port = self.port
        sid, r = rnd.session_id, rnd.round
        step = draw_round(port, rnd)
        if step is not None:
            job.tx_hashes.setdefault(f"draw_r{r}", step.tx.tx_hash)
            rnd = next(x for x in port.rounds(sid) if x.round == r)
        elif rnd.state in (RoundState.CREATED, RoundState.DRAWING) and rnd.drawn_seats < rnd.total_seats:
            return  # its randomness is not there yet
        if rnd.state == RoundState.DRAWING and rnd.drawn_seats == rnd.total_seats:
            if port.keys_published(sid, r) is None:
                self._publish(job, rnd)
            return
        tx = advance_if_due(port, rnd)
        if tx is not None and rnd.state == RoundState.REVEAL:
            job.tx_hashes[f"finalize_r{r}"] = tx.tx_hash

    def _publish(self, job: TraceJob, rnd: RoundInfo) -> None:
        """Seal the round's keys to its panel: seats plus context under the privacy share."""
        port = self.port
        sid, r = rnd.session_id, rnd.round
        bundle = seal_panel(port, job, share=self.privacy_share, round=r)
        seats = port.seats(sid, r)
        cid = self.ctx.store.add(bundle.model_dump_json().encode(), pin=True)
        tx = port.publish_keys(sid, cid, round=r)
        job.tx_hashes[f"publish_keys_r{r}"] = tx.tx_hash
        log.info(
            "session %d: published the keys of appeal round %d (segments %s) to %d auditors (tx %s)",
            sid,
            r,
            [s.index for s in rnd.segments],
            len(seats),
            tx.tx_hash,
        )

    # -- the session -----------------------------------------------------------------------------

    def _settle_all(self, sid: int, last_round: int) -> bool:
        """Settle every unsettled seat of every round; True when none is left (auditors settle
        their own too, so a race lost to one of them is no error)."""
        port = self.port
        left = 0
        for r in range(last_round + 1):
            for auditor in port.seats(sid, r):
                try:
                    if not port.vote(sid, auditor, r).settled:
                        port.settle(sid, auditor, r)
                except (ChainError, NotReady) as exc:
                    left += 1
                    log.debug("session %d round %d: could not settle %s yet: %s", sid, r, auditor, exc)
        return left == 0
