"""KuboStore and LocalStore against a real js-ipfs daemon: identical CIDs, add/cat/pin round trips."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from trustnode.storage.blobstore import BlobNotFoundError, KuboStore, LocalStore
from trustnode.storage.cids import parse_cid
from trustnode.storage.unixfs import CHUNK_SIZE, MAX_LINKS, compute_cid

pytestmark = pytest.mark.ipfs

SIZES = {
    "0 B": 0,
    "1 B": 1,
    "256 KiB - 1": CHUNK_SIZE - 1,
    "256 KiB": CHUNK_SIZE,
    "256 KiB + 1": CHUNK_SIZE + 1,
    "10 MiB": 10 * 1024 * 1024,
}


def _raw_daemon_add(api_url: str, data: bytes) -> str:
    """Ask the daemon directly (not through KuboStore) so the comparison is independent of our client."""
    r = httpx.post(
        f"{api_url}/api/v0/add",
        params={"cid-version": "1", "raw-leaves": "true", "pin": "false"},
        files={"file": ("f", data)},
        timeout=120,
    )
    r.raise_for_status()
    return str(r.json()["Hash"])


@pytest.mark.parametrize("size", list(SIZES.values()), ids=list(SIZES))
def test_local_store_cid_equals_daemon_cid(ipfs_api_url: str, tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    daemon_cid = parse_cid(_raw_daemon_add(ipfs_api_url, data))
    local_cid = LocalStore(tmp_path).add(data)
    assert parse_cid(local_cid) == daemon_cid
    assert local_cid == str(daemon_cid.set(base="base32"))
    # the codec tells single-block (raw) from chunked (dag-pb) files
    assert daemon_cid.codec.name == ("raw" if size <= CHUNK_SIZE else "dag-pb")


@pytest.mark.slow
def test_two_level_balanced_tree_matches_daemon(ipfs_api_url: str) -> None:
    """More than 174 chunks needs a second tree level; the layouts must still agree."""
    data = os.urandom(CHUNK_SIZE * (MAX_LINKS + 1) + 7)
    assert compute_cid(data) == str(parse_cid(_raw_daemon_add(ipfs_api_url, data)).set(base="base32"))


def test_add_cat_round_trip_and_same_cid_as_local(ipfs_api_url: str, tmp_path: Path) -> None:
    store = KuboStore(ipfs_api_url, timeout_s=60, retries=1)
    for size in (0, 1, CHUNK_SIZE + 1, 3 * CHUNK_SIZE + 11):
        data = os.urandom(size)
        cid = store.add(data)
        assert cid == LocalStore(tmp_path / str(size)).add(data)
        assert cid.startswith("baf")
        assert store.cat(cid) == data
        assert store.has(cid)


def test_pin_ls_rm_round_trip(ipfs_api_url: str) -> None:
    store = KuboStore(ipfs_api_url, timeout_s=30, retries=0)
    data = os.urandom(1000)
    cid = store.add(data, pin=False)
    assert cid not in store.pins()
    store.pin(cid)
    assert cid in store.pins()
    store.unpin(cid)
    assert cid not in store.pins()
    store.unpin(cid)  # idempotent
    assert store.has(cid)  # unpinned is not deleted until a GC
    assert store.cat(cid) == data


def test_cat_of_absent_blob_is_a_clear_not_found(ipfs_api_url: str) -> None:
    store = KuboStore(ipfs_api_url, timeout_s=10, retries=0, lookup_timeout_s=0.5, has_timeout_s=0.5)
    absent = compute_cid(b"never added to any store " + os.urandom(16))
    assert not store.has(absent)
    with pytest.raises(BlobNotFoundError, match=absent):
        store.cat(absent)
    with pytest.raises(BlobNotFoundError):
        store.pin(absent)


def test_cids_accepted_in_any_spelling(ipfs_api_url: str) -> None:
    store = KuboStore(ipfs_api_url)
    data = b"spelling " + os.urandom(8)
    cid = store.add(data)
    b58 = str(parse_cid(cid).set(base="base58btc"))
    assert b58.startswith("z")
    assert store.cat(b58) == data
    assert store.has(b58)


def test_version(ipfs_api_url: str) -> None:
    assert "Version" in KuboStore(ipfs_api_url).version()


def test_add_file_streams_to_daemon(ipfs_api_url: str, tmp_path: Path) -> None:
    store = KuboStore(ipfs_api_url, timeout_s=60)
    data = os.urandom(3 * CHUNK_SIZE + 100)
    f = tmp_path / "big.bin"
    f.write_bytes(data)
    cid = store.add_file(f)
    assert cid == compute_cid(data) and store.cat(cid) == data and cid in store.pins()
