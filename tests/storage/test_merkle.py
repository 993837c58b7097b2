"""Merkle commitments: OpenZeppelin StandardMerkleTree layout, sorted-pair proofs, leaf encoding."""

from __future__ import annotations

import os

import pytest
from eth_abi import encode
from eth_utils import keccak

from trustnode.storage.cids import parse_cid
from trustnode.storage.merkle import (
    SegmentCommitment,
    SegmentMerkleTree,
    hash_pair,
    pack_tiers_weights,
    segment_leaf,
    unpack_tiers_weights,
    verify,
    verify_segment,
)
from trustnode.storage.unixfs import compute_cid


def _segments(n: int) -> list[SegmentCommitment]:
    return [
        SegmentCommitment(index=i, cid=compute_cid(f"segment {i}".encode()), tier=i % 3, weight=1 + i * 7)
        for i in range(n)
    ]


def test_leaf_is_double_keccak_of_abi_encoding() -> None:
    cid = compute_cid(b"x")
    inner = keccak(encode(["uint256", "string", "uint8", "uint16"], [3, cid, 2, 500]))
    assert segment_leaf(3, cid, 2, 500) == keccak(inner)
    # every field changes the leaf
    assert segment_leaf(4, cid, 2, 500) != segment_leaf(3, cid, 2, 500)
    assert segment_leaf(3, cid, 1, 500) != segment_leaf(3, cid, 2, 500)
    assert segment_leaf(3, cid, 2, 501) != segment_leaf(3, cid, 2, 500)


def test_non_canonical_cid_rejected() -> None:
    cid = compute_cid(b"y")
    b58 = str(parse_cid(cid).set(base="base58btc"))
    with pytest.raises(ValueError, match="canonical"):
        segment_leaf(0, b58, 0, 1)
    with pytest.raises(ValueError):
        segment_leaf(0, cid, 256, 1)
    with pytest.raises(ValueError):
        segment_leaf(0, cid, 0, 70000)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 16, 33])
def test_every_proof_verifies_and_wrong_ones_do_not(n: int) -> None:
    segs = _segments(n)
    tree = SegmentMerkleTree(segs)
    for s in segs:
        proof = tree.proof(s.index)
        assert len(proof) <= max(1, (2 * n - 1).bit_length())
        assert verify_segment(s, proof, tree.root)
        assert verify(tree.leaves[s.index], proof, tree.root)
        # tampering with any committed field breaks the proof
        assert not verify_segment(s.model_copy(update={"weight": s.weight + 1}), proof, tree.root)
        assert not verify_segment(s.model_copy(update={"tier": (s.tier + 1) % 3}), proof, tree.root)
        if n > 1:
            other = segs[(s.index + 1) % n]
            assert not verify_segment(other, proof, tree.root)
            bad = list(proof)
            bad[0] = bytes(32)
            assert not verify_segment(s, bad, tree.root)


def test_tree_layout_matches_openzeppelin_standard_tree() -> None:
    """Re-derive the root the way @openzeppelin/merkle-tree does (sort leaves, array heap)."""
    segs = _segments(6)
    leaves = sorted(segment_leaf(s.index, s.cid, s.tier, s.weight) for s in segs)
    tree = [b""] * (2 * len(leaves) - 1)
    for i, leaf in enumerate(leaves):
        tree[len(tree) - 1 - i] = leaf
    for i in range(len(tree) - 1 - len(leaves), -1, -1):
        tree[i] = hash_pair(tree[2 * i + 1], tree[2 * i + 2])
    assert SegmentMerkleTree(segs).root == tree[0]


def test_single_segment_root_is_its_leaf() -> None:
    segs = _segments(1)
    tree = SegmentMerkleTree(segs)
    assert tree.root == tree.leaves[0]
    assert tree.proof(0) == []


def test_root_depends_on_content_not_input_objects() -> None:
    segs = _segments(5)
    assert SegmentMerkleTree(segs).root == SegmentMerkleTree([s.model_copy() for s in segs]).root
    changed = [*segs[:2], segs[2].model_copy(update={"cid": compute_cid(os.urandom(4))}), *segs[3:]]
    assert SegmentMerkleTree(changed).root != SegmentMerkleTree(segs).root


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="at least one"):
        SegmentMerkleTree([])
    segs = _segments(3)
    with pytest.raises(ValueError, match="index order"):
        SegmentMerkleTree([segs[1], segs[0], segs[2]])
    with pytest.raises(IndexError):
        SegmentMerkleTree(segs).proof(3)


def test_from_tuples_and_hex() -> None:
    rows = [(compute_cid(b"a"), 0, 10), (compute_cid(b"b"), 2, 30)]
    tree = SegmentMerkleTree.from_tuples(rows)
    assert tree.root_hex == "0x" + tree.root.hex() and len(tree) == 2
    assert [bytes.fromhex(p[2:]) for p in tree.proof_hex(1)] == tree.proof(1)


def test_pack_tiers_weights() -> None:
    segs = _segments(4)
    packed = pack_tiers_weights(segs)
    assert len(packed) == 12
    assert packed[:3] == bytes([0, 0, 1])  # tier 0, weight 1 big-endian
    assert unpack_tiers_weights(packed) == [(s.tier, s.weight) for s in segs]
    with pytest.raises(ValueError):
        unpack_tiers_weights(packed[:-1])


def test_agrees_with_the_chain_wrappers_encoding() -> None:
    """The node opens sessions through trustnode.chain.protocol; its leaf and packing must equal ours."""
    from trustnode.chain import protocol

    segs = _segments(7)
    for s in segs:
        assert protocol.segment_leaf(s.index, s.cid, s.tier, s.weight) == segment_leaf(
            s.index, s.cid, s.tier, s.weight
        )
    assert protocol.pack_tiers_weights(
        [s.tier for s in segs], [s.weight for s in segs]
    ) == pack_tiers_weights(segs)
