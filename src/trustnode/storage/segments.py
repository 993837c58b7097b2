"""The privacy pipeline end to end, for the provider's node and for auditors.

Provider, before opening a session: `prepare_session` encrypts every segment under a fresh
key bound to (chain id, a new session nonce, index), pins the ciphertexts, and builds the
Merkle root and packed tiers/weights the session is opened with. After the draw:
`PreparedSession.manifest(...)` seals each drawn seat's key to its auditor, ready to pin.

Auditor: `fetch_segment` takes a published manifest, checks the segment against the
manifest's Merkle root (which the caller compares with the root on chain), fetches the
ciphertext by CID and decrypts it with the auditor's own key.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from trustnode.storage.base import BlobStore
from trustnode.storage.crypto import decrypt_segment, encrypt_segment, new_session_nonce
from trustnode.storage.envelopes import KeyManifest, ManifestError, ManifestSegment, build_manifest
from trustnode.storage.errors import RemotePinPendingError
from trustnode.storage.merkle import SegmentCommitment, SegmentMerkleTree, pack_tiers_weights


class SegmentSecret(BaseModel):
    """One segment as the provider's node keeps it until the draw: commitment fields and the key."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(ge=0)
    cid: str
    tier: int = Field(ge=0, le=255)
    weight: int = Field(ge=1, le=65535)
    key: str = Field(description="0x-hex AES-256 key (secret)")

    @property
    def commitment(self) -> SegmentCommitment:
        return SegmentCommitment(index=self.index, cid=self.cid, tier=self.tier, weight=self.weight)


class PreparedSession(BaseModel):
    """Everything a provider needs to open a session and, after the draw, publish its keys.

    Holds secret keys: persist it only with `save` (owner-only file permissions).
    """

    chain_id: int
    session_nonce: str
    segments: list[SegmentSecret]
    pending: list[str] = Field(default_factory=list, description="CIDs spooled locally, not yet on IPFS")

    def tree(self) -> SegmentMerkleTree:
        return SegmentMerkleTree([s.commitment for s in self.segments])

    @property
    def merkle_root(self) -> bytes:
        return self.tree().root

    @property
    def tiers_weights(self) -> bytes:
        """The packed `bytes` argument of `openSession`."""
        return pack_tiers_weights([s.commitment for s in self.segments])

    @property
    def ready(self) -> bool:
        """All ciphertexts are pinned remotely, so auditors will be able to fetch them."""
        return not self.pending

    def keys(self) -> dict[int, bytes]:
        return {s.index: bytes.fromhex(s.key[2:]) for s in self.segments}

    def manifest(
        self,
        *,
        session_id: int,
        seats: Iterable[tuple[str, int]],
        auditor_keys: Mapping[str, bytes | str],
    ) -> KeyManifest:
        """The session's key manifest for the drawn `seats` (auditor address, segment index)."""
        return build_manifest(
            chain_id=self.chain_id,
            session_id=session_id,
            session_nonce=self.session_nonce,
            segment_keys=self.keys(),
            seats=seats,
            auditor_keys=auditor_keys,
            segments=[
                ManifestSegment(index=s.index, cid=s.cid, tier=s.tier, weight=s.weight) for s in self.segments
            ],
            merkle_root=self.merkle_root,
        )

    def save(self, path: Path | str) -> None:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(self.model_dump_json())
        os.replace(tmp, p)

    @classmethod
    def load(cls, path: Path | str) -> PreparedSession:
        return cls.model_validate_json(Path(path).read_text())


def prepare_session(
    store: BlobStore,
    plaintexts: Sequence[bytes],
    tiers: Sequence[int],
    weights: Sequence[int],
    *,
    chain_id: int,
    session_nonce: str | None = None,
) -> PreparedSession:
    """Encrypt and pin every segment; nothing is lost if IPFS is down (see `pending`)."""
    if not plaintexts:
        raise ValueError("a session needs at least one segment")
    if not len(plaintexts) == len(tiers) == len(weights):
        raise ValueError("plaintexts, tiers and weights must have the same length")
    nonce = session_nonce or new_session_nonce()
    secrets: list[SegmentSecret] = []
    pending: list[str] = []
    for i, (pt, tier, weight) in enumerate(zip(plaintexts, tiers, weights, strict=True)):
        enc = encrypt_segment(pt, chain_id=chain_id, session_key=nonce, segment_index=i)
        try:
            cid = store.add(enc.blob, pin=True)
        except RemotePinPendingError as exc:
            cid = exc.cid
            pending.append(cid)
        secrets.append(
            SegmentSecret(index=i, cid=cid, tier=int(tier), weight=weight, key="0x" + enc.key.hex())
        )
    return PreparedSession(chain_id=chain_id, session_nonce=nonce, segments=secrets, pending=pending)


def fetch_segment(
    store: BlobStore,
    manifest: KeyManifest,
    index: int,
    key: bytes,
    *,
    onchain_root: bytes | None = None,
) -> bytes:
    """Fetch and decrypt segment `index` of a manifest's session with the auditor's opened `key`.

    The segment's (cid, tier, weight) must be in the manifest's Merkle root, and that root
    must equal `onchain_root` when given, so a manifest cannot point an auditor at content
    other than what the session committed to on chain.
    """
    if manifest.merkle_root is None:
        raise ManifestError("manifest has no merkle_root: cannot check the segment against the session")
    root = bytes.fromhex(manifest.merkle_root[2:])
    if onchain_root is not None and onchain_root != root:
        raise ManifestError(
            f"manifest root {manifest.merkle_root} differs from the on-chain root 0x{onchain_root.hex()}"
        )
    segs = [
        SegmentCommitment(index=s.index, cid=s.cid, tier=s.tier, weight=s.weight) for s in manifest.segments
    ]
    if [s.index for s in segs] != list(range(len(segs))) or not 0 <= index < len(segs):
        raise ManifestError(f"manifest does not list segment {index} (segments must be 0..n-1)")
    if SegmentMerkleTree(segs).root != root:
        raise ManifestError("the manifest's segment list does not hash to its Merkle root")
    blob = store.cat(segs[index].cid)
    return decrypt_segment(
        blob, key, chain_id=manifest.chain_id, session_key=manifest.session_nonce, segment_index=index
    )
