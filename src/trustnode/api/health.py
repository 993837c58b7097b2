"""`/healthz`: what this node can reach right now, probed with short timeouts.

Each dependency is probed on its own, in parallel, and bounded in time:
- the chain: the deployment file, one RPC round trip for the latest block and the code at
  AuditSessions (a chain that was reset since the deployment has none); a chain that answers
  but whose latest block is older than `stall_after_s` (by its timestamp and by what this
  process saw before) is `stalled` - a frozen or stopped miner;
- IPFS: the daemon's `version` call (the embedded store needs no daemon);
- the job queue: one read of its SQLite file.
The node is `ok` only when every dependency is; otherwise `degraded` with HTTP 503, so a load
balancer or a supervisor never takes a node that cannot work for a healthy one. No URL with
credentials appears in the answer.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Literal

import httpx
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field
from web3 import Web3

from trustnode.api.errors import public_text
from trustnode.chain.errors import redact_url
from trustnode.node.context import NodeContext
from trustnode.storage.kubo import api_base

#: Seconds each probe may take.
PROBE_TIMEOUT_S = 2.0
#: A chain whose newest block is older than this has stopped producing blocks.
STALL_AFTER_S = 60.0

CheckStatus = Literal["ok", "down", "stalled"]


class Check(BaseModel):
    """One dependency's state."""

    status: CheckStatus
    detail: str = Field(description="What was found, or what is wrong.")
    latency_ms: float | None = Field(default=None, description="Time the probe took.")


class ChainCheck(Check):
    chain_id: int | None = None
    block: int | None = Field(default=None, description="Latest block number.")
    block_age_s: float | None = Field(default=None, description="Seconds since the latest block.")
    rpc_url: str | None = Field(default=None, description="The RPC endpoint, credentials removed.")


class QueueCheck(Check):
    jobs: dict[str, int] = Field(default_factory=dict, description="Trace jobs by status.")


class Health(BaseModel):
    """The answer of `/healthz` (HTTP 200 when `ok`, 503 when `degraded`)."""

    status: Literal["ok", "degraded"]
    chain: ChainCheck
    ipfs: Check
    queue: QueueCheck


class HealthChecker:
    """Probes the node's dependencies; remembers when it last saw the chain's head move."""

    def __init__(
        self,
        ctx: NodeContext,
        *,
        timeout_s: float = PROBE_TIMEOUT_S,
        stall_after_s: float = STALL_AFTER_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.ctx = ctx
        self.timeout_s = timeout_s
        self.stall_after_s = stall_after_s
        self.clock = clock
        self._head: tuple[int, float] | None = None  # (block, local time it was first seen)
        self._lock = threading.Lock()

    def _text(self, exc: BaseException, *urls: str | None) -> str:
        return public_text(str(exc) or type(exc).__name__, self.ctx.settings, *urls)

    # -- probes (blocking; run in threads) ------------------------------------------------------

    def chain(self) -> ChainCheck:
        started = time.monotonic()
        rpc: str | None = None
        try:
            dep = self.ctx.deployment()
            rpc = dep.rpc_url
            w3 = Web3(Web3.HTTPProvider(rpc, request_kwargs={"timeout": self.timeout_s}))
            latest = w3.eth.get_block("latest")
            chain_id = int(w3.eth.chain_id)
            code = w3.eth.get_code(Web3.to_checksum_address(dep.address("AuditSessions")))
        except Exception as exc:  # noqa: BLE001 - any failure is the chain being unusable
            return ChainCheck(
                status="down",
                detail=f"not reachable: {self._text(exc, rpc)}",
                rpc_url=redact_url(rpc) if rpc else None,
                latency_ms=_ms(started),
            )
        number, stamp = int(latest["number"]), float(latest["timestamp"])
        now = self.clock()
        with self._lock:
            moved = self._head is not None and self._head[0] != number
            if self._head is None or moved:
                self._head = (number, now)
        age = max(0.0, now - stamp)
        base = {
            "chain_id": chain_id,
            "block": number,
            "block_age_s": round(age, 1),
            "rpc_url": redact_url(rpc),
            "latency_ms": _ms(started),
        }
        if chain_id != dep.chain_id:
            detail = f"chain id {chain_id}, but the deployment is on chain {dep.chain_id}"
            return ChainCheck(status="down", detail=detail, **base)  # type: ignore[arg-type]
        if not bytes(code):
            detail = "the deployment's contracts are not on this chain (was it reset? deploy again)"
            return ChainCheck(status="down", detail=detail, **base)  # type: ignore[arg-type]
        # Stalled: the head is old by its own timestamp and has not moved since the last probe
        # (a chain whose block clock runs behind still counts as live while its head moves).
        if age > self.stall_after_s and not moved:
            detail = f"no new block for {age:.0f}s (block {number}): the chain is not producing blocks"
            return ChainCheck(status="stalled", detail=detail, **base)  # type: ignore[arg-type]
        return ChainCheck(status="ok", detail=f"block {number}, {age:.0f}s old", **base)  # type: ignore[arg-type]

    def ipfs(self) -> Check:
        started = time.monotonic()
        url = self.ctx.settings.ipfs.api_url
        if not url:
            return Check(status="ok", detail="embedded store (no IPFS daemon configured)", latency_ms=0.0)
        try:
            r = httpx.post(f"{api_base(url)}/version", timeout=self.timeout_s)
            r.raise_for_status()
            version = str(r.json().get("Version", "?"))
        except Exception as exc:  # noqa: BLE001 - any failure is the daemon being unusable
            return Check(
                status="down", detail=f"not reachable: {self._text(exc, url)}", latency_ms=_ms(started)
            )
        return Check(status="ok", detail=f"daemon {version} at {redact_url(url)}", latency_ms=_ms(started))

    def queue(self) -> QueueCheck:
        started = time.monotonic()
        try:
            depth = self.ctx.jobs.depth()
        except Exception as exc:  # noqa: BLE001 - any failure is the queue being unusable
            return QueueCheck(status="down", detail=f"job queue not readable: {self._text(exc)}")
        total = sum(depth.values())
        return QueueCheck(status="ok", detail=f"{total} jobs", jobs=depth, latency_ms=_ms(started))

    # -- the answer -------------------------------------------------------------------------------

    async def check(self) -> Health:
        """All probes in parallel, each bounded by `timeout_s` (plus a little for scheduling)."""
        limit = self.timeout_s * 2 + 1.0

        async def bounded(probe: Callable[[], Check], name: str) -> Check:
            try:
                return await asyncio.wait_for(run_in_threadpool(probe), timeout=limit)
            except TimeoutError:
                return Check(status="down", detail=f"{name} did not answer within {limit:g}s")

        chain, ipfs, queue = await asyncio.gather(
            bounded(self.chain, "the chain"), bounded(self.ipfs, "IPFS"), bounded(self.queue, "the job queue")
        )
        chain_check = chain if isinstance(chain, ChainCheck) else ChainCheck(**chain.model_dump())
        queue_check = queue if isinstance(queue, QueueCheck) else QueueCheck(**queue.model_dump())
        ok = all(c.status == "ok" for c in (chain_check, ipfs, queue_check))
        return Health(status="ok" if ok else "degraded", chain=chain_check, ipfs=ipfs, queue=queue_check)


def _ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)
