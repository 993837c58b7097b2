"""The storage benchmark still runs and reports every figure (numbers themselves are not asserted)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO_ROOT


def test_bench_storage_json_without_daemon() -> None:
    res = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "scripts" / "bench_storage.py"),
            "--json",
            "--no-daemon",
            "--mib",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert {"local_fsync", "local_nofsync", "local_small", "crypto", "merkle"} <= set(out)
    assert all(row["add_mb_s"] > 0 and row["cat_mb_s"] > 0 for row in out["local_fsync"])
    assert [row["segment_bytes"] for row in out["crypto"]] == [512, 2048, 16384]
    assert "daemon" not in out
