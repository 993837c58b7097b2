// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title SnapshotSumTree
/// @notice Weighted sampling in O(log4 n) from the tree as it stood at the start of a recent epoch.
/// @dev A 4-ary sum tree: level 1 holds the leaf weights (leaf i in node i/4, lane i%4); a node at
/// level L holds the sums of the four level L-1 nodes below it; the top node's lanes sum to the total.
/// A node is one slot: four 56-bit lanes and, in the top 32 bits, the epoch of its last write.
///
/// Versions: the first write to a node in an epoch pushes the value it replaces into a ring of
/// `RING` slots next to the node, tagged with the epoch that ended it (the writing epoch), at ring
/// position `epoch % RING`. The value of a node at the start of epoch e is then:
/// - the current value if the node's tag is < e (one SLOAD: the common case);
/// - otherwise the ring version with the smallest end tag >= e. That version was pushed by the first
///   write of an epoch in [e, current], and only a push from an epoch >= e + RING could reuse its ring
///   position, so it is present while the current epoch is < e + RING (`SnapshotUnavailable` after).
/// Later writes in the same epoch overwrite the current value only, so they cost what a plain sum
/// tree write costs. Leaves are never removed (a departed member keeps its leaf with weight 0), so
/// leaf indices and the leaf -> member map are stable and the same for every snapshot. When the tree
/// grows a level, the new top node receives the old top's whole history folded into its lane 0, so a
/// walk from the current top reads every readable snapshot correctly.
/// Live count: the number of leaves with non-zero weight is kept as a node of its own (key 0, "level 0",
/// which no tree level uses), versioned exactly like the others, so the count at the start of a recent
/// epoch is read as its total weight is (`liveAt`). `setAt` moves it when a leaf's weight crosses 0.
library SnapshotSumTree {
    /// @notice Versions kept per node: the start of epoch e is readable while current < e + RING.
    uint256 internal constant RING = 3;
    /// @notice Bits per lane; a lane, and therefore the tree total, is below 2^56.
    uint256 internal constant LANE_BITS = 56;
    /// @notice The largest weight, sum or total a lane can hold.
    uint256 internal constant LANE_MAX = (1 << 56) - 1;
    uint256 private constant LANES_MASK = (1 << 224) - 1;
    uint256 private constant TAG_SHIFT = 224;
    /// @notice Deepest tree (4^16 leaves); node keys keep the level in their own bits.
    uint256 private constant MAX_DEPTH = 16;
    /// @dev Exclusion lists up to this long are checked for repeats pairwise; longer ones with a hash set.
    uint256 private constant PAIRWISE_MAX = 16;
    /// @dev The live-count node's key (`_key(0, 0)`: tree levels start at 1); its ring versions follow.
    uint256 private constant LIVE_KEY = 0;

    /// @notice A leaf weight or a sum would not fit in a lane.
    error WeightOverflow();
    /// @notice `value` is not below the (remaining) snapshot total.
    error SampleOutOfRange(uint256 value, uint256 total);
    /// @notice The start of `epoch` is not readable in `currentEpoch` (future, zero, or too old).
    error SnapshotUnavailable(uint256 epoch, uint256 currentEpoch);
    /// @notice The same leaf appears twice in an exclusion list.
    error DuplicateExclusion(uint256 leaf);
    /// @notice An excluded leaf index no tree can have.
    error ExclusionOutOfRange(uint256 leaf);
    /// @notice The tree cannot take more leaves.
    error TreeFull();

    struct Tree {
        uint32 size;
        uint8 depth;
        mapping(uint256 => uint256) nodes;
        mapping(address => uint256) positionPlusOne;
        mapping(uint256 => address) leafAt;
    }

    // ------------------------------------------------------------------ packing

    /// @dev Storage key of a node's current slot; its ring versions follow at key + 1 .. key + RING.
    function _key(uint256 level, uint256 position) private pure returns (uint256) {
        return ((level << 64) | position) << 2;
    }

    function _lane(uint256 lanes, uint256 lane) private pure returns (uint256) {
        return (lanes >> (lane * LANE_BITS)) & LANE_MAX;
    }

    function _laneSum(uint256 slot) private pure returns (uint256) {
        return (slot & LANE_MAX) + ((slot >> 56) & LANE_MAX) + ((slot >> 112) & LANE_MAX)
            + ((slot >> 168) & LANE_MAX);
    }

    function _tag(uint256 slot) private pure returns (uint256) {
        return slot >> TAG_SHIFT;
    }

    // -------------------------------------------------------------------- reads

    /// @notice Revert unless the start of `epoch` is readable while the current epoch is `current`.
    function checkReadable(uint256 epoch, uint256 current) internal pure {
        if (epoch == 0 || epoch > current || current - epoch >= RING) {
            revert SnapshotUnavailable(epoch, current);
        }
    }

    /// @dev The lanes of node `key` at the start of `epoch` (readability checked by the caller).
    function _nodeAt(Tree storage tree, uint256 key, uint256 epoch) private view returns (uint256) {
        uint256 slot = tree.nodes[key];
        uint256 tag = _tag(slot);
        if (tag < epoch) return slot & LANES_MASK;
        // tag <= current < epoch + RING: at most RING candidates, the first match is the version.
        for (uint256 x = epoch; x <= tag; ++x) {
            uint256 v = tree.nodes[key + 1 + (x % RING)];
            if (_tag(v) == x) return v & LANES_MASK;
        }
        // Unreachable: every replaced version is pushed on its node's first write of an epoch.
        revert SnapshotUnavailable(epoch, tag);
    }

    /// @notice Sum of all current leaf weights.
    function total(Tree storage tree) internal view returns (uint256) {
        uint256 depth = tree.depth;
        if (depth == 0) return 0;
        return _laneSum(tree.nodes[_key(depth, 0)]);
    }

    /// @notice Sum of all leaf weights at the start of `epoch` (current epoch `current`).
    function totalAt(Tree storage tree, uint256 epoch, uint256 current) internal view returns (uint256) {
        checkReadable(epoch, current);
        uint256 depth = tree.depth;
        if (depth == 0) return 0;
        return _laneSum(_nodeAt(tree, _key(depth, 0), epoch));
    }

    /// @notice Current weight of the leaf at `index` (0 beyond the last leaf).
    function weightAtLeaf(Tree storage tree, uint256 index) internal view returns (uint256) {
        return _lane(tree.nodes[_key(1, index >> 2)] & LANES_MASK, index & 3);
    }

    /// @notice Weight of the leaf at `index` at the start of `epoch` (0 beyond the last leaf).
    function leafWeightAt(Tree storage tree, uint256 index, uint256 epoch, uint256 current)
        internal
        view
        returns (uint256)
    {
        checkReadable(epoch, current);
        return _lane(_nodeAt(tree, _key(1, index >> 2), epoch), index & 3);
    }

    /// @notice Current weight of `member` (0 if it has no leaf).
    function weightOf(Tree storage tree, address member) internal view returns (uint256) {
        uint256 p = tree.positionPlusOne[member];
        if (p == 0) return 0;
        return weightAtLeaf(tree, p - 1);
    }

    /// @notice Leaf index of `member` plus one (0 if it has none); callers may cache it for `setAt`.
    function positionOf(Tree storage tree, address member) internal view returns (uint256) {
        return tree.positionPlusOne[member];
    }

    /// @notice Leaves with non-zero weight at the start of `epoch` (current epoch `current`).
    function liveAt(Tree storage tree, uint256 epoch, uint256 current) internal view returns (uint256) {
        checkReadable(epoch, current);
        return _nodeAt(tree, LIVE_KEY, epoch);
    }

    /// @notice Number of leaves ever allocated (members with weight 0 included).
    function leafCount(Tree storage tree) internal view returns (uint256) {
        return tree.size;
    }

    /// @notice The leaf whose interval contains `value` in the tree at the start of `epoch`, with the
    /// snapshot weights of the `excluded` leaves taken out at every level of the walk.
    /// @dev `value` must be below the snapshot total minus the excluded leaves' snapshot weights.
    /// Excluded leaves must be distinct; indices beyond the last leaf weigh nothing.
    /// @return leaf The sampled leaf index.
    /// @return weight Its snapshot weight.
    function sampleAt(
        Tree storage tree,
        uint256 epoch,
        uint256 current,
        uint256 value,
        uint256[] memory excluded
    ) internal view returns (uint256 leaf, uint256 weight) {
        checkReadable(epoch, current);
        (uint256[] memory exWeight, uint256 exSum) = _exclusions(tree, epoch, excluded, value);
        uint256 depth = tree.depth;
        uint256 t = depth == 0 ? 0 : _laneSum(_nodeAt(tree, _key(depth, 0), epoch));
        // Every excluded weight is part of the total, so t >= exSum.
        if (value >= t - exSum) revert SampleOutOfRange(value, t - exSum);
        // Lanes and sums are < 2^56; value stays below the remaining weight under the current node.
        unchecked {
            for (uint256 level = depth; level >= 1; --level) {
                uint256 key = _key(level, leaf);
                uint256 lanes = tree.nodes[key];
                // The common case inline: the node's last write is older than the snapshot.
                lanes = _tag(lanes) < epoch ? lanes & LANES_MASK : _nodeAt(tree, key, epoch);
                if (exSum != 0) lanes = _without(lanes, level, leaf, excluded, exWeight);
                // Lanes read inline (this loop is the draw's hot path).
                uint256 lane = 0;
                uint256 v = lanes & LANE_MAX;
                while (lane < 3 && value >= v) {
                    value -= v;
                    ++lane;
                    v = (lanes >> (lane * LANE_BITS)) & LANE_MAX;
                }
                leaf = (leaf << 2) | lane;
                if (level == 1) weight = v;
            }
        }
    }

    /// @dev Snapshot weights of the excluded leaves and their sum; reverts on a repeated leaf.
    /// The repeat check is a memory hash set (open addressing, at least twice as many slots as leaves,
    /// keyed by keccak256 of the leaf and the sample's `key`, its value: unknown when leaves are staked,
    /// so nobody can grind leaf ids that collide; outside review 14), so a sample stays linear in the list: a pairwise scan made each
    /// sample quadratic, and a large appeal round (hundreds of auditors at the seat cap) outgrew a block
    /// before its draw window ended (outside review 12: 9.75M gas per sample at 392 exclusions).
    function _exclusions(Tree storage tree, uint256 epoch, uint256[] memory excluded, uint256 key)
        private
        view
        returns (uint256[] memory exWeight, uint256 exSum)
    {
        uint256 n = excluded.length;
        exWeight = new uint256[](n);
        // Short lists (a panel's usual few exclusions) are checked pairwise, which costs less than the set.
        uint256[] memory seen;
        bool hashed = n > PAIRWISE_MAX;
        if (hashed) {
            uint256 size = 2;
            while (size < 2 * n) size <<= 1;
            seen = new uint256[](size);
        }
        for (uint256 i = 0; i < n; ++i) {
            uint256 x = excluded[i];
            if (x >> (2 * MAX_DEPTH) != 0) revert ExclusionOutOfRange(x); // beyond 4^16 leaves
            if (hashed) {
                _markSeen(seen, x, key);
            } else {
                for (uint256 j = 0; j < i; ++j) {
                    if (excluded[j] == x) revert DuplicateExclusion(x);
                }
            }
            uint256 w = (_nodeAt(tree, _key(1, x >> 2), epoch) >> ((x & 3) * LANE_BITS)) & LANE_MAX;
            exWeight[i] = w;
            exSum += w;
        }
    }

    /// @dev Add `leaf` to the hash set `seen` (length a power of two, slots hold leaf + 1, at least half
    /// empty, so probing ends); reverts if it is there already.
    function _markSeen(uint256[] memory seen, uint256 leaf, uint256 key) private pure {
        unchecked {
            uint256 mask = seen.length - 1;
            uint256 h;
            assembly ("memory-safe") {
                mstore(0x00, leaf)
                mstore(0x20, key)
                h := keccak256(0x00, 0x40)
            }
            h &= mask;
            while (seen[h] != 0) {
                if (seen[h] == leaf + 1) revert DuplicateExclusion(leaf);
                h = (h + 1) & mask;
            }
            seen[h] = leaf + 1;
        }
    }

    /// @dev Node (`level`, `position`)'s lanes without the excluded leaves below it. An excluded
    /// weight is part of the lane that contains its leaf, so no subtraction borrows across lanes.
    function _without(
        uint256 lanes,
        uint256 level,
        uint256 position,
        uint256[] memory excluded,
        uint256[] memory exWeight
    ) private pure returns (uint256) {
        uint256 below = 2 * level;
        unchecked {
            for (uint256 i = 0; i < excluded.length; ++i) {
                uint256 x = excluded[i];
                if (exWeight[i] != 0 && x >> below == position) {
                    lanes -= exWeight[i] << (((x >> (below - 2)) & 3) * LANE_BITS);
                }
            }
        }
        return lanes;
    }

    // ------------------------------------------------------------------- writes

    /// @notice Set `member`'s weight in epoch `epoch`, allocating a leaf on its first non-zero weight.
    /// @return positionPlusOne The member's leaf index plus one (0 if none was needed).
    function set(Tree storage tree, address member, uint256 weight, uint256 epoch)
        internal
        returns (uint256 positionPlusOne)
    {
        positionPlusOne = tree.positionPlusOne[member];
        if (positionPlusOne == 0) {
            if (weight == 0) return 0;
            uint256 index = tree.size;
            if (index >= 4 ** MAX_DEPTH) revert TreeFull();
            tree.size = uint32(index + 1);
            positionPlusOne = index + 1;
            tree.positionPlusOne[member] = positionPlusOne;
            tree.leafAt[index] = member;
            _growFor(tree, index);
        }
        setAt(tree, positionPlusOne - 1, weight, epoch);
    }

    /// @notice Set the weight of the existing leaf at `index` in epoch `epoch` (epochs never decrease).
    /// @dev Stops climbing at the first level whose lane does not change. The first write to a node in
    /// an epoch also saves the replaced value in the node's ring.
    function setAt(Tree storage tree, uint256 index, uint256 weight, uint256 epoch) internal {
        if (weight > LANE_MAX) revert WeightOverflow();
        uint256 depth = tree.depth;
        uint256 value = weight;
        uint256 tagBits = epoch << TAG_SHIFT;
        // Lanes hold < 2^56, so a lane sum is < 2^58; keys and shifts are small.
        unchecked {
            for (uint256 level = 1; level <= depth; ++level) {
                uint256 key = _key(level, index >> 2);
                uint256 slot = tree.nodes[key];
                uint256 shift = (index & 3) * LANE_BITS;
                uint256 old = (slot >> shift) & LANE_MAX;
                if (old == value) return;
                // The leaf's weight crosses 0 (level 1 only: above it `value` is a sum).
                if (level == 1 && (old == 0) != (value == 0)) _moveLive(tree, value != 0, tagBits, epoch);
                if (_tag(slot) != epoch) {
                    tree.nodes[key + 1 + (epoch % RING)] = (slot & LANES_MASK) | tagBits;
                }
                uint256 lanes = (slot & LANES_MASK & ~(LANE_MAX << shift)) | (value << shift);
                tree.nodes[key] = lanes | tagBits;
                value = _laneSum(lanes);
                // Every sum must fit a lane: the parent's, or the next top's when the tree grows.
                if (value > LANE_MAX) revert WeightOverflow();
                index >>= 2;
            }
        }
    }

    /// @dev One more (`up`) or one fewer leaf with non-zero weight, versioned like a node.
    function _moveLive(Tree storage tree, bool up, uint256 tagBits, uint256 epoch) private {
        uint256 slot = tree.nodes[LIVE_KEY];
        if (_tag(slot) != epoch) tree.nodes[LIVE_KEY + 1 + (epoch % RING)] = (slot & LANES_MASK) | tagBits;
        uint256 count = slot & LANES_MASK;
        // A leaf loses its weight only after gaining it: the count never goes below 0.
        unchecked {
            count = up ? count + 1 : count - 1;
        }
        tree.nodes[LIVE_KEY] = count | tagBits;
    }

    /// @dev Add levels on top while leaf `index` does not fit under the current top node. The new top's
    /// current value and ring versions are the old top's, folded into lane 0, with the same tags.
    function _growFor(Tree storage tree, uint256 index) private {
        uint256 depth = tree.depth;
        if (depth == 0) {
            tree.depth = 1;
            return;
        }
        while (index >> (2 * depth) != 0) {
            uint256 oldKey = _key(depth, 0);
            uint256 newKey = _key(depth + 1, 0);
            for (uint256 r = 0; r <= RING; ++r) {
                uint256 v = tree.nodes[oldKey + r];
                if (v != 0) tree.nodes[newKey + r] = (v & ~LANES_MASK) | _laneSum(v & LANES_MASK);
            }
            ++depth;
        }
        tree.depth = uint8(depth);
    }
}
