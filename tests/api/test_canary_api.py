"""`/v1/canary` over real HTTP on 127.0.0.1: mounted only on an operator, authenticated like the
rest of the API, bounded, and never giving away a truth or a salt. (The chain checks, commit and
reveal run on anvil in tests/node/test_canary_operator.py; nothing here reaches the chain.)"""

from __future__ import annotations

import json
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from eth_account import Account

from tests.conftest import start_server, stop_server
from trustnode.api.app import create_app
from trustnode.api.auth import request_target, sign_request
from trustnode.chain.accounts import dev_account
from trustnode.chain.port.memory_state import MEMORY_SESSION_PARAMS, MemoryChain
from trustnode.config import Settings
from trustnode.models.canary_operator import MAX_CANARIES, MAX_SHAPES, CanaryBatch, CanaryReceipt
from trustnode.models.enums import Tier
from trustnode.node.canary_operator import ticket_store_path
from trustnode.node.canary_store import CanaryStore, Ticket, TooManyOpenTickets
from trustnode.node.context import NodeContext
from trustnode.storage.local import LocalStore

KEY = "canary-api-test-key-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}
PROVIDER = dev_account(1)
SHAPES = [{"tier": 0, "chars": 120}, {"tier": 1, "chars": 300}, {"tier": 0, "chars": 60}]


def _serve(tmp_path: Path, enabled: bool, **limits: int) -> tuple[object, object, str, Settings]:
    s = Settings(
        data_dir=tmp_path,
        canary_operator={"enabled": enabled, **limits},  # type: ignore[arg-type]
        api={"api_keys": [KEY], "allowed_signers": [PROVIDER.address]},  # type: ignore[arg-type]
    )
    chain = MemoryChain(MEMORY_SESSION_PARAMS)
    ctx = NodeContext(s, port=chain.port(dev_account(9).address), store=LocalStore(tmp_path / "blobs"))
    server, thread, url = start_server(create_app(ctx))
    return server, thread, url, s


@pytest.fixture
def operator(tmp_path: Path) -> Iterator[tuple[str, Settings]]:
    server, thread, url, s = _serve(tmp_path, True)
    try:
        yield url, s
    finally:
        stop_server(server, thread)  # type: ignore[arg-type]


def _ask(url: str, body: dict[str, object], headers: dict[str, str] = AUTH) -> httpx.Response:
    return httpx.post(f"{url}/v1/canary/requests", json=body, headers=headers, timeout=30)


def test_texts_come_without_truths_and_the_ticket_is_kept_private(operator: tuple[str, Settings]) -> None:
    url, s = operator
    r = _ask(url, {"provider": PROVIDER.address, "shapes": SHAPES, "count": 4})
    assert r.status_code == 201, r.text
    batch = CanaryBatch.model_validate(r.json())
    assert [c.slot for c in batch.canaries] == [0, 1, 2, 3]
    for c in batch.canaries:
        assert c.tier == Tier(SHAPES[c.source]["tier"]) and c.text and c.auditor.tier == c.tier
    flat = json.dumps(r.json()).lower()
    assert not any(word in flat for word in ("verdict", "salt", "mutation", '"pass"', '"fail"'))
    path = ticket_store_path(s)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    got = httpx.get(f"{url}/v1/canary/requests/{batch.ticket}", headers=AUTH, timeout=10)
    assert got.status_code == 200
    assert CanaryReceipt.model_validate(got.json()).state == "issued"


def test_requests_need_credentials_and_a_ticket_belongs_to_its_client(operator: tuple[str, Settings]) -> None:
    url, _ = operator
    body = {"provider": PROVIDER.address, "shapes": SHAPES, "count": 1}
    assert _ask(url, body, headers={}).status_code == 401
    assert _ask(url, body, headers={"Authorization": "Bearer wrong-key-0123456789"}).status_code == 401
    batch = CanaryBatch.model_validate(_ask(url, body).json())
    # The provider's own EIP-191 signature is another client: it cannot read the key's ticket.
    path = f"/v1/canary/requests/{batch.ticket}"
    signed = sign_request(PROVIDER.key, "GET", request_target(path), b"", int(time.time()))
    r = httpx.get(f"{url}{path}", headers=signed, timeout=10)
    assert r.status_code == 404 and "no canary ticket" in r.json()["error"]
    assert httpx.get(f"{url}/v1/canary/requests/cn_unknown", headers=AUTH, timeout=10).status_code == 404


def test_a_client_holds_a_bounded_number_of_unplaced_tickets(tmp_path: Path) -> None:
    """Each ticket keeps texts, truths and salts on the operator's disk: one client cannot make it
    keep more than `max_open_tickets` unplaced ones, and another client is not affected."""
    server, thread, url, _ = _serve(tmp_path, True, max_open_tickets=2)
    try:
        body = {"provider": PROVIDER.address, "shapes": SHAPES, "count": 1}
        assert [_ask(url, body).status_code for _ in range(2)] == [201, 201]
        refused = _ask(url, body)
        assert refused.status_code == 429 and refused.headers["Retry-After"] == "60"
        assert "2 canary tickets not yet placed" in refused.json()["error"], refused.text
        raw = json.dumps(body).encode()
        path = "/v1/canary/requests"
        headers = sign_request(PROVIDER.key, "POST", request_target(path), raw, int(time.time()))
        other = httpx.post(
            f"{url}{path}", content=raw, headers={**headers, "Content-Type": "application/json"}, timeout=10
        )
        assert other.status_code == 201, other.text
    finally:
        stop_server(server, thread)  # type: ignore[arg-type]


def test_an_unplaced_ticket_stops_counting_after_its_ttl(tmp_path: Path) -> None:
    store = CanaryStore(tmp_path / "tickets.db")
    try:
        ticket = Ticket(ticket="cn_a", owner="key:a", provider=PROVIDER.address, canaries=[])
        store.add(ticket, max_open=1, ttl_s=0.3)
        with pytest.raises(TooManyOpenTickets):
            store.add(ticket.model_copy(update={"ticket": "cn_b"}), max_open=1, ttl_s=0.3)
        store.add(ticket.model_copy(update={"ticket": "cn_c", "owner": "key:other"}), max_open=1, ttl_s=0.3)
        time.sleep(0.4)
        store.add(ticket.model_copy(update={"ticket": "cn_d"}), max_open=1, ttl_s=0.3)
    finally:
        store.close()


def test_a_signed_request_asks_only_for_its_own_address(operator: tuple[str, Settings]) -> None:
    url, _ = operator
    other = Account.create().address
    raw = json.dumps({"provider": other, "shapes": SHAPES, "count": 1}).encode()
    path = "/v1/canary/requests"
    headers = sign_request(PROVIDER.key, "POST", request_target(path), raw, int(time.time()))
    r = httpx.post(
        f"{url}{path}", content=raw, headers={**headers, "Content-Type": "application/json"}, timeout=10
    )
    assert r.status_code == 403 and "cannot ask canaries for" in r.json()["error"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"provider": PROVIDER.address, "shapes": SHAPES, "count": MAX_CANARIES + 1}, "count"),
        ({"provider": PROVIDER.address, "shapes": [SHAPES[0]] * (MAX_SHAPES + 1), "count": 1}, "shapes"),
        (
            {"provider": PROVIDER.address, "shapes": [{"tier": 0, "chars": 10**7}], "count": 1},
            "shapes.0.chars",
        ),
        ({"provider": PROVIDER.address, "shapes": [], "count": 1}, "shapes"),
        ({"provider": "0x1234", "shapes": SHAPES, "count": 1}, "provider"),
        ({"provider": PROVIDER.address, "shapes": [{"tier": 7, "chars": 10}], "count": 1}, "shapes.0.tier"),
    ],
)
def test_oversize_or_malformed_requests_are_refused_with_the_field(
    operator: tuple[str, Settings], body: dict[str, object], field: str
) -> None:
    url, s = operator
    r = _ask(url, body)
    assert r.status_code == 422, r.text
    err = r.json()
    assert err["error"].startswith("invalid request") and field in [f["field"] for f in err["fields"]], err


def test_placement_bodies_are_bounded(operator: tuple[str, Settings]) -> None:
    url, _ = operator
    batch = CanaryBatch.model_validate(
        _ask(url, {"provider": PROVIDER.address, "shapes": SHAPES, "count": 1}).json()
    )
    item = {"slot": 0, "index": 1, "cid": "bafy", "key_hex": "0x" + "11" * 32, "proof": ["0x" + "22" * 32]}
    bad = [
        ({"session_id": 1, "session_nonce": "0x" + "33" * 32, "items": [{**item, "proof": ["0x12"]}]}, "items.0.proof"),
        ({"session_id": 1, "session_nonce": "0x" + "33" * 32, "items": [{**item, "key_hex": "0x12"}]}, "items.0.key_hex"),
        ({"session_id": 1, "session_nonce": "nope", "items": [item]}, "session_nonce"),
        ({"session_id": 1, "session_nonce": "0x" + "33" * 32, "items": [item] * (MAX_CANARIES + 1)}, "items"),
        ({"session_id": 1, "session_nonce": "0x" + "33" * 32, "items": [{**item, "proof": ["0x" + "22" * 32] * 65}]}, "items.0.proof"),
    ]  # fmt: skip
    for body, field in bad:
        r = httpx.post(
            f"{url}/v1/canary/requests/{batch.ticket}/placement", json=body, headers=AUTH, timeout=10
        )
        assert r.status_code == 422 and field in [f["field"] for f in r.json()["fields"]], (field, r.text)
    receipt = httpx.get(f"{url}/v1/canary/requests/{batch.ticket}", headers=AUTH, timeout=10).json()
    assert receipt["state"] == "issued"


def test_the_router_is_mounted_only_on_an_operator(tmp_path: Path) -> None:
    server, thread, url, _ = _serve(tmp_path, False)
    try:
        r = _ask(url, {"provider": PROVIDER.address, "shapes": SHAPES, "count": 1})
        assert r.status_code == 404
        paths = httpx.get(f"{url}/openapi.json", timeout=10).json()["paths"]
        assert not any(p.startswith("/v1/canary") for p in paths)
    finally:
        stop_server(server, thread)  # type: ignore[arg-type]


def test_openapi_documents_the_canary_routes(operator: tuple[str, Settings]) -> None:
    url, _ = operator
    paths = httpx.get(f"{url}/openapi.json", timeout=10).json()["paths"]
    assert set(paths) >= {
        "/v1/canary/requests",
        "/v1/canary/requests/{ticket}",
        "/v1/canary/requests/{ticket}/placement",
    }
    assert "201" in paths["/v1/canary/requests"]["post"]["responses"]
