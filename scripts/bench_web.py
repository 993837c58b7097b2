#!/usr/bin/env python3
"""Speed of the web pages: HDAG picture generation by graph size, and audit-page requests over
real HTTP (seat list, seat form, submission) against a local server.

Prints one line per figure (or JSON with --json). Wall-clock medians on this machine; nothing
here asserts a target.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from eth_account.messages import encode_defunct

from trustnode.api.app import create_app
from trustnode.api.web.svg import hdag_svg
from trustnode.audit.human_queue import HumanQueue
from trustnode.chain.accounts import dev_account
from trustnode.config import Settings
from trustnode.models.audit import ContextSegment
from trustnode.models.enums import AuditorType, Level, Relationship, Tier
from trustnode.models.human import CRITERIA_KEYS, HumanSeat
from trustnode.node.context import NodeContext
from trustnode.node.paths import human_queue_path
from trustnode.node.structure import SessionShape, ShapeEdge, ShapeNode


def synthetic_shape(n: int) -> SessionShape:
    """One goal, a few strategies, then steps and operations, each depending on the previous one."""
    levels = [Level.GOAL] + [Level.STRATEGY] * max(1, n // 20) + [Level.STEP, Level.OPERATION] * n
    levels = levels[:n]
    kinds = [AuditorType.T_AUTO, AuditorType.T_LLM, AuditorType.T_HUMAN]
    nodes = [
        ShapeNode(
            index=i,
            node_id=f"{lv.id_prefix}{i}",
            level=lv,
            auditor=kinds[i % 3],
            tier=Tier(i % 3),
            weight=1,
            parents=[i - 1] if i else [],
            children=[i + 1] if i + 1 < n else [],
        )
        for i, lv in enumerate(levels)
    ]
    edges = [ShapeEdge(source=i, target=i + 1, relationship=Relationship.DEPENDS_ON) for i in range(n - 1)]
    return SessionShape(nodes=nodes, edges=edges)


def median_time(fn: Any, repeats: int) -> float:
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def bench_svg(sizes: list[int]) -> list[dict[str, Any]]:
    out = []
    for n in sizes:
        shape = synthetic_shape(n)
        outcomes = ["FAIL" if i % 7 == 0 else "PASS" for i in range(n)]
        seconds = median_time(lambda s=shape, o=outcomes: hdag_svg(s, o), 5)
        out.append(
            {
                "nodes": n,
                "ms": round(seconds * 1000, 2),
                "kib": round(len(hdag_svg(shape, outcomes)) / 1024, 1),
            }
        )
    return out


def bench_http(seats: int) -> dict[str, Any]:
    me = dev_account(5)
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp))
        queue = HumanQueue(human_queue_path(settings))
        for i in range(seats):
            queue.enqueue(
                HumanSeat(
                    session_id=1,
                    segment_index=i,
                    auditor=me.address,
                    node_id=f"ST{i}",
                    level=Level.STEP,
                    problem="Compute the score. " * 20,
                    dependencies=[ContextSegment(node_id="G1", level=Level.GOAL, content="$x = 1$ " * 30)],
                    reasoning="So $2 + 3 = 5$ and the total is 5. " * 10,
                    implications=[ContextSegment(node_id="O1", level=Level.OPERATION, content="5 * 2 = 10")],
                    commit_deadline=time.time() + 3600,
                )
            )
        server = uvicorn.Server(
            uvicorn.Config(create_app(NodeContext(settings)), host="127.0.0.1", port=0, log_level="warning")
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}") as c:
                page = c.get("/audit/login").text
                message = re.search(r'<textarea id="message"[^>]*>([^<]*)</textarea>', page).group(1)  # type: ignore[union-attr]
                token = re.search(r'name="token" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
                sig = "0x" + me.sign_message(encode_defunct(text=message)).signature.hex().removeprefix("0x")
                c.post("/audit/login", data={"message": message, "token": token, "signature": sig})
                listing = median_time(lambda: c.get("/audit").raise_for_status(), 20)
                seat = f"/audit/seats/1:0:{me.address.lower()}"
                form = median_time(lambda: c.get(seat).raise_for_status(), 50)
                csrf = re.search(r'name="csrf" value="([^"]+)"', c.get(seat).text).group(1)  # type: ignore[union-attr]
                submits = []
                for i in range(seats):
                    t0 = time.perf_counter()
                    r = c.post(
                        f"/audit/seats/1:{i}:{me.address.lower()}",
                        data={
                            "csrf": csrf,
                            "verdict": "PASS",
                            "criterion": list(CRITERIA_KEYS),
                            "note": "ok",
                        },
                    )
                    submits.append(time.perf_counter() - t0)
                    assert r.status_code == 303, r.text
        finally:
            server.should_exit = True
            thread.join(timeout=10)
    return {
        "pending_seats": seats,
        "seat_list_ms": round(listing * 1000, 2),
        "seat_form_ms": round(form * 1000, 2),
        "submit_ms": round(statistics.median(submits) * 1000, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", action="store_true", help="print JSON")
    ap.add_argument("--sizes", default="10,100,500", help="HDAG sizes (nodes) to draw")
    ap.add_argument("--seats", type=int, default=50, help="pending human seats for the HTTP figures")
    args = ap.parse_args()
    result = {"svg": bench_svg([int(x) for x in args.sizes.split(",")]), "http": bench_http(args.seats)}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for row in result["svg"]:
        print(f"HDAG picture, {row['nodes']:>4} nodes: {row['ms']:>8.2f} ms, {row['kib']:>7.1f} KiB")
    h = result["http"]
    print(f"audit seat list ({h['pending_seats']} pending): {h['seat_list_ms']:.2f} ms")
    print(f"audit seat form: {h['seat_form_ms']:.2f} ms")
    print(f"verdict submission (POST into the SQLite queue, 303 answer): {h['submit_ms']:.2f} ms")


if __name__ == "__main__":
    main()
