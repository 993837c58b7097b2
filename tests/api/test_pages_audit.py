"""The human audit pages over real HTTP: sign-in by EIP-191 signature, signed cookie, CSRF,
the SPEC 6 form with hostile text escaped, and submission into the human queue."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import httpx
import pytest
from eth_account.messages import encode_defunct
from typer.testing import CliRunner

from tests.conftest import start_server, stop_server
from trustnode.api.app import create_app
from trustnode.api.once import UsedOnce
from trustnode.api.web.signin import COOKIE_NAME, SignIn, SignInError
from trustnode.audit.human_queue import HumanQueue
from trustnode.chain.accounts import dev_account
from trustnode.cli.main import app as cli_app
from trustnode.config import Settings
from trustnode.models.audit import ContextSegment
from trustnode.models.enums import Level, Verdict
from trustnode.models.human import HumanSeat
from trustnode.node.context import NodeContext
from trustnode.node.paths import human_queue_path

ME = dev_account(5)
OTHER = dev_account(6)
HOSTILE = 'Weight 85 kg <script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"> so $\\frac{85}{100} < 1$.'


def _seat(
    auditor: str, segment: int, *, reasoning: str = HOSTILE, deadline: float | None = None
) -> HumanSeat:
    return HumanSeat(
        session_id=7,
        segment_index=segment,
        auditor=auditor,
        node_id=f"ST{segment}",
        level=Level.STEP,
        problem="Compute the CHA2DS2-VASc score of a 58-year-old man with hypertension and diabetes.",
        dependencies=[
            ContextSegment(node_id="ST1", level=Level.STEP, content="Hypertension gives H = 1 point.")
        ],
        reasoning=reasoning,
        implications=[ContextSegment(node_id="O1", level=Level.OPERATION, content="The total is 1 + 1 = 2.")],
        commit_deadline=deadline or time.time() + 3600,
    )


@pytest.fixture
def node(tmp_path: Path) -> Iterator[tuple[str, HumanQueue]]:
    settings = Settings(data_dir=tmp_path)
    queue = HumanQueue(human_queue_path(settings))
    queue.enqueue(_seat(ME.address, 3))
    queue.enqueue(_seat(ME.address, 4, reasoning="A2 gives 0 points because the age is 58."))
    queue.enqueue(_seat(OTHER.address, 5))
    server, thread, url = start_server(create_app(NodeContext(settings)))
    try:
        yield url, queue
    finally:
        stop_server(server, thread)


def _challenge(client: httpx.Client, page: httpx.Response | None = None) -> tuple[str, str]:
    page = page or client.get("/audit/login")
    assert page.status_code == 200
    message = unescape(re.search(r'<textarea id="message"[^>]*>([^<]*)</textarea>', page.text).group(1))  # type: ignore[union-attr]
    token = re.search(r'name="token" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    return message, token


def _sign(message: str, account=ME) -> str:  # type: ignore[no-untyped-def]
    return "0x" + account.sign_message(encode_defunct(text=message)).signature.hex().removeprefix("0x")


def _sign_in(client: httpx.Client, account=ME) -> str:  # type: ignore[no-untyped-def]
    message, token = _challenge(client)
    r = client.post(
        "/audit/login", data={"message": message, "token": token, "signature": _sign(message, account)}
    )
    assert r.status_code == 303 and r.headers["location"] == "/audit", r.text
    return r.headers["set-cookie"]


def _csrf(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)  # type: ignore[union-attr]


def test_audit_requires_sign_in(node: tuple[str, HumanQueue]) -> None:
    url, _ = node
    with httpx.Client(base_url=url) as c:
        r = c.get("/audit")
        assert r.status_code == 303 and r.headers["location"] == "/audit/login"
        r = c.get("/audit/seats/7:3:" + ME.address.lower())
        assert r.status_code == 303


def test_login_page_shows_message_and_cli_one_liner(node: tuple[str, HumanQueue]) -> None:
    url, _ = node
    with httpx.Client(base_url=url) as c:
        page = c.get("/audit/login")
        message, _ = _challenge(c, page)
    assert message.startswith(f"Sign in to the trustnode audit page at {url} (nonce ")
    assert f"trustnode web sign &#39;{message}&#39;" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert 'src="/static/js/signin.js"' in page.text


def test_sign_in_with_the_cli_signature_sets_a_strict_cookie(
    node: tuple[str, HumanQueue], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    url, _ = node
    monkeypatch.setenv("TRUSTNODE_CHAIN__PRIVATE_KEY", ME.key.hex())
    monkeypatch.setenv("TRUSTNODE_DATA_DIR", str(tmp_path / "cli"))
    with httpx.Client(base_url=url) as c:
        message, token = _challenge(c)
        res = CliRunner().invoke(cli_app, ["web", "sign", message])
        assert res.exit_code == 0, res.output
        signature = res.stdout.strip()
        assert re.fullmatch(r"0x[0-9a-f]{130}", signature)
        r = c.post("/audit/login", data={"message": message, "token": token, "signature": signature})
        assert r.status_code == 303, r.text
        cookie = r.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE_NAME}=")
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Max-Age=28800" in cookie
        home = c.get("/audit")
        assert c.get("/audit/login").headers["location"] == "/audit", "signed in: no new challenge"
    assert home.status_code == 200
    assert ME.address in home.text
    # Only this auditor's pending seats are listed.
    assert f"7:3:{ME.address.lower()}" in home.text and f"7:4:{ME.address.lower()}" in home.text
    assert OTHER.address.lower() not in home.text


def test_bad_signatures_and_replays_are_refused(node: tuple[str, HumanQueue]) -> None:
    url, _ = node
    with httpx.Client(base_url=url) as c:
        message, token = _challenge(c)
        r = c.post("/audit/login", data={"message": message, "token": token, "signature": "0x1234"})
        assert r.status_code == 400 and "65 bytes" in r.text
        assert COOKIE_NAME not in r.headers.get("set-cookie", "")
        forged = message.replace("nonce ", "nonce 0")[:-1] + ")"
        r = c.post("/audit/login", data={"message": forged, "token": token, "signature": _sign(forged)})
        assert r.status_code == 400 and "not issued by this node" in unescape(r.text)
        ok = c.post("/audit/login", data={"message": message, "token": token, "signature": _sign(message)})
        assert ok.status_code == 303
        replay = c.post(
            "/audit/login", data={"message": message, "token": token, "signature": _sign(message)}
        )
        assert replay.status_code == 400 and "already used" in replay.text
        r = c.post(
            "/audit/login",
            data={"message": message, "token": token, "signature": _sign(message)},
            headers={"Origin": "http://evil.example"},
        )
        assert r.status_code == 403


def test_expired_challenge_and_tampered_cookie(tmp_path: Path) -> None:
    signin = SignIn(b"k" * 32, UsedOnce(tmp_path / "used.db"))
    origin = "http://127.0.0.1:8080"
    ch = signin.challenge(origin, now=1_000_000)
    with pytest.raises(SignInError, match="expired"):
        signin.verify(ch.message, ch.token, _sign(ch.message), origin, now=1_000_000 + 301)
    assert signin.verify(ch.message, ch.token, _sign(ch.message), origin, now=1_000_000 + 10) == ME.address
    cookie, sess = signin.issue(ME.address, now=1_000_000)
    assert signin.read(cookie, now=1_000_001) == sess
    assert signin.read(cookie, now=1_000_000 + 8 * 3600 + 1) is None, "cookies expire"
    body, mac = cookie.rsplit(".", 1)
    other_cookie, _ = signin.issue(OTHER.address, now=1_000_000)
    assert signin.read(f"{other_cookie.rsplit('.', 1)[0]}.{mac}", now=1_000_001) is None
    assert SignIn(b"x" * 32, signin.used).read(cookie, now=1_000_001) is None, "another node's secret"
    with pytest.raises(ValueError, match="not an origin"):
        signin.challenge("http://evil' ; rm -rf / #")


def test_seat_form_shows_the_four_parts_escaped(node: tuple[str, HumanQueue]) -> None:
    url, _ = node
    with httpx.Client(base_url=url) as c:
        _sign_in(c)
        page = c.get(f"/audit/seats/7:3:{ME.address.lower()}")
    assert page.status_code == 200
    html = page.text
    for part in ("prompt-context", "dependencies", "current-reasoning", "implications"):
        assert f'id="{part}"' in html
    assert (
        "CHA2DS2-VASc" in html
        and "Hypertension gives H = 1 point." in html
        and "The total is 1 + 1 = 2." in html
    )
    # Hostile text arrives as text, never as markup.
    assert "<script>window.__pwned" not in html and "<img src=x" not in html
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html
    assert "$\\frac{85}{100} &lt; 1$" in html
    for key in ("logical_consistency", "mathematical_accuracy", "completeness", "clarity"):
        assert f'value="{key}"' in html
    assert 'src="/static/katex/katex.min.js"' in html and "cdn" not in html.lower()
    assert page.headers["content-security-policy"].startswith("default-src 'none'; script-src 'self';")


def test_someone_elses_seat_is_not_found(node: tuple[str, HumanQueue]) -> None:
    url, _ = node
    with httpx.Client(base_url=url) as c:
        _sign_in(c)
        r = c.get(f"/audit/seats/7:5:{OTHER.address.lower()}")
        assert r.status_code == 404
        assert "Hypertension" not in r.text
        csrf = _csrf(c.get(f"/audit/seats/7:3:{ME.address.lower()}").text)
        r = c.post(f"/audit/seats/7:5:{OTHER.address.lower()}", data={"csrf": csrf, "verdict": "PASS"})
        assert r.status_code == 404


def test_submit_goes_to_the_queue_with_csrf_and_validation(node: tuple[str, HumanQueue]) -> None:
    url, queue = node
    seat_id = f"7:3:{ME.address.lower()}"
    with httpx.Client(base_url=url) as c:
        _sign_in(c)
        csrf = _csrf(c.get(f"/audit/seats/{seat_id}").text)
        r = c.post(f"/audit/seats/{seat_id}", data={"verdict": "FAIL", "note": "x"})
        assert r.status_code == 403, "no CSRF token"
        r = c.post(f"/audit/seats/{seat_id}", data={"csrf": "wrong", "verdict": "FAIL"})
        assert r.status_code == 403
        r = c.post(
            f"/audit/seats/{seat_id}",
            data={"csrf": csrf, "verdict": "FAIL"},
            headers={"Origin": "http://evil.example"},
        )
        assert r.status_code == 403
        # A missing verdict keeps what was typed.
        r = c.post(
            f"/audit/seats/{seat_id}",
            data={"csrf": csrf, "criterion": ["clarity"], "note": "weight is not age <b>!</b>"},
        )
        assert r.status_code == 400 and "choose PASS or FAIL" in r.text
        assert "weight is not age &lt;b&gt;!&lt;/b&gt;" in r.text
        assert 'value="clarity" id="crit-clarity" checked' in r.text
        r = c.post(
            f"/audit/seats/{seat_id}", data={"csrf": csrf, "verdict": "FAIL", "criterion": ["honesty"]}
        )
        assert r.status_code == 400 and "unknown criteria: honesty" in r.text
        r = c.post(f"/audit/seats/{seat_id}", data={"csrf": csrf, "verdict": "FAIL", "note": "n" * 4001})
        assert r.status_code == 400 and "at most 4000" in r.text
        assert queue.decision(seat_id) is None, "nothing recorded by refused submissions"
        r = c.post(
            f"/audit/seats/{seat_id}",
            data={
                "csrf": csrf,
                "verdict": "FAIL",
                "criterion": ["completeness", "clarity"],
                "note": "Weight is not an age criterion.",
            },
        )
        assert r.status_code == 303 and r.headers["location"].startswith("/audit?done=")
        home = c.get(r.headers["location"])
        assert "Your verdict on segment 3" in home.text
        assert seat_id not in re.search(
            r'<table class="seats" id="pending">.*?</table>', home.text, re.S
        ).group(0)  # type: ignore[union-attr]
        decision = queue.decision(seat_id)
        assert decision is not None and decision.verdict == Verdict.FAIL
        assert decision.criteria == {
            "logical_consistency": False,
            "mathematical_accuracy": False,
            "completeness": True,
            "clarity": True,
        }
        assert decision.note == "Weight is not an age criterion."
        # A decision is final: another answer is refused and shown with the stored one.
        r = c.post(f"/audit/seats/{seat_id}", data={"csrf": csrf, "verdict": "PASS"})
        assert r.status_code == 409 and "already decided" in r.text
        page = c.get(f"/audit/seats/{seat_id}")
        assert 'id="decided-verdict">FAIL<' in page.text and "verdict-form" not in page.text


def test_expired_seat_is_refused(node: tuple[str, HumanQueue]) -> None:
    url, queue = node
    seat = queue.enqueue(_seat(ME.address, 9, deadline=time.time() + 1.0))
    with httpx.Client(base_url=url) as c:
        _sign_in(c)
        csrf = _csrf(c.get(f"/audit/seats/{seat.seat_id}").text)
        time.sleep(1.2)
        r = c.post(f"/audit/seats/{seat.seat_id}", data={"csrf": csrf, "verdict": "PASS", "note": "ok"})
    assert r.status_code == 409 and "deadline passed" in r.text
    assert queue.decision(seat.seat_id) is None


def test_sign_out_needs_csrf_and_clears_the_cookie(node: tuple[str, HumanQueue]) -> None:
    url, _ = node
    with httpx.Client(base_url=url) as c:
        _sign_in(c)
        csrf = _csrf(c.get("/audit").text)
        assert c.post("/audit/logout", data={"csrf": "nope"}).status_code == 403
        r = c.post("/audit/logout", data={"csrf": csrf})
        assert r.status_code == 303 and r.headers["location"] == "/audit/login"
        assert f'{COOKIE_NAME}=""' in r.headers["set-cookie"] or "Max-Age=0" in r.headers["set-cookie"]
        assert c.get("/audit").status_code == 303


def test_a_forged_cookie_is_ignored(node: tuple[str, HumanQueue], tmp_path: Path) -> None:
    url, _ = node
    forged, _ = SignIn(b"attacker-secret-attacker-secret!", UsedOnce(tmp_path / "x.db")).issue(ME.address)
    with httpx.Client(base_url=url, cookies={COOKIE_NAME: forged}) as c:
        assert c.get("/audit").status_code == 303
