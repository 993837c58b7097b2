"""The public dashboard: the server-drawn HDAG and charts, and the pages over HTTP on a devnet
(empty list, an opened session before its HDAG is published, unknown ids, auditors)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.browser.conftest import serve
from tests.conftest import ADD_THINKING
from trustnode.api.app import create_app
from trustnode.api.web.svg import AUDITOR_COLOURS, FAIL_COLOUR, hdag_svg, line_chart
from trustnode.chain.accounts import dev_account
from trustnode.chain.client import ChainClient
from trustnode.chain.deployment import Deployment
from trustnode.chain.protocol import Protocol
from trustnode.config import Settings
from trustnode.hdag.offline import decompose_offline
from trustnode.models.enums import AuditorType, Level, Relationship, Tier
from trustnode.models.trace import TraceInput
from trustnode.node.context import NodeContext
from trustnode.node.samples import load_samples
from trustnode.node.structure import SessionShape, ShapeEdge, ShapeNode

SVG = "{http://www.w3.org/2000/svg}"


def _shape() -> SessionShape:
    sample = next(s for s in load_samples() if s.name == "clinical-right-answer-flawed-steps")
    hdag = decompose_offline(sample.trace)
    return SessionShape.from_hdag(hdag, [1] * len(hdag.nodes))


def _nodes(svg: str) -> list[ET.Element]:
    root = ET.fromstring(svg)  # well-formed XML, or this raises
    return [g for g in root.iter(f"{SVG}g") if "node" in (g.get("class") or "").split()]


def test_hdag_picture_colours_shapes_and_failures() -> None:
    shape = _shape()
    n = len(shape.nodes)
    outcomes = ["PASS"] * n
    outcomes[2] = outcomes[3] = "FAIL"
    outcomes[1] = "INCONCLUSIVE"
    svg = hdag_svg(shape, outcomes, [(1, 0)] * n, link=lambda i: f"#seg-{i}")
    nodes = _nodes(svg)
    assert len(nodes) == n
    assert [int(g.get("data-index", -1)) for g in nodes] == list(range(n))
    for g, node in zip(nodes, shape.nodes, strict=True):
        assert g.get("data-auditor") == node.auditor.value
        assert g.get("data-level") == node.level.value
        body = next(iter(g.findall(f"{SVG}polygon") + g.findall(f"{SVG}circle") + g.findall(f"{SVG}rect")))
        assert body.get("fill") == AUDITOR_COLOURS[node.auditor]
        # Shape by level: GOAL hexagon (6 points), STEP circle, OPERATION square.
        if node.level == Level.GOAL:
            assert body.tag == f"{SVG}polygon" and len(body.get("points", "").split()) == 6
        elif node.level == Level.STEP:
            assert body.tag == f"{SVG}circle"
        elif node.level == Level.OPERATION:
            assert body.tag == f"{SVG}rect"
    failing = [g for g in nodes if g.get("data-outcome") == "FAIL"]
    assert [int(g.get("data-index", -1)) for g in failing] == [2, 3]
    for g in failing:
        assert g.find(f"{SVG}g[@class='fail-mark']") is not None
        assert any(el.get("stroke") == FAIL_COLOUR for el in g)
    assert svg.count('class="fail-mark"') == 2
    edges = ET.fromstring(svg).findall(f".//{SVG}path[@class='edge']")
    assert len(edges) == len([e for e in shape.edges if e.source != e.target])
    assert 'href="#seg-0"' in svg


def test_hdag_picture_escapes_untrusted_node_ids() -> None:
    shape = SessionShape(
        nodes=[
            ShapeNode(
                index=0,
                node_id='G1"><script>x()</script>',
                level=Level.GOAL,
                auditor=AuditorType.T_HUMAN,
                tier=Tier.HUMAN,
                weight=1,
                children=[1],
            ),
            ShapeNode(
                index=1,
                node_id="ST1",
                level=Level.STEP,
                auditor=AuditorType.T_AUTO,
                tier=Tier.COMPUTER,
                weight=1,
                parents=[0],
            ),
        ],
        edges=[ShapeEdge(source=0, target=1, relationship=Relationship.CONTRADICTS)],
    )
    svg = hdag_svg(shape)
    assert "<script>" not in svg
    assert len(_nodes(svg)) == 2
    assert 'marker-end="url(#arrow-red)"' in svg, "contradictions are drawn in red"


def test_line_chart_points_and_empty_state() -> None:
    svg = line_chart(
        [(10, 0.55), (20, 0.595), (35, 0.6355)],
        title="Reputation",
        x_label="block",
        y_label="r",
        y_range=(0, 1),
    )
    root = ET.fromstring(svg)
    points = root.findall(f".//{SVG}circle[@class='point']")
    assert len(points) == 3
    ys = [float(p.get("cy", 0)) for p in points]
    assert ys[0] > ys[1] > ys[2], "higher reputation is drawn higher"
    xs = [float(p.get("cx", 0)) for p in points]
    assert xs[0] < xs[1] < xs[2]
    assert [p.find(f"{SVG}title").text for p in points][0] == "block 10: 0.55"  # type: ignore[union-attr]
    empty = line_chart([], title="Profit", x_label="block", y_label="tokens")
    assert "no settlements yet" in empty
    ET.fromstring(empty)


def test_pages_without_a_chain_say_so(tmp_path: Path) -> None:
    server, thread, url = serve(create_app(NodeContext(Settings(data_dir=tmp_path))))
    try:
        r = httpx.get(f"{url}/sessions")
        assert r.status_code == 503 and "no deployment file" in r.text
        assert httpx.get(f"{url}/").headers["location"] == "/sessions"
        r = httpx.get(f"{url}/auditors?address=nonsense")
        assert r.status_code == 400
        static = httpx.get(f"{url}/static/katex/fonts/KaTeX_Main-Regular.woff2")
        assert static.status_code == 200 and len(static.content) > 1000
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def chain_site(devnet: Deployment, tmp_path: Path) -> Iterator[tuple[str, Deployment]]:
    dep_file = tmp_path / "deployment.json"
    dep_file.write_text(devnet.model_dump_json())
    settings = Settings(data_dir=tmp_path, chain={"deployment_file": dep_file, "account_index": 9})  # type: ignore[arg-type]
    server, thread, url = serve(create_app(NodeContext(settings)))
    try:
        yield url, devnet
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.mark.chain
def test_dashboard_on_a_devnet(chain_site: tuple[str, Deployment]) -> None:
    url, dep = chain_site
    owner = Protocol(ChainClient.connect(dep.rpc_url, dev_account(0)), dep.contracts)
    provider = Protocol(ChainClient.connect(dep.rpc_url, dev_account(11)), dep.contracts)
    owner.transfer(dev_account(11).address, 1000 * 10**18)
    root = bytes.fromhex("ab" * 32)
    sid = provider.open_session(root, [0, 1], [1, 1], 100 * 10**18)

    page = httpx.get(f"{url}/sessions")
    assert page.status_code == 200
    row = re.search(rf'<tr data-session="{sid}"[^>]*>.*?</tr>', page.text, re.S)
    assert row is not None and "created" in row.group(0)
    page = httpx.get(f"{url}/sessions/{sid}")
    assert page.status_code == 200
    assert "0x" + "ab" * 32 in page.text
    assert 'id="hdag-missing"' in page.text and "after the draw" in page.text
    assert page.text.count('<tr id="seg-') == 2
    assert re.search(r"draw \d+, keys \d+, commit \d+, reveal \d+", page.text), "deadlines as block numbers"
    assert "<td>open</td>" in page.text and page.headers["content-security-policy"].startswith(
        "default-src 'none'"
    )
    assert httpx.get(f"{url}/sessions/{sid}/hdag.svg").status_code == 404
    assert httpx.get(f"{url}/sessions/{sid + 1000}").status_code == 404

    addr = dev_account(12).address
    r = httpx.get(f"{url}/auditors?address={addr.lower()}")
    assert r.status_code == 303 and r.headers["location"] == f"/auditors/{addr}"
    page = httpx.get(f"{url}/auditors/{addr}")
    assert page.status_code == 200
    assert "Not registered" in page.text and page.text.count("no settlements yet") == 2
    assert httpx.get(f"{url}/auditors/0x1234").status_code == 400


def test_offline_trace_shape_has_every_level_row() -> None:
    trace = TraceInput(problem="Compute 2 + 3.", thinking=ADD_THINKING, output="5")
    hdag = decompose_offline(trace)
    shape = SessionShape.from_hdag(hdag, [1] * len(hdag.nodes))
    svg = hdag_svg(shape)
    for level in {n.level for n in shape.nodes}:
        assert f">{level.value}</text>" in svg
