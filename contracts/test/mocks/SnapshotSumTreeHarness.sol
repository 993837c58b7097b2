// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {SnapshotSumTree} from "../../src/libraries/SnapshotSumTree.sol";

/// @dev Exposes the library with explicit epochs, so tests control time directly and reverts surface
/// as calls.
contract SnapshotSumTreeHarness {
    using SnapshotSumTree for SnapshotSumTree.Tree;

    SnapshotSumTree.Tree private _tree;

    function set(address member, uint256 weight, uint256 epoch) external returns (uint256) {
        return _tree.set(member, weight, epoch);
    }

    function setAt(uint256 leaf, uint256 weight, uint256 epoch) external {
        _tree.setAt(leaf, weight, epoch);
    }

    /// @dev Gas of one write, for the bench test.
    function setGas(address member, uint256 weight, uint256 epoch) external returns (uint256 used) {
        used = gasleft();
        _tree.set(member, weight, epoch);
        used -= gasleft();
    }

    function total() external view returns (uint256) {
        return _tree.total();
    }

    function liveAt(uint256 epoch, uint256 current) external view returns (uint256) {
        return _tree.liveAt(epoch, current);
    }

    function totalAt(uint256 epoch, uint256 current) external view returns (uint256) {
        return _tree.totalAt(epoch, current);
    }

    function weightOf(address member) external view returns (uint256) {
        return _tree.weightOf(member);
    }

    function leafWeightAt(uint256 leaf, uint256 epoch, uint256 current) external view returns (uint256) {
        return _tree.leafWeightAt(leaf, epoch, current);
    }

    function leafOf(address member) external view returns (uint256) {
        return _tree.positionOf(member);
    }

    function memberAt(uint256 leaf) external view returns (address) {
        return _tree.leafAt[leaf];
    }

    function size() external view returns (uint256) {
        return _tree.leafCount();
    }

    function depth() external view returns (uint256) {
        return _tree.depth;
    }

    function sampleAt(uint256 epoch, uint256 current, uint256 value, uint256[] calldata excluded)
        external
        view
        returns (uint256 leaf, uint256 weight)
    {
        return _tree.sampleAt(epoch, current, value, excluded);
    }
}
