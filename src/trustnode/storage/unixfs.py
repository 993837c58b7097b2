"""CIDs and blocks exactly as an IPFS daemon imports a file (CIDv1, raw leaves, balanced DAG).

Kubo and js-ipfs, asked for `cid-version=1&raw-leaves=true` with the default chunker, cut a
file into 256 KiB chunks stored as `raw` blocks; a single chunk *is* the file's block, more
chunks are gathered under dag-pb/UnixFS `File` nodes of at most 174 links each, level by
level (the "balanced" layout). Reproducing that byte for byte lets the embedded store and a
daemon agree on every identity, so a blob can move between them and keep its CID.

The dag-pb and UnixFS protobuf encodings are small, so they are written here by hand in the
canonical form the daemons emit (links before data; `Name` present and empty).
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from multiformats import CID

from trustnode.storage.errors import BlobIntegrityError, InvalidCIDError

CHUNK_SIZE = 256 * 1024
MAX_LINKS = 174
RAW = 0x55
DAG_PB = 0x70
SHA2_256 = 0x12

UNIXFS_RAW = 0
UNIXFS_FILE = 2


# --- CID helpers -----------------------------------------------------------------------------
#
# Internally a CID is its binary form (bytes); strings are canonical base32 CIDv1. Building
# and printing CIDs by hand is ~50x faster than going through `multiformats` objects, which
# matters when every segment, leaf and chunk needs one; `multiformats` still decodes any
# other spelling a user hands us.

_B32_ALPHABET = set("abcdefghijklmnopqrstuvwxyz234567")


def cid_v1_bytes(codec: int, digest: bytes) -> bytes:
    """Binary CIDv1 for a sha2-256 `digest` under `codec` (0x55 raw, 0x70 dag-pb)."""
    return b"\x01" + _varint(codec) + bytes([SHA2_256, len(digest)]) + digest


def cid_string(cid: bytes) -> str:
    """Canonical text of a binary CIDv1: multibase 'b' + lowercase base32 without padding."""
    return "b" + base64.b32encode(cid).decode("ascii").lower().rstrip("=")


def _split_cid(cid: bytes) -> tuple[int, int, bytes]:
    """(codec, hash function code, digest) of a binary CIDv1; InvalidCIDError if malformed."""
    try:
        version, pos = _read_varint(cid, 0)
        codec, pos = _read_varint(cid, pos)
        fn, pos = _read_varint(cid, pos)
        length, pos = _read_varint(cid, pos)
    except BlobIntegrityError as exc:
        raise InvalidCIDError(f"malformed binary CID {cid.hex()}") from exc
    if version != 1 or len(cid) != pos + length:
        raise InvalidCIDError(f"malformed binary CID {cid.hex()}")
    return codec, fn, cid[pos:]


def cid_codec(cid: bytes) -> int:
    return _split_cid(cid)[0]


def make_cid(codec: str, block: bytes) -> str:
    """CIDv1 string (base32, sha2-256) of a block under `codec` ('raw' or 'dag-pb')."""
    code = {"raw": RAW, "dag-pb": DAG_PB}[codec]
    return cid_string(cid_v1_bytes(code, hashlib.sha256(block).digest()))


def parse_cid(cid: str | CID) -> CID:
    """Decode any CID string (v0 `Qm...` or v1 in any multibase), else InvalidCIDError."""
    if isinstance(cid, CID):
        return cid
    if not isinstance(cid, str) or not cid.strip():
        raise InvalidCIDError(f"not a CID: {cid!r}")
    try:
        return CID.decode(cid.strip())
    except Exception as exc:  # multiformats raises several unrelated types
        raise InvalidCIDError(f"not a CID: {cid!r} ({exc})") from exc


def cid_binary(cid: str | bytes | CID) -> bytes:
    """The binary CIDv1 of any spelling (a CIDv0 becomes its dag-pb CIDv1)."""
    if isinstance(cid, bytes):
        _split_cid(cid)
        return cid
    if isinstance(cid, str) and len(cid) > 8 and cid[0] == "b" and set(cid[1:]) <= _B32_ALPHABET:
        body = cid[1:].upper()
        try:
            raw = base64.b32decode(body + "=" * (-len(body) % 8))
        except ValueError:
            raw = b""
        if raw[:1] == b"\x01" and cid_string(raw) == cid:
            _split_cid(raw)
            return raw
    c = parse_cid(cid)
    if c.version == 0:
        c = CID("base32", 1, "dag-pb", c.digest)
    return bytes(c)


def normalize_cid(cid: str | bytes | CID) -> str:
    """The canonical string of a CID: version 1, base32 (what `add` returns and leaves commit to).

    A CIDv0 is the same dag-pb/sha2-256 identity written differently, so it maps to its v1 form.
    """
    return cid_string(cid_binary(cid))


def verify_block(cid: bytes, block: bytes) -> None:
    """Raise BlobIntegrityError unless `block` hashes to the multihash inside `cid`."""
    _codec, fn, digest = _split_cid(cid)
    if fn != SHA2_256:
        raise BlobIntegrityError(f"{cid_string(cid)}: unsupported hash function 0x{fn:x} (only sha2-256)")
    if hashlib.sha256(block).digest() != digest:
        raise BlobIntegrityError(
            f"block does not match its CID {cid_string(cid)}: the stored bytes are corrupt"
        )


# --- protobuf ------------------------------------------------------------------------------


def _varint(n: int) -> bytes:
    if n < 0:
        raise ValueError("varint must be non-negative")
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = 0
    value = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise BlobIntegrityError("truncated or oversized protobuf varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def _field_bytes(num: int, payload: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _field_varint(num: int, value: int) -> bytes:
    return _varint(num << 3) + _varint(value)


def _iter_fields(buf: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """Yield (field number, wire type, value) for the varint and length-delimited fields used here."""
    pos = 0
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        num, wt = key >> 3, key & 7
        if wt == 0:
            value, pos = _read_varint(buf, pos)
            yield num, wt, value
        elif wt == 2:
            length, pos = _read_varint(buf, pos)
            if pos + length > len(buf):
                raise BlobIntegrityError("truncated protobuf field")
            yield num, wt, buf[pos : pos + length]
            pos += length
        else:
            raise BlobIntegrityError(f"unsupported protobuf wire type {wt}")


@dataclass(frozen=True)
class PBLink:
    """A dag-pb link: child CID, name (always empty for file chunks) and cumulative size."""

    cid: bytes  # binary CID
    tsize: int
    name: str = ""

    def encode(self) -> bytes:
        return _field_bytes(1, self.cid) + _field_bytes(2, self.name.encode()) + _field_varint(3, self.tsize)


@dataclass(frozen=True)
class UnixFSData:
    """The UnixFS `Data` message of a file node (type, inline data, total size, child sizes)."""

    type: int = UNIXFS_FILE
    data: bytes = b""
    filesize: int | None = None
    blocksizes: tuple[int, ...] = ()

    def encode(self) -> bytes:
        out = _field_varint(1, self.type)
        if self.data:
            out += _field_bytes(2, self.data)
        if self.filesize is not None:
            out += _field_varint(3, self.filesize)
        for size in self.blocksizes:
            out += _field_varint(4, size)
        return out

    @classmethod
    def decode(cls, buf: bytes) -> UnixFSData:
        ftype, data, filesize, sizes = UNIXFS_FILE, b"", None, []
        for num, _wt, value in _iter_fields(buf):
            if num == 1 and isinstance(value, int):
                ftype = value
            elif num == 2 and isinstance(value, bytes):
                data = value
            elif num == 3 and isinstance(value, int):
                filesize = value
            elif num == 4 and isinstance(value, int):
                sizes.append(value)
        return cls(ftype, data, filesize, tuple(sizes))


@dataclass(frozen=True)
class PBNode:
    """A dag-pb node; `encode` is the canonical form (links first, then data)."""

    links: tuple[PBLink, ...] = ()
    data: bytes | None = None

    def encode(self) -> bytes:
        out = b"".join(_field_bytes(2, link.encode()) for link in self.links)
        if self.data is not None:
            out += _field_bytes(1, self.data)
        return out

    @classmethod
    def decode(cls, buf: bytes) -> PBNode:
        links: list[PBLink] = []
        data: bytes | None = None
        for num, wt, value in _iter_fields(buf):
            if num == 2 and wt == 2 and isinstance(value, bytes):
                cid_b, name, tsize = b"", "", 0
                for lnum, _lwt, lval in _iter_fields(value):
                    if lnum == 1 and isinstance(lval, bytes):
                        cid_b = lval
                    elif lnum == 2 and isinstance(lval, bytes):
                        name = lval.decode("utf-8", "replace")
                    elif lnum == 3 and isinstance(lval, int):
                        tsize = lval
                try:
                    _split_cid(cid_b)
                except InvalidCIDError as exc:
                    raise BlobIntegrityError(f"dag-pb link with an invalid CID ({exc})") from exc
                links.append(PBLink(cid_b, tsize, name))
            elif num == 1 and wt == 2 and isinstance(value, bytes):
                data = value
            else:
                raise BlobIntegrityError(f"unexpected dag-pb field {num}")
        return cls(tuple(links), data)


# --- import (chunk + balanced layout) -------------------------------------------------------


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
