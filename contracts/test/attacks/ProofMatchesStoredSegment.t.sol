// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AttackBase} from "./AttackBase.sol";

/// @title ProofMatchesStoredSegment (issue 12, attack 8: proofs that ignore the chain)
/// @notice Property: `verifySegment` accepts a leaf only if its tier and weight are the ones the
/// chain stored for that segment (the words that decided the verdict).
/// @dev A provider commits a Merkle root whose leaves call both segments human-audited (tier 2)
/// with weight 100, but tells the chain tier 0 (computer) and weight 1: the cheap audit decides,
/// and a reader checking the proof sees the expensive one.
/// Measured (`forge test --match-path 'contracts/test/attacks/*' -vv`):
/// v1 (130a947) the leaf (tier 2, weight 100) verified against stored (tier 0, weight 1); v2 refused.
contract ProofMatchesStoredSegment is AttackBase {
    string internal constant CID0 = "bafkreihybcs4mwyfrk4n66vtcf4s6lcc4xmnsf5u4p5hs2lng3o7lyfvbi";
    string internal constant CID1 = "bafkreidfxzo3egob6sfoow2v7n3bmsqjtk4ozrfdq74yj7n4tutvva7qwi";

    function setUp() public {
        _deployProtocol();
        _newAuditor(0, 1000e18);
    }

    /// @dev A two-leaf tree (sorted pairs): root and the proof of leaf 0.
    function _tree(uint8 tier, uint16 weight) internal pure returns (bytes32 root, bytes32[] memory proof) {
        bytes32 a = _segmentLeaf(0, CID0, tier, weight);
        bytes32 b = _segmentLeaf(1, CID1, tier, weight);
        root = a < b ? keccak256(abi.encode(a, b)) : keccak256(abi.encode(b, a));
        proof = new bytes32[](1);
        proof[0] = b;
    }

    function _openOn(bytes32 root) internal returns (uint256) {
        uint8[] memory tiers = new uint8[](2);
        uint16[] memory weights = new uint16[](2);
        weights[0] = 1;
        weights[1] = 1;
        return _openWithRoot(root, tiers, weights, _feeFor(2 * _config().seatsPerTier[0]));
    }

    function test_proofMustMatchTheStoredTierAndWeight() public {
        (bytes32 honestRoot, bytes32[] memory honestProof) = _tree(0, 1);
        uint256 honest = _openOn(honestRoot);
        assertTrue(_verifySegment(honest, 0, CID0, 0, 1, honestProof), "setup: a true leaf does not verify");

        (bytes32 root, bytes32[] memory proof) = _tree(2, 100);
        uint256 sid = _openOn(root);
        (uint256 tier, uint256 weight) = _storedSegment(sid, 0);
        bool accepted = _verifySegment(sid, 0, CID0, 2, 100, proof);
        emit log_named_uint("stored tier", tier);
        emit log_named_uint("stored weight", weight);
        emit log_named_string("leaf (tier 2, weight 100) verifies", accepted ? "yes" : "no");
        assertTrue(
            !accepted,
            string.concat(
                "ProofMatchesStoredSegment: verifySegment accepted segment 0 as tier 2, weight 100 while the",
                " chain stored and audited it as tier ",
                _u(tier),
                ", weight ",
                _u(weight)
            )
        );
    }
}
