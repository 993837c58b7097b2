"""The session page during and after an appeal (issue 15), in headless Chromium.

While the window is open it says "appealable until block N" (N from the chain) and lists the
revealed gold canaries with the lazy auditor's wrong vote; after the appeal it shows round 1's
panel, votes and result, and the recomputed verdict. The node's real app and pages over HTTP on
127.0.0.1; the chain is the in-memory one (the real-stack run is tests/e2e).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import LocalOnly, serve, shot
from tests.node.conftest import fake_llm  # noqa: F401 - the stand-in LLM judge's server
from tests.node.memnet import MemoryNet, address
from tests.node.test_appeals import APPELLANT, LAZY, lazy_network, run_to_appeal_window
from trustnode.api.app import create_app
from trustnode.llm.fake_server import FakeOpenAIServer
from trustnode.node.appellant import appeal

pytestmark = pytest.mark.browser


@pytest.fixture
def net(tmp_path: Path, fake_llm: FakeOpenAIServer) -> Iterator[MemoryNet]:  # noqa: F811
    n = lazy_network(tmp_path, fake_llm)
    yield n
    n.close()


def test_session_page_shows_the_window_the_canaries_and_every_round(
    net: MemoryNet, page: tuple[Any, LocalOnly]
) -> None:
    pg, guard = page
    _, sid, wrong = run_to_appeal_window(net)
    port = net.chain.port(address(APPELLANT))
    until = port.appeal_status(sid).appealable_until
    server, thread, url = serve(create_app(net.provider_ctx))
    try:
        pg.goto(f"{url}/sessions/{sid}")
        assert pg.locator("#appealable").inner_text() == f"appealable until block {until}"
        lazy_row = pg.locator("#canaries tr", has_text=address(LAZY)[:8]).first
        assert "PASS" in lazy_row.inner_text() and "(wrong)" in lazy_row.inner_text()
        assert pg.locator("#verdict").inner_text() == "PASS", "round 0's (wrong) verdict"
        assert pg.locator("#hdag svg").count() == 1, "the picture draws every leaf, canaries included"
        shot(pg, "session-appeal-window")

        appeal(port, sid, [wrong])
        net.until(lambda: port.appeal_status(sid).final, what="the end of the appeal round")
        pg.reload()
        round1 = pg.locator("#round-1")
        assert "finalized" in round1.locator("h3").inner_text()
        seg = pg.locator(f"#round-1-seg-{wrong}")
        assert "FAIL" in seg.inner_text() and seg.locator(".result").inner_text() == "overturned"
        assert round1.locator(".round-votes tbody tr").count() == 3
        assert all("FAIL" in t for t in round1.locator(".round-votes tbody tr").all_inner_texts())
        assert pg.locator("#verdict").inner_text() == "FAIL", "the recomputed verdict"
        assert "final" in pg.locator("#appeal").inner_text() and pg.locator("#appealable").count() == 0
        shot(pg, "session-appeal-overturned")
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    assert guard.blocked == []
