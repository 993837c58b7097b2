"""The session page lists every appeal window (README operator, session 5 on the devnet): after
an appeal of one segment its window follows round 1 while the others keep round 0's; the page
showed only "appealable until block <latest>" though REST had each window. Now a table lists each
window: the round it follows, its segments, "appealable until block N" or closed. In-memory
chain, the node's real app and page over HTTP on 127.0.0.1."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import httpx
import pytest

from tests.conftest import start_server, stop_server
from tests.node.conftest import fake_llm  # noqa: F401 - the stand-in LLM judge's server
from tests.node.memnet import MemoryNet, address
from tests.node.test_appeals import APPELLANT, lazy_network, run_to_appeal_window
from trustnode.api.app import create_app
from trustnode.llm.fake_server import FakeOpenAIServer
from trustnode.node.appellant import appeal


@pytest.fixture
def net(tmp_path: Path, fake_llm: FakeOpenAIServer) -> Iterator[MemoryNet]:  # noqa: F811
    n = lazy_network(tmp_path, fake_llm)
    yield n
    n.close()


def _rows(url: str, sid: int) -> dict[str, str]:
    """The windows table: row id -> its text."""
    page = httpx.get(f"{url}/sessions/{sid}", timeout=30).text
    table = re.search(r'<table class="appeal-windows" id="appeal-windows">(.*?)</table>', page, re.S)
    assert table is not None, "no appeal windows table"
    rows = re.findall(r'<tr id="(window-[\d-]+)"[^>]*>(.*?)</tr>', table.group(1), re.S)
    return {rid: " ".join(unescape(re.sub(r"<[^>]+>", " ", body)).split()) for rid, body in rows}


def test_the_page_shows_each_rounds_appeal_window(net: MemoryNet) -> None:
    _, sid, wrong = run_to_appeal_window(net)
    port = net.chain.port(address(APPELLANT))
    st = port.appeal_status(sid)
    server, thread, url = start_server(create_app(net.provider_ctx))
    try:
        rows = _rows(url, sid)
        first = min(st.appealable)
        assert f"appealable until block {st.window_ends[first]}" in rows[f"window-0-{first}"], rows

        appeal(port, sid, [wrong])
        net.until(
            lambda: not port.appeal_status(sid).running and wrong in port.appeal_status(sid).appealable,
            what="round 1 ended and its window open",
        )
        st = port.appeal_status(sid)
        rows = _rows(url, sid)
        after = rows[f"window-1-{wrong}"]  # the window round 1 opened on its segment
        assert (
            after.startswith(f"1 {wrong} ") and f"appealable until block {st.window_ends[wrong]}" in after
        ), rows
        rest = httpx.get(f"{url}/v1/sessions/{sid}", timeout=30).json()["appeal"]
        round0 = [w for w in rest["history"] if w["round"] == 0]
        assert round0 and all(wrong not in w["segments"] for w in round0), rest  # theirs still round 0's
        assert len(rows) == len(rest["history"]), (rows, rest)
        assert {"round": 1, "segments": [wrong], "until": st.window_ends[wrong], "state": "open"} in rest[
            "history"
        ]

        net.until(lambda: port.appeal_status(sid).final, what="the end of appeals")
        rows = _rows(url, sid)
        assert rows and all("closed" in r for r in rows.values()), rows
        assert f"closed (appealable until block {st.window_ends[wrong]})" in rows[f"window-1-{wrong}"], rows
    finally:
        stop_server(server, thread)
