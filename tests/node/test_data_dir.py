"""Issue 13, item 1, as operators hit it: `auditor run` processes sharing one data directory.

Two accounts on one data dir both register and run, each with its own state; a second daemon of
an account that already runs there is refused at start-up, saying why.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import client_for
from trustnode.chain.accounts import dev_account
from trustnode.chain.deployment import Deployment
from trustnode.chain.protocol import Protocol

pytestmark = pytest.mark.chain

TOKEN = 10**18


def _daemon(dep_file: Path, data_dir: Path, account: int) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRUSTNODE_")}
    env.update(
        {
            "TRUSTNODE_DATA_DIR": str(data_dir),
            "TRUSTNODE_CHAIN__DEPLOYMENT_FILE": str(dep_file),
            "TRUSTNODE_CHAIN__ACCOUNT_INDEX": str(account),
            "TRUSTNODE_CHAIN__POLL_INTERVAL_S": "0.2",
            "TRUSTNODE_AUDITOR__STAKE": str(50 * TOKEN),
        }
    )
    return subprocess.Popen(
        [sys.executable, "-m", "trustnode.cli.main", "auditor", "run", "--tier", "computer"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def test_two_accounts_share_a_data_dir_and_one_account_runs_once(
    fresh_devnet: Deployment, tmp_path: Path
) -> None:
    dep_file = tmp_path / "deployment.json"
    fresh_devnet.save(dep_file)
    owner = Protocol(client_for(fresh_devnet, 0), fresh_devnet.contracts)
    for account in (2, 3):
        owner.transfer(dev_account(account).address, 100 * TOKEN)
    data = tmp_path / "shared-data-dir"
    running = [_daemon(dep_file, data, 2), _daemon(dep_file, data, 3)]
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if all(owner.profile(dev_account(a).address).registered for a in (2, 3)):
                break
            assert all(p.poll() is None for p in running), [p.communicate()[0] for p in running if p.poll()]
            time.sleep(0.3)
        for account in (2, 3):
            home = data / "auditor" / dev_account(account).address.lower()
            assert (home / "votes.db").is_file() and (home / "encryption.key").is_file()
        keys = {owner.profile(dev_account(a).address).encryption_key for a in (2, 3)}
        assert len(keys) == 2, "each account registered its own encryption key"
        again = _daemon(dep_file, data, 2)
        out, _ = again.communicate(timeout=60)
        assert again.returncode == 1, out
        assert (
            f"another auditor daemon of account {dev_account(2).address} already runs on this data directory"
            in out
        )
        assert all(p.poll() is None for p in running), "the refusal stopped nobody else"
    finally:
        for p in running:
            p.terminate()
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
