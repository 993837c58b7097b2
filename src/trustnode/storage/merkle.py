"""Merkle commitments over a session's segments, as the contracts verify them.

Leaf of segment i (OpenZeppelin StandardMerkleTree style, double hashed so a leaf can never
be confused with an internal node):

    keccak256(bytes.concat(keccak256(abi.encode(uint256 index, string cid, uint8 tier, uint16 weight))))

Internal nodes hash the sorted pair, so OpenZeppelin `MerkleProof.verify(proof, root, leaf)`
accepts our proofs. The tree itself is built exactly like `StandardMerkleTree.of` (leaves
sorted by hash, complete binary tree stored as an array), so the OpenZeppelin JS library
computes the same root for the same segments.

The CID inside a leaf must be the canonical base32 CIDv1 string (what our stores return);
any other spelling would be a different leaf, so it is rejected rather than converted.
"""

from __future__ import annotations

from collections.abc import Sequence

from eth_abi import encode as abi_encode
from eth_utils import keccak
from pydantic import BaseModel, ConfigDict, Field

from trustnode.storage.cids import normalize_cid


class SegmentCommitment(BaseModel):
    """The on-chain fields of one segment: its index, ciphertext CID, auditor tier and weight."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(ge=0)
    cid: str
    tier: int = Field(ge=0, le=255)
    weight: int = Field(ge=0, le=65535)


def segment_leaf(index: int, cid: str, tier: int, weight: int) -> bytes:
    """The 32-byte leaf the contract recomputes in `verifySegment`."""
    if normalize_cid(cid) != cid:
        raise ValueError(f"CID in a Merkle leaf must be canonical base32 CIDv1: {cid!r} (use normalize_cid)")
    if not (0 <= index < 2**256 and 0 <= int(tier) <= 255 and 0 <= weight <= 65535):
        raise ValueError("index must be uint256, tier uint8, weight uint16")
    inner = keccak(abi_encode(["uint256", "string", "uint8", "uint16"], [index, cid, int(tier), weight]))
    return bytes(keccak(inner))


def hash_pair(a: bytes, b: bytes) -> bytes:
    """OpenZeppelin `Hashes.commutativeKeccak256`: keccak of the sorted pair."""
    return bytes(keccak(a + b if a < b else b + a))


def process_proof(leaf: bytes, proof: Sequence[bytes]) -> bytes:
    """Fold a proof onto a leaf (OpenZeppelin `MerkleProof.processProof`)."""
    node = leaf
    for sibling in proof:
        node = hash_pair(node, sibling)
    return node


def verify(leaf: bytes, proof: Sequence[bytes], root: bytes) -> bool:
    """OpenZeppelin `MerkleProof.verify`."""
    return process_proof(leaf, proof) == root


def verify_segment(segment: SegmentCommitment, proof: Sequence[bytes], root: bytes) -> bool:
    """What the contract's `verifySegment` view answers, computed off chain."""
    return verify(segment_leaf(segment.index, segment.cid, segment.tier, segment.weight), proof, root)


class SegmentMerkleTree:
    """The commitment over segments 0..n-1 with a proof per segment."""

    def __init__(self, segments: Sequence[SegmentCommitment]) -> None:
        if not segments:
            raise ValueError("a Merkle tree needs at least one segment")
        for expected, seg in enumerate(segments):
            if seg.index != expected:
                raise ValueError(
                    f"segments must be given in index order 0..n-1; position {expected} has {seg.index}"
                )
        self.segments = list(segments)
        self.leaves = [segment_leaf(s.index, s.cid, s.tier, s.weight) for s in self.segments]
        order = sorted(range(len(self.leaves)), key=lambda i: self.leaves[i])
        n = len(order)
        self._tree: list[bytes] = [b""] * (2 * n - 1)
        self._pos: dict[int, int] = {}
        for rank, seg_i in enumerate(order):
            pos = len(self._tree) - 1 - rank
            self._tree[pos] = self.leaves[seg_i]
            self._pos[seg_i] = pos
        for i in range(len(self._tree) - 1 - n, -1, -1):
            self._tree[i] = hash_pair(self._tree[2 * i + 1], self._tree[2 * i + 2])

    @classmethod
    def from_tuples(cls, rows: Sequence[tuple[str, int, int]]) -> SegmentMerkleTree:
        """From (cid, tier, weight) rows in segment order."""
        return cls([SegmentCommitment(index=i, cid=c, tier=t, weight=w) for i, (c, t, w) in enumerate(rows)])

    @property
    def root(self) -> bytes:
        return self._tree[0]

    @property
    def root_hex(self) -> str:
        return "0x" + self.root.hex()

    def __len__(self) -> int:
        return len(self.segments)

    def proof(self, index: int) -> list[bytes]:
        """Sibling hashes from segment `index`'s leaf up to the root."""
        if index not in self._pos:
            raise IndexError(f"no segment {index} (tree has {len(self.segments)})")
        pos = self._pos[index]
        out: list[bytes] = []
        while pos > 0:
            out.append(self._tree[pos + 1 if pos % 2 == 1 else pos - 1])
            pos = (pos - 1) // 2
        return out

    def proof_hex(self, index: int) -> list[str]:
        return ["0x" + p.hex() for p in self.proof(index)]


def pack_tiers_weights(segments: Sequence[SegmentCommitment]) -> bytes:
    """The packed per-segment `bytes` the session is opened with: tier (uint8), weight (uint16 BE)."""
    out = bytearray()
    for seg in segments:
        out += int(seg.tier).to_bytes(1, "big") + seg.weight.to_bytes(2, "big")
    return bytes(out)


def unpack_tiers_weights(packed: bytes) -> list[tuple[int, int]]:
    """Inverse of `pack_tiers_weights`: (tier, weight) per segment."""
    if len(packed) % 3:
        raise ValueError(f"packed tiers/weights length {len(packed)} is not a multiple of 3")
    return [(packed[i], int.from_bytes(packed[i + 1 : i + 3], "big")) for i in range(0, len(packed), 3)]
