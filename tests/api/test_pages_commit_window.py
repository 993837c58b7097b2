"""The human audit page against a real session on anvil: each seat shows its commit window in
blocks and seconds, a verdict is recorded while the daemon can still commit it, and refused
with the reason once the deadline has passed or the session has left its commit phase."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import httpx
import pytest
from eth_account.messages import encode_defunct

from tests.conftest import start_server, stop_server
from trustnode.api.app import create_app
from trustnode.audit.human_queue import HumanQueue
from trustnode.chain.accounts import dev_account
from trustnode.chain.deployment import Deployment
from trustnode.chain.protocol import Protocol, SessionStatus
from trustnode.config import Settings
from trustnode.models.audit import ContextSegment
from trustnode.models.enums import Level
from trustnode.models.human import HumanSeat
from trustnode.node.context import NodeContext
from trustnode.node.paths import human_queue_path

pytestmark = pytest.mark.chain

ME = dev_account(5)


@pytest.fixture
def site(
    session: tuple[Protocol, int], fresh_devnet: Deployment, tmp_path: Path
) -> Iterator[tuple[str, HumanQueue]]:
    _, sid = session
    dep_file = tmp_path / "deployment.json"
    fresh_devnet.save(dep_file)
    settings = Settings(data_dir=tmp_path, chain={"deployment_file": dep_file, "account_index": 5})  # type: ignore[arg-type]
    queue = HumanQueue(human_queue_path(settings))
    for segment in (0, 1):
        # As the daemon queues them: no wall-clock deadline, the chain's is the one that counts.
        queue.enqueue(
            HumanSeat(
                session_id=sid,
                segment_index=segment,
                auditor=ME.address,
                node_id=f"ST{segment}",
                level=Level.STEP,
                problem="Add 2 and 3.",
                dependencies=[
                    ContextSegment(
                        node_id="G1", level=Level.GOAL, content="", withheld=True, summary="add two numbers"
                    )
                ],
                reasoning="2 + 3 = 5.",
                implications=[],
            )
        )
    server, thread, url = start_server(create_app(NodeContext(settings)))
    try:
        yield url, queue
    finally:
        stop_server(server, thread)


def _sign_in(c: httpx.Client) -> None:
    page = c.get("/audit/login")
    message = unescape(re.search(r'<textarea id="message"[^>]*>([^<]*)</textarea>', page.text).group(1))  # type: ignore[union-attr]
    token = re.search(r'name="token" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    sig = "0x" + ME.sign_message(encode_defunct(text=message)).signature.hex().removeprefix("0x")
    assert (
        c.post("/audit/login", data={"message": message, "token": token, "signature": sig}).status_code == 303
    )


def _csrf(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)  # type: ignore[union-attr]


def test_commit_window_countdown_and_refusal_after_the_deadline(
    site: tuple[str, HumanQueue], session: tuple[Protocol, int]
) -> None:
    url, queue = site
    p, sid = session
    deadline = p.session(sid).commit_deadline
    seat0, seat1 = (f"{sid}:{i}:{ME.address.lower()}" for i in (0, 1))
    # The page estimates seconds from the recent block time; an automining devnet can make all of
    # its last 32 blocks in one second (no estimate, "39 blocks left"): give it one later block.
    w3 = p.client.w3
    w3.provider.make_request("evm_setNextBlockTimestamp", [p.block_timestamp() + 64])  # type: ignore[arg-type]
    w3.provider.make_request("evm_mine", [])  # type: ignore[arg-type]
    with httpx.Client(base_url=url) as c:
        _sign_in(c)
        home = c.get("/audit").text
        row = re.search(rf'<tr data-seat="{re.escape(seat0)}" data-open="yes">.*?</tr>', home, re.S)
        assert row is not None, home
        left = deadline - p.client.block_number()
        m = re.search(r"(\d+) blocks \(~(\d+) s\) left", row.group(0))
        assert m is not None, row.group(0)
        assert abs(int(m.group(1)) - left) <= 2 and int(m.group(2)) > 0, "a countdown in blocks and seconds"

        page = c.get(f"/audit/seats/{seat0}")
        assert 'id="commit-window"' in page.text and f"until block {deadline}" in page.text
        assert "Text withheld" in page.text and "add two numbers" in page.text, "withheld context says so"
        r = c.post(f"/audit/seats/{seat0}", data={"csrf": _csrf(page.text), "verdict": "PASS"})
        assert r.status_code == 303, r.text
        notice = c.get(r.headers["location"]).text
        assert f"before the commit deadline (block {deadline})" in notice
        assert queue.decision(seat0) is not None

        # The deadline passes (the session still says KeysPublished until someone advances it).
        p.client.mine(deadline - p.client.block_number() + 1)
        page = c.get(f"/audit/seats/{seat1}")
        assert 'data-open="no"' in page.text and "verdict-form" not in page.text
        r = c.post(f"/audit/seats/{seat1}", data={"csrf": _csrf(page.text), "verdict": "FAIL"})
        assert r.status_code == 409
        assert f"not recorded: the commit deadline (block {deadline}) has passed" in unescape(r.text)
        assert queue.decision(seat1) is None, "nothing recorded that could never be committed"

        p.advance(sid)
        assert p.status(sid) == SessionStatus.REVEAL
        r = c.post(f"/audit/seats/{seat1}", data={"csrf": _csrf(page.text), "verdict": "FAIL"})
        assert r.status_code == 409 and "the commit phase is over" in unescape(r.text)
        home = c.get("/audit").text
        assert re.search(rf'<tr data-seat="{re.escape(seat1)}" data-open="no">', home)
        assert queue.decision(seat1) is None


def test_a_session_nobody_voted_shows_no_quorum_and_beta(
    site: tuple[str, HumanQueue], session: tuple[Protocol, int]
) -> None:
    url, _ = site
    p, sid = session
    p.client.mine(p.session(sid).commit_deadline - p.client.block_number() + 1)
    p.advance(sid)
    p.client.mine(p.session(sid).reveal_deadline - p.client.block_number() + 1)
    p.finalize(sid)
    info = p.session(sid)
    assert info.status == SessionStatus.FINALIZED and not info.passed and info.score_bps == 0
    page = httpx.get(f"{url}/sessions/{sid}").text
    verdict = re.search(r'<span class="verdict ([a-z]+)" id="verdict">([^<]+)</span>', page)
    assert verdict is not None and verdict.groups() == ("inconclusive", "no quorum"), "not a red FAIL"
    assert "INCONCLUSIVE: no quorum (nobody voted)" in unescape(page)
    assert re.search(r'<dd id="beta">70\.0% of the segment weight must PASS</dd>', page), "beta is shown"
    assert '<dd id="fee">100 TRUST</dd>' in page, "amounts in TRUST, not wei"
    listing = httpx.get(f"{url}/sessions").text
    row = re.search(rf'<tr data-session="{sid}"[^>]*>.*?</tr>', listing, re.S)
    assert row is not None and '<span class="verdict inconclusive">no quorum</span>' in row.group(0)
    assert "verdict fail" not in row.group(0)


def test_an_appeal_seat_shows_its_round_and_is_timed_by_its_own_deadline(
    site: tuple[str, HumanQueue], session: tuple[Protocol, int]
) -> None:
    """Round 1 of the same session and segment is another seat: the page names the round, times it
    by the deadline its daemon recorded when the chain has no such round (a real round is timed by
    the chain: tests/api/test_appeal_windows.py), and refuses a verdict once that deadline passed
    although round 0's window is still open."""
    url, queue = site
    _, sid = session
    seat0 = f"{sid}:0:{ME.address.lower()}"
    first = queue.get(seat0)

    def appeal(round: int, deadline: float) -> HumanSeat:
        data = {**first.model_dump(), "round": round, "seat_id": "", "commit_deadline": deadline}
        return queue.enqueue(HumanSeat.model_validate(data))

    soon, late = appeal(1, time.time() + 600), appeal(2, time.time() - 5)
    with httpx.Client(base_url=url) as c:
        _sign_in(c)
        home = c.get("/audit").text
        row = re.search(rf'<tr data-seat="{re.escape(soon.seat_id)}" data-open="yes">.*?</tr>', home, re.S)
        assert row is not None and "appeal round 1" in row.group(0), home
        page = c.get(f"/audit/seats/{soon.seat_id}").text
        assert 'id="round">appeal round 1<' in page
        assert "the chain has no appeal round 1 of this session: timed by the daemon&#39;s deadline" in page
        r = c.post(f"/audit/seats/{soon.seat_id}", data={"csrf": _csrf(page), "verdict": "FAIL"})
        assert r.status_code == 303, r.text
        decision = queue.decision(soon.seat_id)
        assert decision is not None and decision.round == 1 and queue.decision(seat0) is None
        assert "(appeal round 1)" in c.get(r.headers["location"]).text

        page = c.get(f"/audit/seats/{late.seat_id}").text
        assert 'data-open="no"' in page
        r = c.post(f"/audit/seats/{late.seat_id}", data={"csrf": _csrf(page), "verdict": "PASS"})
        assert r.status_code == 409 and "the commit deadline passed" in unescape(r.text)
        assert queue.decision(late.seat_id) is None
        assert re.search(rf'<tr data-seat="{re.escape(seat0)}" data-open="yes">', c.get("/audit").text)
