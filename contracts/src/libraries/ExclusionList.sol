// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title ExclusionList
/// @notice The snapshot leaves a draw call must not sample for one tier, held in memory: entries for
/// the whole panel (provider, auditors at the seat cap) first, then entries for the current segment
/// only (its auditors, for sampling without replacement, and auditors whose stake lock was refused).
/// @dev `leaves` is always a well-formed memory array of the current length, so it can be passed to
/// `IStaking.sampleAt` as is; room beyond the length is reserved capacity (written with mstore).
library ExclusionList {
    struct List {
        uint256[] leaves;
        uint256[] weights;
        uint256 capacity;
        /// Entries [0, permanent) stay for the whole panel.
        uint256 permanent;
        /// Entries [0, stored) came from storage (already persisted).
        uint256 stored;
        /// Snapshot weight of all entries, and of the permanent ones.
        uint256 weightSum;
        uint256 permanentWeight;
    }

    /// @notice An empty list with room for `capacity` entries.
    function create(uint256 capacity) internal pure returns (List memory l) {
        if (capacity == 0) capacity = 1;
        l.leaves = new uint256[](capacity);
        l.weights = new uint256[](capacity);
        l.capacity = capacity;
        _setLength(l.leaves, 0);
        _setLength(l.weights, 0);
    }

    /// @notice Number of entries.
    function length(List memory l) internal pure returns (uint256) {
        return l.leaves.length;
    }

    /// @notice Exclude `leaf` for the current segment only.
    function addLocal(List memory l, uint256 leaf, uint256 weight) internal pure {
        _push(l, leaf, weight);
        l.weightSum += weight;
    }

    /// @notice Exclude `leaf` for the rest of the panel.
    function addPermanent(List memory l, uint256 leaf, uint256 weight) internal pure {
        uint256 n = l.leaves.length;
        uint256 p = l.permanent;
        if (p == n) {
            _push(l, leaf, weight);
        } else {
            // Move the first segment-only entry to the end and take its place.
            _push(l, l.leaves[p], l.weights[p]);
            l.leaves[p] = leaf;
            l.weights[p] = weight;
        }
        l.permanent = p + 1;
        l.weightSum += weight;
        l.permanentWeight += weight;
    }

    /// @notice Forget the segment-only entries (the segment is complete).
    function dropLocal(List memory l) internal pure {
        _setLength(l.leaves, l.permanent);
        _setLength(l.weights, l.permanent);
        l.weightSum = l.permanentWeight;
    }

    function _push(List memory l, uint256 leaf, uint256 weight) private pure {
        uint256 n = l.leaves.length;
        if (n == l.capacity) _grow(l);
        uint256[] memory leaves = l.leaves;
        uint256[] memory weights = l.weights;
        assembly ("memory-safe") {
            let offset := mul(add(n, 1), 0x20)
            mstore(add(leaves, offset), leaf)
            mstore(add(weights, offset), weight)
            mstore(leaves, add(n, 1))
            mstore(weights, add(n, 1))
        }
    }

    function _grow(List memory l) private pure {
        uint256 n = l.leaves.length;
        uint256 capacity = l.capacity * 2;
        uint256[] memory leaves = new uint256[](capacity);
        uint256[] memory weights = new uint256[](capacity);
        for (uint256 i = 0; i < n; ++i) {
            leaves[i] = l.leaves[i];
            weights[i] = l.weights[i];
        }
        _setLength(leaves, n);
        _setLength(weights, n);
        l.leaves = leaves;
        l.weights = weights;
        l.capacity = capacity;
    }

    function _setLength(uint256[] memory a, uint256 n) private pure {
        assembly ("memory-safe") {
            mstore(a, n)
        }
    }
}
