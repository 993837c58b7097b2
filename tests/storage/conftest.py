"""A real js-ipfs daemon for the storage tests: started once per session, stopped at the end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from trustnode.chain.paths import find_tool
from trustnode.storage.jsipfs import JsIpfsDaemon


def _require_jsipfs() -> None:
    if find_tool("jsipfs") is None:
        pytest.fail("jsipfs is not installed: run `make install` (npm ci)")


@pytest.fixture(scope="session")
def jsipfs_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JsIpfsDaemon]:
    """The shared daemon object (tests that must not disturb it start their own)."""
    _require_jsipfs()
    daemon = JsIpfsDaemon(tmp_path_factory.mktemp("jsipfs") / "repo")
    with daemon:
        yield daemon


@pytest.fixture(scope="session")
def ipfs_api_url(jsipfs_daemon: JsIpfsDaemon) -> str:
    """The shared daemon's API URL, e.g. http://127.0.0.1:PORT."""
    return jsipfs_daemon.api_url
