"""In headless Chromium, on a real local network (anvil, js-ipfs, an API node and four auditor
daemons in their own processes): a person signs in to the human auditor's page, audits every
human seat of a session, and the votes reach the chain; then the public dashboard shows the
finalized session with its HDAG picture and the auditor's charts."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import pytest
from typer.testing import CliRunner

from tests.browser.conftest import LocalOnly, serve, shot
from trustnode.api.app import create_app
from trustnode.chain.accounts import dev_account
from trustnode.cli.main import app as cli_app
from trustnode.config import Settings
from trustnode.models.enums import SegmentOutcome, Tier
from trustnode.node.cluster import AuditorSpec, ClusterConfig, LocalCluster
from trustnode.node.context import NodeContext
from trustnode.node.samples import Sample, load_samples

pytestmark = [pytest.mark.browser, pytest.mark.chain, pytest.mark.ipfs, pytest.mark.slow]

HUMAN = AuditorSpec(name="human-1", tier=Tier.HUMAN, account=5)
AUDITORS = [
    AuditorSpec(name="computer-1", tier=Tier.COMPUTER, account=2),
    AuditorSpec(name="computer-2", tier=Tier.COMPUTER, account=3),
    AuditorSpec(name="llm-1", tier=Tier.LLM, account=4),
    HUMAN,
]
HUMAN_ADDR = dev_account(HUMAN.account).address
STEP = "The patient's weight of 85 kg is under 100, so the age criterion A2 gives 0 points."
# No arithmetic claim in it (the router sends a checkable step to the computer tier), and the
# maths first: the step is cut to the privacy share, and the piece with the script must show it.
HOSTILE_STEP = (
    "By criterion $A_2$, the patient's weight of 85 kg is under 100 <script>window.__pwned=1</script>"
    '<img src=x onerror="window.__pwned=2">, so the age criterion A2 gives 0 points.'
)


@pytest.fixture(scope="module")
def sample() -> Sample:
    s = next(x for x in load_samples() if x.name == "clinical-right-answer-flawed-steps")
    assert STEP in s.trace.thinking
    return s.model_copy(
        update={
            "trace": s.trace.model_copy(update={"thinking": s.trace.thinking.replace(STEP, HOSTILE_STEP)})
        }
    )


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalCluster, str]]:
    cluster = LocalCluster(
        ClusterConfig(
            workdir=tmp_path_factory.mktemp("network"), auditors=AUDITORS, batch_size=1, batch_wait_s=0.5
        )
    )
    cluster.human_answers.clear()  # no scripted human: the person in the browser answers
    with cluster:
        assert cluster.ipfs is not None
        # The human auditor's own node serves its audit page from the daemon's data directory.
        settings = Settings(
            data_dir=cluster.work / HUMAN.name,
            chain={"deployment_file": cluster.dep_file, "account_index": HUMAN.account},  # type: ignore[arg-type]
            ipfs={"api_url": cluster.ipfs.api_url},  # type: ignore[arg-type]
            api={"worker": False},  # type: ignore[arg-type]
        )
        server, thread, url = serve(create_app(NodeContext(settings)))
        try:
            yield cluster, url
        finally:
            server.should_exit = True
            thread.join(timeout=10)


def _sign_with_cli(message: str, cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch) -> str:
    """What the page tells the auditor to run: `trustnode web sign '<message>'`."""
    monkeypatch.setenv("TRUSTNODE_DATA_DIR", str(cluster.work / HUMAN.name))
    monkeypatch.setenv("TRUSTNODE_CHAIN__DEPLOYMENT_FILE", str(cluster.dep_file))
    monkeypatch.setenv("TRUSTNODE_CHAIN__ACCOUNT_INDEX", str(HUMAN.account))
    res = CliRunner().invoke(cli_app, ["web", "sign", message])
    assert res.exit_code == 0, res.output
    return res.stdout.strip()


def _pending_links(pg: Any, url: str, timeout_s: float) -> list[str]:
    """Reload the seat list until the daemon has queued this session's human seats."""
    deadline = time.monotonic() + timeout_s
    count = -1
    while time.monotonic() < deadline:
        pg.goto(f"{url}/audit")
        links = pg.eval_on_selector_all("a.open-seat", "els => els.map(e => e.getAttribute('href'))")
        if links and len(links) == count:
            return list(links)
        count = len(links)
        time.sleep(1.0)
    raise AssertionError(f"no human seats appeared within {timeout_s}s")


def test_human_audits_in_the_browser_and_the_dashboard_shows_the_outcome(
    network: tuple[LocalCluster, str],
    sample: Sample,
    page: tuple[Any, LocalOnly],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster, web = network
    pg, guard = page
    trace_id = cluster.submit(sample.payload())

    # Sign in with a pasted signature made by the CLI one-liner the page shows.
    pg.goto(f"{web}/audit")
    assert pg.url.endswith("/audit/login")
    message = pg.input_value("#message")
    assert f"trustnode web sign '{message}'" == pg.inner_text("#cli")
    pg.fill("#signature", _sign_with_cli(message, cluster, monkeypatch))
    pg.click("#signin-submit")
    pg.wait_for_url(f"{web}/audit")
    assert pg.text_content("#me") == HUMAN_ADDR

    links = _pending_links(pg, web, timeout_s=180)
    voted: dict[int, str] = {}
    saw_dependencies = saw_implications = saw_hostile = False
    for href in links:
        pg.goto(f"{web}{href}")
        pg.wait_for_selector("body[data-math=rendered]")
        for part in ("#prompt-context", "#dependencies", "#current-reasoning", "#implications"):
            assert pg.is_visible(part), part
        assert "CHA2DS2-VASc" in pg.inner_text("#prompt-context")
        saw_dependencies |= pg.locator("#dependencies .context-seg").count() > 0
        saw_implications |= pg.locator("#implications .context-seg").count() > 0
        reasoning = pg.inner_text("#current-reasoning")
        if "<script>window.__pwned=1</script>" in reasoning:
            saw_hostile = True
            assert pg.locator("#current-reasoning .katex").count() >= 1
            shot(pg, "network-human-seat")
        assert pg.evaluate("window.__pwned") is None
        flawed = [p for p in sample.flawed_phrases if p.lower() in reasoning.lower()]
        if flawed:
            pg.check("#crit-clarity")
            pg.check("#verdict-fail")
            pg.fill("#note", f"{flawed[0]!r} does not support this step.")
        else:
            for key in ("logical_consistency", "mathematical_accuracy", "completeness", "clarity"):
                pg.check(f"#crit-{key}")
            pg.check("#verdict-pass")
            pg.fill("#note", "Follows from the note.")
        segment = int(unquote(href.rsplit("/", 1)[1]).split(":")[1])
        pg.click("#submit-verdict")
        pg.wait_for_selector("#notice")
        voted[segment] = "FAIL" if flawed else "PASS"
    assert saw_dependencies and saw_implications and saw_hostile, "all four context parts were shown"
    assert "FAIL" in voted.values() and "PASS" in voted.values()

    # The daemon commits and reveals what the person decided.
    view = cluster.wait([trace_id], timeout_s=240)[trace_id]
    assert view["status"] == "done", view["error"]
    assert view["outcome"]["verdict"] == "FAIL"
    sid = int(view["session_id"])
    p = cluster.owner
    seats = p.seats_of(sid, HUMAN_ADDR)
    assert sorted(seats) == sorted(voted)
    vote = p.vote(sid, HUMAN_ADDR)
    assert vote.revealed and vote.verdicts is not None
    on_chain = {seg: "FAIL" if vote.verdicts >> j & 1 else "PASS" for j, seg in enumerate(seats)}
    assert on_chain == voted, "the browser's verdicts are the revealed votes"
    outcomes = p.segments(sid)
    for seg, verdict in voted.items():
        assert outcomes[seg].outcome == (SegmentOutcome.FAIL if verdict == "FAIL" else SegmentOutcome.PASS)

    # The public dashboard (served by the provider's API node) shows the finalized session.
    api = cluster.api_url
    pg.goto(f"{api}/sessions")
    row = pg.locator(f"tr[data-session='{sid}']")
    assert "finalized" in row.inner_text() and "FAIL" in row.inner_text()
    row.locator("a").click()
    pg.wait_for_url(f"{api}/sessions/{sid}")
    assert pg.text_content("#verdict") == "FAIL"
    assert pg.is_visible("#hdag svg.hdag")
    nodes = pg.locator("#hdag g.node")
    assert nodes.count() == len(outcomes)
    failing = {s.index for s in outcomes if s.outcome == SegmentOutcome.FAIL}
    shown_failing = {
        int(i)
        for i in pg.eval_on_selector_all(
            "#hdag g.node[data-outcome=FAIL]", "els => els.map(e => e.dataset.index)"
        )
    }
    assert shown_failing == failing and failing >= {s for s, v in voted.items() if v == "FAIL"}
    assert pg.locator("#hdag g.node[data-auditor=T_Human]").count() == len(seats)
    assert pg.locator("#hdag .fail-mark").count() == len(failing)
    assert pg.locator("#segments tbody tr").count() == len(outcomes)
    assert "commit" in pg.inner_text("#txs") and "finalize" in pg.inner_text("#txs")
    body = pg.inner_text("body")
    assert "kg is under 100" not in body and "<script>" not in body, "no plaintext on public pages"
    shot(pg, "network-dashboard-session")

    # The human auditor's page: reputation and profit after its settlement.
    deadline = time.monotonic() + 90
    while not p.vote(sid, HUMAN_ADDR).settled and time.monotonic() < deadline:
        time.sleep(0.5)
    assert p.vote(sid, HUMAN_ADDR).settled
    pg.goto(f"{api}/auditors/{HUMAN_ADDR}")
    assert pg.text_content("#tier") == "human"
    assert pg.locator("#reputation-chart circle.point").count() >= 1
    assert pg.locator("#profit-chart circle.point").count() >= 1
    assert str(sid) in pg.inner_text("#history")
    shot(pg, "network-dashboard-auditor")
    assert guard.blocked == [], f"pages tried to leave 127.0.0.1: {guard.blocked}"
