"""Fixtures shared by every test package: paths, free ports and a real anvil devnet."""

from __future__ import annotations

import os
import socket
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from trustnode.chain import devnet as devnet_mod
from trustnode.chain.accounts import dev_account
from trustnode.chain.client import ChainClient
from trustnode.chain.deployment import Deployment
from trustnode.chain.paths import find_tool

# On CI every property test replays the same examples: a red run is reproducible, and a
# slow shared machine cannot trip a deadline.
hypothesis_settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"
EVAL_DIR = SHARED / "eval"


@pytest.fixture(autouse=True)
def _keep_umask() -> Iterator[None]:
    """Node commands run in-process set a private umask for the process; undo it per test."""
    mask = os.umask(0o022)
    os.umask(mask)
    yield
    os.umask(mask)


#: Small arithmetic traces long enough to audit within the default privacy share: a trace needs
#: 320 characters of reasoning at 25% (`hdag.spans.private_thinking_floor`); shorter ones are refused.
ADD_THINKING = (
    "We need 2 + 3. Start from 2 and count three more: 3, 4, 5. So 2 + 3 = 5. "
    "Check by counting back: 5 - 3 = 2, which is where we started, so the sum is right. "
    "Another check: 3 + 2 = 5 as well, since the order of the terms does not change a sum. "
    "Both checks agree with the first count, and no other reading of the question applies. "
    "So the answer is 5."
)
TIMES_THINKING = (
    "We need 6 times 7. Six sevens are 7 + 7 + 7 + 7 + 7 + 7. Adding in pairs, 7 + 7 = 14 three "
    "times, and 14 + 14 + 14 = 42. So 6 × 7 = 42. Check with the table we know: 6 × 7 = 7 × 6, and "
    "7 × 6 = 42. A second check: 6 × 7 = 6 × 5 + 6 × 2 = 30 + 12 = 42. Every way of counting gives "
    "the same value, and none of the counts needs a carried digit, so the answer is 42."
)
DOUBLE_THINKING = (
    "We need 2 + 2. Start at 2 and count two more: 3, 4. So 2 + 2 = 4. Check by doubling: twice 2 "
    "is 4, the same value. Check by counting back: 4 - 2 = 2, where we started. A third check: "
    "1 + 1 + 1 + 1 = 4, four ones in all. Every count agrees with the first one, and the question "
    "has no other reading, and nothing is carried, so the answer is 4."
)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def eval_dir() -> Path:
    if not EVAL_DIR.is_dir():
        pytest.fail(f"evaluation data not found at {EVAL_DIR} (../shared must sit beside the repository)")
    return EVAL_DIR


def _require_anvil() -> None:
    if find_tool("anvil") is None:
        pytest.fail("anvil is not installed: run `make install` (npm ci)")


@pytest.fixture(scope="session")
def devnet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """One anvil chain with the protocol deployed, shared by the whole test session."""
    _require_anvil()
    dep_file = tmp_path_factory.mktemp("devnet") / "deployment.json"
    dep = _up_with_one_retry(dep_file)
    try:
        yield dep
    finally:
        devnet_mod.down(dep_file)


@pytest.fixture
def fresh_devnet(tmp_path: Path) -> Iterator[Deployment]:
    """A chain of the test's own, for tests that need a clean state."""
    _require_anvil()
    dep_file = tmp_path / "devnet" / "deployment.json"
    dep = _up_with_one_retry(dep_file)
    try:
        yield dep
    finally:
        devnet_mod.down(dep_file)


def _up_with_one_retry(dep_file: Path) -> Deployment:
    """Start a devnet; a set-up that fails in anvil itself is retried once on a new port, with
    its diagnosis kept as a warning (CI once saw anvil accept the first deployment transaction
    and never mine it). A second failure fails the test."""
    try:
        return devnet_mod.up(dep_file, port=free_port())
    except devnet_mod.DevnetError as exc:
        warnings.warn(f"devnet set-up failed once, retrying on a new port: {exc}", stacklevel=2)
        return devnet_mod.up(dep_file, port=free_port())


def start_server(app: Any, *, timeout_s: float = 15.0) -> tuple[uvicorn.Server, threading.Thread, str]:
    """Serve an ASGI app on a free 127.0.0.1 port in a thread; stop with `server.should_exit = True`."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    if not server.started:
        raise RuntimeError("the web server did not start")
    return server, thread, f"http://127.0.0.1:{port}"


def stop_server(server: uvicorn.Server, thread: threading.Thread) -> None:
    server.should_exit = True
    thread.join(timeout=10)


def client_for(dep: Deployment, account_index: int = 0) -> ChainClient:
    """A ChainClient signing with anvil dev account `account_index`."""
    return ChainClient.connect(dep.rpc_url, dev_account(account_index))
