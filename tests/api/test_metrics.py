"""/metrics over real HTTP: queue depth, stage latencies from the real pipeline, LLM use from a
real client against the fake server, IPFS errors while the daemon is down, transactions on anvil."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from prometheus_client.parser import text_string_to_metric_families
from pydantic import BaseModel

from tests.conftest import ADD_THINKING, free_port, start_server
from trustnode.api.app import create_app
from trustnode.api.metrics import InstrumentedStore, NodeMetrics
from trustnode.audit.human_queue import HumanQueue
from trustnode.chain.accounts import dev_account
from trustnode.chain.deployment import Deployment
from trustnode.chain.errors import ChainError
from trustnode.chain.protocol import Protocol
from trustnode.config import LLMSettings, Settings
from trustnode.llm.client import LLMClient
from trustnode.llm.fake_server import FakeOpenAIServer, Reply
from trustnode.models.audit import ContextSegment
from trustnode.models.enums import Level
from trustnode.models.human import HumanSeat
from trustnode.models.trace import TraceInput
from trustnode.node.context import NodeContext
from trustnode.node.paths import human_queue_path
from trustnode.node.provider import ProviderPipeline
from trustnode.storage.errors import RemotePinPendingError, StorageError

TRACE = TraceInput(problem="What is 2 + 3?", thinking=ADD_THINKING, output="5")


def _serve(app: FastAPI) -> tuple[uvicorn.Server, threading.Thread, str]:
    return start_server(app)


@pytest.fixture
def node(tmp_path: Path) -> Iterator[tuple[str, NodeContext, FastAPI]]:
    # IPFS is configured but nothing listens there: the node must count that, not crash.
    settings = Settings(
        data_dir=tmp_path,
        ipfs={"api_url": f"http://127.0.0.1:{free_port()}", "timeout_s": 1.0, "retries": 0},  # type: ignore[arg-type]
    )
    ctx = NodeContext(settings)
    app = create_app(ctx)
    server, thread, url = _serve(app)
    try:
        yield url, ctx, app
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    r = httpx.get(f"{url}/metrics", timeout=10)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    out = {}
    for fam in text_string_to_metric_families(r.text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_queue_depth_and_human_seats(node: tuple[str, NodeContext, FastAPI]) -> None:
    url, ctx, _ = node
    m = scrape(url)
    assert m[("trustnode_jobs", (("status", "queued"),))] == 0
    assert m[("trustnode_human_seats", (("status", "pending"),))] == 0
    for _ in range(3):
        ctx.jobs.submit(TRACE, "key:test")
    queue = HumanQueue(human_queue_path(ctx.settings))
    addr = dev_account(5).address
    for i in range(2):
        queue.enqueue(
            HumanSeat(
                session_id=1,
                segment_index=i,
                auditor=addr,
                node_id=f"ST{i}",
                level=Level.STEP,
                problem="p",
                reasoning="r",
                dependencies=[ContextSegment(node_id="G1", level=Level.GOAL, content="g")],
            )
        )
    queue.submit(
        f"1:0:{addr.lower()}",
        "PASS",
        dict.fromkeys(("logical_consistency", "mathematical_accuracy", "completeness", "clarity"), True),
    )
    m = scrape(url)
    assert m[("trustnode_jobs", (("status", "queued"),))] == 3
    assert m[("trustnode_jobs", (("status", "done"),))] == 0
    assert m[("trustnode_human_seats", (("status", "pending"),))] == 1
    assert m[("trustnode_human_seats", (("status", "decided"),))] == 1


def test_stage_latency_from_the_real_pipeline(node: tuple[str, NodeContext, FastAPI]) -> None:
    url, ctx, app = node
    job, _ = ctx.jobs.submit(TRACE, "key:test")
    # No chain is deployed: the decomposition completes (and is observed), pinning then waits.
    pipeline = ProviderPipeline(ctx, observe=app.state.observe_stage)
    assert pipeline.step() is True
    saved = ctx.jobs.get(job.id)
    assert saved.stage == "decomposed"
    assert saved.error is not None and "no deployment file" in saved.error
    m = scrape(url)
    assert m[("trustnode_stage_seconds_count", (("stage", "received"),))] == 1
    # The histogram times the stage's own work; the job also counts the wait before it.
    assert (
        0
        < m[("trustnode_stage_seconds_sum", (("stage", "received"),))]
        <= saved.stage_times["decomposed"] + 1e-3
    )
    assert m[("trustnode_jobs", (("status", "queued"),))] == 1


class _Answer(BaseModel):
    verdict: str


def test_llm_calls_and_tokens(node: tuple[str, NodeContext, FastAPI], tmp_path: Path) -> None:
    url, _, app = node
    with FakeOpenAIServer([Reply.json({"verdict": "PASS"}), Reply.json({"verdict": "FAIL"})]) as srv:
        settings = LLMSettings(base_url=srv.base_url, model="fake-model", timeout_s=5)  # type: ignore[arg-type]
        with LLMClient(settings, tmp_path / "llm-cache", backoff_base_s=0.01) as client:
            msgs = [{"role": "user", "content": "Is 2 + 2 = 4?"}]
            client.complete_json(msgs, _Answer, trace_id="t1")
            client.complete_json([{"role": "user", "content": "Is 2 + 2 = 5?"}], _Answer, trace_id="t1")
            client.complete_json(msgs, _Answer, trace_id="t1")  # served from the cache
            usage = client.usage("t1")
    app.state.record_llm_usage(usage)
    m = scrape(url)
    assert m[("trustnode_llm_calls_total", ())] == 2 == usage.calls
    assert m[("trustnode_llm_cache_hits_total", ())] == 1
    assert m[("trustnode_llm_tokens_total", (("kind", "prompt"),))] == usage.prompt_tokens > 0
    assert m[("trustnode_llm_tokens_total", (("kind", "completion"),))] == usage.completion_tokens > 0


def test_ipfs_errors_while_the_daemon_is_down(node: tuple[str, NodeContext, FastAPI]) -> None:
    url, ctx, _ = node
    assert isinstance(ctx.store, InstrumentedStore)
    with pytest.raises(RemotePinPendingError) as info:
        ctx.store.add(b"segment ciphertext")  # spooled locally: nothing is lost
    cid = info.value.cid
    assert ctx.store.cat(cid) == b"segment ciphertext"
    result = ctx.store.flush()
    assert result.pending == [cid]
    with pytest.raises(StorageError):
        ctx.store.cat("bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy")
    m = scrape(url)
    assert m[("trustnode_ipfs_errors_total", (("kind", "spooled"), ("op", "add")))] == 1
    assert m[("trustnode_ipfs_errors_total", (("kind", "unavailable"), ("op", "flush")))] == 1
    assert (
        sum(
            v
            for (name, labels), v in m.items()
            if name == "trustnode_ipfs_errors_total" and ("op", "cat") in labels
        )
        == 1
    )
    assert m[("trustnode_ipfs_requests_total", (("op", "add"),))] == 1
    assert m[("trustnode_ipfs_spool_pending", ())] == 1


def test_each_app_has_its_own_registry(tmp_path: Path) -> None:
    a = NodeMetrics(NodeContext(Settings(data_dir=tmp_path / "a")))
    b = NodeMetrics(NodeContext(Settings(data_dir=tmp_path / "b")))
    a.observe_stage("received", 0.5)
    assert b"trustnode_stage_seconds_count" not in b.render()
    assert b'trustnode_stage_seconds_count{stage="received"} 1.0' in a.render()


@pytest.mark.chain
def test_transactions_sent_and_failed(devnet: Deployment, tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path,
        chain={"deployment_file": devnet_file(devnet, tmp_path), "account_index": 7},  # type: ignore[arg-type]
    )
    ctx = NodeContext(settings)
    app = create_app(ctx)
    server, thread, url = _serve(app)
    try:
        m = scrape(url)
        assert m[("trustnode_chain_transactions_sent_total", ())] == 0
        proto = Protocol(ctx.client(), devnet.contracts)
        proto.approve(dev_account(8).address, 5)
        proto.approve(dev_account(8).address, 6)
        with pytest.raises(ChainError):
            proto.transfer(dev_account(8).address, 10**40)  # more than account 7 holds
        m = scrape(url)
        assert m[("trustnode_chain_transactions_sent_total", ())] == 2
        assert m[("trustnode_chain_transactions_failed_total", ())] == 1
        # After an outage the context builds a new client that counts from zero: no counter goes down.
        ctx.reset_client()
        Protocol(ctx.client(), devnet.contracts).approve(dev_account(8).address, 7)
        m = scrape(url)
        assert m[("trustnode_chain_transactions_sent_total", ())] == 3
        assert m[("trustnode_chain_transactions_failed_total", ())] == 1
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def devnet_file(dep: Deployment, tmp_path: Path) -> Path:
    path = tmp_path / "deployment.json"
    path.write_text(dep.model_dump_json())
    return path
