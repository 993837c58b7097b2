// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase} from "./utils/TestBase.sol";
import {TrustToken} from "../src/TrustToken.sol";
import {Treasury} from "../src/Treasury.sol";
import {Staking} from "../src/Staking.sol";
import {AuditorRegistry} from "../src/AuditorRegistry.sol";
import {IStaking} from "../src/interfaces/IStaking.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";

/// @dev This test contract plays the session contract, so it can lock and settle directly.
contract StakingTest is TestBase {
    TrustToken internal token;
    Treasury internal treasury;
    Staking internal staking;
    AuditorRegistry internal registry;
    address internal owner = address(0x0A11);
    address internal alice = address(0xA1);
    address internal bob = address(0xB0);
    address internal carol = address(0xC0);

    function _params() internal pure returns (Staking.StakingParams memory p) {
        p.minStake = [uint96(100e18), uint96(100e18), uint96(100e18)];
        p.cooldown = 1 days;
        p.commissionDelay = 2 days;
        p.initialReputation = 0.5e18;
        p.reputationFloor = 0.5e18;
        p.maxCommissionBps = 2000;
    }

    function setUp() public {
        token = new TrustToken(address(this), 1e9 * 1e18);
        treasury = new Treasury(token, owner);
        staking = new Staking(token, owner, address(treasury), _params());
        registry = new AuditorRegistry(IStaking(address(staking)), owner);
        vm.prank(owner);
        staking.wire(address(registry), address(this));
        address[3] memory people = [alice, bob, carol];
        for (uint256 i = 0; i < 3; ++i) {
            token.transfer(people[i], 10_000e18);
            vm.prank(people[i]);
            token.approve(address(staking), type(uint256).max);
        }
        vm.prank(alice);
        registry.register(1, 3, bytes32("alice-key"));
    }

    function _delta(address a, uint256 reward, uint256 unlock, uint256 slash, uint256 rep)
        internal
        pure
        returns (IStaking.SettlementDelta[] memory d)
    {
        d = new IStaking.SettlementDelta[](1);
        d[0] = IStaking.SettlementDelta({
            auditor: a,
            reward: uint96(reward),
            unlock: uint96(unlock),
            slash: uint96(slash),
            reputation: uint64(rep)
        });
    }

    function _assets(address a) internal view returns (uint256 assets) {
        (assets,,,,,,) = staking.poolOf(a);
    }

    function _redeem(uint256 shares, uint256 assets, uint256 totalShares) internal pure returns (uint256) {
        return shares * (assets + 1) / (totalShares + 1);
    }

    function test_constructorAndWireChecks() public {
        Staking.StakingParams memory p = _params();
        vm.expectRevert(Staking.ZeroAddress.selector);
        new Staking(token, owner, address(0), p);
        p.initialReputation = 2e18;
        vm.expectRevert(Staking.InvalidParams.selector);
        new Staking(token, owner, address(treasury), p);
        vm.prank(owner);
        vm.expectRevert(Staking.AlreadyWired.selector);
        staking.wire(address(1), address(2));
        Staking fresh = new Staking(token, owner, address(treasury), _params());
        vm.prank(owner);
        vm.expectRevert(Staking.ZeroAddress.selector);
        fresh.wire(address(0), address(2));
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, address(this)));
        fresh.wire(address(1), address(2));
    }

    function test_stakeAndDelegateBuyShares() public {
        vm.prank(alice);
        uint256 s1 = staking.stake(alice, 1000e18);
        assertEq(s1, 1000e18, "first stake 1:1");
        vm.prank(bob);
        uint256 s2 = staking.stake(alice, 500e18);
        assertEq(s2, 500e18, "delegation at the same price");
        assertEq(staking.sharesOf(alice, bob), 500e18, "bob's shares");
        assertEq(_assets(alice), 1500e18, "pool assets");
        assertEq(staking.totalPooled(), 1500e18, "total pooled");
        assertEq(staking.weightOf(alice), 1500e18 * 1e18 / 1e18 / 1e12, "weight = assets * (r0 + floor)");
        assertEq(staking.totalWeight(1), staking.weightOf(alice), "tier total");
        vm.expectRevert(Staking.ZeroAmount.selector);
        staking.stake(alice, 0);
        vm.expectRevert(abi.encodeWithSelector(Staking.NotRegistered.selector, carol));
        vm.prank(bob);
        staking.stake(carol, 1e18);
    }

    function test_belowMinimumStakeHasNoWeight() public {
        vm.prank(alice);
        staking.stake(alice, 99e18);
        assertEq(staking.weightOf(alice), 0, "below min stake");
        vm.prank(alice);
        staking.stake(alice, 1e18);
        assertTrue(staking.weightOf(alice) > 0, "at min stake");
        assertTrue(!staking.lock(bob, 1, 1), "unregistered cannot back a seat");
    }

    function test_rewardsAndSlashesSharedProRata() public {
        vm.prank(alice);
        staking.stake(alice, 1000e18);
        vm.prank(bob);
        staking.stake(alice, 3000e18);
        vm.prank(alice);
        staking.setCommission(1000);
        vm.warp(block.timestamp + 2 days);
        token.transfer(address(staking), 100e18);
        uint256 walletBefore = token.balanceOf(alice);
        staking.applySettlements(_delta(alice, 100e18, 0, 0, 0.6e18));
        assertEq(token.balanceOf(alice) - walletBefore, 10e18, "commission paid to the auditor");
        assertEq(_assets(alice), 4090e18, "90 into the pool");
        assertEq(staking.previewRedeem(alice, 3000e18), _redeem(3000e18, 4090e18, 4000e18), "bob gains 3/4");
        assertEq(staking.reputationOf(alice), 0.6e18, "reputation set");
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        staking.applySettlements(_delta(alice, 0, 0, 409e18, 0.5e18));
        assertEq(token.balanceOf(address(treasury)) - treasuryBefore, 409e18, "slash to treasury");
        assertEq(_assets(alice), 3681e18, "pool shrinks");
        assertEq(staking.previewRedeem(alice, 1000e18), _redeem(1000e18, 3681e18, 4000e18), "alice loses 1/4");
    }

    function test_slashCappedAtAssets() public {
        vm.prank(alice);
        staking.stake(alice, 100e18);
        assertTrue(staking.lock(alice, 1, 80e18), "lock");
        staking.applySettlements(_delta(alice, 0, 80e18, 500e18, 0));
        assertEq(_assets(alice), 0, "drained, not negative");
        assertEq(staking.totalPooled(), 0, "total pooled");
        assertEq(staking.weightOf(alice), 0, "no weight");
    }

    function test_lockBlocksWithdrawalUntilUnlocked() public {
        vm.prank(alice);
        staking.stake(alice, 200e18);
        assertTrue(staking.lock(alice, 1, 150e18), "lock 150");
        assertTrue(!staking.lock(alice, 1, 60e18), "cannot lock beyond assets");
        assertTrue(!staking.lock(alice, 2, 1e18), "wrong tier");
        vm.prank(alice);
        vm.expectRevert(abi.encodeWithSelector(Staking.StakeLocked.selector, 100e18, 50e18));
        staking.requestWithdrawal(alice, 100e18);
        staking.applySettlements(_delta(alice, 0, 150e18, 0, 0.5e18));
        vm.prank(alice);
        staking.requestWithdrawal(alice, 100e18);
        assertEq(_assets(alice), 100e18, "withdrawn part left the pool");
    }

    function test_withdrawalCooldownAndClaim() public {
        vm.prank(alice);
        staking.stake(alice, 1000e18);
        vm.prank(bob);
        staking.stake(alice, 1000e18);
        vm.prank(bob);
        vm.expectRevert(abi.encodeWithSelector(Staking.InsufficientShares.selector, 2000e18, 1000e18));
        staking.requestWithdrawal(alice, 2000e18);
        vm.expectRevert(Staking.ZeroAmount.selector);
        staking.requestWithdrawal(alice, 0);
        vm.prank(bob);
        uint256 id = staking.requestWithdrawal(alice, 400e18);
        assertEq(staking.pendingWithdrawals(), 400e18, "pending");
        assertEq(staking.withdrawalCount(), 1, "count");
        vm.prank(bob);
        vm.expectRevert(
            abi.encodeWithSelector(Staking.WithdrawalNotReady.selector, id, block.timestamp + 1 days)
        );
        staking.claimWithdrawal(id);
        vm.warp(block.timestamp + 1 days);
        vm.prank(carol);
        vm.expectRevert(abi.encodeWithSelector(Staking.NotWithdrawalOwner.selector, id));
        staking.claimWithdrawal(id);
        // Paused: claims still work.
        vm.prank(owner);
        staking.pause();
        uint256 before = token.balanceOf(bob);
        vm.prank(bob);
        staking.claimWithdrawal(id);
        assertEq(token.balanceOf(bob) - before, 400e18, "claimed");
        vm.prank(bob);
        vm.expectRevert(abi.encodeWithSelector(Staking.AlreadyClaimed.selector, id));
        staking.claimWithdrawal(id);
        vm.expectRevert(abi.encodeWithSelector(Staking.UnknownWithdrawal.selector, 7));
        staking.claimWithdrawal(7);
        vm.expectRevert(abi.encodeWithSelector(Staking.UnknownWithdrawal.selector, 7));
        staking.withdrawalOf(7);
        assertEq(staking.withdrawalOf(id).amount, 400e18, "record");
        vm.prank(bob);
        vm.expectRevert(Pausable.EnforcedPause.selector);
        staking.stake(alice, 1e18);
    }

    function test_commissionChangeWaitsForDelay() public {
        vm.prank(alice);
        vm.expectRevert(abi.encodeWithSelector(Staking.CommissionTooHigh.selector, 2001, 2000));
        staking.setCommission(2001);
        vm.prank(carol);
        vm.expectRevert(abi.encodeWithSelector(Staking.NotRegistered.selector, carol));
        staking.setCommission(10);
        vm.prank(alice);
        staking.setCommission(500);
        (,,,, uint256 bps,,) = staking.poolOf(alice);
        assertEq(bps, 0, "not yet");
        vm.warp(block.timestamp + 2 days);
        (,,,, bps,,) = staking.poolOf(alice);
        assertEq(bps, 500, "effective after the delay");
        vm.prank(alice);
        staking.setCommission(100);
        (,,,, bps,,) = staking.poolOf(alice);
        assertEq(bps, 500, "old rate until the new one is due");
        vm.warp(block.timestamp + 2 days);
        (,,,, bps,,) = staking.poolOf(alice);
        assertEq(bps, 100, "new rate");
    }

    function test_onlyRegistryAndSessions() public {
        vm.prank(bob);
        vm.expectRevert(Staking.NotSessions.selector);
        staking.lock(alice, 1, 1);
        vm.prank(bob);
        vm.expectRevert(Staking.NotSessions.selector);
        staking.applySettlements(_delta(alice, 0, 0, 0, 0));
        vm.expectRevert(Staking.NotRegistry.selector);
        staking.onRegister(bob, 1);
        vm.expectRevert(Staking.NotRegistry.selector);
        staking.onDeregister(alice);
        vm.expectRevert(abi.encodeWithSelector(Staking.InvalidTier.selector, 3));
        staking.totalWeight(3);
    }

    function test_paramsAndTreasury() public {
        Staking.StakingParams memory p = _params();
        p.cooldown = 31 days;
        vm.prank(owner);
        vm.expectRevert(Staking.InvalidParams.selector);
        staking.setParams(p);
        p = _params();
        p.minStake[2] = uint96(2e27);
        vm.prank(owner);
        vm.expectRevert(Staking.InvalidParams.selector);
        staking.setParams(p);
        p = _params();
        p.minStake[1] = 5000e18;
        vm.prank(owner);
        staking.setParams(p);
        assertEq(staking.params().minStake[1], 5000e18, "stored");
        vm.prank(alice);
        staking.stake(alice, 1000e18);
        assertEq(staking.weightOf(alice), 0, "below the raised minimum");
        vm.prank(owner);
        vm.expectRevert(Staking.ZeroAddress.selector);
        staking.setTreasury(address(0));
        vm.prank(owner);
        staking.setTreasury(address(0xBEEF));
        assertEq(staking.treasury(), address(0xBEEF), "treasury");
        vm.prank(owner);
        vm.expectRevert(Pausable.ExpectedPause.selector);
        staking.unpause();
    }

    function test_pokeRefreshesAfterParamChange() public {
        vm.prank(alice);
        staking.stake(alice, 1000e18);
        uint256 w = staking.weightOf(alice);
        Staking.StakingParams memory p = _params();
        p.minStake[1] = 5000e18;
        vm.prank(owner);
        staking.setParams(p);
        assertEq(staking.weightOf(alice), w, "stale until poked");
        staking.poke(alice);
        assertEq(staking.weightOf(alice), 0, "refreshed");
    }

    function test_reputationScalesWeight() public {
        vm.prank(alice);
        staking.stake(alice, 1000e18);
        staking.applySettlements(_delta(alice, 0, 0, 0, 1e18));
        assertEq(staking.weightOf(alice), 1000e18 * 1.5e18 / 1e18 / 1e12, "r = 1");
        staking.applySettlements(_delta(alice, 0, 0, 0, 0));
        assertEq(staking.weightOf(alice), 1000e18 * 0.5e18 / 1e18 / 1e12, "r = 0 keeps the floor");
        address[] memory list = new address[](2);
        list[0] = alice;
        list[1] = bob;
        uint256[] memory reps = staking.reputationsOf(list);
        assertEq(reps[0], 0, "alice");
        assertEq(reps[1], 0, "bob unknown");
    }
}

contract AuditorRegistryTest is TestBase {
    TrustToken internal token;
    Staking internal staking;
    AuditorRegistry internal registry;
    address internal owner = address(0x0A11);
    address internal alice = address(0xA1);

    function setUp() public {
        token = new TrustToken(address(this), 1e9 * 1e18);
        Staking.StakingParams memory p;
        p.initialReputation = 0.5e18;
        p.reputationFloor = 0.5e18;
        staking = new Staking(token, owner, address(0xFEE), p);
        registry = new AuditorRegistry(IStaking(address(staking)), owner);
        vm.prank(owner);
        staking.wire(address(registry), address(this));
        token.transfer(alice, 1000e18);
        vm.prank(alice);
        token.approve(address(staking), type(uint256).max);
    }

    function test_registerUpdateDeregister() public {
        vm.expectRevert(AuditorRegistry.ZeroAddress.selector);
        new AuditorRegistry(IStaking(address(0)), owner);
        vm.startPrank(alice);
        vm.expectRevert(abi.encodeWithSelector(AuditorRegistry.InvalidTier.selector, 3));
        registry.register(3, 0, bytes32("k"));
        vm.expectRevert(AuditorRegistry.ZeroEncryptionKey.selector);
        registry.register(1, 0, bytes32(0));
        vm.expectRevert(abi.encodeWithSelector(AuditorRegistry.NotRegistered.selector, alice));
        registry.updateProfile(1, bytes32("k"));
        vm.expectRevert(abi.encodeWithSelector(AuditorRegistry.NotRegistered.selector, alice));
        registry.deregister();
        vm.expectEmit(true, false, false, true, address(registry));
        emit AuditorRegistry.AuditorRegistered(alice, 2, 5, bytes32("k"));
        registry.register(2, 5, bytes32("k"));
        vm.expectRevert(abi.encodeWithSelector(AuditorRegistry.AlreadyRegistered.selector, alice));
        registry.register(2, 5, bytes32("k"));
        staking.stake(alice, 500e18);
        assertTrue(staking.totalWeight(2) > 0, "in the human tree");
        vm.expectRevert(AuditorRegistry.ZeroEncryptionKey.selector);
        registry.updateProfile(1, bytes32(0));
        registry.updateProfile(7, bytes32("k2"));
        assertEq(registry.encryptionKeyOf(alice), bytes32("k2"), "key updated");
        assertEq(registry.profileOf(alice).expertise, 7, "expertise");
        registry.deregister();
        assertTrue(!registry.isRegistered(alice), "deregistered");
        assertEq(staking.totalWeight(2), 0, "out of sortition");
        // Stake stays withdrawable after deregistration.
        staking.requestWithdrawal(alice, 100e18);
        // Re-register in another tier: the weight moves trees.
        registry.register(1, 5, bytes32("k3"));
        vm.stopPrank();
        assertEq(staking.totalWeight(2), 0, "left the human tree");
        assertEq(staking.totalWeight(1), 400e18 / 1e12, "joined the LLM tree");
        assertEq(registry.auditorCount(), 1, "listed once");
        assertEq(registry.auditors(0, 10)[0], alice, "page");
        assertEq(registry.auditors(5, 10).length, 0, "empty page");
    }

    function test_pause() public {
        vm.prank(alice);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, alice));
        registry.pause();
        vm.prank(owner);
        registry.pause();
        vm.prank(alice);
        vm.expectRevert(Pausable.EnforcedPause.selector);
        registry.register(1, 0, bytes32("k"));
        vm.prank(owner);
        registry.unpause();
        vm.prank(alice);
        registry.register(1, 0, bytes32("k"));
        assertTrue(registry.isRegistered(alice), "registered after unpause");
    }
}
