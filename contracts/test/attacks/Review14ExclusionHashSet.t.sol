// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase} from "../utils/TestBase.sol";
import {SnapshotSumTree} from "../../src/libraries/SnapshotSumTree.sol";
import {SnapshotSumTreeHarness} from "../mocks/SnapshotSumTreeHarness.sol";

/// @title Review14ExclusionHashSet (outside review 14 of dc93d13, `SnapshotSumTree._markSeen`)
/// @notice Property: the memory hash set that replaced the pairwise repeat check refuses every repeated
/// excluded leaf and accepts every list of distinct leaves, at the edges of the leaf range (0, neighbours
/// sharing a probe run, large ids), leaves the samples unchanged (it only reverts: the weights and the walk
/// are computed as before, checked against the brute-force expectation below), and an adversary who could
/// choose the excluded ids (it cannot: they are the panel's drawn leaves, `DrawModule._excluded`) costs at
/// most the quadratic scan it replaced.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review14ExclusionHashSet*' -vv`): one
/// sample, 64 exclusions (128 slots): consecutive ids 123,687 gas; 64 ids ground to one home slot (2,016 extra
/// probes, ~210 gas each) 547,734 gas. With N_CLUSTER = 392 (1,024 slots; run locally, not committed: ~117M
/// gas of grinding): consecutive 672,059 gas, one home slot 14,402,734 gas, i.e. worse than the pairwise scan
/// it replaced (9,750,239 at 392, outside review 12).
/// Finding (LOW): the hash is unkeyed (`keccak256(leaf)`), so whoever can choose which leaf ids carry weight
/// can grind ids whose low bits agree (1 leaf in 1,024 for the 392-exclusion set, and an id whose low 10 bits
/// are 0 also collides in every smaller set): leaf ids are assigned in order as members first stake, so an
/// adversary staking many accounts and keeping weight only on the ground ones (its own leaves are excluded
/// once drawn, more of them the more stake it has) makes every later sample of a large panel pay a long probe
/// run, up to the figure above (a draw that needs more calls than its window has blocks is forfeited when the
/// value was in time). Costly (a stake per ground id) and not demonstrated end to end here. Fix proposal: key
/// the hash with something unknown when leaves are allocated, e.g. the sample's `value` or the draw seed
/// (`mstore(0x20, value); h := keccak256(0x00, 0x40)`), which leaves the samples unchanged.
/// Finding (LOW, unreachable today): slots hold `leaf + 1` unchecked, so `type(uint256).max` is stored as 0
/// (empty) and its repeat is not refused (`test_MaxLeafRepeatRefused_KNOWN`, skipped; the pairwise scan of
/// 2af0c85^ refused it). Reachable only with a caller-chosen list: `ISortition.sampleAt` is a view, and the
/// draw module passes leaves the tree assigned. Fix proposal: refuse ids no tree can hold before the set is
/// built (e.g. `if (x > type(uint64).max) revert` in `_exclusions`: it also keeps `_key(1, x >> 2)` from
/// wrapping into another level's node, which today makes an id >= 2^66 read another node's lane as its
/// "weight" despite the NatSpec "indices beyond the last leaf weigh nothing"), or mark slots with a separate
/// bit (`leaf | 1 << 255` is not enough for the max id either; store `keccak` tag + occupancy).
/// Mutation: storing `leaf` instead of `leaf + 1` in `_markSeen` fails `test_EdgeRepeatsRefused` (a repeated
/// leaf 0 is accepted).
contract Review14ExclusionHashSet is TestBase {
    event log_named_uint(string key, uint256 val);

    SnapshotSumTreeHarness internal tree;
    uint256 internal constant LEAVES = 20;
    uint256 internal constant N_CLUSTER = 64;

    function setUp() public {
        tree = new SnapshotSumTreeHarness();
        for (uint256 i = 0; i < LEAVES; ++i) {
            tree.set(address(uint160(0x1000 + i)), 10 + i, 1);
        }
    }

    function _list2(uint256 a, uint256 b) internal pure returns (uint256[] memory ex) {
        ex = new uint256[](2);
        ex[0] = a;
        ex[1] = b;
    }

    function _refused(uint256[] memory ex, uint256 leaf) internal {
        vm.expectRevert(abi.encodeWithSelector(SnapshotSumTree.DuplicateExclusion.selector, leaf));
        tree.sampleAt(2, 2, 0, ex);
    }

    /// @dev Leaf 0 (stored as 1), a large id, and ids sharing a probe run.
    function test_EdgeRepeatsRefused() public {
        _refused(_list2(0, 0), 0);
        _refused(_list2(4 ** 16 - 1, 4 ** 16 - 1), 4 ** 16 - 1); // the largest leaf a tree can have
        tree.sampleAt(2, 2, 0, _list2(0, 1)); // distinct neighbours accepted
        // Ids whose keccak lands in the same home slot of a 4-slot set (2 exclusions -> 4 slots).
        uint256[] memory same = _sameHome(3, 8, 100);
        uint256[] memory ex = new uint256[](3);
        (ex[0], ex[1], ex[2]) = (same[0], same[1], same[2]);
        tree.sampleAt(2, 2, 0, ex); // three colliding distinct ids: accepted
        (ex[0], ex[1], ex[2]) = (same[0], same[1], same[1]);
        _refused(ex, same[1]); // a repeat found at the end of a probe run
        (ex[0], ex[1], ex[2]) = (same[2], same[0], same[2]);
        _refused(ex, same[2]);
    }

    /// @dev The samples with exclusions equal the brute-force walk over the remaining weights.
    function test_SamplesUnchanged() public view {
        uint256[] memory ex = new uint256[](4);
        (ex[0], ex[1], ex[2], ex[3]) = (7, 0, 19, 3);
        uint256 remaining = 0;
        for (uint256 i = 0; i < LEAVES; ++i) {
            if (!_in(ex, i)) remaining += 10 + i;
        }
        for (uint256 v = 0; v < remaining; v += 7) {
            (uint256 leaf,) = tree.sampleAt(2, 2, v, ex);
            uint256 acc = 0;
            uint256 expected = 0;
            for (uint256 i = 0; i < LEAVES; ++i) {
                if (_in(ex, i)) continue;
                acc += 10 + i;
                if (v < acc) {
                    expected = i;
                    break;
                }
            }
            assertEq(leaf, expected, "sample");
        }
    }

    /// @dev An adversary's best case: every id in the same home slot (a probe run of n). Gas logged.
    function test_ClusteredIdsStayBounded() public {
        uint256 n = N_CLUSTER; // 2n slots rounded up to a power of two
        uint256 slots = 2;
        while (slots < 2 * n) slots <<= 1;
        uint256[] memory clustered = _sameHome(n, slots, 1000);
        uint256[] memory plain = new uint256[](n);
        for (uint256 i = 0; i < n; ++i) {
            plain[i] = 1000 + i;
        }
        uint256 g = gasleft();
        tree.sampleAt(2, 2, 0, plain);
        uint256 plainGas = g - gasleft();
        g = gasleft();
        tree.sampleAt(2, 2, 0, clustered);
        uint256 clusteredGas = g - gasleft();
        emit log_named_uint("exclusions", n);
        emit log_named_uint("one sample, consecutive ids (gas)", plainGas);
        emit log_named_uint("one sample, every id in one home slot (gas)", clusteredGas);
        emit log_named_uint("extra gas per extra probe", (clusteredGas - plainGas) / (n * (n - 1) / 2));
        assertLe(clusteredGas, plainGas + 250 * (n * (n - 1) / 2), "a full collision: n(n-1)/2 probes more");
    }

    /// @dev Fixed: an index no tree can have (`leaf + 1` wrapped for type(uint256).max, and ids from 2^66 on
    /// read another node's lane) is refused before the set sees it.
    function test_MaxLeafRepeatRefused() public {
        for (uint256 i = 0; i < 3; ++i) {
            uint256 x = [uint256(4 ** 16), type(uint64).max, type(uint256).max][i];
            vm.expectRevert(abi.encodeWithSelector(SnapshotSumTree.ExclusionOutOfRange.selector, x));
            tree.sampleAt(2, 2, 0, _list2(x, x));
        }
    }

    function _in(uint256[] memory ex, uint256 x) internal pure returns (bool) {
        for (uint256 i = 0; i < ex.length; ++i) {
            if (ex[i] == x) return true;
        }
        return false;
    }

    /// @dev `n` ids from `from` on whose keccak256 (as `_markSeen` hashes them, keyed with the sample value
    /// 0 these tests use: an attacker staking leaves cannot know the draw's values) agree modulo `slots`.
    function _sameHome(uint256 n, uint256 slots, uint256 from) internal pure returns (uint256[] memory ids) {
        ids = new uint256[](n);
        uint256 k = 0;
        for (uint256 x = from; k < n; ++x) {
            uint256 h;
            assembly ("memory-safe") {
                mstore(0x00, x)
                mstore(0x20, 0)
                h := keccak256(0x00, 0x40)
            }
            if (h & (slots - 1) == 0) ids[k++] = x;
        }
    }
}
