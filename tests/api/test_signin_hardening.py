"""Sign-in of the audit page against phishing, replays, copied cookies and proxies (issue 16),
over real HTTP: the challenge names the canonical origin, used challenges and signed-out
sessions are remembered on disk, and the Secure flag follows https as seen through trusted
proxies only."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import httpx
import pytest
import uvicorn
from eth_account.messages import encode_defunct

from tests.conftest import free_port, start_server, stop_server
from trustnode.api.app import create_app
from trustnode.api.once import UsedOnce, used_once_path
from trustnode.api.server import uvicorn_config
from trustnode.api.web.signin import COOKIE_NAME, SignIn, load_or_create_secret
from trustnode.chain.accounts import dev_account
from trustnode.config import Settings
from trustnode.node.context import NodeContext
from trustnode.node.paths import web_secret_path

ME = dev_account(5)


def _challenge(page: httpx.Response) -> tuple[str, str]:
    assert page.status_code == 200, page.text
    message = unescape(re.search(r'<textarea id="message"[^>]*>([^<]*)</textarea>', page.text).group(1))  # type: ignore[union-attr]
    token = re.search(r'name="token" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    return message, token


def _sign(message: str) -> str:
    return "0x" + ME.sign_message(encode_defunct(text=message)).signature.hex().removeprefix("0x")


def _form(message: str, token: str) -> dict[str, str]:
    return {"message": message, "token": token, "signature": _sign(message)}


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[str, Settings]]:
    settings = Settings(data_dir=tmp_path)
    server, thread, url = start_server(create_app(NodeContext(settings)))
    try:
        yield url, settings
    finally:
        stop_server(server, thread)


def test_the_challenge_names_the_canonical_origin_not_the_host_header(site: tuple[str, Settings]) -> None:
    url, settings = site
    page = httpx.get(f"{url}/audit/login", headers={"Host": "audit.evil.example"})
    message, _ = _challenge(page)
    assert message.startswith(f"Sign in to the trustnode audit page at {url} (nonce ")
    assert "evil" not in message


def test_a_challenge_for_another_origin_is_refused(site: tuple[str, Settings]) -> None:
    url, settings = site
    # A challenge made with this node's own secret but naming a phishing origin (what the old
    # Host-based code produced for `Host: audit.evil.example`): the MAC is right, the origin not.
    used = UsedOnce(used_once_path(settings))
    forged = SignIn(load_or_create_secret(web_secret_path(settings)), used).challenge(
        "https://audit.evil.example"
    )
    with httpx.Client(base_url=url) as c:
        r = c.post("/audit/login", data=_form(forged.message, forged.token))
        assert r.status_code == 400
        text = unescape(r.text)
        assert "names https://audit.evil.example" in text and f"audit page is {url}" in text
        assert COOKIE_NAME not in r.headers.get("set-cookie", "")


def test_a_used_challenge_is_refused_after_a_restart(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    server, thread, url = start_server(create_app(NodeContext(settings)))
    try:
        message, token = _challenge(httpx.get(f"{url}/audit/login"))
        assert httpx.post(f"{url}/audit/login", data=_form(message, token)).status_code == 303
    finally:
        stop_server(server, thread)
    port = int(url.rsplit(":", 1)[1])
    # The restarted node listens on the same address, so the challenge's origin is still its own.
    config = uvicorn.Config(
        create_app(NodeContext(settings)), host="127.0.0.1", port=port, log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        _wait_started(server)
        r = httpx.post(f"{url}/audit/login", data=_form(message, token))
        assert r.status_code == 400 and "already used" in r.text
    finally:
        stop_server(server, thread)


def test_sign_out_revokes_the_session_on_the_server(site: tuple[str, Settings]) -> None:
    url, settings = site
    with httpx.Client(base_url=url) as c:
        message, token = _challenge(c.get("/audit/login"))
        assert c.post("/audit/login", data=_form(message, token)).status_code == 303
        copied = c.cookies[COOKIE_NAME]
        home = c.get("/audit")
        assert home.status_code == 200
        csrf = re.search(r'name="csrf" value="([^"]+)"', home.text).group(1)  # type: ignore[union-attr]
        assert c.post("/audit/logout", data={"csrf": csrf}).status_code == 303
    with httpx.Client(base_url=url, cookies={COOKIE_NAME: copied}) as thief:
        r = thief.get("/audit")
        assert r.status_code == 303 and r.headers["location"] == "/audit/login", "a copied cookie is dead"
    # Another app on the same data directory (a second process, a restart) agrees.
    other = SignIn(load_or_create_secret(web_secret_path(settings)), UsedOnce(used_once_path(settings)))
    assert other.read(copied) is None


def test_public_origin_is_named_and_enforced(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, api={"public_origin": "https://Audit.Example.org:443/"})  # type: ignore[arg-type]
    server, thread, url = start_server(create_app(NodeContext(settings)))
    try:
        with httpx.Client(base_url=url) as c:
            message, token = _challenge(c.get("/audit/login"))
            assert message.startswith(
                "Sign in to the trustnode audit page at https://audit.example.org (nonce"
            )
            r = c.post("/audit/login", data=_form(message, token), headers={"Origin": url})
            assert r.status_code == 403 and "api.public_origin" in r.text
            r = c.post(
                "/audit/login", data=_form(message, token), headers={"Origin": "https://audit.example.org"}
            )
            assert r.status_code == 303
            assert "; secure" in r.headers["set-cookie"].lower(), "an https origin gets Secure cookies"
    finally:
        stop_server(server, thread)


def _wait_started(server: uvicorn.Server) -> None:
    deadline = time.monotonic() + 15
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)


def _serve_as_configured(settings: Settings) -> tuple[uvicorn.Server, threading.Thread, str]:
    """Serve with the configuration `trustnode api serve` uses (trusted proxies included)."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn_config(create_app(NodeContext(settings)), settings, host="127.0.0.1", port=port)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    _wait_started(server)
    return server, thread, f"http://127.0.0.1:{port}"


@pytest.mark.parametrize(
    ("trusted", "forwarded", "secure"),
    [
        (["127.0.0.1"], "https", True),  # a TLS proxy on this machine
        (["10.9.8.7"], "https", False),  # the header from an untrusted peer is ignored
        (["127.0.0.1"], None, False),  # plain http
    ],
)
def test_secure_cookie_behind_a_trusted_tls_proxy_only(
    tmp_path: Path, trusted: list[str], forwarded: str | None, secure: bool
) -> None:
    settings = Settings(data_dir=tmp_path, api={"forwarded_allow_ips": trusted})  # type: ignore[arg-type]
    server, thread, url = _serve_as_configured(settings)
    try:
        headers = {"X-Forwarded-Proto": forwarded} if forwarded else {}
        with httpx.Client(base_url=url, headers=headers) as c:
            message, token = _challenge(c.get("/audit/login"))
            r = c.post("/audit/login", data=_form(message, token))
            assert r.status_code == 303, r.text
            assert ("; secure" in r.headers["set-cookie"].lower()) is secure
    finally:
        stop_server(server, thread)
