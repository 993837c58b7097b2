"""Keys at rest (issue 16): node state is 0600 files in 0700 directories, whatever the umask.

The provider's jobs.db holds traces, HDAGs and every segment's key; the human queue and the
evidence hold plaintext segments; a keystore holds the signing key.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.cli.conftest import run_cli
from trustnode.chain import devnet as devnet_mod
from trustnode.chain.accounts import dev_account, load_keystore, write_keystore
from trustnode.chain.deployment import Deployment
from trustnode.node.sqlite import Database


def _wide(root: Path) -> list[str]:
    """Every path under `root` (itself included) that anyone but the owner may read or enter."""
    out = []
    for p in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(p.lstat().st_mode)
        if mode & 0o077:
            out.append(f"{p.relative_to(root.parent)} {oct(mode)}")
    return out


def test_query_creates_a_private_data_dir_and_job_queue(tmp_path: Path) -> None:
    data = tmp_path / "node"
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)  # an existing, too open data directory is narrowed
    res = run_cli(["query", "tr_nothing"], TRUSTNODE_DATA_DIR=str(data))
    assert res.returncode == 1 and "this node has no trace tr_nothing" in res.stderr
    assert "run this with that node's TRUSTNODE_DATA_DIR" in " ".join(res.stderr.split()), res.stderr
    assert (data / "provider" / "jobs.db").is_file()
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert _wide(data) == []


@pytest.mark.chain
def test_a_human_auditor_keeps_its_queue_and_votes_private(devnet: Deployment, tmp_path: Path) -> None:
    devnet_mod.fund(devnet, [dev_account(17).address], 2000 * 10**18)
    dep_file = tmp_path / "deployment.json"
    devnet.save(dep_file)
    data = tmp_path / "human"
    res = run_cli(
        ["auditor", "run", "--tier", "human", "--once"],
        TRUSTNODE_DATA_DIR=str(data),
        TRUSTNODE_CHAIN__DEPLOYMENT_FILE=str(dep_file),
        TRUSTNODE_CHAIN__ACCOUNT_INDEX="17",
    )
    assert res.returncode == 0, res.stderr
    files = {p.name for p in data.rglob("*") if p.is_file()}
    assert "queue.db" in files, files
    assert _wide(data) == []


def test_explicit_modes_hold_under_an_open_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        db = Database(tmp_path / "a" / "jobs.db", "CREATE TABLE IF NOT EXISTS t (x);")
        with db.tx() as conn:
            conn.execute("INSERT INTO t VALUES (1)")
        wal = tmp_path / "a" / "jobs.db-wal"
        wal_mode = stat.S_IMODE(wal.stat().st_mode)  # open connections keep the WAL
        db.close()
        ks = tmp_path / "keys" / "node.json"
        write_keystore(dev_account(3), ks, "pw")
        loose = tmp_path / "b" / "old.db"
        loose.parent.mkdir()
        loose.touch(mode=0o644)
        Database(loose, "CREATE TABLE IF NOT EXISTS t (x);").close()
    finally:
        os.umask(old)
    assert wal_mode == 0o600
    for p in (tmp_path / "a" / "jobs.db", ks, loose):
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
    assert stat.S_IMODE(ks.parent.stat().st_mode) == 0o700
    assert [p.name for p in ks.parent.iterdir()] == ["node.json"], "no temporary key file is left"
    assert load_keystore(ks, "pw").address == dev_account(3).address
