"""The auditor daemon rides out a chain outage: it backs off, keeps running, and resumes
when the chain answers again."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.conftest import free_port
from trustnode.audit.computer import ComputerAuditor
from trustnode.chain import devnet
from trustnode.chain.deployment import Deployment
from trustnode.config import Settings
from trustnode.models.enums import Tier
from trustnode.node.auditor import AuditorDaemon
from trustnode.node.context import NodeContext

pytestmark = pytest.mark.chain


def test_daemon_backs_off_while_the_chain_is_down_and_resumes(tmp_path: Path) -> None:
    port = free_port()
    dep_file = tmp_path / "devnet" / "deployment.json"
    # A deployment file whose chain is not there (yet).
    Deployment(
        chain_id=31337,
        rpc_url=f"http://127.0.0.1:{port}",
        contracts={"TrustToken": "0x" + "11" * 20},
        deploy_block=0,
        deployer="0x" + "22" * 20,
    ).save(dep_file)
    settings = Settings(
        data_dir=tmp_path / "auditor", chain={"deployment_file": dep_file, "poll_interval_s": 0.1}
    )  # type: ignore[arg-type]
    daemon = AuditorDaemon(NodeContext(settings), Tier.COMPUTER, ComputerAuditor())
    ticks: list[str | None] = []
    stop = threading.Event()
    thread = threading.Thread(
        target=daemon.run, args=(stop,), kwargs={"on_tick": lambda d: ticks.append(d.last_error)}
    )
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while len(ticks) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(ticks) >= 3 and all(t is not None for t in ticks), ticks
        assert "not reachable" in (ticks[-1] or "") or "does not answer" in (ticks[-1] or "")
        assert thread.is_alive()
        # The chain comes up on that port; the daemon's next tick succeeds.
        dep_file.unlink()
        devnet.up(dep_file, port=port)
        seen = len(ticks)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (len(ticks) > seen and ticks[-1] is None):
            time.sleep(0.1)
        assert ticks[-1] is None, ticks[-3:]
    finally:
        stop.set()
        thread.join(timeout=30)
        devnet.down(dep_file)
    assert not thread.is_alive()
