"""An auditor daemon on a devnet restarted from scratch (README: `devnet down`/a crash, then
`devnet up`): the new chain has the same contract addresses, and the old daemon followed it with the
old chain's state (UnknownWithdrawal reverts, unregistered, silent). It now refuses, saying why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import TIMES_THINKING, client_for, free_port
from trustnode.audit.computer import ComputerAuditor
from trustnode.chain.deployment import Deployment
from trustnode.chain.protocol import Protocol
from trustnode.config import Settings
from trustnode.models.enums import Tier
from trustnode.models.trace import TraceInput
from trustnode.node.appeals import ProviderAppeals
from trustnode.node.auditor import AuditorDaemon
from trustnode.node.chain_identity import ChainReplacedError
from trustnode.node.context import NodeContext
from trustnode.node.provider import ProviderPipeline

pytestmark = pytest.mark.chain


def test_a_daemon_refuses_a_chain_that_is_not_the_one_its_data_dir_served(
    fresh_devnet: Deployment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dep_file = tmp_path / "deployment.json"
    fresh_devnet.save(dep_file)
    settings = Settings(
        data_dir=tmp_path / "computer-1", chain={"deployment_file": dep_file, "account_index": 2}
    )  # type: ignore[arg-type]
    daemon = AuditorDaemon(NodeContext(settings), Tier.COMPUTER, ComputerAuditor())
    try:
        daemon.check_chain()  # first use: recorded
        daemon.check_chain()  # the same chain: fine
        record = daemon.home / "chain.json"
        known = json.loads(record.read_text())
        record.write_text(json.dumps({**known, "genesis": "0x" + "ab" * 32}))  # the old chain's genesis
        with pytest.raises(ChainReplacedError, match="is not the one this data directory served"):
            daemon.ensure_registered()
        assert not daemon.port.profile(daemon.address).registered, "nothing was sent to the new chain"
        # A running daemon looks now and then too: a restart between two polls shows no outage.
        monkeypatch.setattr("trustnode.node.auditor.CHECK_EVERY_S", 0.0)
        stop, ticks = threading.Event(), []
        with pytest.raises(ChainReplacedError, match="0x" + "ab" * 32):  # the old hash in full
            daemon.run(stop, on_tick=lambda _: (ticks.append(1), len(ticks) > 3 and stop.set()))
        assert not ticks, "it stopped before its first tick"
    finally:
        daemon.close()


def test_a_running_provider_stops_when_anvil_is_restarted_under_it(
    fresh_devnet: Deployment, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The README operator restarted anvil (`devnet down && devnet up`) under a running provider: it
    went on with the new chain (sessions opened there for the old chain's jobs, the old sessions'
    calls reverting for good and failing their jobs) and said nothing. Now it stops, naming both
    genesis hashes and what to do, and its jobs stay in the store at the stage they reached."""
    dep_file = tmp_path / "deployment.json"
    fresh_devnet.save(dep_file)
    settings = Settings(
        data_dir=tmp_path / "provider",
        chain={"deployment_file": dep_file, "account_index": 1},
        batch={"size": 1, "max_wait_s": 0},
    )  # type: ignore[arg-type]
    ctx = NodeContext(settings)
    ctx.chain_guard.check(force=True)  # what `api serve` / `worker` do at start-up
    old = json.loads((tmp_path / "provider" / "provider" / "chain.json").read_text())["genesis"]
    pipeline = ProviderPipeline(ctx)
    job, _ = ctx.jobs.submit(
        TraceInput(problem="What is 6 times 7?", thinking=TIMES_THINKING, output="42"), "k"
    )
    for stage in (pipeline._decompose, pipeline._pin):
        stage(job)
    ctx.jobs.save(job)
    before = ctx.jobs.get(job.id)

    fixture_file = tmp_path / "devnet" / "deployment.json"  # conftest's fresh_devnet
    restart = (  # in another process, as the operator's `devnet down && devnet up` (its own nonces)
        "import sys; from pathlib import Path; from trustnode.chain import devnet as d; "
        "p = Path(sys.argv[1]); d.down(p); d.up(p, port=int(sys.argv[2]))"
    )
    subprocess.run(
        [sys.executable, "-c", restart, str(fixture_file), str(fresh_devnet.port)], check=True, timeout=120
    )  # anvil from scratch: the same contract addresses, a new genesis
    new = "0x" + bytes(client_for(fresh_devnet, 0).w3.eth.get_block(0)["hash"]).hex()
    assert new != old

    stop = threading.Event()
    stopped: list[str] = []
    ctx.chain_guard.on_replaced = lambda exc: (stopped.append(str(exc)), stop.set())
    threads = [
        threading.Thread(target=pipeline.run, args=(stop,), daemon=True),
        threading.Thread(target=ProviderAppeals(ctx).run, args=(stop,), daemon=True),
    ]
    for t in threads:
        t.start()
    assert stop.wait(30), "the provider went on with the new chain"
    for t in threads:
        t.join(timeout=10)
        assert not t.is_alive()
    message = stopped[0]
    said = [r for r in caplog.records if r.getMessage().startswith("stopping: ")]
    assert len(said) == 1, [r.getMessage() for r in said]  # the worker and the appeal duties: said once
    assert old in message and new in message and "start it with a new data directory" in message, message
    assert str(tmp_path / "provider" / "provider") in message and "kept as they are" in message, message
    after = ctx.jobs.get(job.id)
    assert (after.stage, after.status, after.session_id) == (before.stage, before.status, None), after
    assert after.attempts == before.attempts and after.error is None, after
    assert Protocol(client_for(fresh_devnet, 0), fresh_devnet.contracts).session_count() == 0, "nothing sent"


def test_a_page_only_node_refuses_a_chain_its_data_dir_did_not_serve(
    fresh_devnet: Deployment, tmp_path: Path
) -> None:
    """A human auditor's page node (`api serve --no-worker`, README) on a data directory that served
    another chain showed that chain's seats and jobs against the new one, saying nothing. It records
    the chain at its first start, starts again on the same chain, and refuses another one."""
    dep_file = tmp_path / "deployment.json"
    fresh_devnet.save(dep_file)
    home = tmp_path / "human-1"

    def serve() -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRUSTNODE_")}
        env |= {
            "TRUSTNODE_DATA_DIR": str(home),
            "TRUSTNODE_CHAIN__DEPLOYMENT_FILE": str(dep_file),
            "TRUSTNODE_CHAIN__ACCOUNT_INDEX": "5",
            "TRUSTNODE_API__PORT": str(free_port()),
        }
        cmd = [sys.executable, "-m", "trustnode.cli.main", "api", "serve", "--no-worker"]
        try:  # a node that starts keeps serving: the timeout is its success
            return subprocess.run(
                cmd, env=env, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL
            )
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            return subprocess.CompletedProcess(cmd, -1, out, "")

    first = serve()
    assert first.returncode == -1, (first.stdout + first.stderr)[-2000:]  # served until stopped
    record = home / "provider" / "chain.json"
    known = json.loads(record.read_text())  # recorded at its first start
    record.write_text(json.dumps({**known, "genesis": "0x" + "cd" * 32}))  # as if the old chain's
    out = serve()
    said = out.stdout + out.stderr
    assert out.returncode not in (0, -1), said[-2000:]
    assert "is not the one this data directory served" in said and "0x" + "cd" * 32 in said, said[-2000:]
    assert "seats its pages show" in said and "Traceback" not in said, said[-2000:]
