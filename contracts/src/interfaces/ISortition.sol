// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title ISortition
/// @notice The sortition weights of the three tiers, readable as they stood at the start of a recent
/// epoch (docs/protocol-v2.md, sections 1 and 6). Staking writes them at every change; the draw reads
/// snapshots. Deployed by Staking: `IStaking.sortition()`.
interface ISortition {
    /// @notice Blocks per epoch.
    function epochBlocks() external view returns (uint256);

    /// @notice The epoch of the current block.
    function currentEpoch() external view returns (uint256);

    /// @notice The epoch containing `blockNumber` (epochs start at 1: block / epochBlocks + 1).
    function epochOf(uint256 blockNumber) external view returns (uint256);

    /// @notice The last block in which the snapshot "start of `epoch`" can still be read.
    function snapshotReadableUntil(uint256 epoch) external view returns (uint256 lastBlock);

    /// @notice Total weight of `tier` at the start of `epoch` (reverts `SnapshotUnavailable` if unreadable).
    function totalWeightAt(uint8 tier, uint256 epoch) external view returns (uint256);

    /// @notice Leaves of `tier` with non-zero weight at the start of `epoch`: the members a draw from that
    /// snapshot can sample, one per account whatever its stake (reverts `SnapshotUnavailable` if unreadable).
    /// @dev Kept by `setWeight` (a weight crossing 0) and versioned like the total weight.
    function liveCountAt(uint8 tier, uint256 epoch) external view returns (uint256);

    /// @notice `liveCountAt(tier, epoch)` without `except` if its leaf has weight at the start of `epoch`
    /// (the appeal admission's live members, the session's provider excluded).
    function liveCountAtExcept(uint8 tier, uint256 epoch, address except) external view returns (uint256);

    /// @notice Weight of leaf `leaf` of `tier` at the start of `epoch` (0 beyond the last leaf).
    function leafWeightAt(uint8 tier, uint256 epoch, uint256 leaf) external view returns (uint256);

    /// @notice The leaf of `auditor` in `tier`'s tree (exists = false if it never had weight there).
    /// @dev Leaves are permanent, so a leaf found now is the auditor's leaf in every readable snapshot.
    function leafOf(uint8 tier, address auditor) external view returns (bool exists, uint256 leaf);

    /// @notice The member whose interval contains `value` in the tier's tree as of the start of `epoch`,
    /// with the snapshot weights of `excludedLeaves` taken out (value < total - excluded weight).
    /// @dev Excluded leaves must be distinct (`DuplicateExclusion`). Reverts `SampleOutOfRange` when
    /// value is not below the remaining weight and `SnapshotUnavailable` when the epoch is unreadable.
    function sampleAt(uint8 tier, uint256 epoch, uint256 value, uint256[] calldata excludedLeaves)
        external
        view
        returns (address auditor, uint256 leaf, uint256 weight);

    /// @notice Current weight of `auditor` in `tier`'s tree.
    function weightOf(uint8 tier, address auditor) external view returns (uint256);

    /// @notice Current total weight of `tier`.
    function totalWeight(uint8 tier) external view returns (uint256);

    /// @notice Leaves of `tier`'s tree (members that ever joined it; leaves are permanent).
    function leafCount(uint8 tier) external view returns (uint256);

    /// @notice The member at leaf `leaf` of `tier` (address(0) beyond the last leaf).
    function memberAt(uint8 tier, uint256 leaf) external view returns (address);
}
