// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title SumTree
/// @notice Weighted sampling in O(log4 n): a 4-ary sum tree whose nodes pack four uint64 sums per slot.
/// @dev Level 1 holds the leaf weights (leaf i in slot i/4, lane i%4); a slot at level L holds the sums
/// of the four level L-1 slots below it. The top level has one slot and its lanes sum to the total.
/// Packing four lanes per slot makes an update cost one SSTORE per level (depth = ceil(log4 n)) and
/// lets leaves that share a slot share the write in a batch. Leaves are never removed: a departed
/// member keeps its position with weight 0, so positions are stable and the tree only grows.
library SumTree {
    uint256 private constant LANE_MASK = type(uint64).max;

    /// @notice A sum would not fit in 64 bits.
    error WeightOverflow();
    /// @notice Sampling an empty tree, or a value outside [0, total).
    error SampleOutOfRange(uint256 value, uint256 total);

    struct Tree {
        uint32 size;
        uint8 depth;
        mapping(uint256 => uint256) nodes;
        mapping(address => uint256) positionPlusOne;
        mapping(uint256 => address) leafAt;
    }

    function _key(uint256 level, uint256 position) private pure returns (uint256) {
        return (level << 64) | position;
    }

    function _laneSum(uint256 slot) private pure returns (uint256) {
        return (slot & LANE_MASK) + ((slot >> 64) & LANE_MASK) + ((slot >> 128) & LANE_MASK) + (slot >> 192);
    }

    function _setLane(uint256 slot, uint256 lane, uint256 value) private pure returns (uint256) {
        if (value > LANE_MASK) revert WeightOverflow();
        uint256 shift = lane * 64;
        return (slot & ~(LANE_MASK << shift)) | (value << shift);
    }

    /// @notice Sum of all leaf weights.
    function total(Tree storage tree) internal view returns (uint256) {
        uint256 depth = tree.depth;
        if (depth == 0) return 0;
        return _laneSum(tree.nodes[_key(depth, 0)]);
    }

    /// @notice Current weight of `member` (0 if it has no leaf).
    function weightOf(Tree storage tree, address member) internal view returns (uint256) {
        uint256 p = tree.positionPlusOne[member];
        if (p == 0) return 0;
        uint256 index = p - 1;
        return (tree.nodes[_key(1, index >> 2)] >> ((index & 3) * 64)) & LANE_MASK;
    }

    /// @notice Number of leaves ever allocated (members with weight 0 included).
    function leafCount(Tree storage tree) internal view returns (uint256) {
        return tree.size;
    }

    /// @notice Leaf position of `member` plus one (0 if it has none); callers may cache it for `setAt`.
    function positionOf(Tree storage tree, address member) internal view returns (uint256) {
        return tree.positionPlusOne[member];
    }

    /// @notice Set `member`'s weight, allocating a leaf on first non-zero weight.
    /// @return positionPlusOne The member's leaf position plus one (0 if none was needed).
    function set(Tree storage tree, address member, uint256 weight)
        internal
        returns (uint256 positionPlusOne)
    {
        positionPlusOne = tree.positionPlusOne[member];
        if (positionPlusOne == 0) {
            if (weight == 0) return 0;
            uint256 index = tree.size;
            tree.size = uint32(index + 1);
            positionPlusOne = index + 1;
            tree.positionPlusOne[member] = positionPlusOne;
            tree.leafAt[index] = member;
            _growFor(tree, index);
        }
        setAt(tree, positionPlusOne - 1, weight);
    }

    /// @notice Set the weight of the existing leaf at `index` (skips the member lookup).
    function setAt(Tree storage tree, uint256 index, uint256 weight) internal {
        uint256 depth = tree.depth;
        uint256 value = weight;
        // Lanes hold < 2^64 (checked in _setLane), so a slot's lane sum is < 2^66.
        unchecked {
            for (uint256 level = 1; level <= depth; ++level) {
                uint256 key = _key(level, index >> 2);
                uint256 slot = _setLane(tree.nodes[key], index & 3, value);
                tree.nodes[key] = slot;
                value = _laneSum(slot);
                index >>= 2;
            }
        }
        // The total must fit a lane too: it becomes one when the tree grows.
        if (value > LANE_MASK) revert WeightOverflow();
    }

    /// @dev Add a level on top while leaf `index` does not fit under the current top slot.
    function _growFor(Tree storage tree, uint256 index) private {
        uint256 depth = tree.depth;
        if (depth == 0) {
            tree.depth = 1;
            return;
        }
        while (index >> (2 * depth) != 0) {
            uint256 oldTotal = _laneSum(tree.nodes[_key(depth, 0)]);
            ++depth;
            tree.nodes[_key(depth, 0)] = oldTotal;
        }
        tree.depth = uint8(depth);
    }

    /// @notice The member whose cumulative weight interval contains `value` (value < total).
    function sample(Tree storage tree, uint256 value) internal view returns (address) {
        uint256 depth = tree.depth;
        uint256 t = depth == 0 ? 0 : _laneSum(tree.nodes[_key(depth, 0)]);
        if (value >= t) revert SampleOutOfRange(value, t);
        uint256 position = 0;
        for (uint256 level = depth; level >= 1; --level) {
            uint256 slot = tree.nodes[_key(level, position)];
            uint256 lane = 0;
            for (; lane < 3; ++lane) {
                uint256 v = (slot >> (lane * 64)) & LANE_MASK;
                if (value < v) break;
                value -= v;
            }
            position = (position << 2) | lane;
        }
        return tree.leafAt[position];
    }
}
