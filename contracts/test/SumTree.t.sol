// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase} from "./utils/TestBase.sol";
import {SumTree} from "../src/libraries/SumTree.sol";

/// @dev Exposes the library so reverts surface as calls.
contract SumTreeHarness {
    using SumTree for SumTree.Tree;

    SumTree.Tree private _tree;

    function set(address member, uint256 weight) external {
        _tree.set(member, weight);
    }

    function total() external view returns (uint256) {
        return _tree.total();
    }

    function weightOf(address member) external view returns (uint256) {
        return _tree.weightOf(member);
    }

    function size() external view returns (uint256) {
        return _tree.leafCount();
    }

    function sample(uint256 value) external view returns (address) {
        return _tree.sample(value);
    }
}

contract SumTreeTest is TestBase {
    SumTreeHarness internal tree;

    function setUp() public {
        tree = new SumTreeHarness();
    }

    function _member(uint256 i) internal pure returns (address) {
        return address(uint160(0x1000 + i));
    }

    function test_emptyTree() public {
        assertEq(tree.total(), 0, "empty total");
        vm.expectRevert(abi.encodeWithSelector(SumTree.SampleOutOfRange.selector, 0, 0));
        tree.sample(0);
    }

    function test_zeroWeightAllocatesNothing() public {
        tree.set(_member(1), 0);
        assertEq(tree.size(), 0, "no leaf for zero weight");
    }

    function test_setUpdateAndGrow() public {
        for (uint256 i = 0; i < 70; ++i) {
            tree.set(_member(i), i + 1);
        }
        assertEq(tree.size(), 70, "size");
        assertEq(tree.total(), 70 * 71 / 2, "total after growth over three levels");
        tree.set(_member(5), 100);
        assertEq(tree.weightOf(_member(5)), 100, "updated weight");
        assertEq(tree.total(), 70 * 71 / 2 - 6 + 100, "total after update");
        tree.set(_member(5), 0);
        assertEq(tree.size(), 70, "zeroed member keeps its leaf");
        assertEq(tree.total(), 70 * 71 / 2 - 6, "total after zeroing");
    }

    function test_sampleBoundaries() public {
        tree.set(_member(0), 3);
        tree.set(_member(1), 0);
        tree.set(_member(2), 5);
        tree.set(_member(3), 2);
        tree.set(_member(4), 4);
        assertEq(tree.sample(0), _member(0), "first");
        assertEq(tree.sample(2), _member(0), "end of first");
        assertEq(tree.sample(3), _member(2), "zero-weight member skipped");
        assertEq(tree.sample(7), _member(2), "end of third");
        assertEq(tree.sample(8), _member(3), "fourth");
        assertEq(tree.sample(10), _member(4), "fifth, second slot");
        assertEq(tree.sample(13), _member(4), "last value");
        vm.expectRevert(abi.encodeWithSelector(SumTree.SampleOutOfRange.selector, 14, 14));
        tree.sample(14);
    }

    function test_weightOverflowReverts() public {
        tree.set(_member(0), type(uint64).max);
        vm.expectRevert(SumTree.WeightOverflow.selector);
        tree.set(_member(1), 1);
    }

    /// @dev Any sequence of updates keeps total == sum of weights and every sample lands on a
    /// member whose cumulative interval contains the value.
    function testFuzz_totalsAndIntervals(uint256 seed) public {
        uint256 n = bound(seed, 1, 40);
        uint256[] memory w = new uint256[](n);
        uint256 sum = 0;
        for (uint256 i = 0; i < n; ++i) {
            w[i] = uint256(keccak256(abi.encode(seed, i))) % 1000;
            tree.set(_member(i), w[i]);
            sum += w[i];
        }
        uint256 changed = seed % n;
        sum = sum - w[changed] + 7;
        w[changed] = 7;
        tree.set(_member(changed), 7);
        assertEq(tree.total(), sum, "total");
        uint256 value = uint256(keccak256(abi.encode(seed, "v"))) % sum;
        address got = tree.sample(value);
        uint256 acc = 0;
        address expected;
        for (uint256 i = 0; i < n; ++i) {
            if (value < acc + w[i]) {
                expected = _member(i);
                break;
            }
            acc += w[i];
        }
        assertEq(got, expected, "sampled member");
    }

    /// @dev Statistical check: 4000 draws over weights 1..8; each member's count must lie within
    /// 5 standard deviations of n * p (binomial), a tolerance a correct sampler fails with
    /// probability < 1e-5 per member.
    function test_frequenciesProportionalToWeight() public {
        uint256 members = 8;
        uint256 totalW = 0;
        for (uint256 i = 0; i < members; ++i) {
            tree.set(_member(i), (i + 1) * 1e6);
            totalW += (i + 1) * 1e6;
        }
        uint256 draws = 4000;
        uint256[] memory counts = new uint256[](members);
        for (uint256 d = 0; d < draws; ++d) {
            address a = tree.sample(uint256(keccak256(abi.encode("draw", d))) % totalW);
            counts[uint160(a) - 0x1000] += 1;
        }
        for (uint256 i = 0; i < members; ++i) {
            uint256 pNum = (i + 1) * 1e6;
            uint256 expected = draws * pNum / totalW;
            // variance = n p (1 - p); 5 sigma, integer sqrt
            uint256 variance = draws * pNum * (totalW - pNum) / totalW / totalW;
            uint256 tol = 5 * _sqrt(variance) + 1;
            uint256 c = counts[i];
            assertTrue(c + tol >= expected && c <= expected + tol, "frequency outside 5 sigma");
        }
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
