"""What POST /v1/traces refuses before any work is queued, over real HTTP: replayed signatures
(also after a restart and from a second process), an Idempotency-Key reused with another body,
hostile JSON nesting, and traces that cannot fit one session (named limits)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import ADD_THINKING, free_port, start_server, stop_server
from trustnode.api.app import create_app
from trustnode.api.auth import api_warnings, check_api_settings, sign_request
from trustnode.api.limits import MAX_TEXT_CHARS
from trustnode.chain.accounts import dev_account
from trustnode.chain.deployment import Deployment
from trustnode.config import Settings
from trustnode.node.context import NodeContext

API_KEY = "provider-secret-key"
SIGNER = dev_account(9)
TRACE = {"problem": "What is 2 + 3?", "thinking": ADD_THINKING, "output": "5"}


def _settings(data_dir: Path, **api: object) -> Settings:
    base = {"api_keys": [API_KEY], "allowed_signers": [SIGNER.address], "max_body_bytes": 3_000_000}
    return Settings(data_dir=data_dir, api={**base, **api})  # type: ignore[arg-type]


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[str, NodeContext]]:
    ctx = NodeContext(_settings(tmp_path))
    server, thread, url = start_server(create_app(ctx))
    try:
        yield url, ctx
    finally:
        stop_server(server, thread)


def _signed(body: bytes) -> dict[str, str]:
    return {"Content-Type": "application/json", **sign_request(SIGNER.key.hex(), "POST", "/v1/traces", body)}


def test_a_signed_request_is_accepted_once(api: tuple[str, NodeContext]) -> None:
    url, ctx = api
    body = json.dumps(TRACE).encode()
    headers = _signed(body)
    first = httpx.post(f"{url}/v1/traces", content=body, headers=headers)
    assert first.status_code == 202, first.text
    replay = httpx.post(f"{url}/v1/traces", content=body, headers=headers)
    assert replay.status_code == 409
    assert "already accepted" in replay.json()["error"] and "Idempotency-Key" in replay.json()["error"]
    assert sum(ctx.jobs.depth().values()) == 1, "one paid session, not two"
    # Signed again (a new timestamp), the same trace is a new request.
    time.sleep(1.05)
    again = httpx.post(f"{url}/v1/traces", content=body, headers=_signed(body))
    assert again.status_code == 202 and sum(ctx.jobs.depth().values()) == 2


def test_a_signature_is_bound_to_its_method_path_and_query(api: tuple[str, NodeContext]) -> None:
    """A signed request intercepted on its way to one endpoint cannot be spent on another: the
    signer's GET of trace A does not open trace B (the provider's other HDAG), nor a POST."""
    url, _ = api
    body = json.dumps(TRACE).encode()
    a = httpx.post(f"{url}/v1/traces", content=body, headers=_signed(body)).json()["trace_id"]
    b_body = json.dumps({**TRACE, "output": "five"}).encode()
    b = httpx.post(f"{url}/v1/traces", content=b_body, headers=_signed(b_body)).json()["trace_id"]
    for_a = sign_request(SIGNER.key.hex(), "GET", f"/v1/traces/{a}")

    moved = httpx.get(f"{url}/v1/traces/{b}", headers=for_a)
    assert moved.status_code == 401, moved.text
    assert f"trustnode:GET:/v1/traces/{b}:" in moved.json()["error"], "says what to sign"
    assert httpx.get(f"{url}/v1/traces/{a}", params={"x": "1"}, headers=for_a).status_code == 401
    as_post = httpx.post(
        f"{url}/v1/traces", content=b"", headers={**for_a, "Content-Type": "application/json"}
    )
    assert as_post.status_code == 401, as_post.text

    # None of the moved attempts used the signature up: its own request still works, once.
    own = httpx.get(f"{url}/v1/traces/{a}", headers=for_a)
    assert own.status_code == 200 and own.json()["trace_id"] == a
    assert httpx.get(f"{url}/v1/traces/{a}", headers=for_a).status_code == 409


def test_signing_message_names_method_and_target() -> None:
    from trustnode.api.auth import signing_message

    message = signing_message("post", "/v1/traces", 7, b"{}")
    assert message.startswith("trustnode:POST:/v1/traces:7:")
    with pytest.raises(ValueError, match="starting with '/'"):
        signing_message("GET", "v1/traces", 7, b"")


def test_a_replay_is_refused_after_a_restart_and_by_a_second_process(tmp_path: Path) -> None:
    body = json.dumps(TRACE).encode()
    headers = _signed(body)
    server, thread, url = start_server(create_app(NodeContext(_settings(tmp_path))))
    try:
        assert httpx.post(f"{url}/v1/traces", content=body, headers=headers).status_code == 202
    finally:
        stop_server(server, thread)
    # The same data directory, a new app (a restart).
    server, thread, url = start_server(create_app(NodeContext(_settings(tmp_path))))
    try:
        assert httpx.post(f"{url}/v1/traces", content=body, headers=headers).status_code == 409
    finally:
        stop_server(server, thread)
    # Another process on the same data directory.
    port = free_port()
    script = (
        "import sys, uvicorn\n"
        "from trustnode.api.app import create_app\n"
        "from trustnode.config import Settings\n"
        "from trustnode.node.context import NodeContext\n"
        "uvicorn.run(create_app(NodeContext(Settings())), host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')\n"
    )
    env = {
        **os.environ,
        "TRUSTNODE_DATA_DIR": str(tmp_path),
        "TRUSTNODE_API__ALLOWED_SIGNERS": json.dumps([SIGNER.address]),
    }
    proc = subprocess.Popen([sys.executable, "-c", script, str(port)], env=env)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/openapi.json", timeout=2)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "the second process did not start"
                time.sleep(0.2)
        other = httpx.post(f"http://127.0.0.1:{port}/v1/traces", content=body, headers=headers)
        assert other.status_code == 409, other.text
        other_body = body + b" "
        fresh = httpx.post(
            f"http://127.0.0.1:{port}/v1/traces", content=other_body, headers=_signed(other_body)
        )
        assert fresh.status_code == 202, "the second process accepts new signatures"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_idempotency_key_reused_with_another_body_is_409(api: tuple[str, NodeContext]) -> None:
    url, ctx = api
    h = {"Authorization": f"Bearer {API_KEY}", "Idempotency-Key": "order-17"}
    first = httpx.post(f"{url}/v1/traces", json=TRACE, headers=h)
    assert first.status_code == 202
    other = httpx.post(f"{url}/v1/traces", json={**TRACE, "output": "6"}, headers=h)
    assert other.status_code == 409
    message = other.json()["error"]
    assert "order-17" in message and first.json()["trace_id"] in message and "different body" in message
    same = httpx.post(f"{url}/v1/traces", json=TRACE, headers=h)
    assert same.status_code == 200 and same.json()["trace_id"] == first.json()["trace_id"]
    assert sum(ctx.jobs.depth().values()) == 1


def test_a_signed_retry_with_the_same_idempotency_key_returns_the_first_trace(
    api: tuple[str, NodeContext],
) -> None:
    url, ctx = api
    body = json.dumps(TRACE).encode()
    first = httpx.post(f"{url}/v1/traces", content=body, headers={**_signed(body), "Idempotency-Key": "k1"})
    assert first.status_code == 202
    time.sleep(1.05)
    retry = httpx.post(f"{url}/v1/traces", content=body, headers={**_signed(body), "Idempotency-Key": "k1"})
    assert retry.status_code == 200 and retry.json()["trace_id"] == first.json()["trace_id"]
    assert sum(ctx.jobs.depth().values()) == 1


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 5000 + b"]" * 5000,
        b'{"problem": "p", "thinking": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"problem": "p", "thinking": "t", "x": ' + b'{"a":' * 3000 + b"1" + b"}" * 3001,
    ],
)
def test_deep_json_nesting_is_refused_before_parsing(api: tuple[str, NodeContext], body: bytes) -> None:
    url, ctx = api
    headers = {"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"}
    r = httpx.post(f"{url}/v1/traces", content=body, headers=headers)
    assert r.status_code == 422, r.text
    assert "nested deeper than 32 levels" in r.json()["error"]
    assert ctx.jobs.depth() == {}


def test_brackets_inside_strings_do_not_count_as_nesting(api: tuple[str, NodeContext]) -> None:
    url, _ = api
    trace = {**TRACE, "thinking": "Consider [[[[" * 100 + " and {{{{" * 100 + ": 2 + 3 = 5."}
    r = httpx.post(f"{url}/v1/traces", json=trace, headers={"Authorization": f"Bearer {API_KEY}"})
    assert r.status_code == 202, r.text


@pytest.mark.chain
def test_a_trace_over_the_segment_cap_is_refused_naming_it(devnet: Deployment, tmp_path: Path) -> None:
    dep_file = tmp_path / "deployment.json"
    devnet.save(dep_file)
    settings = _settings(tmp_path)
    settings = settings.model_copy(
        update={"chain": settings.chain.model_copy(update={"deployment_file": dep_file, "account_index": 9})}
    )
    ctx = NodeContext(settings)
    cap = ctx.port().max_segments()
    assert cap == 1024, "the contract's MAX_SEGMENTS"
    server, thread, url = start_server(create_app(ctx))
    try:
        h = {"Authorization": f"Bearer {API_KEY}"}
        steps = [f"Step {i}: {i} + 1 = {i + 1}." for i in range(cap)]
        r = httpx.post(f"{url}/v1/traces", json={"problem": "Count.", "steps": steps}, headers=h)
        assert r.status_code == 422, r.text
        body = r.json()
        assert "at most 1,024 segments" in body["error"] and body["fields"][0]["field"] == "steps"
        # Free text: the default (offline) decomposer's units are counted exactly.
        thinking = " ".join(f"We have {i} + 1 = {i + 1}." for i in range(3000))
        r = httpx.post(f"{url}/v1/traces", json={"problem": "Count.", "thinking": thinking}, headers=h)
        assert r.status_code == 422 and "at least 3,001 segments" in r.json()["error"]
        assert r.json()["fields"][0]["field"] == "thinking"
        # One step fewer fits.
        r = httpx.post(f"{url}/v1/traces", json={"problem": "Count.", "steps": steps[:-1]}, headers=h)
        assert r.status_code == 202, r.text
        assert sum(ctx.jobs.depth().values()) == 1
    finally:
        stop_server(server, thread)


def test_without_a_chain_the_segment_cap_is_left_to_the_provider(api: tuple[str, NodeContext]) -> None:
    """The cap is the contract's; while it cannot be read the trace is queued (the provider
    refuses it before pinning), and the text cap still applies."""
    url, ctx = api
    steps = [f"Step {i}." for i in range(1100)]
    r = httpx.post(
        f"{url}/v1/traces",
        json={"problem": "Count.", "steps": steps},
        headers={"Authorization": f"Bearer {API_KEY}"},
    )
    assert r.status_code == 202, r.text


def test_a_trace_over_the_text_cap_is_refused_naming_it(api: tuple[str, NodeContext]) -> None:
    url, ctx = api
    thinking = "x" * (MAX_TEXT_CHARS + 1)
    r = httpx.post(
        f"{url}/v1/traces",
        json={"problem": "p", "thinking": thinking},
        headers={"Authorization": f"Bearer {API_KEY}"},
    )
    assert r.status_code == 422
    assert f"at most {MAX_TEXT_CHARS:,} are accepted" in r.json()["error"]
    assert ctx.jobs.depth() == {}


def test_start_up_checks_of_the_api_settings(tmp_path: Path) -> None:
    nobody = Settings(data_dir=tmp_path)
    problems = check_api_settings(nobody)
    assert len(problems) == 1
    for fix in (
        "TRUSTNODE_API__API_KEYS",
        "TRUSTNODE_API__ALLOWED_SIGNERS",
        "TRUSTNODE_API__ACCEPT_ANY_SIGNER",
    ):
        assert fix in problems[0]
    assert check_api_settings(_settings(tmp_path)) == []
    anyone = Settings(data_dir=tmp_path, api={"accept_any_signer": True})  # type: ignore[arg-type]
    assert check_api_settings(anyone) == []
    assert any("ANYONE" in w and "spend this node's tokens" in w for w in api_warnings(anyone))
    assert not any("ANYONE" in w for w in api_warnings(_settings(tmp_path)))
    bad = Settings(
        data_dir=tmp_path,
        api={"allowed_signers": ["0x1234"], "public_origin": "https://audit.example.org/path"},  # type: ignore[arg-type]
    )
    text = " ".join(check_api_settings(bad))
    assert "'0x1234' is not an Ethereum address" in text and "is not an origin" in text


def test_without_any_allowed_signer_nobody_can_sign(tmp_path: Path) -> None:
    ctx = NodeContext(Settings(data_dir=tmp_path, api={"api_keys": [API_KEY]}))  # type: ignore[arg-type]
    server, thread, url = start_server(create_app(ctx))
    try:
        body = json.dumps(TRACE).encode()
        r = httpx.post(f"{url}/v1/traces", content=body, headers=_signed(body))
        assert r.status_code == 403 and "allowed_signers" in r.json()["error"]
    finally:
        stop_server(server, thread)
    ctx = NodeContext(Settings(data_dir=tmp_path / "any", api={"accept_any_signer": True}))  # type: ignore[arg-type]
    server, thread, url = start_server(create_app(ctx))
    try:
        body = json.dumps(TRACE).encode()
        headers = {
            "Content-Type": "application/json",
            **sign_request(dev_account(8).key.hex(), "POST", "/v1/traces", body),
        }
        assert httpx.post(f"{url}/v1/traces", content=body, headers=headers).status_code == 202
    finally:
        stop_server(server, thread)


def test_the_nesting_scan_is_linear_on_hostile_strings(api: tuple[str, NodeContext]) -> None:
    """Unterminated strings full of escaped quotes made the old string-skipping regex rescan the
    rest of the body from every quote (quadratic: hours for 1 MB); the answer must come at once."""
    url, ctx = api
    body = b'{"problem": "' + b'\\"' * 500_000 + b"[" * 40
    headers = {"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"}
    r = httpx.post(f"{url}/v1/traces", content=body, headers=headers, timeout=60)
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]
    closed = b'{"problem": "' + b'\\"' * 500_000 + b'", "x": ' + b"[" * 40 + b"]" * 40 + b"}"
    r = httpx.post(f"{url}/v1/traces", content=closed, headers=headers, timeout=60)
    assert r.status_code == 422 and "nested deeper than 32 levels" in r.json()["error"]
    assert ctx.jobs.depth() == {}


def test_a_trace_too_short_for_the_privacy_share_is_refused_naming_it(api: tuple[str, NodeContext]) -> None:
    # Under the 25% share a 30-character reasoning would put most of the trace in one seat.
    url, ctx = api
    short = {**TRACE, "thinking": "2 + 3 = 5, so the answer is 5."}
    auth = {"Authorization": f"Bearer {API_KEY}"}
    r = httpx.post(f"{url}/v1/traces", json=short, headers=auth)
    assert r.status_code == 422, r.text
    field = r.json()["fields"][0]
    assert field["field"] == "thinking" and "at least 320" in field["message"]
    assert "privacy.max_decrypt_share" in field["message"]
    assert ctx.jobs.depth() == {}  # nothing was queued
    ok = httpx.post(f"{url}/v1/traces", json=TRACE, headers=auth)
    assert ok.status_code == 202, ok.text  # the same question with enough reasoning is taken
