"""Outages over real HTTP: with the chain or IPFS down every answer is a 503 with the JSON error
body (pages: a 503 page), /healthz probes each dependency and never says "ok" while one is
down, frozen or reset, and no RPC credential reaches any public output."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port, start_server, stop_server
from trustnode.api.app import create_app
from trustnode.chain.deployment import Deployment
from trustnode.config import Settings
from trustnode.node.context import NodeContext

ADDRESS = "0x" + "12" * 20
SECRETS = ("hunter2pass", "Zk3PROJECTKEY0123456789abcdef", "QueryToken777")
#: An RPC URL of the kind providers hand out: credentials in the user info, the path and the query.
LEAKY_RPC = f"http://alice:{SECRETS[0]}@127.0.0.1:{{port}}/v3/{SECRETS[1]}?apikey={SECRETS[2]}"
JSON_ROUTES = ["/v1/sessions", "/v1/sessions/1", "/v1/sessions/1/segments/0/proof", f"/v1/auditors/{ADDRESS}"]
PAGES = ["/sessions", "/sessions/1", f"/auditors/{ADDRESS}"]


def _no_secrets(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"credential {secret!r} leaked"


@pytest.fixture
def chain_down(tmp_path: Path) -> Iterator[str]:
    """An app whose deployment points at a closed port through a URL full of credentials."""
    dead = free_port()
    dep = Deployment(
        chain_id=31337, rpc_url=LEAKY_RPC.format(port=dead), contracts={}, deploy_block=0, deployer=ADDRESS
    )
    dep_file = tmp_path / "deployment.json"
    dep.save(dep_file)
    settings = Settings(
        data_dir=tmp_path,
        chain={"deployment_file": dep_file, "account_index": 9, "rpc_url": LEAKY_RPC.format(port=dead)},  # type: ignore[arg-type]
    )
    server, thread, url = start_server(create_app(NodeContext(settings)))
    try:
        yield url
    finally:
        stop_server(server, thread)


def test_chain_down_gives_503_json_without_credentials(chain_down: str) -> None:
    url = chain_down
    for route in JSON_ROUTES:
        r = httpx.get(f"{url}{route}", timeout=30)
        assert r.status_code == 503, (route, r.status_code, r.text)
        assert r.headers["content-type"] == "application/json"
        body = r.json()
        assert set(body) == {"error", "fields"} and "the chain is not available" in body["error"], body
        _no_secrets(r.text)
    for route in PAGES:
        r = httpx.get(f"{url}{route}", timeout=30)
        assert r.status_code == 503 and "Chain not reachable" in r.text, (route, r.text)
        _no_secrets(r.text)
    _no_secrets(httpx.get(f"{url}/metrics").text)
    _no_secrets(httpx.get(f"{url}/openapi.json").text)


def test_healthz_reports_a_dead_chain_without_credentials(chain_down: str) -> None:
    r = httpx.get(f"{chain_down}/healthz", timeout=30)
    assert r.status_code == 503
    body = r.json()
    assert body["status"] == "degraded" and body["chain"]["status"] == "down"
    assert "not reachable" in body["chain"]["detail"]
    assert body["ipfs"]["status"] == "ok" and body["queue"]["status"] == "ok"
    assert body["chain"]["rpc_url"].startswith("http://***@127.0.0.1:")
    _no_secrets(r.text)


def test_no_deployment_is_503_naming_the_fix(tmp_path: Path) -> None:
    server, thread, url = start_server(create_app(NodeContext(Settings(data_dir=tmp_path))))
    try:
        r = httpx.get(f"{url}/v1/sessions")
        assert r.status_code == 503 and "no deployment file" in r.json()["error"]
        assert "trustnode devnet up" in r.json()["error"]
        health = httpx.get(f"{url}/healthz").json()
        assert health["status"] == "degraded" and "no deployment file" in health["chain"]["detail"]
    finally:
        stop_server(server, thread)


def _app_on(dep: Deployment, tmp_path: Path, **settings: object) -> tuple[object, object, str, object]:
    dep_file = tmp_path / "deployment.json"
    dep.save(dep_file)
    s = Settings(data_dir=tmp_path, chain={"deployment_file": dep_file, "account_index": 9}, **settings)  # type: ignore[arg-type]
    app = create_app(NodeContext(s))
    server, thread, url = start_server(app)
    return server, thread, url, app


@pytest.mark.chain
def test_healthz_ok_on_a_live_chain_and_down_when_ipfs_is(devnet: Deployment, tmp_path: Path) -> None:
    server, thread, url, _ = _app_on(devnet, tmp_path / "ok")
    try:
        r = httpx.get(f"{url}/healthz")
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["status"] == "ok" and body["chain"]["status"] == "ok" and body["chain"]["block"] >= 1
        assert body["chain"]["chain_id"] == devnet.chain_id
    finally:
        stop_server(server, thread)  # type: ignore[arg-type]
    dead_ipfs = f"http://127.0.0.1:{free_port()}"
    server, thread, url, _ = _app_on(devnet, tmp_path / "ipfs", ipfs={"api_url": dead_ipfs})
    try:
        started = time.monotonic()
        r = httpx.get(f"{url}/healthz", timeout=30)
        assert time.monotonic() - started < 10, "probes are bounded"
        body = r.json()
        assert r.status_code == 503 and body["status"] == "degraded"
        assert body["ipfs"]["status"] == "down" and body["chain"]["status"] == "ok"
    finally:
        stop_server(server, thread)  # type: ignore[arg-type]


@pytest.mark.chain
def test_healthz_detects_a_reset_chain(devnet: Deployment, tmp_path: Path) -> None:
    contracts = {**devnet.contracts, "AuditSessions": "0x" + "ab" * 20}
    server, thread, url, _ = _app_on(devnet.model_copy(update={"contracts": contracts}), tmp_path)
    try:
        body = httpx.get(f"{url}/healthz").json()
        assert body["chain"]["status"] == "down" and "not on this chain" in body["chain"]["detail"]
    finally:
        stop_server(server, thread)  # type: ignore[arg-type]


@pytest.mark.chain
def test_healthz_detects_a_frozen_and_a_stalled_chain(fresh_devnet: Deployment, tmp_path: Path) -> None:
    server, thread, url, app = _app_on(fresh_devnet, tmp_path)
    try:
        assert httpx.get(f"{url}/healthz").json()["status"] == "ok"
        # Frozen: the process is stopped; connections hang instead of failing.
        assert fresh_devnet.anvil_pid is not None
        os.kill(fresh_devnet.anvil_pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            r = httpx.get(f"{url}/healthz", timeout=30)
            assert time.monotonic() - started < 10, "a hung chain does not hang the health check"
            assert r.status_code == 503 and r.json()["chain"]["status"] == "down", r.text
        finally:
            os.kill(fresh_devnet.anvil_pid, signal.SIGCONT)
        # Stalled: the chain answers but mines no more blocks.
        httpx.post(
            fresh_devnet.rpc_url,
            json={"jsonrpc": "2.0", "id": 1, "method": "evm_setIntervalMining", "params": [0]},
        )
        app.state.health.stall_after_s = 2.0  # type: ignore[attr-defined]
        httpx.get(f"{url}/healthz")
        time.sleep(3.5)
        r = httpx.get(f"{url}/healthz")
        body = r.json()
        assert r.status_code == 503 and body["chain"]["status"] == "stalled", json.dumps(body)
        assert "not producing blocks" in body["chain"]["detail"]
    finally:
        stop_server(server, thread)  # type: ignore[arg-type]


def _ipfs_cats(url: str) -> float:
    metrics = httpx.get(f"{url}/metrics").text
    m = re.search(r'^trustnode_ipfs_requests_total\{op="cat"\} ([0-9.e+]+)$', metrics, re.M)
    return float(m.group(1)) if m else 0.0


@pytest.mark.chain
def test_a_failing_bundle_fetch_is_not_repeated_on_every_page_load(
    session: tuple[object, int], fresh_devnet: Deployment, tmp_path: Path
) -> None:
    _, sid = session
    dead_ipfs = f"http://127.0.0.1:{free_port()}"
    server, thread, url, _ = _app_on(fresh_devnet, tmp_path, ipfs={"api_url": dead_ipfs, "retries": 1})
    try:
        first = httpx.get(f"{url}/sessions/{sid}", timeout=60)
        assert first.status_code == 200, "the chain's facts are shown without the bundle"
        assert "IPFS is not reachable" in first.text and 'id="hdag-missing"' in first.text
        cats = _ipfs_cats(url)
        assert cats >= 1
        for _ in range(3):
            page = httpx.get(f"{url}/sessions/{sid}", timeout=60)
            assert page.status_code == 200 and "remembered failure" in page.text
            assert httpx.get(f"{url}/v1/sessions/{sid}", timeout=60).status_code == 200
        assert _ipfs_cats(url) == cats, "no IPFS request while the failure is remembered"
    finally:
        stop_server(server, thread)  # type: ignore[arg-type]
