"""IPFS and chain URLs at start-up, as the README operator mistyped them.

`TRUSTNODE_IPFS__API_URL=notaurl trustnode api serve` started without a word and every trace then
waited on an IPFS that could never answer; with IPFS down it said nothing either (the chain, down,
got a warning). A URL that is not http(s) is a typo and is refused; an IPFS that does not answer is
an outage and is warned about (traces wait, spooled locally).
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.cli.conftest import run_cli
from tests.conftest import free_port
from trustnode.cli.startup import StartupError, check_service_urls, ipfs_warning
from trustnode.config import Settings

KEY = '["provider-key-change-me-0123456789"]'


@pytest.mark.parametrize(
    ("ipfs", "rpc"), [("notaurl", None), ("127.0.0.1:5001", None), (None, "garbage"), (None, "ws:/x")]
)
def test_a_url_that_is_not_http_is_refused(ipfs: str | None, rpc: str | None, tmp_path: Path) -> None:
    s = Settings(data_dir=tmp_path, ipfs={"api_url": ipfs}, chain={"rpc_url": rpc})  # type: ignore[arg-type]
    with pytest.raises(StartupError, match="is not an http\\(s\\) URL"):
        check_service_urls(s)


def test_good_urls_pass_and_a_dead_ipfs_is_a_warning(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nobody listens
    s = Settings(data_dir=tmp_path, ipfs={"api_url": url}, chain={"rpc_url": "http://127.0.0.1:8545"})  # type: ignore[arg-type]
    check_service_urls(s)
    said = ipfs_warning(s)
    assert said is not None and f"IPFS at {url} does not answer" in said and "spooled locally" in said
    assert ipfs_warning(Settings(data_dir=tmp_path)) is None  # no IPFS configured: the local store
    auditor = ipfs_warning(s, "auditor")  # `auditor run` said nothing until its first seat
    assert auditor is not None and "cannot read its seats' bundles" in auditor, auditor


def test_api_serve_refuses_a_mistyped_ipfs_url(tmp_path: Path) -> None:
    done = run_cli(
        ["api", "serve", "--port", str(free_port())],
        timeout=60,
        TRUSTNODE_DATA_DIR=str(tmp_path),
        TRUSTNODE_API__API_KEYS=KEY,
        TRUSTNODE_IPFS__API_URL="notaurl",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "TRUSTNODE_IPFS__API_URL = 'notaurl' is not an http(s) URL" in " ".join(done.stderr.split())


def test_api_serve_refuses_a_port_in_use_before_it_starts(tmp_path: Path) -> None:
    """A second `api serve` on a taken port printed "trustnode API on ..." and started its workers
    before uvicorn's bind error; now it is refused first, saying what to change."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_cli(
            ["api", "serve", "--no-worker", "--port", str(port)],
            timeout=60,
            TRUSTNODE_DATA_DIR=str(tmp_path),
            TRUSTNODE_API__API_KEYS=KEY,
        )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "--port" in done.stderr, done.stderr
    assert "trustnode API on" not in done.stdout and "Traceback" not in done.stderr, done.stdout
