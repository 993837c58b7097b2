// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {SnapshotModel} from "../SnapshotSumTree.t.sol";
import {SnapshotSumTree} from "../../src/libraries/SnapshotSumTree.sol";
import {SnapshotSumTreeHarness} from "../mocks/SnapshotSumTreeHarness.sol";

/// @title Review15KeyedExclusionSet (outside review 15 of d1bac2e, `SnapshotSumTree._exclusions/_markSeen`)
/// @notice Property: keying the exclusion hash set with the sample's value changes nothing but the probe
/// positions: for ANY value (also one equal to an excluded leaf id, or 0, or a repeated value across samples),
/// every repeated leaf is refused (`DuplicateExclusion`), every list of distinct leaves samples exactly the
/// leaf the brute-force walk over the remaining weights gives, and the range check refuses exactly the ids
/// from 4**16 on (the last index a depth-16 tree can have, 4**16 - 1, is accepted and weighs nothing).
/// Reviewed (no finding): `mstore(0x20, key)` writes Solidity's scratch space (0x00-0x3f), which
/// "memory-safe" assembly may use; both words are written before each keccak, so nothing stale (the mapping
/// slot `_nodeAt` leaves at 0x20) enters a hash. The extra keccak word costs ~6 gas per exclusion per sample.
/// Measured: one sample with 39 exclusions of 40 leaves (`test_GasAtThirtyNineExclusions`, values 0, 1, 2):
/// 129,104 gas (cold), 95,954 and 96,471 (warm): the key moves probe runs only.
/// Mutations (tried, reverted): `x > 4 ** MAX_DEPTH` for `x >= 4 ** MAX_DEPTH` in `_exclusions` fails
/// `test_RangeEdge` (4**16 accepted); deleting `mstore(0x20, key)` (hashing whatever the scratch word holds:
/// before the first `_nodeAt` something else than the mapping slot it leaves there) fails `testFuzz_AnyValue`
/// in 2 runs (a repeat of the list's first leaf missed).
/// Command: scripts/forge test --match-path 'contracts/test/attacks/Review15KeyedExclusionSet*' -vv
contract Review15KeyedExclusionSet is SnapshotModel {
    event log_named_uint(string key, uint256 val);

    uint256 internal constant N = 40;

    function setUp() public {
        tree = new SnapshotSumTreeHarness();
        for (uint256 k = 0; k < N; ++k) {
            _set(_member(k), k + 1);
        }
        _advance(1);
    }

    function _expected(uint256[] memory ex, uint256 value) internal pure returns (uint256) {
        bool[N] memory out;
        for (uint256 k = 0; k < ex.length; ++k) {
            out[ex[k]] = true;
        }
        for (uint256 leaf = 0; leaf < N; ++leaf) {
            if (out[leaf]) continue;
            if (value < leaf + 1) return leaf;
            value -= leaf + 1;
        }
        revert("value out of range");
    }

    function testFuzz_AnyValue(uint256 seed, uint256 lengthIn, uint256 valueIn, uint256 i, uint256 j) public {
        uint256 n = bound(lengthIn, 2, N - 1);
        uint256[] memory ex = new uint256[](n);
        uint256[N] memory perm;
        for (uint256 k = 0; k < N; ++k) {
            perm[k] = k;
        }
        for (uint256 k = N; k > 1; --k) {
            uint256 r = uint256(keccak256(abi.encode(seed, k))) % k;
            (perm[k - 1], perm[r]) = (perm[r], perm[k - 1]);
        }
        uint256 left = N * (N + 1) / 2;
        for (uint256 k = 0; k < n; ++k) {
            ex[k] = perm[k];
            left -= perm[k] + 1;
        }
        // Values of interest: 0, an excluded id, the last one in range, anything.
        uint256 mode = valueIn % 4;
        uint256 value = mode == 0 ? 0 : mode == 1 ? ex[0] % left : mode == 2 ? left - 1 : valueIn % left;
        (uint256 leaf,) = tree.sampleAt(epoch, epoch, value, ex);
        assertEq(leaf, _expected(ex, value), "the brute-force leaf");
        i = bound(i, 0, n - 1);
        j = bound(j, 0, n - 2);
        if (j >= i) ++j;
        ex[j] = ex[i];
        vm.expectRevert(abi.encodeWithSelector(SnapshotSumTree.DuplicateExclusion.selector, ex[i]));
        tree.sampleAt(epoch, epoch, value, ex);
    }

    function test_RangeEdge() public {
        uint256[] memory ex = new uint256[](2);
        ex[0] = 0;
        ex[1] = 4 ** 16 - 1; // no tree holds it yet; weighs nothing
        (uint256 leaf,) = tree.sampleAt(epoch, epoch, 0, ex);
        assertEq(leaf, 1, "leaf 0 excluded, the max index weighs nothing");
        ex[1] = 4 ** 16;
        vm.expectRevert(abi.encodeWithSelector(SnapshotSumTree.ExclusionOutOfRange.selector, 4 ** 16));
        tree.sampleAt(epoch, epoch, 0, ex);
    }

    function test_GasAtThirtyNineExclusions() public {
        uint256[] memory ex = new uint256[](N - 1);
        for (uint256 k = 0; k < N - 1; ++k) {
            ex[k] = k;
        }
        for (uint256 v = 0; v < 3; ++v) {
            uint256 g = gasleft();
            (uint256 leaf,) = tree.sampleAt(epoch, epoch, v, ex);
            g -= gasleft();
            assertEq(leaf, N - 1, "the one leaf left");
            emit log_named_uint("sample gas, 39 exclusions", g);
        }
    }
}
