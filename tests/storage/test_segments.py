"""Provider-to-auditor privacy flow: encrypt + pin + commit, seal keys after the draw, fetch + decrypt."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from eth_account import Account

from trustnode.storage.blobstore import KuboStore, LocalStore, ResilientStore
from trustnode.storage.crypto import DecryptionError
from trustnode.storage.envelopes import (
    EncryptionKeyPair,
    ManifestError,
    fetch_manifest,
    open_envelopes,
    publish_manifest,
)
from trustnode.storage.jsipfs import free_port
from trustnode.storage.merkle import unpack_tiers_weights, verify_segment
from trustnode.storage.segments import PreparedSession, fetch_segment, prepare_session

CHAIN = 31337
TEXTS = [b"Goal: find x.", b"Strategy: isolate x.", b"Step: 2x = 10 so x = 5.", b"Check: 2*5 = 10."]


def test_full_flow_auditor_reads_only_its_segments(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    prep = prepare_session(store, TEXTS, [1, 1, 0, 0], [10, 10, 5, 5], chain_id=CHAIN)
    assert prep.ready and len(prep.segments) == 4
    for s, pt in zip(prep.segments, TEXTS, strict=True):
        blob = store.cat(s.cid)
        assert pt not in blob  # only ciphertext is pinned
        assert s.cid in store.pins()
        assert verify_segment(s.commitment, prep.tree().proof(s.index), prep.merkle_root)
    assert unpack_tiers_weights(prep.tiers_weights) == [(1, 10), (1, 10), (0, 5), (0, 5)]

    (a, ka), (b, kb) = [(Account.create().address, EncryptionKeyPair.generate()) for _ in range(2)]
    manifest = prep.manifest(
        session_id=1,
        seats=[(a, 0), (a, 2), (b, 1), (b, 2)],
        auditor_keys={a: ka.public_hex, b: kb.public_hex},
    )
    cid = publish_manifest(store, manifest)
    got = fetch_manifest(store, cid)
    keys_a = open_envelopes(got, a, ka.private_key)
    assert sorted(keys_a) == [0, 2]
    for i, key in keys_a.items():
        assert fetch_segment(store, got, i, key, onchain_root=prep.merkle_root) == TEXTS[i]
    # a holds no key for segment 1; its keys do not decrypt it
    for key in keys_a.values():
        with pytest.raises(DecryptionError):
            fetch_segment(store, got, 1, key)


def test_manifest_root_must_match_chain(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    prep = prepare_session(store, TEXTS[:2], [0, 0], [1, 1], chain_id=CHAIN)
    a, ka = Account.create().address, EncryptionKeyPair.generate()
    m = prep.manifest(session_id=3, seats=[(a, 0)], auditor_keys={a: ka.public_key})
    key = open_envelopes(m, a, ka.private_key)[0]
    with pytest.raises(ManifestError, match="on-chain root"):
        fetch_segment(store, m, 0, key, onchain_root=os.urandom(32))
    forged = m.model_copy(update={"segments": [m.segments[1], m.segments[1].model_copy(update={"index": 1})]})
    forged.segments[0] = forged.segments[0].model_copy(update={"index": 0})
    with pytest.raises(ManifestError, match="Merkle root"):
        fetch_segment(store, forged, 0, key)
    with pytest.raises(ManifestError, match="segment 5"):
        fetch_segment(store, m, 5, key)


def test_prepare_with_ipfs_down_reports_pending(tmp_path: Path) -> None:
    kubo = KuboStore(f"http://127.0.0.1:{free_port()}", timeout_s=1, retries=0)
    store = ResilientStore(kubo, LocalStore(tmp_path / "spool"))
    prep = prepare_session(store, TEXTS, [0] * 4, [1] * 4, chain_id=CHAIN)
    assert not prep.ready
    assert sorted(prep.pending) == sorted(s.cid for s in prep.segments) == store.pending()


def test_save_load_is_private(tmp_path: Path) -> None:
    prep = prepare_session(LocalStore(tmp_path / "s"), TEXTS[:1], [2], [3], chain_id=CHAIN)
    path = tmp_path / "sessions" / "p.json"
    prep.save(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    back = PreparedSession.load(path)
    assert back == prep and back.merkle_root == prep.merkle_root


def test_input_validation(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    with pytest.raises(ValueError):
        prepare_session(store, [], [], [], chain_id=CHAIN)
    with pytest.raises(ValueError):
        prepare_session(store, TEXTS, [0], [1], chain_id=CHAIN)
