"""CIDs and blocks exactly as an IPFS daemon imports a file (CIDv1, raw leaves, balanced DAG).

Kubo and js-ipfs, asked for `cid-version=1&raw-leaves=true` with the default chunker, cut a
file into 256 KiB chunks stored as `raw` blocks; a single chunk *is* the file's block, more
chunks are gathered under dag-pb/UnixFS `File` nodes of at most 174 links each, level by
level (the "balanced" layout). Reproducing that byte for byte lets the embedded store and a
daemon agree on every identity, so a blob can move between them and keep its CID.

This module chunks and lays out a file and reads a file node back; CIDs live in
`storage.cids`, the protobuf messages in `storage.dagpb`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from trustnode.storage.cids import DAG_PB, RAW, cid_codec, cid_string, cid_v1_bytes
from trustnode.storage.dagpb import UNIXFS_FILE, UNIXFS_RAW, PBLink, PBNode, UnixFSData
from trustnode.storage.errors import BlobIntegrityError

CHUNK_SIZE = 256 * 1024
MAX_LINKS = 174


@dataclass
class ImportedFile:
    """Result of importing bytes: the root CID and every block (CID string, bytes), children first."""

    cid: str
    blocks: list[tuple[str, bytes]] = field(default_factory=list)
    size: int = 0  # cumulative size (what the daemon reports as "Size")


@dataclass(frozen=True)
class _Node:
    cid: bytes
    tsize: int  # cumulative bytes of this block and all blocks below it
    filesize: int  # file bytes under this node


def import_chunks(
    chunks: Iterable[bytes], emit: Callable[[str, bytes], None], *, max_links: int = MAX_LINKS
) -> tuple[str, int]:
    """Build the balanced DAG over `chunks` (in file order), handing every block to `emit`
    (children before parents); returns (root CID, cumulative size).

    Only per-chunk metadata is kept, so a file of any size imports in constant memory per chunk.
    `chunks` must yield at least one chunk (a single empty one for an empty file).
    """
    if max_links < 2:
        raise ValueError("max_links must be at least 2")
    level: list[_Node] = []
    for chunk in chunks:
        cid = cid_v1_bytes(RAW, hashlib.sha256(chunk).digest())
        emit(cid_string(cid), chunk)
        level.append(_Node(cid, len(chunk), len(chunk)))
    if not level:
        raise ValueError("import_chunks needs at least one chunk (b'' for an empty file)")
    while len(level) > 1:
        parents: list[_Node] = []
        for start in range(0, len(level), max_links):
            group = level[start : start + max_links]
            filesize = sum(n.filesize for n in group)
            unixfs = UnixFSData(UNIXFS_FILE, b"", filesize, tuple(n.filesize for n in group))
            block = PBNode(tuple(PBLink(n.cid, n.tsize) for n in group), unixfs.encode()).encode()
            cid = cid_v1_bytes(DAG_PB, hashlib.sha256(block).digest())
            emit(cid_string(cid), block)
            parents.append(_Node(cid, len(block) + sum(n.tsize for n in group), filesize))
        level = parents
    return cid_string(level[0].cid), level[0].tsize


def bytes_chunks(data: bytes, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
    """Fixed-size chunks of `data` (one empty chunk for empty data), as the daemons' default chunker."""
    if chunk_size <= 0:
        raise ValueError("chunk_size must be positive")
    if not data:
        yield b""
        return
    view = memoryview(data)
    for off in range(0, len(data), chunk_size):
        yield bytes(view[off : off + chunk_size])


def file_chunks(fh: BinaryIO, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
    """Fixed-size chunks read from a binary stream (short reads are filled up, as a chunker must)."""
    if chunk_size <= 0:
        raise ValueError("chunk_size must be positive")
    emitted = False
    while True:
        buf = bytearray()
        while len(buf) < chunk_size:
            part = fh.read(chunk_size - len(buf))
            if not part:
                break
            buf += part
        if not buf:
            if not emitted:
                yield b""
            return
        emitted = True
        yield bytes(buf)
        if len(buf) < chunk_size:
            return


def import_bytes(data: bytes, *, chunk_size: int = CHUNK_SIZE, max_links: int = MAX_LINKS) -> ImportedFile:
    """Chunk `data` and build the balanced DAG a daemon builds (raw leaves, CIDv1), blocks in memory."""
    out = ImportedFile(cid="")
    out.cid, out.size = import_chunks(
        bytes_chunks(data, chunk_size), lambda c, b: out.blocks.append((c, b)), max_links=max_links
    )
    return out


def compute_cid(data: bytes) -> str:
    """The CID (canonical base32 CIDv1 string) a daemon returns when adding `data`."""
    return import_bytes(data).cid


def compute_file_cid(path: str | os.PathLike[str]) -> str:
    """The CID of a file's content, streamed (constant memory)."""
    with open(path, "rb") as fh:
        return import_chunks(file_chunks(fh), lambda _c, _b: None)[0]


def child_links(cid: bytes, block: bytes) -> tuple[bytes, list[bytes]]:
    """Split a verified block into (inline file bytes, binary child CIDs in order) for reassembly."""
    codec = cid_codec(cid)
    if codec == RAW:
        return block, []
    if codec != DAG_PB:
        raise BlobIntegrityError(f"{cid_string(cid)}: codec 0x{codec:x} is not a UnixFS file")
    node = PBNode.decode(block)
    inline = b""
    if node.data is not None:
        fs = UnixFSData.decode(node.data)
        if fs.type not in (UNIXFS_FILE, UNIXFS_RAW):
            raise BlobIntegrityError(f"{cid_string(cid)}: UnixFS type {fs.type} is not a file")
        inline = fs.data
    return inline, [link.cid for link in node.links]


def declared_size(cid: bytes, block: bytes) -> int:
    """The file size a verified root block declares: the block itself for a raw leaf, the
    UnixFS `filesize` (or inline data plus child sizes) for a dag-pb file node.

    Read before fetching the rest, so an oversize blob is refused after one block.
    """
    inline, children = child_links(cid, block)
    if not children:
        return len(inline)
    fs = UnixFSData.decode(PBNode.decode(block).data or b"")
    if fs.filesize is not None:
        return fs.filesize
    return len(fs.data) + sum(fs.blocksizes)
