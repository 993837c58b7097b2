"""CID computation and the dag-pb/UnixFS encoding, against known IPFS vectors and structural invariants."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from trustnode.storage.cids import DAG_PB, RAW, cid_binary, cid_codec, normalize_cid, parse_cid, verify_block
from trustnode.storage.dagpb import PBNode, UnixFSData
from trustnode.storage.errors import BlobIntegrityError, InvalidCIDError
from trustnode.storage.unixfs import (
    CHUNK_SIZE,
    MAX_LINKS,
    child_links,
    compute_cid,
    compute_file_cid,
    file_chunks,
    import_bytes,
    import_chunks,
)

# Well-known IPFS identities: the empty raw block, and the empty UnixFS directory (CIDv0 and v1).
EMPTY_RAW = "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"
EMPTY_DIR_V0 = "QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn"
EMPTY_DIR_V1 = "bafybeiczsscdsbs7ffqz55asqdf3smv6klcw3gofszvwlyarci47bgf354"


def test_known_vectors() -> None:
    assert compute_cid(b"") == EMPTY_RAW
    assert normalize_cid(EMPTY_DIR_V0) == EMPTY_DIR_V1
    # the empty directory node is the dag-pb block 0x0a 0x02 0x08 0x01 (Data = UnixFS{Type: Directory})
    assert PBNode(data=UnixFSData(type=1).encode()).encode() == bytes.fromhex("0a020801")


def test_normalize_accepts_spellings_and_rejects_garbage() -> None:
    cid = compute_cid(b"abc")
    b58 = str(parse_cid(cid).set(base="base58btc"))
    assert normalize_cid(b58) == cid == normalize_cid(cid) == normalize_cid(cid_binary(cid))
    for bad in ("", "hello", "bafy", "Qm123", cid.upper()[:-3]):
        with pytest.raises(InvalidCIDError):
            normalize_cid(bad)


def test_single_chunk_is_a_raw_block() -> None:
    data = os.urandom(CHUNK_SIZE)
    imp = import_bytes(data)
    assert len(imp.blocks) == 1 and imp.blocks[0] == (imp.cid, data)
    assert cid_codec(cid_binary(imp.cid)) == RAW
    assert imp.size == CHUNK_SIZE


def test_two_chunks_root_block_layout() -> None:
    """Byte layout a daemon produced for 256 KiB + 1 (links first, empty names, filesize, blocksizes)."""
    data = os.urandom(CHUNK_SIZE + 1)
    imp = import_bytes(data)
    root_cid, root = imp.blocks[-1]
    assert root_cid == imp.cid and cid_codec(cid_binary(root_cid)) == DAG_PB
    assert len(root) == 104 and imp.size == CHUNK_SIZE + 1 + 104  # js-ipfs reported Size 262249
    assert root.endswith(bytes.fromhex("0a0c080218818010208080102001"))
    node = PBNode.decode(root)
    assert [link.tsize for link in node.links] == [CHUNK_SIZE, 1] and all(lk.name == "" for lk in node.links)
    assert node.encode() == root
    fs = UnixFSData.decode(node.data or b"")
    assert (fs.type, fs.filesize, fs.blocksizes) == (2, CHUNK_SIZE + 1, (CHUNK_SIZE, 1))


def test_balanced_layout_levels() -> None:
    n_chunks = MAX_LINKS + 2
    imp = import_bytes(bytes(n_chunks * 16), chunk_size=16)  # small chunks, same layout rules
    dag_nodes = [(c, b) for c, b in imp.blocks if cid_codec(cid_binary(c)) == DAG_PB]
    assert len(dag_nodes) == 3  # two level-1 nodes (174 + 2 leaves) and the root
    root = PBNode.decode(dag_nodes[-1][1])
    assert len(root.links) == 2
    first = PBNode.decode(dag_nodes[0][1])
    assert len(first.links) == MAX_LINKS
    # identical chunks collapse to one raw CID but stay separate links
    assert len({c for c, _ in imp.blocks if cid_codec(cid_binary(c)) == RAW}) == 1


def test_child_links_and_reassembly() -> None:
    data = os.urandom(3 * 100 + 7)
    imp = import_bytes(data, chunk_size=100)
    blocks = dict(imp.blocks)
    inline, children = child_links(cid_binary(imp.cid), blocks[imp.cid])
    assert inline == b"" and len(children) == 4
    assert b"".join(blocks[normalize_cid(c)] for c in children) == data


def test_verify_block() -> None:
    cid = cid_binary(compute_cid(b"data"))
    verify_block(cid, b"data")
    with pytest.raises(BlobIntegrityError, match="corrupt"):
        verify_block(cid, b"dat4")


def test_truncated_protobuf_rejected() -> None:
    root = import_bytes(os.urandom(CHUNK_SIZE + 1)).blocks[-1][1]
    with pytest.raises(BlobIntegrityError):
        PBNode.decode(root[:-5])


class _Trickle(io.RawIOBase):
    """A stream that returns at most 1000 bytes per read, like a pipe or socket."""

    def __init__(self, data: bytes) -> None:
        self._buf = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        return self._buf.read(min(n, 1000) if n >= 0 else 1000)


@pytest.mark.parametrize("size", [0, 1, CHUNK_SIZE, CHUNK_SIZE + 1, 3 * CHUNK_SIZE - 1])
def test_streamed_import_equals_in_memory_import(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    blocks: list[tuple[str, bytes]] = []
    cid, total = import_chunks(file_chunks(_Trickle(data)), lambda c, b: blocks.append((c, b)))  # type: ignore[arg-type]
    mem = import_bytes(data)
    assert (cid, total, blocks) == (mem.cid, mem.size, mem.blocks)
    f = tmp_path / "f.bin"
    f.write_bytes(data)
    assert compute_file_cid(f) == compute_cid(data)
    with pytest.raises(ValueError):
        import_chunks(iter([]), lambda c, b: None)
