"""Prometheus metrics of a node: queue depth, stage latencies, LLM use, transactions, IPFS errors.

Each app gets its own `CollectorRegistry` (so two apps in one process, as in the tests, never
collide). Gauges that describe state (queue depth, pending human seats, spooled blobs) are
read from the node's durable stores at scrape time, so they are right even after a restart;
counters are fed by the pipeline (`observe_stage`, `record_llm_usage`), by the instrumented
blob store that `install_metrics` puts in front of `ctx.store`, and by the chain client's own
send/fail counters.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from fastapi import FastAPI, Response
from fastapi.responses import PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from trustnode.audit.human_queue import HumanQueue
from trustnode.llm.client import LLMUsage
from trustnode.node.context import NodeContext
from trustnode.node.paths import human_queue_path
from trustnode.storage.base import BlobStore
from trustnode.storage.errors import RemotePinPendingError, StorageError, StorageUnavailableError

#: Buckets for pipeline stages: from a local decomposition (ms) to a chain phase (minutes).
STAGE_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900)


class NodeMetrics:
    """The metrics of one node process, in a registry of its own."""

    def __init__(self, ctx: NodeContext, registry: CollectorRegistry | None = None) -> None:
        self.ctx = ctx
        self.registry = registry or CollectorRegistry(auto_describe=True)
        r = self.registry
        self.stage_seconds = Histogram(
            "trustnode_stage_seconds",
            "Time spent in each provider pipeline stage (per attempt that completed it).",
            ["stage"],
            buckets=STAGE_BUCKETS,
            registry=r,
        )
        self.llm_calls = Counter("trustnode_llm_calls", "Answered LLM calls.", registry=r)
        self.llm_tokens = Counter("trustnode_llm_tokens", "LLM tokens used.", ["kind"], registry=r)
        self.llm_cache_hits = Counter(
            "trustnode_llm_cache_hits", "LLM answers served from cache.", registry=r
        )
        self.llm_retries = Counter(
            "trustnode_llm_retries",
            "LLM requests retried (429, 5xx, timeouts) or repaired.",
            ["kind"],
            registry=r,
        )
        self.tx_sent = Counter(
            "trustnode_chain_transactions_sent", "Transactions signed and sent to the chain.", registry=r
        )
        self.tx_failed = Counter(
            "trustnode_chain_transactions_failed",
            "Transactions that reverted or could not be sent.",
            registry=r,
        )
        self.ipfs_requests = Counter(
            "trustnode_ipfs_requests", "Blob store operations by kind.", ["op"], registry=r
        )
        self.ipfs_errors = Counter(
            "trustnode_ipfs_errors",
            "Blob store operations that failed, by kind of failure.",
            ["op", "kind"],
            registry=r,
        )
        self.ipfs_seconds = Histogram(
            "trustnode_ipfs_seconds",
            "Latency of blob store operations.",
            ["op"],
            buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30),
            registry=r,
        )
        self._chain_seen: tuple[int, int, int] | None = None  # (id(client), sent, failed)
        self._chain_lock = threading.Lock()
        r.register(_StateCollector(self))

    # -- feeding -------------------------------------------------------------------------------

    def observe_stage(self, stage: str, seconds: float) -> None:
        """The `observe` callback of `ProviderPipeline`: one completed stage took `seconds`."""
        self.stage_seconds.labels(stage=str(stage)).observe(max(0.0, float(seconds)))

    def record_llm_usage(self, usage: LLMUsage) -> None:
        """Add what an LLM client used (e.g. `client.usage(trace_id)` after a decomposition)."""
        self.llm_calls.inc(usage.calls)
        self.llm_tokens.labels(kind="prompt").inc(usage.prompt_tokens)
        self.llm_tokens.labels(kind="completion").inc(usage.completion_tokens)
        self.llm_cache_hits.inc(usage.cache_hits)
        self.llm_retries.labels(kind="retry").inc(usage.retries)
        self.llm_retries.labels(kind="repair").inc(usage.repairs)

    def sync_chain_counters(self) -> None:
        """Fold the node's chain client send/fail counts into the counters.

        The context replaces its client after an outage (and the new one counts from zero),
        so the counters add deltas per client instead of copying totals: they never go down.
        """
        client = self.ctx.current_client
        if client is None:
            return
        sent, failed = int(getattr(client, "tx_sent", 0)), int(getattr(client, "tx_failed", 0))
        with self._chain_lock:
            seen = self._chain_seen
            base_sent, base_failed = (seen[1], seen[2]) if seen and seen[0] == id(client) else (0, 0)
            if sent > base_sent:
                self.tx_sent.inc(sent - base_sent)
            if failed > base_failed:
                self.tx_failed.inc(failed - base_failed)
            self._chain_seen = (id(client), max(sent, base_sent), max(failed, base_failed))

    def render(self) -> bytes:
        self.sync_chain_counters()
        return generate_latest(self.registry)


class _StateCollector(Collector):
    """Gauges read from the durable stores at scrape time."""

    def __init__(self, metrics: NodeMetrics) -> None:
        self.metrics = metrics
        self._queue: HumanQueue | None = None

    def _human_counts(self) -> dict[str, int]:
        """Seat counts, or nothing when this node keeps no human queue (opening one creates it)."""
        if self._queue is None:
            path = human_queue_path(self.metrics.ctx.settings)
            if not path.is_file():
                return {}
            self._queue = HumanQueue(path)
        return self._queue.counts()

    def describe(self) -> Iterator[GaugeMetricFamily]:
        yield GaugeMetricFamily("trustnode_jobs", "Trace jobs by status.", labels=["status"])
        yield GaugeMetricFamily("trustnode_human_seats", "Human audit seats by state.", labels=["status"])
        yield GaugeMetricFamily("trustnode_ipfs_spool_pending", "Blobs spooled locally, waiting for IPFS.")

    def collect(self) -> Iterator[GaugeMetricFamily]:
        ctx = self.metrics.ctx
        jobs = GaugeMetricFamily("trustnode_jobs", "Trace jobs by status.", labels=["status"])
        depth = ctx.jobs.depth()
        for status in ("queued", "running", "done", "failed"):
            jobs.add_metric([status], float(depth.get(status, 0)))
        yield jobs
        seats = GaugeMetricFamily("trustnode_human_seats", "Human audit seats by state.", labels=["status"])
        counts = self._human_counts()
        for status in ("pending", "decided", "committed", "abandoned"):
            seats.add_metric([status], float(counts.get(status, 0)))
        yield seats
        spool = GaugeMetricFamily("trustnode_ipfs_spool_pending", "Blobs spooled locally, waiting for IPFS.")
        store = vars(ctx).get("store")
        pending = getattr(store, "pending", None)
        spool.add_metric([], float(len(pending())) if callable(pending) else 0.0)
        yield spool


class InstrumentedStore(BlobStore):
    """A BlobStore in front of the node's store that counts operations, errors and latency.

    Built lazily from `factory`, so creating the app never touches IPFS. Methods a concrete
    store adds (`flush`, `pending`, `is_pending`, ...) are passed through unchanged except
    `flush`, whose per-blob errors and outage are counted too.
    """

    def __init__(self, factory: Callable[[], BlobStore], metrics: NodeMetrics) -> None:
        self._factory = factory
        self._inner: BlobStore | None = None
        self._lock = threading.Lock()
        self.metrics = metrics

    @property
    def inner(self) -> BlobStore:
        with self._lock:
            if self._inner is None:
                self._inner = self._factory()
            return self._inner

    def _timed(self, op: str, fn: Callable[[], Any]) -> Any:
        m = self.metrics
        m.ipfs_requests.labels(op=op).inc()
        started = time.monotonic()
        try:
            return fn()
        except RemotePinPendingError:
            # The daemon is down: the blob is safe in the local spool but not on IPFS yet.
            m.ipfs_errors.labels(op=op, kind="spooled").inc()
            raise
        except StorageUnavailableError:
            m.ipfs_errors.labels(op=op, kind="unavailable").inc()
            raise
        except StorageError as exc:
            m.ipfs_errors.labels(op=op, kind=type(exc).__name__).inc()
            raise
        except OSError:
            m.ipfs_errors.labels(op=op, kind="os").inc()
            raise
        finally:
            m.ipfs_seconds.labels(op=op).observe(time.monotonic() - started)

    def add(self, data: bytes, *, pin: bool = True) -> str:
        cid: str = self._timed("add", lambda: self.inner.add(data, pin=pin))
        is_pending = getattr(self.inner, "is_pending", None)
        if callable(is_pending) and is_pending(cid):
            # The daemon was down: the blob is safe in the spool but not on IPFS yet.
            self.metrics.ipfs_errors.labels(op="add", kind="spooled").inc()
        return cid

    def cat(self, cid: str) -> bytes:
        data: bytes = self._timed("cat", lambda: self.inner.cat(cid))
        return data

    def pin(self, cid: str) -> None:
        self._timed("pin", lambda: self.inner.pin(cid))

    def unpin(self, cid: str) -> None:
        self._timed("unpin", lambda: self.inner.unpin(cid))

    def pins(self) -> list[str]:
        out: list[str] = self._timed("pins", self.inner.pins)
        return out

    def has(self, cid: str) -> bool:
        return bool(self._timed("has", lambda: self.inner.has(cid)))

    def close(self) -> None:
        if self._inner is not None:
            self._inner.close()

    def flush(self) -> Any:
        """Push spooled blobs (only stores with a spool have this; others raise AttributeError)."""
        inner_flush = getattr(self.inner, "flush", None)
        if inner_flush is None:
            raise AttributeError(f"{type(self.inner).__name__} has no spool to flush")
        result = self._timed("flush", inner_flush)
        errors = getattr(result, "errors", {}) or {}
        if errors:
            self.metrics.ipfs_errors.labels(op="flush", kind="blob").inc(len(errors))
        if getattr(result, "pending", None):
            self.metrics.ipfs_errors.labels(op="flush", kind="unavailable").inc()
        return result

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes this class lacks: the concrete store's extras.
        if name.startswith("_") or name in ("inner", "metrics"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"InstrumentedStore({self._inner!r})"


def install_metrics(app: FastAPI, ctx: NodeContext) -> NodeMetrics:
    """Add `/metrics`, instrument `ctx.store`, and expose the pipeline hooks on `app.state`.

    `app.state.observe_stage` is what `trustnode api serve` passes to `ProviderPipeline`.
    """
    metrics = NodeMetrics(ctx)
    existing = vars(ctx).get("store")
    if not isinstance(existing, InstrumentedStore):
        if existing is not None:
            inner_store: BlobStore = existing
            factory: Callable[[], BlobStore] = lambda: inner_store  # noqa: E731
        else:
            factory = lambda: type(ctx).store.func(ctx)  # type: ignore[attr-defined]  # noqa: E731
        ctx.store = InstrumentedStore(factory, metrics)  # type: ignore[misc]
    else:
        existing.metrics = metrics
    app.state.metrics = metrics
    app.state.observe_stage = metrics.observe_stage
    app.state.record_llm_usage = metrics.record_llm_usage

    @app.get(
        "/metrics",
        response_class=PlainTextResponse,
        responses={200: {"description": "Prometheus text exposition format."}},
        tags=["node"],
    )
    def prometheus_metrics() -> Response:
        """Prometheus text exposition of this node's metrics."""
        return Response(content=metrics.render(), media_type=CONTENT_TYPE_LATEST)

    return metrics
