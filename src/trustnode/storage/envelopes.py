"""Key envelopes: each segment key sealed to the X25519 key its assigned auditor registered.

An envelope is a libsodium sealed box (ephemeral X25519 + XSalsa20-Poly1305, PyNaCl
`SealedBox`): only the holder of the matching private key can open it, and it reveals
nothing about the recipient. All envelopes of a session form one `KeyManifest`, published
(pinned) after the draw; an auditor opens the entries addressed to it and nothing else.
The manifest also carries the session nonce the segment ciphertexts are bound to (see
`trustnode.storage.crypto`) and, optionally, the segment list behind the on-chain Merkle root.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

from eth_utils import is_address, to_checksum_address
from nacl.exceptions import CryptoError
from nacl.public import PrivateKey, PublicKey, SealedBox
from pydantic import BaseModel, ConfigDict, Field, field_validator

from trustnode.storage.base import BlobStore
from trustnode.storage.cids import normalize_cid
from trustnode.storage.crypto import KEY_BYTES, DecryptionError, session_key_bytes

ENVELOPE_BYTES = KEY_BYTES + 32 + 16  # sealed box: ephemeral public key + Poly1305 tag


class ManifestError(ValueError):
    """A manifest cannot be built or read: missing keys, unknown auditors, malformed fields."""


def _hex32(value: bytes | str, what: str) -> bytes:
    if isinstance(value, str):
        if not re.fullmatch(r"(0x)?[0-9a-fA-F]{64}", value):
            raise ValueError(f"{what} must be 32 bytes as hex, got {value!r}")
        return bytes.fromhex(value.removeprefix("0x"))
    if len(value) != 32:
        raise ValueError(f"{what} must be 32 bytes, got {len(value)}")
    return bytes(value)


def _address(value: str) -> str:
    if not isinstance(value, str) or not is_address(value):
        raise ValueError(f"not an Ethereum address: {value!r}")
    return str(to_checksum_address(value))


class EncryptionKeyPair:
    """An auditor's X25519 key pair; `public_hex` is the bytes32 it registers on chain."""

    def __init__(self, private_key: bytes | str) -> None:
        self._sk = PrivateKey(_hex32(private_key, "X25519 private key"))

    @classmethod
    def generate(cls) -> EncryptionKeyPair:
        return cls(bytes(PrivateKey.generate()))

    @property
    def private_key(self) -> bytes:
        return bytes(self._sk)

    @property
    def public_key(self) -> bytes:
        return bytes(self._sk.public_key)

    @property
    def public_hex(self) -> str:
        return "0x" + self.public_key.hex()

    def save(self, path: Path | str) -> None:
        """Write the private key (hex) readable by the owner only."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(self.private_key.hex() + "\n")
        os.chmod(p, 0o600)

    @classmethod
    def load(cls, path: Path | str) -> EncryptionKeyPair:
        return cls(Path(path).read_text().strip())

    @classmethod
    def load_or_create(cls, path: Path | str) -> EncryptionKeyPair:
        """The node's key at `path`, generated on first use."""
        p = Path(path)
        if p.is_file():
            return cls.load(p)
        kp = cls.generate()
        kp.save(p)
        return kp


def seal_key(segment_key: bytes, recipient_pubkey: bytes | str) -> bytes:
    """Seal a 32-byte segment key to an X25519 public key (bytes or 0x-hex bytes32)."""
    if len(segment_key) != KEY_BYTES:
        raise ValueError("segment key must be 32 bytes")
    pk = PublicKey(_hex32(recipient_pubkey, "X25519 public key"))
    return bytes(SealedBox(pk).encrypt(segment_key))


def open_key(envelope: bytes, private_key: bytes | str) -> bytes:
    """Open one envelope; DecryptionError if it was not sealed to this key or was altered."""
    try:
        key = bytes(SealedBox(PrivateKey(_hex32(private_key, "X25519 private key"))).decrypt(envelope))
    except CryptoError:
        raise DecryptionError(
            "key envelope does not open with this private key (not ours, or altered)"
        ) from None
    if len(key) != KEY_BYTES:
        raise DecryptionError(f"key envelope holds {len(key)} bytes, expected a {KEY_BYTES}-byte segment key")
    return key


def seal_bytes(data: bytes, recipient_pubkey: bytes | str) -> bytes:
    """Seal any short message (e.g. a context outline) to an X25519 public key."""
    return bytes(SealedBox(PublicKey(_hex32(recipient_pubkey, "X25519 public key"))).encrypt(data))


def open_bytes(sealed: bytes, private_key: bytes | str) -> bytes:
    """Open a message sealed with `seal_bytes`; DecryptionError if it is not ours or was altered."""
    try:
        return bytes(SealedBox(PrivateKey(_hex32(private_key, "X25519 private key"))).decrypt(sealed))
    except CryptoError:
        raise DecryptionError(
            "sealed message does not open with this private key (not ours, or altered)"
        ) from None


class KeyEnvelope(BaseModel):
    """One sealed segment key for one auditor."""

    model_config = ConfigDict(frozen=True)

    auditor: str
    segment_index: int = Field(ge=0)
    sealed_key: str = Field(description="0x-hex sealed box")

    @field_validator("auditor")
    @classmethod
    def _checksum(cls, v: str) -> str:
        return _address(v)

    @field_validator("sealed_key")
    @classmethod
    def _hex(cls, v: str) -> str:
        if not re.fullmatch(r"0x([0-9a-fA-F]{2})+", v):
            raise ValueError("sealed_key must be 0x-hex")
        return v.lower()


class ManifestSegment(BaseModel):
    """A segment as committed on chain (the fields of its Merkle leaf)."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(ge=0)
    cid: str
    tier: int = Field(ge=0, le=255)
    weight: int = Field(ge=0, le=65535)

    @field_validator("cid")
    @classmethod
    def _cid(cls, v: str) -> str:
        return normalize_cid(v)


class KeyManifest(BaseModel):
    """All key envelopes of one audit session, published after the draw."""

    version: Literal[1] = 1
    chain_id: int = Field(ge=0)
    session_id: int | None = Field(default=None, ge=0, description="On-chain session id (known after open).")
    session_nonce: str = Field(description="0x-hex 32 bytes the segment ciphertexts are bound to.")
    merkle_root: str | None = Field(default=None, description="0x-hex bytes32 committed on chain.")
    segments: list[ManifestSegment] = Field(default_factory=list)
    entries: list[KeyEnvelope] = Field(default_factory=list)

    @field_validator("session_nonce")
    @classmethod
    def _nonce(cls, v: str) -> str:
        return "0x" + session_key_bytes(v).hex()

    @field_validator("merkle_root")
    @classmethod
    def _root(cls, v: str | None) -> str | None:
        return None if v is None else "0x" + _hex32(v, "merkle_root").hex()

    def to_json(self) -> bytes:
        """Canonical JSON (sorted keys, no spaces), so equal manifests get equal CIDs."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, data: bytes | str) -> KeyManifest:
        try:
            return cls.model_validate_json(data)
        except ValueError as exc:
            raise ManifestError(f"not a valid key manifest: {exc}") from exc

    def entries_for(self, auditor: str) -> list[KeyEnvelope]:
        who = _address(auditor)
        return [e for e in self.entries if e.auditor == who]

    def auditors(self) -> list[str]:
        return sorted({e.auditor for e in self.entries})


def build_manifest(
    *,
    chain_id: int,
    session_nonce: bytes | str,
    segment_keys: Mapping[int, bytes],
    seats: Iterable[tuple[str, int]],
    auditor_keys: Mapping[str, bytes | str],
    session_id: int | None = None,
    segments: Iterable[ManifestSegment] | None = None,
    merkle_root: bytes | str | None = None,
) -> KeyManifest:
    """Seal every drawn seat's segment key to its auditor's registered key.

    `seats` is the draw result as (auditor address, segment index) pairs; `auditor_keys`
    maps each auditor to the X25519 public key it registered. An auditor drawn twice for
    the same segment gets one envelope.
    """
    keys_by_addr = {_address(a): _hex32(k, f"encryption key of {a}") for a, k in auditor_keys.items()}
    entries: list[KeyEnvelope] = []
    seen: set[tuple[str, int]] = set()
    for auditor, index in seats:
        who = _address(auditor)
        if (who, index) in seen:
            continue
        seen.add((who, index))
        if index not in segment_keys:
            raise ManifestError(f"seat of {who} on segment {index}, but no key for segment {index}")
        if who not in keys_by_addr:
            raise ManifestError(f"auditor {who} was drawn but has no registered encryption key")
        sealed = seal_key(segment_keys[index], keys_by_addr[who])
        entries.append(KeyEnvelope(auditor=who, segment_index=index, sealed_key="0x" + sealed.hex()))
    entries.sort(key=lambda e: (e.segment_index, e.auditor))
    root = None
    if merkle_root is not None:
        root = "0x" + _hex32(merkle_root, "merkle_root").hex()
    nonce = "0x" + session_key_bytes(session_nonce).hex()
    return KeyManifest(
        chain_id=chain_id,
        session_id=session_id,
        session_nonce=nonce,
        merkle_root=root,
        segments=sorted(segments or [], key=lambda s: s.index),
        entries=entries,
    )


def open_envelopes(manifest: KeyManifest, auditor_address: str, private_key: bytes | str) -> dict[int, bytes]:
    """The segment keys addressed to `auditor_address`, by segment index; nobody else's.

    DecryptionError if an envelope addressed to this auditor does not open with `private_key`
    (a wrong key file, or a manifest sealed to a different registered key).
    """
    out: dict[int, bytes] = {}
    for entry in manifest.entries_for(auditor_address):
        try:
            out[entry.segment_index] = open_key(bytes.fromhex(entry.sealed_key[2:]), private_key)
        except DecryptionError as exc:
            raise DecryptionError(
                f"envelope for segment {entry.segment_index} of {entry.auditor}: {exc}"
            ) from None
    return out


def publish_manifest(store: BlobStore, manifest: KeyManifest) -> str:
    """Pin the manifest's canonical JSON and return its CID."""
    return store.add(manifest.to_json(), pin=True)


def fetch_manifest(store: BlobStore, cid: str) -> KeyManifest:
    """Load a published manifest by CID."""
    return KeyManifest.from_json(store.cat(cid))
