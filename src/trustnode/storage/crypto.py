"""Segment encryption: a fresh AES-256-GCM key per segment, bound to where the segment belongs.

Segments are encrypted and pinned *before* the session opens on chain, so the session id does
not exist yet; the Merkle root is no better, because the leaves contain the ciphertexts' CIDs
and would depend on the associated data. The binding is therefore (chain id, a random 32-byte
`session_nonce` the provider draws for this trace before pinning, segment index). The nonce
travels in the session's key manifest next to the envelopes (and the node can also log it with
the session), so each auditor learns it together with its keys. A ciphertext moved to another
chain, another session or another index fails authentication.

Blob format, version 1 (all of it authenticated: the header is part of the associated data):

    magic b"TNSG" | version 0x01 | nonce (12 bytes) | ciphertext || GCM tag (16 bytes)

Associated data: b"trustnode/segment/v1" | chain id (uint256 BE) | session nonce (32 bytes)
| segment index (uint256 BE) | header (magic, version).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

MAGIC = b"TNSG"
VERSION = 1
KEY_BYTES = 32
NONCE_BYTES = 12
TAG_BYTES = 16
HEADER = MAGIC + bytes([VERSION])
OVERHEAD = len(HEADER) + NONCE_BYTES + TAG_BYTES
_AD_DOMAIN = b"trustnode/segment/v1"
_UINT256_MAX = 2**256 - 1


class DecryptionError(Exception):
    """The segment could not be decrypted: wrong key, wrong binding, tampering or an unknown format."""


SessionKey = bytes | str | int


def new_session_nonce() -> str:
    """A fresh random 32-byte session nonce as 0x-hex (what manifests and logs carry)."""
    return "0x" + os.urandom(32).hex()


def session_key_bytes(session_key: SessionKey) -> bytes:
    """Canonical 32 bytes of a session binding: 32 raw bytes, a 0x-hex bytes32, or a uint256.

    All three spellings of the same value bind identically, so a nonce read back from a
    manifest (hex) or from chain (uint256/bytes32) decrypts what was encrypted with raw bytes.
    """
    if isinstance(session_key, bool):
        raise TypeError("session_key must be bytes, 0x-hex str or int, not bool")
    if isinstance(session_key, int):
        if not 0 <= session_key <= _UINT256_MAX:
            raise ValueError("session_key int must fit in uint256")
        return session_key.to_bytes(32, "big")
    if isinstance(session_key, bytes | bytearray):
        if len(session_key) != 32:
            raise ValueError(f"session_key bytes must be 32 long, got {len(session_key)}")
        return bytes(session_key)
    if isinstance(session_key, str):
        if not re.fullmatch(r"0x[0-9a-fA-F]{64}", session_key):
            raise ValueError(
                "session_key str must be a 0x-prefixed 32-byte hex string (see new_session_nonce)"
            )
        return bytes.fromhex(session_key[2:])
    raise TypeError(f"session_key must be bytes, 0x-hex str or int, not {type(session_key).__name__}")


def associated_data(*, chain_id: int, session_key: SessionKey, segment_index: int) -> bytes:
    """The bytes every segment ciphertext is bound to (see the module docstring)."""
    if not 0 <= chain_id <= _UINT256_MAX:
        raise ValueError("chain_id must be a uint256")
    if not 0 <= segment_index <= _UINT256_MAX:
        raise ValueError("segment_index must be a uint256")
    return (
        _AD_DOMAIN
        + chain_id.to_bytes(32, "big")
        + session_key_bytes(session_key)
        + segment_index.to_bytes(32, "big")
        + HEADER
    )


@dataclass(frozen=True)
class EncryptedSegment:
    """One encrypted segment: `blob` is what gets pinned, `key` is what gets sealed to auditors."""

    blob: bytes
    key: bytes
    chain_id: int
    session_key: bytes
    segment_index: int

    @property
    def nonce(self) -> bytes:
        return self.blob[len(HEADER) : len(HEADER) + NONCE_BYTES]


def encrypt_segment(
    plaintext: bytes, *, chain_id: int, session_key: SessionKey, segment_index: int, key: bytes | None = None
) -> EncryptedSegment:
    """Encrypt with a fresh 256-bit key (or `key`, for re-encryption tests) and a random 96-bit nonce.

    A key is never reused across segments, so a random nonce per key cannot collide.
    """
    if key is None:
        key = AESGCM.generate_key(bit_length=256)
    if len(key) != KEY_BYTES:
        raise ValueError("segment key must be 32 bytes")
    ad = associated_data(chain_id=chain_id, session_key=session_key, segment_index=segment_index)
    nonce = os.urandom(NONCE_BYTES)
    ct = AESGCM(key).encrypt(nonce, bytes(plaintext), ad)
    return EncryptedSegment(HEADER + nonce + ct, key, chain_id, session_key_bytes(session_key), segment_index)


def decrypt_segment(
    blob: bytes, key: bytes, *, chain_id: int, session_key: SessionKey, segment_index: int
) -> bytes:
    """Authenticate and decrypt, or raise DecryptionError saying which check failed."""
    if len(key) != KEY_BYTES:
        raise DecryptionError(f"segment key must be {KEY_BYTES} bytes, got {len(key)}")
    if len(blob) < OVERHEAD:
        raise DecryptionError(f"segment blob too short ({len(blob)} bytes): not an encrypted segment")
    if blob[: len(MAGIC)] != MAGIC:
        raise DecryptionError("not a trustnode encrypted segment (bad magic)")
    if blob[len(MAGIC)] != VERSION:
        raise DecryptionError(
            f"unsupported segment format version {blob[len(MAGIC)]} (this node reads {VERSION})"
        )
    ad = associated_data(chain_id=chain_id, session_key=session_key, segment_index=segment_index)
    nonce = blob[len(HEADER) : len(HEADER) + NONCE_BYTES]
    try:
        return AESGCM(key).decrypt(nonce, blob[len(HEADER) + NONCE_BYTES :], ad)
    except InvalidTag:
        raise DecryptionError(
            f"segment {segment_index} failed authentication on chain {chain_id}: wrong key, wrong "
            "chain/session/segment binding, or the ciphertext was modified"
        ) from None
