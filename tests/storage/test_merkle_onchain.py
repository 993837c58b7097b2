"""Merkle proofs from Python checked by Solidity on anvil: OpenZeppelin MerkleProof with the protocol's leaf.

The harness mirrors `verifySegment` of AuditSessions (same leaf encoding, same OZ library),
so this pins our encoding to the EVM's `abi.encode` and OZ's proof folding, independently of
how the protocol is deployed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import solcx

from tests.conftest import REPO_ROOT, client_for
from trustnode.chain.build import COMPILER_SETTINGS, find_solc
from trustnode.chain.deployment import Deployment
from trustnode.chain.protocol import Protocol
from trustnode.storage.cids import parse_cid
from trustnode.storage.local import LocalStore
from trustnode.storage.merkle import SegmentCommitment, SegmentMerkleTree
from trustnode.storage.segments import prepare_session
from trustnode.storage.unixfs import compute_cid

pytestmark = pytest.mark.chain

HARNESS = """
// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;
import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";

contract SegmentMerkleHarness {
    function leaf(uint256 index, string calldata cid, uint8 tier, uint16 weight) public pure returns (bytes32) {
        return keccak256(bytes.concat(keccak256(abi.encode(index, cid, tier, weight))));
    }

    function verifySegment(
        bytes32 root, uint256 index, string calldata cid, uint8 tier, uint16 weight, bytes32[] calldata proof
    ) external pure returns (bool) {
        return MerkleProof.verifyCalldata(proof, root, leaf(index, cid, tier, weight));
    }
}
"""


@pytest.fixture(scope="module")
def harness(devnet: Deployment) -> Any:
    settings = {k: v for k, v in COMPILER_SETTINGS.items() if k != "outputSelection"}
    settings["outputSelection"] = {"*": {"*": ["abi", "evm.bytecode.object"]}}
    out = solcx.compile_standard(
        {"language": "Solidity", "sources": {"Harness.sol": {"content": HARNESS}}, "settings": settings},
        solc_binary=find_solc(REPO_ROOT),
        base_path=str(REPO_ROOT),
        allow_paths=[str(REPO_ROOT), str(REPO_ROOT / "node_modules")],
    )
    art = out["contracts"]["Harness.sol"]["SegmentMerkleHarness"]
    client = client_for(devnet, 7)
    factory = client.w3.eth.contract(abi=art["abi"], bytecode="0x" + art["evm"]["bytecode"]["object"])
    receipt = client.transact(factory.constructor())
    return client.w3.eth.contract(address=receipt["contractAddress"], abi=art["abi"])


@pytest.mark.parametrize("n", [1, 2, 5, 32])
def test_python_proofs_verify_on_chain(harness: Any, n: int) -> None:
    segs = [
        SegmentCommitment(
            index=i, cid=compute_cid(f"ciphertext {n}/{i}".encode()), tier=i % 3, weight=100 + i
        )
        for i in range(n)
    ]
    tree = SegmentMerkleTree(segs)
    for s in segs:
        assert harness.functions.leaf(s.index, s.cid, s.tier, s.weight).call() == tree.leaves[s.index]
        proof = tree.proof(s.index)
        assert harness.functions.verifySegment(tree.root, s.index, s.cid, s.tier, s.weight, proof).call()
        # the contract rejects a wrong weight, a wrong index and a wrong CID with the same proof
        assert not harness.functions.verifySegment(
            tree.root, s.index, s.cid, s.tier, s.weight + 1, proof
        ).call()
        assert not harness.functions.verifySegment(
            tree.root, s.index + 1, s.cid, s.tier, s.weight, proof
        ).call()
        other_cid = compute_cid(b"other")
        assert not harness.functions.verifySegment(
            tree.root, s.index, other_cid, s.tier, s.weight, proof
        ).call()


def test_verify_segment_on_the_protocol_contract(fresh_devnet: Deployment, tmp_path: Path) -> None:
    """A session opened with our root and packed tiers/weights; AuditSessions.verifySegment accepts our proofs."""
    store = LocalStore(tmp_path / "blobs")
    texts = [f"segment {i}: {i} + {i} = {2 * i}".encode() for i in range(5)]
    tiers, weights = [0, 1, 2, 1, 0], [3, 5, 8, 5, 3]
    prep = prepare_session(store, texts, tiers, weights, chain_id=fresh_devnet.chain_id)
    protocol = Protocol(client_for(fresh_devnet, 0), fresh_devnet.contracts)
    params = protocol.params()
    seats = sum(params.seats_per_tier[t] for t in tiers)
    fee = -(-seats * params.reward * 10_000 // 8_000)
    session_id = protocol.open_session(prep.merkle_root, tiers, weights, fee)
    info = protocol.session(session_id)
    assert info.merkle_root == "0x" + prep.merkle_root.hex() and info.segment_count == 5
    tree = prep.tree()
    for s in prep.segments:
        proof = tree.proof(s.index)
        assert protocol.verify_segment(session_id, s.index, s.cid, s.tier, s.weight, proof)
        assert not protocol.verify_segment(session_id, s.index, s.cid, s.tier, s.weight + 1, proof)
        assert not protocol.verify_segment(session_id, s.index, s.cid, (s.tier + 1) % 3, s.weight, proof)
        b58 = str(parse_cid(s.cid).set(base="base58btc"))  # the leaf commits to the canonical spelling
        assert not protocol.verify_segment(session_id, s.index, b58, s.tier, s.weight, proof)
