"""POST /v1/traces and GET /v1/traces/{id}: auth, limits and clear errors, over real HTTP."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import ADD_THINKING, start_server, stop_server
from trustnode.api.app import create_app
from trustnode.api.auth import sign_request
from trustnode.chain.accounts import dev_account
from trustnode.config import Settings
from trustnode.hdag.offline import decompose_offline
from trustnode.node.context import NodeContext

API_KEY = "provider-secret-key"
TRACE = {"problem": "What is 2 + 3?", "thinking": ADD_THINKING, "output": "5"}


SIGNER = dev_account(9)


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[str, NodeContext]]:
    settings = Settings(
        data_dir=tmp_path,
        api={"api_keys": [API_KEY], "allowed_signers": [SIGNER.address], "max_body_bytes": 20_000},  # type: ignore[arg-type]
    )
    ctx = NodeContext(settings)
    server, thread, url = start_server(create_app(ctx))
    try:
        yield url, ctx
    finally:
        stop_server(server, thread)


def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {API_KEY}"}


def test_submit_with_api_key_is_queued(api: tuple[str, NodeContext]) -> None:
    url, ctx = api
    r = httpx.post(f"{url}/v1/traces", json=TRACE, headers=auth())
    assert r.status_code == 202, r.text
    body = r.json()
    assert body["trace_id"].startswith("tr_") and body["status"] == "queued" and body["stage"] == "received"
    assert r.headers["location"] == f"/v1/traces/{body['trace_id']}"
    job = ctx.jobs.get(body["trace_id"])
    assert job.trace.problem == TRACE["problem"]
    got = httpx.get(f"{url}/v1/traces/{body['trace_id']}", headers=auth())
    assert got.status_code == 200 and got.json()["status"] == "queued"


def test_submit_with_eip191_signature(api: tuple[str, NodeContext]) -> None:
    url, ctx = api
    body = json.dumps(TRACE).encode()
    headers = {
        "Content-Type": "application/json",
        **sign_request(SIGNER.key.hex(), "POST", "/v1/traces", body),
    }
    r = httpx.post(f"{url}/v1/traces", content=body, headers=headers)
    assert r.status_code == 202, r.text
    assert ctx.jobs.get(r.json()["trace_id"]).provider == f"addr:{SIGNER.address}"


def test_a_signer_not_allowed_is_refused(api: tuple[str, NodeContext]) -> None:
    url, ctx = api
    body = json.dumps(TRACE).encode()
    headers = {
        "Content-Type": "application/json",
        **sign_request(dev_account(8).key.hex(), "POST", "/v1/traces", body),
    }
    r = httpx.post(f"{url}/v1/traces", content=body, headers=headers)
    assert r.status_code == 403
    assert "api.allowed_signers" in r.json()["error"] and dev_account(8).address in r.json()["error"]
    assert ctx.jobs.depth() == {}


def test_signature_over_another_body_is_refused(api: tuple[str, NodeContext]) -> None:
    url, _ = api
    headers = sign_request(dev_account(9).key.hex(), "POST", "/v1/traces", b'{"problem": "other"}')
    r = httpx.post(f"{url}/v1/traces", content=json.dumps(TRACE).encode(), headers=headers)
    assert r.status_code == 401
    assert "X-Signature was not made by X-Signer" in r.json()["error"]


def test_old_signature_is_refused(api: tuple[str, NodeContext]) -> None:
    url, _ = api
    body = json.dumps(TRACE).encode()
    headers = sign_request(
        dev_account(9).key.hex(), "POST", "/v1/traces", body, timestamp=int(time.time()) - 3600
    )
    r = httpx.post(f"{url}/v1/traces", content=body, headers=headers)
    assert r.status_code == 401 and "X-Timestamp" in r.json()["error"]


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({}, "authentication required"),
        ({"Authorization": "Bearer wrong"}, "unknown API key"),
        ({"X-Signer": "0x" + "11" * 20}, "needs all of X-Signer, X-Timestamp and X-Signature"),
    ],
)
def test_wrong_auth(api: tuple[str, NodeContext], headers: dict[str, str], message: str) -> None:
    url, _ = api
    r = httpx.post(f"{url}/v1/traces", json=TRACE, headers=headers)
    assert r.status_code == 401
    assert message in r.json()["error"]


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"thinking": "x"}, "problem"),
        ({"problem": "p"}, "(body)"),
        ({"problem": "p", "thinking": "t", "steps": ["a"]}, "(body)"),
        ({"problem": "p", "steps": ["a", "  "]}, "(body)"),
        ({"problem": "p", "thinking": "t", "colour": "red"}, "colour"),
        ({"problem": 5, "thinking": "t"}, "problem"),
    ],
)
def test_invalid_trace_names_the_field(
    api: tuple[str, NodeContext], payload: dict[str, object], field: str
) -> None:
    url, ctx = api
    r = httpx.post(f"{url}/v1/traces", json=payload, headers=auth())
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["error"].startswith("invalid "), body
    assert field in [f["field"] for f in body["fields"]]
    assert ctx.jobs.depth() == {}


def test_not_json_and_not_an_object(api: tuple[str, NodeContext]) -> None:
    url, _ = api
    r = httpx.post(
        f"{url}/v1/traces", content=b"{nope", headers={**auth(), "Content-Type": "application/json"}
    )
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]
    r = httpx.post(f"{url}/v1/traces", json=[1, 2], headers=auth())
    assert r.status_code == 422 and "JSON object" in r.json()["error"]


def test_oversized_body_is_413(api: tuple[str, NodeContext]) -> None:
    url, ctx = api
    big = {**TRACE, "thinking": "x" * 50_000}
    r = httpx.post(f"{url}/v1/traces", json=big, headers=auth())
    assert r.status_code == 413
    assert "exceeds the limit of 20000 bytes" in r.json()["error"]
    assert ctx.jobs.depth() == {}


def test_unknown_trace_id_is_404(api: tuple[str, NodeContext]) -> None:
    url, _ = api
    r = httpx.get(f"{url}/v1/traces/tr_doesnotexist", headers=auth())
    assert r.status_code == 404 and "tr_doesnotexist" in r.json()["error"]


def test_idempotency_key_returns_the_same_trace(api: tuple[str, NodeContext]) -> None:
    url, ctx = api
    h = {**auth(), "Idempotency-Key": "abc-1"}
    first = httpx.post(f"{url}/v1/traces", json=TRACE, headers=h)
    second = httpx.post(f"{url}/v1/traces", json=TRACE, headers=h)
    assert first.status_code == 202 and second.status_code == 200
    assert first.json()["trace_id"] == second.json()["trace_id"]
    assert sum(ctx.jobs.depth().values()) == 1


def test_hdag_only_for_its_provider(api: tuple[str, NodeContext]) -> None:
    url, ctx = api
    tid = httpx.post(f"{url}/v1/traces", json=TRACE, headers=auth()).json()["trace_id"]
    job = ctx.jobs.get(tid)
    job.hdag = decompose_offline(job.trace)
    ctx.jobs.save(job)
    mine = httpx.get(f"{url}/v1/traces/{tid}", headers=auth()).json()
    assert mine["hdag"]["nodes"][0]["content"] == TRACE["problem"]
    public = httpx.get(f"{url}/v1/traces/{tid}").json()
    assert public["hdag"] is None and public["status"] == "queued"
    other = httpx.get(
        f"{url}/v1/traces/{tid}", headers=sign_request(SIGNER.key.hex(), "GET", f"/v1/traces/{tid}")
    ).json()
    assert other["hdag"] is None, "another provider does not see it"
    stranger = httpx.get(
        f"{url}/v1/traces/{tid}", headers=sign_request(dev_account(8).key.hex(), "GET", f"/v1/traces/{tid}")
    )
    assert stranger.status_code == 403
