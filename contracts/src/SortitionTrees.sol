// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {ISortition} from "./interfaces/ISortition.sol";
import {SnapshotSumTree} from "./libraries/SnapshotSumTree.sol";

/// @title SortitionTrees
/// @notice The per-tier epoch-snapshot sum trees (Kleros v2 keeps its sortition trees in a module of
/// their own too). Staking deploys this contract and is its only writer; anyone reads.
/// @dev Epoch e covers blocks [(e - 1) * epochBlocks, e * epochBlocks - 1]. A session opened in epoch e
/// draws from the snapshot "start of e", which is final before the session exists and stays readable
/// until the end of epoch e + RING - 1 (`snapshotReadableUntil`).
contract SortitionTrees is ISortition {
    using SnapshotSumTree for SnapshotSumTree.Tree;

    /// @notice The only writer (the Staking contract that deployed this one).
    address public immutable staking;
    /// @inheritdoc ISortition
    uint256 public immutable epochBlocks;

    SnapshotSumTree.Tree[3] private _trees;

    /// @notice A caller other than Staking tried to write.
    error NotStaking();
    /// @notice Tiers are 0, 1 and 2.
    error InvalidTier(uint256 tier);
    /// @notice Epochs must last at least one block.
    error InvalidEpochBlocks(uint256 epochBlocks);

    /// @param epochBlocks_ Blocks per epoch (at least 1).
    constructor(uint256 epochBlocks_) {
        if (epochBlocks_ == 0) revert InvalidEpochBlocks(epochBlocks_);
        staking = msg.sender;
        epochBlocks = epochBlocks_;
    }

    /// @notice Set `auditor`'s weight in `tier` (Staking only); a weight crossing 0 moves the tier's live
    /// count (`liveCountAt`). `leafPlusOne` is the auditor's cached leaf
    /// plus one, or 0 to look it up (a leaf is allocated on the first non-zero weight).
    /// @dev Weight changes are announced by Staking's `PoolUpdated` event, so this one emits none.
    /// @return The auditor's leaf plus one (0 while it has none).
    function setWeight(uint8 tier, address auditor, uint256 leafPlusOne, uint256 weight)
        external
        returns (uint256)
    {
        if (msg.sender != staking) revert NotStaking();
        SnapshotSumTree.Tree storage tree = _tree(tier);
        uint256 epoch = _epoch();
        if (leafPlusOne != 0) {
            tree.setAt(leafPlusOne - 1, weight, epoch);
            return leafPlusOne;
        }
        return tree.set(auditor, weight, epoch);
    }

    /// @inheritdoc ISortition
    function currentEpoch() external view returns (uint256) {
        return _epoch();
    }

    /// @inheritdoc ISortition
    function epochOf(uint256 blockNumber) external view returns (uint256) {
        return blockNumber / epochBlocks + 1;
    }

    /// @inheritdoc ISortition
    function snapshotReadableUntil(uint256 epoch) external view returns (uint256 lastBlock) {
        return (epoch + SnapshotSumTree.RING - 1) * epochBlocks - 1;
    }

    /// @inheritdoc ISortition
    function totalWeightAt(uint8 tier, uint256 epoch) external view returns (uint256) {
        return _tree(tier).totalAt(epoch, _epoch());
    }

    /// @inheritdoc ISortition
    function liveCountAt(uint8 tier, uint256 epoch) external view returns (uint256) {
        return _tree(tier).liveAt(epoch, _epoch());
    }

    /// @inheritdoc ISortition
    function liveCountAtExcept(uint8 tier, uint256 epoch, address except)
        external
        view
        returns (uint256 live)
    {
        SnapshotSumTree.Tree storage tree = _tree(tier);
        uint256 current = _epoch();
        live = tree.liveAt(epoch, current);
        uint256 p = tree.positionOf(except);
        if (p != 0 && tree.leafWeightAt(p - 1, epoch, current) != 0) --live;
    }

    /// @inheritdoc ISortition
    function leafWeightAt(uint8 tier, uint256 epoch, uint256 leaf) external view returns (uint256) {
        return _tree(tier).leafWeightAt(leaf, epoch, _epoch());
    }

    /// @inheritdoc ISortition
    function leafOf(uint8 tier, address auditor) external view returns (bool exists, uint256 leaf) {
        uint256 p = _tree(tier).positionOf(auditor);
        if (p != 0) return (true, p - 1);
    }

    /// @inheritdoc ISortition
    function sampleAt(uint8 tier, uint256 epoch, uint256 value, uint256[] calldata excludedLeaves)
        external
        view
        returns (address auditor, uint256 leaf, uint256 weight)
    {
        SnapshotSumTree.Tree storage tree = _tree(tier);
        (leaf, weight) = tree.sampleAt(epoch, _epoch(), value, excludedLeaves);
        auditor = tree.leafAt[leaf];
    }

    /// @inheritdoc ISortition
    function weightOf(uint8 tier, address auditor) external view returns (uint256) {
        return _tree(tier).weightOf(auditor);
    }

    /// @inheritdoc ISortition
    function totalWeight(uint8 tier) external view returns (uint256) {
        return _tree(tier).total();
    }

    /// @notice Leaves ever allocated in `tier` (members with weight 0 included).
    function leafCount(uint8 tier) external view returns (uint256) {
        return _tree(tier).leafCount();
    }

    /// @inheritdoc ISortition
    function memberAt(uint8 tier, uint256 leaf) external view returns (address) {
        return _tree(tier).leafAt[leaf];
    }

    function _epoch() private view returns (uint256) {
        return block.number / epochBlocks + 1;
    }

    function _tree(uint8 tier) private view returns (SnapshotSumTree.Tree storage) {
        if (tier > 2) revert InvalidTier(tier);
        return _trees[tier];
    }
}
