"""LocalStore: content addressing, pins, GC, integrity checks on every read."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from trustnode.storage.blobstore import BlobIntegrityError, BlobNotFoundError, InvalidCIDError, LocalStore
from trustnode.storage.cids import parse_cid
from trustnode.storage.unixfs import CHUNK_SIZE, compute_cid


def test_add_cat_round_trip_various_sizes(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    for size in (0, 1, 100, CHUNK_SIZE, CHUNK_SIZE + 1, 5 * CHUNK_SIZE + 3):
        data = os.urandom(size)
        cid = store.add(data)
        assert cid == compute_cid(data)
        assert store.cat(cid) == data
        assert store.has(cid)
        assert cid in store.pins()


def test_same_bytes_same_cid_and_dedup(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    data = os.urandom(3 * CHUNK_SIZE)
    assert store.add(data) == store.add(data)
    used = store.disk_usage()
    store.add(data)
    assert store.disk_usage() == used


def test_cat_accepts_other_spellings(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    cid = store.add(b"hello")
    assert store.cat(str(parse_cid(cid).set(base="base58btc"))) == b"hello"
    with pytest.raises(InvalidCIDError):
        store.cat("not-a-cid")


def test_missing_blob_is_not_found(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    absent = compute_cid(b"absent")
    assert not store.has(absent)
    with pytest.raises(BlobNotFoundError, match=absent):
        store.cat(absent)
    with pytest.raises(BlobNotFoundError):
        store.pin(absent)


def test_corrupt_block_detected_on_read(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    data = os.urandom(2 * CHUNK_SIZE + 5)
    cid = store.add(data)
    leaf = sorted((tmp_path / "blocks").glob("*/bafkrei*"))[0]
    raw = bytearray(leaf.read_bytes())
    raw[0] ^= 0xFF
    leaf.write_bytes(bytes(raw))
    with pytest.raises(BlobIntegrityError, match="corrupt"):
        store.cat(cid)


def test_incomplete_dag_is_reported(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    cid = store.add(os.urandom(2 * CHUNK_SIZE + 5))
    next(iter(sorted((tmp_path / "blocks").glob("*/bafkrei*")))).unlink()
    with pytest.raises(BlobNotFoundError, match="incomplete"):
        store.cat(cid)


def test_pin_unpin_gc(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    keep = store.add(os.urandom(3 * CHUNK_SIZE))
    drop = store.add(os.urandom(2 * CHUNK_SIZE), pin=False)
    shared = os.urandom(CHUNK_SIZE)
    # a blob sharing a chunk with a pinned one keeps that chunk alive
    both = store.add(shared + os.urandom(10))
    single = store.add(shared, pin=False)
    assert store.pins() == sorted([keep, both])
    removed = store.gc()
    assert removed == 3  # drop's root and 2 leaves; `single` is a leaf of `both`
    assert not store.has(drop) and store.has(single)
    store.unpin(both)
    store.unpin(both)  # idempotent
    store.gc()
    assert not store.has(both) and not store.has(single)
    assert store.cat(keep)
    store.pin(keep)
    assert store.pins() == [keep]


def test_concurrent_adds(tmp_path: Path) -> None:
    store = LocalStore(tmp_path, fsync=False)
    blobs = [os.urandom(CHUNK_SIZE + i) for i in range(8)]
    cids: list[str] = [""] * len(blobs)

    def work(i: int) -> None:
        cids[i] = store.add(blobs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(blobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for cid, data in zip(cids, blobs, strict=True):
        assert store.cat(cid) == data
    assert not list((tmp_path / "blocks").glob("*/.tmp-*"))


def test_add_rejects_text(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        LocalStore(tmp_path).add("text")  # type: ignore[arg-type]


def test_add_file_streams_to_the_same_cid(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    for size in (0, 5, 2 * CHUNK_SIZE + 9):
        data = os.urandom(size)
        f = tmp_path / f"in-{size}"
        f.write_bytes(data)
        cid = store.add_file(f)
        assert cid == compute_cid(data) and store.cat(cid) == data and cid in store.pins()
    unpinned = store.add_file(f, pin=False)
    assert unpinned in store.pins()  # same content was pinned already
