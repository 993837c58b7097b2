"""The dag-pb and UnixFS protobuf messages of an IPFS file node (links, sizes, inline data).

The encodings are small, so they are written here by hand in the canonical form the
daemons emit (links before data; `Name` present and empty): a node built here hashes to
the CID a daemon gives the same node.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from trustnode.storage.cids import read_varint, split_cid, varint
from trustnode.storage.errors import BlobIntegrityError, InvalidCIDError

UNIXFS_RAW = 0
UNIXFS_FILE = 2


def _field_bytes(num: int, payload: bytes) -> bytes:
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def _field_varint(num: int, value: int) -> bytes:
    return varint(num << 3) + varint(value)


def _iter_fields(buf: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """Yield (field number, wire type, value) for the varint and length-delimited fields used here."""
    pos = 0
    while pos < len(buf):
        key, pos = read_varint(buf, pos)
        num, wt = key >> 3, key & 7
        if wt == 0:
            value, pos = read_varint(buf, pos)
            yield num, wt, value
        elif wt == 2:
            length, pos = read_varint(buf, pos)
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
                    split_cid(cid_b)
                except InvalidCIDError as exc:
                    raise BlobIntegrityError(f"dag-pb link with an invalid CID ({exc})") from exc
                links.append(PBLink(cid_b, tsize, name))
            elif num == 1 and wt == 2 and isinstance(value, bytes):
                data = value
            else:
                raise BlobIntegrityError(f"unexpected dag-pb field {num}")
        return cls(tuple(links), data)
