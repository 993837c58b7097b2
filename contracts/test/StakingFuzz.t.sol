// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingTestBase} from "./mocks/StakingTestBase.sol";

/// @notice The delegation properties of issue 12 (3a, 3b, 4) and reputation order independence, with
/// fuzzed amounts, at the Staking level (the test contract is the draw and settlement module).
contract StakingFuzzTest is StakingTestBase {
    address internal alice = address(0xA1);
    address internal bob = address(0xB0);
    address internal dave = address(0xD0);

    function setUp() public {
        _deployStaking();
        _fund(alice, 10_000_000e18);
        _fund(bob, 10_000_000e18);
        _fund(dave, 10_000_000e18);
        _register(alice, 1);
        _register(dave, 1);
    }

    /// @dev 3a: a deposit made after the draw gets none of the session's reward; the shares that
    /// existed at the draw get all of it.
    function testFuzz_RewardsOnlyToDrawTimeShares(uint256 a0, uint256 d, uint256 reward) public {
        a0 = bound(a0, 100e18, 1_000_000e18);
        d = bound(d, 1e12, 5_000_000e18);
        reward = bound(reward, 0, 1_000_000e18);
        _stake(alice, alice, a0);
        uint256 e = _lock(alice, 1, 100e18, 0);
        _stake(bob, alice, d);
        _resolve(alice, 1, e, reward, 0);
        // Rounding costs at most a couple of shares, each worth (a0 + reward) / a0 wei.
        uint256 tol = 3 + 2 * (a0 + reward) / a0;
        _assertNear(_value(alice, bob), d, tol, "the late deposit is worth its amount");
        _assertNear(_value(alice, alice), a0 + reward, tol, "the draw-time shares got it all");
        _assertConservation();
    }

    /// @dev 3b: shares queued for withdrawal after the draw bear the slash exactly like the others.
    function testFuzz_SlashesReachExitingShares(uint256 a0, uint256 b0, uint256 slash, uint256 pct) public {
        a0 = bound(a0, 100e18, 1_000_000e18);
        b0 = bound(b0, 1e18, 1_000_000e18);
        pct = bound(pct, 1, 100);
        _stake(alice, alice, a0);
        _stake(bob, alice, b0);
        uint256 locked = a0 + b0;
        uint256 e = _lock(alice, 1, locked, 0);
        slash = bound(slash, 0, locked * 999 / 1000);
        uint256 exitShares = staking.sharesOf(alice, alice) * pct / 100;
        uint256 id = _withdraw(alice, alice, exitShares);
        _resolve(alice, 1, e, 0, slash);
        _checkEqualLoss(id, exitShares, locked, locked - slash);
        _assertConservation();
    }

    /// @dev Each share lost the same fraction: the exiting ones and the delegator's alike.
    function _checkEqualLoss(uint256 id, uint256 exitShares, uint256 before, uint256 left) internal view {
        (, uint256 amount,) = staking.withdrawalOf(id);
        uint256 expected = exitShares * left / before;
        _assertNear(amount, expected, 2 + expected / 1e15, "exiting shares bore the slash");
        expected = staking.sharesOf(alice, bob) * left / before;
        _assertNear(_value(alice, bob), expected, 2 + expected / 1e15, "so did the delegator's");
    }

    /// @dev 4: the commission in force at the first seat is the one charged, whatever happens later.
    function testFuzz_CommissionFixedAtDraw(uint256 bps1, uint256 bps2, uint256 reward) public {
        bps1 = bound(bps1, 0, 2000);
        bps2 = bound(bps2, 0, 2000);
        reward = bound(reward, 0, 1_000_000e18);
        _stake(alice, alice, 1000e18);
        vm.prank(alice);
        staking.setCommission(bps1);
        vm.warp(block.timestamp + 2 days);
        uint256 e = _lock(alice, 1, 10e18, 0);
        vm.prank(alice);
        staking.setCommission(bps2);
        vm.warp(block.timestamp + 2 days);
        uint256 wallet = token.balanceOf(alice);
        uint256 assets = _pool(alice).assets;
        _resolve(alice, 1, e, reward, 0);
        assertEq(token.balanceOf(alice) - wallet, reward * bps1 / 10_000, "commission of the draw");
        assertEq(_pool(alice).assets - assets, reward - reward * bps1 / 10_000, "the rest to the pool");
    }

    /// @dev Reputation after n sessions is the composition in draw order, for any arrival order.
    function testFuzz_reputationIndependentOfArrivalOrder(uint256 seed) public {
        uint256 n = bound(seed, 2, 7);
        _stake(alice, alice, 1000e18);
        _stake(dave, dave, 1000e18);
        uint256[] memory mul = new uint256[](n);
        uint256[] memory add = new uint256[](n);
        uint256 expected = 0.5e18;
        for (uint256 k = 0; k < n; ++k) {
            uint256 r = uint256(keccak256(abi.encode(seed, k)));
            mul[k] = 0.5e18 + r % 0.5e18;
            add[k] = (r >> 128) % (WAD - mul[k] + 1);
            expected = expected * mul[k] / WAD + add[k];
            assertEq(_lock(alice, k + 1, 1e18, 0), k + 1, "alice's entry k");
            (bool ok,, uint256 e) = staking.lockSeat(dave, 1, k + 1, 1e18, 0);
            assertTrue(ok && e == k + 1, "dave's entry k");
        }
        uint256[] memory order = _shuffle(seed, n);
        for (uint256 i = 0; i < n; ++i) {
            uint256 k = order[i];
            staking.resolve(k + 1, _one(dave, k + 1, 0, 0, mul[k], add[k]));
            k = n - 1 - i;
            staking.resolve(k + 1, _one(alice, k + 1, 0, 0, mul[k], add[k]));
        }
        // Results beyond the side-drain bound wait for a drain.
        staking.drain(alice, 10);
        staking.drain(dave, 10);
        assertEq(staking.reputationOf(dave), expected, "shuffled arrival");
        assertEq(staking.reputationOf(alice), expected, "reverse arrival");
    }

    function _shuffle(uint256 seed, uint256 n) internal pure returns (uint256[] memory order) {
        order = new uint256[](n);
        for (uint256 k = 0; k < n; ++k) {
            order[k] = k;
        }
        for (uint256 k = n - 1; k > 0; --k) {
            uint256 j = uint256(keccak256(abi.encode(seed, "shuffle", k))) % (k + 1);
            (order[k], order[j]) = (order[j], order[k]);
        }
    }
}
