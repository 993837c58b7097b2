"""A whole network on the in-memory chain: one provider pipeline, auditor daemons, one shared
local blob store. Every component is the real one; only the chain is `MemoryChain`, so a
session runs from submission to settlement in milliseconds."""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trustnode.audit.base import Auditor, undecided
from trustnode.chain.accounts import dev_account
from trustnode.chain.port.memory_state import MEMORY_SESSION_PARAMS, MemoryChain
from trustnode.chain.protocol import SessionParams
from trustnode.config import Settings
from trustnode.models.audit import AuditResult, AuditTask, Evidence
from trustnode.models.enums import Tier, Verdict
from trustnode.models.jobs import JobStatus, TraceJob
from trustnode.models.trace import TraceInput
from trustnode.node.appeals import ProviderAppeals
from trustnode.node.auditor import AuditorDaemon, BackendFactory
from trustnode.node.canary_client import CanaryClient
from trustnode.node.context import NodeContext
from trustnode.node.provider import ProviderPipeline
from trustnode.storage.local import LocalStore

TOKEN = 10**18
PROVIDER = dev_account(1).address
STAKE = 1_000 * TOKEN


def address(i: int) -> str:
    return str(dev_account(i).address)


class MemoryNet:
    def __init__(
        self,
        root: Path,
        params: SessionParams | None = None,
        *,
        canary_rate_bps: int | None = None,
        canary_rng: random.Random | None = None,
        canary_client: CanaryClient | None = None,
        **chain: Any,
    ) -> None:
        self.root = root
        self.chain = MemoryChain(params or MEMORY_SESSION_PARAMS.model_copy(update={"seat_cap": 32}), **chain)
        self.store = LocalStore(root / "blobs")
        self.chain.fund(PROVIDER, 1_000_000 * TOKEN)
        self.provider_ctx = self.context(root / "provider", PROVIDER)
        self.daemons: dict[str, AuditorDaemon] = {}
        #: Other components that act once per round (a canary operator's daemon pass).
        self.ticks: list[Callable[[], object]] = []
        #: What `close()` stops besides the daemons (a canary operator's server).
        self.on_close: list[Callable[[], object]] = []
        self.canary_rate_bps, self.canary_rng = canary_rate_bps, canary_rng
        self.pipeline: ProviderPipeline  # set by start_provider
        self.appeals: ProviderAppeals
        if canary_client is not None or self.chain.port(PROVIDER).params().canary_rate_bps == 0:
            self.start_provider(canary_client)

    def start_provider(self, canary_client: CanaryClient | None = None) -> ProviderPipeline:
        """The provider's pipeline and appeal duties (a chain that wants canaries needs an operator)."""
        self.pipeline = ProviderPipeline(
            self.provider_ctx,
            canary_rate_bps=self.canary_rate_bps,
            canary_rng=self.canary_rng,
            canary_client=canary_client,
        )
        self.appeals = ProviderAppeals(self.provider_ctx)
        return self.pipeline

    def settings(self, data_dir: Path) -> Settings:
        return Settings(
            data_dir=data_dir,
            batch={"size": 1, "max_wait_s": 0},  # type: ignore[arg-type]
            auditor={"stake": STAKE},  # type: ignore[arg-type]
        )

    def context(self, data_dir: Path, who: str, chain: MemoryChain | None = None) -> NodeContext:
        return NodeContext(self.settings(data_dir), port=(chain or self.chain).port(who), store=self.store)

    def add_auditor(
        self,
        name: str,
        tier: Tier,
        backend: Auditor | BackendFactory,
        account: int,
        *,
        data_dir: Path | None = None,
    ) -> AuditorDaemon:
        who = address(account)
        self.chain.fund(who, 2 * STAKE)
        ctx = self.context(data_dir or self.root / name, who)
        daemon = AuditorDaemon(ctx, tier, backend, poll_s=0.0, max_parallel=2)
        daemon.ensure_registered()
        self.daemons[name] = daemon
        return daemon

    def submit(self, trace: TraceInput) -> str:
        job, _ = self.provider_ctx.jobs.submit(trace, "key:test")
        return job.id

    def job(self, job_id: str) -> TraceJob:
        return self.provider_ctx.jobs.get(job_id)

    def round(self) -> None:
        """One block: the provider advances every job it can, every daemon ticks, a block passes."""
        with self.provider_ctx.jobs.db.tx() as conn:  # back-off counts seconds; this chain counts blocks
            conn.execute("UPDATE jobs SET not_before = 0")
        while self.pipeline.step():
            pass
        self.appeals.step()
        for d in self.daemons.values():
            d.tick()
        for tick in self.ticks:
            tick()
        self.chain.mine(1)

    def run(self, job_ids: list[str], *, rounds: int = 400, settle: bool = True) -> dict[str, TraceJob]:
        """Run rounds until every job ended (and every seat settled)."""
        for _ in range(rounds):
            jobs = {j: self.job(j) for j in job_ids}
            ended = all(job.status in (JobStatus.DONE, JobStatus.FAILED) for job in jobs.values())
            if ended and (not settle or not any(d.votes.active() for d in self.daemons.values())):
                return jobs
            self.round()
        raise AssertionError(
            f"not finished after {rounds} rounds: {[(j.id, j.stage, j.error) for j in jobs.values()]}"
        )

    def until(self, done: Any, *, rounds: int = 400, what: str = "the condition") -> None:
        """Run rounds until `done()` holds."""
        for _ in range(rounds):
            if done():
                return
            self.round()
        raise AssertionError(f"{what} not reached after {rounds} rounds")

    def close(self) -> None:
        for d in self.daemons.values():
            d.close()
        for stop in self.on_close:
            stop()


class RecordingAuditor:
    """Wraps a backend and keeps every task it was given (what the auditor saw)."""

    def __init__(self, inner: Auditor) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", "recording")
        self.tasks: list[AuditTask] = []

    def audit(self, task: AuditTask) -> AuditResult:
        self.tasks.append(task)
        return self.inner.audit(task)


class MarkedAuditor:
    """A deterministic backend for state-machine tests: FAIL on "WRONG", undecided on "UNSURE"
    (the reason a real checker gives), PASS otherwise. The daemon's rules are under test, not it."""

    name = "marked"

    def audit(self, task: AuditTask) -> AuditResult:
        if "UNSURE" in task.content:
            return undecided(self.name, "no checkable arithmetic claim")
        verdict = Verdict.FAIL if "WRONG" in task.content else Verdict.PASS
        return AuditResult(
            verdict=verdict, decided=True, evidence=Evidence(auditor=self.name, checkable=True)
        )


def log_lines(caplog: Any, logger: str = "trustnode.node.auditor") -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger and r.levelno >= logging.INFO]
