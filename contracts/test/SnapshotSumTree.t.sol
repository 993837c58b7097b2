// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase} from "./utils/TestBase.sol";
import {SnapshotSumTree} from "../src/libraries/SnapshotSumTree.sol";
import {SnapshotSumTreeHarness} from "./mocks/SnapshotSumTreeHarness.sol";

/// @dev forge's `cool` cheatcode (not in the shared TestBase): marks an account's storage cold.
interface CoolVm {
    function cool(address target) external;
}

/// @dev Reference model: leaf weights in allocation order, and the weights as they stood at the start
/// of each epoch. Sampling walks the leaves in order, skipping excluded ones.
abstract contract SnapshotModel is TestBase {
    SnapshotSumTreeHarness internal tree;
    uint256 internal epoch = 1;
    address[] internal leaves;
    mapping(address => uint256) internal leafPlusOne;
    uint256[] internal weights;
    mapping(uint256 => uint256[]) internal snapshotOf;
    mapping(uint256 => bool) internal taken;

    function _member(uint256 i) internal pure returns (address) {
        return address(uint160(0x1000 + i));
    }

    /// @dev Record the start of the current epoch before its first write.
    function _takeSnapshot() internal {
        if (taken[epoch]) return;
        taken[epoch] = true;
        snapshotOf[epoch] = weights;
    }

    function _set(address member, uint256 weight) internal {
        _takeSnapshot();
        tree.set(member, weight, epoch);
        uint256 p = leafPlusOne[member];
        if (p == 0) {
            if (weight == 0) return;
            leaves.push(member);
            weights.push(weight);
            leafPlusOne[member] = leaves.length;
        } else {
            weights[p - 1] = weight;
        }
    }

    function _advance(uint256 epochs) internal {
        _takeSnapshot();
        for (uint256 e = 1; e <= epochs; ++e) {
            // Nothing is written in skipped epochs: they start with the current weights.
            taken[epoch + e] = true;
            snapshotOf[epoch + e] = weights;
        }
        epoch += epochs;
    }

    /// @dev Snapshot weights of the start of `e` (leaves allocated later weigh 0 there).
    function _snapshotWeight(uint256 e, uint256 leaf) internal view returns (uint256) {
        uint256[] storage s = snapshotOf[e];
        return leaf < s.length ? s[leaf] : 0;
    }

    function _snapshotTotal(uint256 e) internal view returns (uint256 t) {
        uint256[] storage s = snapshotOf[e];
        for (uint256 i = 0; i < s.length; ++i) {
            t += s[i];
        }
    }

    function _isExcluded(uint256[] memory ex, uint256 leaf) internal pure returns (bool) {
        for (uint256 i = 0; i < ex.length; ++i) {
            if (ex[i] == leaf) return true;
        }
        return false;
    }

    /// @dev Remaining snapshot weight of `e` without `ex`.
    function _remaining(uint256 e, uint256[] memory ex) internal view returns (uint256 r) {
        r = _snapshotTotal(e);
        for (uint256 i = 0; i < ex.length; ++i) {
            r -= _snapshotWeight(e, ex[i]);
        }
    }

    function _expectedLeaf(uint256 e, uint256[] memory ex, uint256 value) internal view returns (uint256) {
        uint256[] storage s = snapshotOf[e];
        uint256 acc = 0;
        for (uint256 i = 0; i < s.length; ++i) {
            if (_isExcluded(ex, i)) continue;
            acc += s[i];
            if (value < acc) return i;
        }
        revert("value beyond the model's total");
    }

    /// @dev Check total, exclusions and one sample of the snapshot of `e` against the model.
    function _checkSnapshot(uint256 e, uint256 seed) internal view {
        assertEq(tree.totalAt(e, epoch), _snapshotTotal(e), "snapshot total");
        uint256 n = leaves.length;
        uint256 exCount = n == 0 ? 0 : seed % (n < 4 ? n : 4);
        uint256[] memory ex = new uint256[](exCount);
        for (uint256 i = 0; i < exCount; ++i) {
            ex[i] = (seed >> (8 * (i + 1))) % n;
            for (uint256 j = 0; j < i; ++j) {
                if (ex[j] == ex[i]) ex[i] = n + i; // a leaf that does not exist: weighs 0
            }
        }
        uint256 remaining = _remaining(e, ex);
        if (remaining == 0) return;
        uint256 value = uint256(keccak256(abi.encode(seed, e))) % remaining;
        (uint256 leaf, uint256 w) = tree.sampleAt(e, epoch, value, ex);
        uint256 expected = _expectedLeaf(e, ex, value);
        assertEq(leaf, expected, "sampled leaf");
        assertEq(w, _snapshotWeight(e, expected), "sampled weight");
        assertEq(tree.memberAt(leaf), leaves[leaf], "member of the leaf");
    }
}

contract SnapshotSumTreeTest is SnapshotModel {
    event log_named_uint(string key, uint256 val);

    function setUp() public {
        tree = new SnapshotSumTreeHarness();
    }

    function _none() internal pure returns (uint256[] memory) {
        return new uint256[](0);
    }

    function test_emptyTree() public {
        assertEq(tree.total(), 0, "empty total");
        assertEq(tree.totalAt(1, 1), 0, "empty snapshot");
        vm.expectRevert(abi.encodeWithSelector(SnapshotSumTree.SampleOutOfRange.selector, 0, 0));
        tree.sampleAt(1, 1, 0, _none());
        tree.set(_member(1), 0, 1);
        assertEq(tree.size(), 0, "no leaf for zero weight");
    }

    function test_snapshotIsStartOfEpoch() public {
        _set(_member(0), 10);
        _set(_member(1), 20);
        assertEq(tree.totalAt(1, 1), 0, "start of epoch 1: nothing yet");
        _advance(1);
        _set(_member(0), 100);
        _set(_member(2), 5);
        assertEq(tree.total(), 125, "current total");
        assertEq(tree.totalAt(2, 2), 30, "start of epoch 2");
        (uint256 leaf,) = tree.sampleAt(2, 2, 15, _none());
        assertEq(leaf, 1, "value 15 lands on member 1 in the snapshot");
        (leaf,) = tree.sampleAt(2, 2, 9, _none());
        assertEq(leaf, 0, "value 9 lands on member 0");
        vm.expectRevert(abi.encodeWithSelector(SnapshotSumTree.SampleOutOfRange.selector, 30, 30));
        tree.sampleAt(2, 2, 30, _none());
        _advance(1);
        assertEq(tree.totalAt(3, 3), 125, "start of epoch 3");
        assertEq(tree.totalAt(2, 3), 30, "epoch 2 still readable");
        assertEq(tree.leafWeightAt(2, 2, 3), 0, "leaf 2 did not exist at the start of epoch 2");
        assertEq(tree.leafWeightAt(2, 3, 3), 5, "leaf 2 at the start of epoch 3");
        assertEq(tree.leafWeightAt(7, 3, 3), 0, "beyond the last leaf");
    }

    function test_readableWindow() public {
        for (uint256 e = 1; e <= 6; ++e) {
            _set(_member(e % 3), e * 7);
            _set(_member(3), e);
            if (e < 6) _advance(1);
        }
        // current epoch 6: epochs 4, 5 and 6 are readable.
        for (uint256 e = 4; e <= 6; ++e) {
            _checkSnapshot(e, e * 31);
        }
        vm.expectRevert(abi.encodeWithSelector(SnapshotSumTree.SnapshotUnavailable.selector, 3, 6));
        tree.totalAt(3, 6);
        vm.expectRevert(abi.encodeWithSelector(SnapshotSumTree.SnapshotUnavailable.selector, 7, 6));
        tree.totalAt(7, 6);
        vm.expectRevert(abi.encodeWithSelector(SnapshotSumTree.SnapshotUnavailable.selector, 0, 6));
        tree.sampleAt(0, 6, 0, _none());
        vm.expectRevert(abi.encodeWithSelector(SnapshotSumTree.SnapshotUnavailable.selector, 3, 6));
        tree.leafWeightAt(0, 3, 6);
    }

    function test_sameEpochWritesLeaveSnapshot() public {
        _set(_member(0), 40);
        _set(_member(1), 60);
        _advance(1);
        for (uint256 i = 1; i <= 12; ++i) {
            _set(_member(i % 2), i * 1000);
            assertEq(tree.totalAt(2, 2), 100, "snapshot unchanged by writes in its epoch");
        }
        _advance(2);
        assertEq(tree.totalAt(2, 4), 100, "still readable two epochs later");
        _checkSnapshot(3, 5);
    }

    function test_growthKeepsOldSnapshots() public {
        _set(_member(0), 3);
        _set(_member(1), 5);
        _set(_member(2), 7);
        _advance(1);
        for (uint256 i = 3; i < 70; ++i) {
            _set(_member(i), i);
        }
        _set(_member(1), 500);
        assertEq(tree.depth(), 4, "grew from one to four levels");
        assertEq(tree.totalAt(2, 2), 15, "snapshot before the growth");
        for (uint256 v = 0; v < 15; ++v) {
            (uint256 leaf,) = tree.sampleAt(2, 2, v, _none());
            assertEq(leaf, v < 3 ? 0 : v < 8 ? 1 : 2, "every value of the old snapshot");
        }
        _advance(1);
        _set(_member(80), 9);
        _set(_member(5), 0);
        for (uint256 s = 0; s < 20; ++s) {
            _checkSnapshot(2, s);
            _checkSnapshot(3, s + 100);
        }
    }

    /// @dev The repeat check is a hash set (outside review 12): any list of distinct leaves is accepted, and one
    /// repeated leaf, at any two positions of a list up to 300 long, is refused by its index.
    function testFuzz_repeatedExclusionRefusedAnywhere(uint256 seed, uint256 lengthIn, uint256 i, uint256 j)
        public
    {
        uint256 n = bound(lengthIn, 1, 300);
        for (uint256 k = 0; k < n + 1; ++k) {
            _set(_member(k), 1);
        }
        _advance(1);
        uint256[] memory ex = new uint256[](n);
        for (uint256 k = 0; k < n; ++k) {
            ex[k] = k; // distinct, shuffled below
        }
        for (uint256 k = n; k > 1; --k) {
            uint256 r = uint256(keccak256(abi.encode(seed, k))) % k;
            (ex[k - 1], ex[r]) = (ex[r], ex[k - 1]);
        }
        (, uint256 w) = tree.sampleAt(2, 2, 0, ex); // one leaf (n) left
        assertEq(w, 1, "the leaf left");
        if (n == 1) return;
        i = bound(i, 0, n - 1);
        j = bound(j, 0, n - 2);
        if (j >= i) ++j;
        ex[j] = ex[i];
        vm.expectRevert(abi.encodeWithSelector(SnapshotSumTree.DuplicateExclusion.selector, ex[i]));
        tree.sampleAt(2, 2, 0, ex);
    }

    function test_exclusionsRemoveSnapshotWeight() public {
        for (uint256 i = 0; i < 10; ++i) {
            _set(_member(i), 10 + i);
        }
        _advance(1);
        _set(_member(4), 1000); // after the snapshot: must not matter
        uint256[] memory ex = new uint256[](3);
        ex[0] = 4;
        ex[1] = 0;
        ex[2] = 9;
        uint256 remaining = _remaining(2, ex);
        assertEq(remaining, 145 - 14 - 10 - 19, "remaining weight");
        for (uint256 v = 0; v < remaining; ++v) {
            (uint256 leaf,) = tree.sampleAt(2, 2, v, ex);
            assertEq(leaf, _expectedLeaf(2, ex, v), "sample without the excluded leaves");
            assertTrue(leaf != 4 && leaf != 0 && leaf != 9, "never an excluded leaf");
        }
        vm.expectRevert(
            abi.encodeWithSelector(SnapshotSumTree.SampleOutOfRange.selector, remaining, remaining)
        );
        tree.sampleAt(2, 2, remaining, ex);
        ex[2] = 4;
        vm.expectRevert(abi.encodeWithSelector(SnapshotSumTree.DuplicateExclusion.selector, 4));
        tree.sampleAt(2, 2, 0, ex);
        // Excluding every leaf leaves nothing to draw.
        uint256[] memory all = new uint256[](10);
        for (uint256 i = 0; i < 10; ++i) {
            all[i] = i;
        }
        vm.expectRevert(abi.encodeWithSelector(SnapshotSumTree.SampleOutOfRange.selector, 0, 0));
        tree.sampleAt(2, 2, 0, all);
    }

    function test_laneBounds() public {
        uint256 max = SnapshotSumTree.LANE_MAX;
        vm.expectRevert(SnapshotSumTree.WeightOverflow.selector);
        tree.set(_member(0), max + 1, 1);
        for (uint256 i = 0; i < 5; ++i) {
            tree.set(_member(i), 1, 1);
        }
        assertEq(tree.depth(), 2, "two levels");
        tree.set(_member(0), max - 4, 1);
        assertEq(tree.total(), max, "the total may fill a lane exactly");
        vm.expectRevert(SnapshotSumTree.WeightOverflow.selector);
        tree.set(_member(5), 1, 1);
        vm.expectRevert(SnapshotSumTree.WeightOverflow.selector);
        tree.set(_member(4), 2, 2);
        tree.set(_member(4), 0, 2);
        assertEq(tree.total(), max - 1, "room again");
        assertEq(tree.totalAt(2, 2), max, "full snapshot readable");
        (uint256 leaf,) = tree.sampleAt(2, 2, max - 1, new uint256[](0));
        assertEq(leaf, 4, "last unit of a full snapshot");
    }

    /// @dev Random writes over random epochs: every readable snapshot matches the model exactly.
    function testFuzz_snapshotsMatchModel(uint256 seed) public {
        uint256 steps = bound(seed, 10, 60);
        for (uint256 s = 0; s < steps; ++s) {
            uint256 r = uint256(keccak256(abi.encode(seed, s)));
            if (r % 5 == 0) {
                _advance(1 + (r >> 8) % 2);
            } else {
                uint256 w = (r >> 16) % 4 == 0 ? 0 : (r >> 24) % 1e12;
                _set(_member((r >> 8) % 24), w);
            }
        }
        _takeSnapshot();
        for (uint256 e = epoch > 2 ? epoch - 2 : 1; e <= epoch; ++e) {
            for (uint256 k = 0; k < 4; ++k) {
                _checkSnapshot(e, uint256(keccak256(abi.encode(seed, e, k))));
            }
        }
    }

    /// @notice Review 13 (the live count admission reads): random writes, weights often crossing 0, over random
    /// epochs: the live count at the start of every readable epoch is exactly the number of leaves with
    /// non-zero weight in the model's snapshot of that epoch.
    function testFuzz_liveCountMatchesModel(uint256 seed) public {
        uint256 steps = bound(seed, 10, 80);
        for (uint256 s = 0; s < steps; ++s) {
            uint256 r = uint256(keccak256(abi.encode(seed, s)));
            if (r % 5 == 0) {
                _advance(1 + (r >> 8) % 2);
            } else {
                uint256 w = (r >> 16) % 3 == 0 ? 0 : 1 + (r >> 24) % 1e12;
                _set(_member((r >> 8) % 24), w);
            }
        }
        _takeSnapshot();
        for (uint256 e = epoch > 2 ? epoch - 2 : 1; e <= epoch; ++e) {
            uint256 n = 0;
            uint256[] memory snap = snapshotOf[e];
            for (uint256 i = 0; i < snap.length; ++i) {
                if (snap[i] != 0) ++n;
            }
            assertEq(tree.liveAt(e, epoch), n, "live count of the snapshot");
        }
    }

    /// @dev A sample of a snapshot never changes whatever is written afterwards.
    function testFuzz_laterWritesNeverMoveASample(uint256 seed) public {
        for (uint256 i = 0; i < 12; ++i) {
            _set(_member(i), 1 + uint256(keccak256(abi.encode(seed, i))) % 1e9);
        }
        _advance(1);
        uint256 e = epoch;
        uint256 t = tree.totalAt(e, e);
        uint256[] memory values = new uint256[](8);
        uint256[] memory before = new uint256[](8);
        for (uint256 k = 0; k < 8; ++k) {
            values[k] = uint256(keccak256(abi.encode(seed, "v", k))) % t;
            (before[k],) = tree.sampleAt(e, e, values[k], _none());
        }
        for (uint256 step = 0; step < 3; ++step) {
            for (uint256 i = 0; i < 20; ++i) {
                uint256 r = uint256(keccak256(abi.encode(seed, step, i)));
                _set(_member(r % 30), (r >> 8) % 3 == 0 ? 0 : (r >> 16) % 1e10);
            }
            for (uint256 k = 0; k < 8; ++k) {
                (uint256 now_,) = tree.sampleAt(e, epoch, values[k], _none());
                assertEq(now_, before[k], "a later write moved a snapshot sample");
            }
            if (step < 2) _advance(1);
        }
    }

    /// @dev 4000 draws from a snapshot taken before the weights were inverted: each member's count
    /// lies within 5 standard deviations of the snapshot share (binomial), never the current one.
    function test_frequenciesFollowTheSnapshot() public {
        uint256 members = 8;
        for (uint256 i = 0; i < members; ++i) {
            _set(_member(i), (i + 1) * 1e6);
        }
        _advance(1);
        for (uint256 i = 0; i < members; ++i) {
            _set(_member(i), (members - i) * 1e6);
        }
        uint256 totalW = tree.totalAt(2, 2);
        uint256 draws = 4000;
        uint256[] memory counts = new uint256[](members);
        uint256[] memory none = _none();
        for (uint256 d = 0; d < draws; ++d) {
            (uint256 leaf,) = tree.sampleAt(2, 2, uint256(keccak256(abi.encode("draw", d))) % totalW, none);
            counts[leaf] += 1;
        }
        for (uint256 i = 0; i < members; ++i) {
            uint256 pNum = (i + 1) * 1e6;
            uint256 expected = draws * pNum / totalW;
            uint256 variance = draws * pNum * (totalW - pNum) / totalW / totalW;
            uint256 tol = 5 * _sqrt(variance) + 1;
            assertTrue(
                counts[i] + tol >= expected && counts[i] <= expected + tol, "frequency outside 5 sigma"
            );
        }
    }

    /// @dev Gas of a tree write (bench figures, printed with -vv; never asserted). Storage is made cold
    /// before each measured write, as in a transaction of its own.
    function test_benchWriteGas() public {
        for (uint256 i = 0; i < 16; ++i) {
            tree.set(_member(i), 1e6 + i, 1);
        }
        // Fill every ring position once, as a tree in steady use has.
        for (uint256 e = 2; e <= 4; ++e) {
            for (uint256 i = 0; i < 16; ++i) {
                tree.set(_member(i), 1e6 + i + e, e);
            }
        }
        emit log_named_uint("depth (16 leaves)", tree.depth());
        CoolVm(address(vm)).cool(address(tree));
        emit log_named_uint("cold write, first to its nodes in the epoch", tree.setGas(_member(3), 5e6, 5));
        CoolVm(address(vm)).cool(address(tree));
        emit log_named_uint("cold write, nodes already written this epoch", tree.setGas(_member(2), 6e6, 5));
        CoolVm(address(vm)).cool(address(tree));
        emit log_named_uint("cold write, unchanged weight", tree.setGas(_member(2), 6e6, 5));
        CoolVm(address(vm)).cool(address(tree));
        emit log_named_uint("cold write, new ring slots (young tree)", tree.setGas(_member(20), 5e6, 5));
    }

    function _sqrt(uint256 x) internal pure returns (uint256 y) {
        if (x == 0) return 0;
        y = x;
        uint256 z = (x + 1) / 2;
        while (z < y) {
            y = z;
            z = (x / z + z) / 2;
        }
    }
}

/// @notice Random writes and epoch changes for the invariant fuzzer, mirrored in the model.
contract SnapshotTreeHandler is SnapshotModel {
    uint256 public calls;
    /// @dev Samples pinned at some snapshot: (epoch, value, leaf) must never change while readable.
    uint256[] public pinnedEpoch;
    uint256[] public pinnedValue;
    uint256[] public pinnedLeaf;

    constructor() {
        tree = new SnapshotSumTreeHarness();
    }

    function setWeight(uint256 who, uint256 weight) external {
        ++calls;
        uint256 w = weight % 5 == 0 ? 0 : weight % 1e13;
        _set(_member(who % 40), w);
    }

    function advance(uint256 epochs) external {
        ++calls;
        _advance(1 + epochs % 3);
    }

    function pin(uint256 seed) external {
        ++calls;
        _takeSnapshot();
        if (seed % 3 >= epoch) return;
        uint256 e = epoch - seed % 3;
        if (!taken[e]) return;
        uint256 t = _snapshotTotal(e);
        if (t == 0) return;
        uint256 value = uint256(keccak256(abi.encode(seed))) % t;
        (uint256 leaf,) = tree.sampleAt(e, epoch, value, new uint256[](0));
        pinnedEpoch.push(e);
        pinnedValue.push(value);
        pinnedLeaf.push(leaf);
    }

    function currentEpoch() external view returns (uint256) {
        return epoch;
    }

    function pinnedCount() external view returns (uint256) {
        return pinnedEpoch.length;
    }

    /// @dev The invariant checks, run in the handler where the model lives.
    function check(uint256 seed) external view {
        uint256 lo = epoch > 2 ? epoch - 2 : 1;
        for (uint256 e = lo; e <= epoch; ++e) {
            if (!taken[e]) continue;
            _checkSnapshot(e, uint256(keccak256(abi.encode(seed, e))));
        }
        uint256 n = pinnedEpoch.length;
        uint256 from = n > 16 ? n - 16 : 0;
        for (uint256 i = from; i < n; ++i) {
            uint256 e = pinnedEpoch[i];
            if (e + 2 < epoch) continue;
            (uint256 leaf,) = tree.sampleAt(e, epoch, pinnedValue[i], new uint256[](0));
            assertEq(leaf, pinnedLeaf[i], "a pinned snapshot sample moved");
        }
    }
}

contract SnapshotSumTreeInvariantTest is TestBase {
    SnapshotTreeHandler internal handler;

    function setUp() public {
        handler = new SnapshotTreeHandler();
    }

    function targetContracts() public view returns (address[] memory targets) {
        targets = new address[](1);
        targets[0] = address(handler);
    }

    /// forge-config: default.invariant.runs = 50
    /// forge-config: default.invariant.depth = 200
    function invariant_snapshotsMatchModelAndPinnedSamplesStay() public view {
        handler.check(handler.calls());
    }
}
