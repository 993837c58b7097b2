"""Segment AEAD: round trips, and clear failures on tampering, wrong keys and wrong bindings."""

from __future__ import annotations

import os

import pytest

from trustnode.storage.crypto import (
    HEADER,
    NONCE_BYTES,
    OVERHEAD,
    DecryptionError,
    associated_data,
    decrypt_segment,
    encrypt_segment,
    new_session_nonce,
    session_key_bytes,
)

NONCE = new_session_nonce()
BIND = {"chain_id": 31337, "session_key": NONCE, "segment_index": 4}


def test_round_trip_and_format() -> None:
    pt = b"Step 3: 17 * 3 = 51, so the answer is 51."
    enc = encrypt_segment(pt, **BIND)
    assert enc.blob.startswith(HEADER)
    assert len(enc.blob) == len(pt) + OVERHEAD
    assert len(enc.key) == 32 and len(enc.nonce) == NONCE_BYTES
    assert pt not in enc.blob
    assert decrypt_segment(enc.blob, enc.key, **BIND) == pt


def test_fresh_key_and_nonce_per_segment() -> None:
    a = encrypt_segment(b"same text", **BIND)
    b = encrypt_segment(b"same text", **BIND)
    assert a.key != b.key and a.nonce != b.nonce and a.blob != b.blob


def test_every_flipped_byte_is_detected() -> None:
    enc = encrypt_segment(b"x" * 40, **BIND)
    for i in range(len(enc.blob)):
        tampered = bytearray(enc.blob)
        tampered[i] ^= 0x01
        with pytest.raises(DecryptionError):
            decrypt_segment(bytes(tampered), enc.key, **BIND)


def test_flipped_ciphertext_byte_message_is_clear() -> None:
    enc = encrypt_segment(b"payload", **BIND)
    tampered = bytearray(enc.blob)
    tampered[-20] ^= 0x80
    with pytest.raises(DecryptionError, match="failed authentication.*modified"):
        decrypt_segment(bytes(tampered), enc.key, **BIND)


@pytest.mark.parametrize(
    "wrong",
    [
        {"chain_id": 1},
        {"session_key": new_session_nonce()},
        {"segment_index": 5},
    ],
    ids=["other chain", "other session", "other segment index"],
)
def test_wrong_associated_data_fails(wrong: dict[str, object]) -> None:
    enc = encrypt_segment(b"bound to one place", **BIND)
    with pytest.raises(DecryptionError, match="binding"):
        decrypt_segment(enc.blob, enc.key, **{**BIND, **wrong})  # type: ignore[arg-type]


def test_wrong_key_fails() -> None:
    enc = encrypt_segment(b"secret", **BIND)
    with pytest.raises(DecryptionError):
        decrypt_segment(enc.blob, os.urandom(32), **BIND)
    with pytest.raises(DecryptionError, match="32 bytes"):
        decrypt_segment(enc.blob, enc.key[:16], **BIND)


def test_malformed_blobs_have_specific_errors() -> None:
    enc = encrypt_segment(b"abc", **BIND)
    with pytest.raises(DecryptionError, match="too short"):
        decrypt_segment(enc.blob[:10], enc.key, **BIND)
    with pytest.raises(DecryptionError, match="magic"):
        decrypt_segment(b"XXXX" + enc.blob[4:], enc.key, **BIND)
    with pytest.raises(DecryptionError, match="version 2"):
        decrypt_segment(enc.blob[:4] + b"\x02" + enc.blob[5:], enc.key, **BIND)


def test_session_key_spellings_bind_identically() -> None:
    raw = os.urandom(32)
    as_hex = "0x" + raw.hex()
    as_int = int.from_bytes(raw, "big")
    assert session_key_bytes(raw) == session_key_bytes(as_hex) == session_key_bytes(as_int) == raw
    enc = encrypt_segment(b"spelling", chain_id=10, session_key=raw, segment_index=0)
    assert decrypt_segment(enc.blob, enc.key, chain_id=10, session_key=as_int, segment_index=0) == b"spelling"
    assert associated_data(chain_id=1, session_key=as_hex, segment_index=2) == associated_data(
        chain_id=1, session_key=raw, segment_index=2
    )


@pytest.mark.parametrize("bad", ["trace-42", "0x1234", b"short", -1, 2**256, True])
def test_invalid_session_keys_rejected(bad: object) -> None:
    with pytest.raises((ValueError, TypeError)):
        encrypt_segment(b"x", chain_id=1, session_key=bad, segment_index=0)  # type: ignore[arg-type]


def test_empty_and_large_plaintexts() -> None:
    for pt in (b"", os.urandom(1_000_000)):
        enc = encrypt_segment(pt, **BIND)
        assert decrypt_segment(enc.blob, enc.key, **BIND) == pt
