"""Key envelopes and manifests: each auditor opens exactly its own segment keys."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from eth_account import Account

from trustnode.storage.crypto import DecryptionError, decrypt_segment, encrypt_segment, new_session_nonce
from trustnode.storage.envelopes import (
    ENVELOPE_BYTES,
    EncryptionKeyPair,
    KeyManifest,
    ManifestError,
    ManifestSegment,
    build_manifest,
    fetch_manifest,
    open_bytes,
    open_envelopes,
    open_key,
    publish_manifest,
    seal_bytes,
    seal_key,
)
from trustnode.storage.local import LocalStore
from trustnode.storage.unixfs import compute_cid

CHAIN = 31337


def _auditors(n: int) -> list[tuple[str, EncryptionKeyPair]]:
    return [(Account.create().address, EncryptionKeyPair.generate()) for _ in range(n)]


def test_seal_and_open_one_key() -> None:
    kp = EncryptionKeyPair.generate()
    key = os.urandom(32)
    env = seal_key(key, kp.public_key)
    assert len(env) == ENVELOPE_BYTES
    assert open_key(env, kp.private_key) == key
    assert seal_key(key, kp.public_hex) != env  # ephemeral sender key: never the same envelope
    with pytest.raises(DecryptionError, match="not ours"):
        open_key(env, EncryptionKeyPair.generate().private_key)
    bad = bytearray(env)
    bad[40] ^= 1
    with pytest.raises(DecryptionError):
        open_key(bytes(bad), kp.private_key)


def test_public_hex_is_bytes32() -> None:
    kp = EncryptionKeyPair.generate()
    assert kp.public_hex.startswith("0x") and len(kp.public_hex) == 66
    with pytest.raises(ValueError):
        seal_key(os.urandom(32), "0x1234")
    with pytest.raises(ValueError):
        seal_key(os.urandom(31), kp.public_key)


def test_auditor_opens_only_its_own_segments_and_unassigned_cannot_decrypt() -> None:
    nonce = new_session_nonce()
    plaintexts = {i: f"segment {i} text".encode() for i in range(4)}
    enc = {
        i: encrypt_segment(pt, chain_id=CHAIN, session_key=nonce, segment_index=i)
        for i, pt in plaintexts.items()
    }
    (a, ka), (b, kb), (c, kc), (outsider, ko) = _auditors(4)
    seats = [(a, 0), (b, 0), (a, 1), (c, 2), (b, 3), (c, 3)]
    manifest = build_manifest(
        chain_id=CHAIN,
        session_id=7,
        session_nonce=nonce,
        segment_keys={i: e.key for i, e in enc.items()},
        seats=seats,
        auditor_keys={a: ka.public_hex, b: kb.public_key, c: kc.public_hex, outsider: ko.public_hex},
    )
    assert len(manifest.entries) == 6
    got_a = open_envelopes(manifest, a.lower(), ka.private_key)  # address spelling does not matter
    assert sorted(got_a) == [0, 1]
    for i, key in got_a.items():
        assert (
            decrypt_segment(enc[i].blob, key, chain_id=CHAIN, session_key=nonce, segment_index=i)
            == plaintexts[i]
        )
    assert sorted(open_envelopes(manifest, c, kc.private_key)) == [2, 3]
    # not drawn: no envelope, and its key opens none of the others
    assert open_envelopes(manifest, outsider, ko.private_key) == {}
    for entry in manifest.entries:
        with pytest.raises(DecryptionError):
            open_key(bytes.fromhex(entry.sealed_key[2:]), ko.private_key)
    # a's key does not open c's segment 2, so a cannot read it
    with pytest.raises(DecryptionError):
        open_envelopes(manifest, c, ka.private_key)
    # and a's own key used on segment 2's ciphertext fails authentication
    with pytest.raises(DecryptionError):
        decrypt_segment(enc[2].blob, got_a[0], chain_id=CHAIN, session_key=nonce, segment_index=2)


def test_manifest_round_trip_through_store(tmp_path: Path) -> None:
    nonce = new_session_nonce()
    (a, ka), (b, kb) = _auditors(2)
    keys = {0: os.urandom(32), 1: os.urandom(32)}
    segs = [ManifestSegment(index=i, cid=compute_cid(bytes([i])), tier=i, weight=10 + i) for i in (1, 0)]
    m = build_manifest(
        chain_id=CHAIN,
        session_nonce=nonce,
        segment_keys=keys,
        seats=[(b, 1), (a, 0), (a, 0)],
        auditor_keys={a: ka.public_hex, b: kb.public_hex},
        segments=segs,
        merkle_root=os.urandom(32),
    )
    assert [e.segment_index for e in m.entries] == [0, 1]  # duplicate seat collapsed, sorted
    assert [s.index for s in m.segments] == [0, 1]
    store = LocalStore(tmp_path)
    cid = publish_manifest(store, m)
    assert cid in store.pins()
    assert publish_manifest(store, KeyManifest.from_json(m.to_json())) == cid  # canonical JSON: stable CID
    back = fetch_manifest(store, cid)
    assert back == m
    assert open_envelopes(back, b, kb.private_key) == {1: keys[1]}


def test_build_manifest_rejects_incomplete_inputs() -> None:
    (a, ka), (b, _kb) = _auditors(2)
    base = {"chain_id": CHAIN, "session_nonce": new_session_nonce(), "segment_keys": {0: os.urandom(32)}}
    with pytest.raises(ManifestError, match="no registered encryption key"):
        build_manifest(**base, seats=[(b, 0)], auditor_keys={a: ka.public_hex})  # type: ignore[arg-type]
    with pytest.raises(ManifestError, match="no key for segment 3"):
        build_manifest(**base, seats=[(a, 3)], auditor_keys={a: ka.public_hex})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Ethereum address"):
        build_manifest(**base, seats=[("nobody", 0)], auditor_keys={a: ka.public_hex})  # type: ignore[arg-type]
    with pytest.raises(ManifestError):
        KeyManifest.from_json(b'{"version": 2}')


def test_keypair_file_is_private(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "x25519.key"
    kp = EncryptionKeyPair.load_or_create(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = EncryptionKeyPair.load_or_create(path)
    assert again.public_key == kp.public_key


def test_sealed_messages_open_only_for_their_recipient() -> None:
    """Context outlines go to one auditor: nobody else's key opens them, a flipped byte is refused."""
    alice, bob = EncryptionKeyPair.generate(), EncryptionKeyPair.generate()
    message = b'[{"index": 3, "node_id": "ST2", "summary": "remaining two thirds"}]'
    sealed = seal_bytes(message, alice.public_hex)
    assert message not in sealed
    assert open_bytes(sealed, alice.private_key) == message
    with pytest.raises(DecryptionError, match="not ours, or altered"):
        open_bytes(sealed, bob.private_key)
    with pytest.raises(DecryptionError):
        open_bytes(sealed[:-1] + bytes([sealed[-1] ^ 1]), alice.private_key)
