"""Content identifiers (CIDs) of IPFS blocks: build, print, parse and verify (CIDv1, sha2-256).

Internally a CID is its binary form (bytes); strings are canonical base32 CIDv1. Building
and printing CIDs by hand is ~50x faster than going through `multiformats` objects, which
matters when every segment, leaf and chunk needs one; `multiformats` still decodes any
other spelling a user hands us. The unsigned varint CIDs are made of is the protobuf
varint, so `storage.dagpb` uses the one here.
"""

from __future__ import annotations

import base64
import hashlib

from multiformats import CID

from trustnode.storage.errors import BlobIntegrityError, InvalidCIDError

RAW = 0x55
DAG_PB = 0x70
SHA2_256 = 0x12

_B32_ALPHABET = set("abcdefghijklmnopqrstuvwxyz234567")


def cid_v1_bytes(codec: int, digest: bytes) -> bytes:
    """Binary CIDv1 for a sha2-256 `digest` under `codec` (0x55 raw, 0x70 dag-pb)."""
    return b"\x01" + varint(codec) + bytes([SHA2_256, len(digest)]) + digest


def cid_string(cid: bytes) -> str:
    """Canonical text of a binary CIDv1: multibase 'b' + lowercase base32 without padding."""
    return "b" + base64.b32encode(cid).decode("ascii").lower().rstrip("=")


def split_cid(cid: bytes) -> tuple[int, int, bytes]:
    """(codec, hash function code, digest) of a binary CIDv1; InvalidCIDError if malformed."""
    try:
        version, pos = read_varint(cid, 0)
        codec, pos = read_varint(cid, pos)
        fn, pos = read_varint(cid, pos)
        length, pos = read_varint(cid, pos)
    except BlobIntegrityError as exc:
        raise InvalidCIDError(f"malformed binary CID {cid.hex()}") from exc
    if version != 1 or len(cid) != pos + length:
        raise InvalidCIDError(f"malformed binary CID {cid.hex()}")
    return codec, fn, cid[pos:]


def cid_codec(cid: bytes) -> int:
    """The codec of a binary CIDv1 (RAW or DAG_PB for our blocks)."""
    return split_cid(cid)[0]


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
        split_cid(cid)
        return cid
    if isinstance(cid, str) and len(cid) > 8 and cid[0] == "b" and set(cid[1:]) <= _B32_ALPHABET:
        body = cid[1:].upper()
        try:
            raw = base64.b32decode(body + "=" * (-len(body) % 8))
        except ValueError:
            raw = b""
        if raw[:1] == b"\x01" and cid_string(raw) == cid:
            split_cid(raw)
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
    _codec, fn, digest = split_cid(cid)
    if fn != SHA2_256:
        raise BlobIntegrityError(f"{cid_string(cid)}: unsupported hash function 0x{fn:x} (only sha2-256)")
    if hashlib.sha256(block).digest() != digest:
        raise BlobIntegrityError(
            f"block does not match its CID {cid_string(cid)}: the stored bytes are corrupt"
        )


def varint(n: int) -> bytes:
    """Unsigned LEB128 varint (multiformats and protobuf share it)."""
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


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """(value, next position) of the varint at buf[pos]; BlobIntegrityError if truncated or over 64 bits."""
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
