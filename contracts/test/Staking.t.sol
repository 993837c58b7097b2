// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingTestBase} from "./mocks/StakingTestBase.sol";
import {TestBase} from "./utils/TestBase.sol";
import {TrustToken} from "../src/TrustToken.sol";
import {Staking} from "../src/Staking.sol";
import {StakingLedger} from "../src/StakingLedger.sol";
import {SortitionTrees} from "../src/SortitionTrees.sol";
import {AuditorRegistry} from "../src/AuditorRegistry.sol";
import {IStaking} from "../src/interfaces/IStaking.sol";
import {ISortition} from "../src/interfaces/ISortition.sol";
import {SnapshotSumTree} from "../src/libraries/SnapshotSumTree.sol";
import {LedgerPacking} from "../src/libraries/LedgerPacking.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";

/// @dev This test contract is the draw module and the settlement module, so it locks and resolves directly.
contract StakingTest is StakingTestBase {
    address internal alice = address(0xA1);
    address internal bob = address(0xB0);
    address internal carol = address(0xC0);
    address internal dave = address(0xD0);

    function setUp() public {
        _deployStaking();
        address[4] memory people = [alice, bob, carol, dave];
        for (uint256 i = 0; i < 4; ++i) {
            _fund(people[i], 100_000e18);
        }
        _register(alice, 1);
    }

    // ------------------------------------------------------------ deployment

    function test_constructorAndWireChecks() public {
        StakingLedger.StakingParams memory p = _params();
        vm.expectRevert(Staking.ZeroAddress.selector);
        new Staking(token, owner, address(0), EPOCH_BLOCKS, p);
        vm.expectRevert(abi.encodeWithSelector(SortitionTrees.InvalidEpochBlocks.selector, 0));
        new Staking(token, owner, address(treasury), 0, p);
        vm.expectRevert(abi.encodeWithSelector(Staking.InvalidEpochBlocks.selector, 1e6 + 1));
        new Staking(token, owner, address(treasury), 1e6 + 1, p);
        TrustToken huge = new TrustToken(address(this), 1e29);
        vm.expectRevert(abi.encodeWithSelector(Staking.SupplyTooLarge.selector, 1e29));
        new Staking(huge, owner, address(treasury), EPOCH_BLOCKS, p);
        p.initialReputation = 2e18;
        vm.expectRevert(Staking.InvalidParams.selector);
        new Staking(token, owner, address(treasury), EPOCH_BLOCKS, p);
        vm.prank(owner);
        vm.expectRevert(Staking.AlreadyWired.selector);
        staking.wire(address(1), address(2), address(3));
        Staking fresh = new Staking(token, owner, address(treasury), EPOCH_BLOCKS, _params());
        vm.prank(owner);
        vm.expectRevert(Staking.ZeroAddress.selector);
        fresh.wire(address(1), address(0), address(3));
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, address(this)));
        fresh.wire(address(1), address(2), address(3));
        assertEq(fresh.sortition().epochBlocks(), EPOCH_BLOCKS, "trees deployed with the epoch length");
        assertEq(SortitionTrees(address(fresh.sortition())).staking(), address(fresh), "Staking writes them");
    }

    function test_onlyModulesRegistryAndStakingWrite() public {
        vm.prank(bob);
        vm.expectRevert(Staking.NotDrawModule.selector);
        staking.lockSeat(alice, 1, 1, 1, 0);
        vm.prank(bob);
        vm.expectRevert(Staking.NotSettlementModule.selector);
        staking.resolve(1, _one(alice, 1, 0, 0, WAD, 0));
        vm.expectRevert(Staking.NotRegistry.selector);
        staking.onRegister(bob, 1);
        vm.expectRevert(Staking.NotRegistry.selector);
        staking.onDeregister(alice);
        vm.expectRevert(abi.encodeWithSelector(Staking.InvalidTier.selector, 3));
        vm.prank(address(registry));
        staking.onRegister(bob, 3);
        SortitionTrees trees = SortitionTrees(address(staking.sortition()));
        vm.expectRevert(SortitionTrees.NotStaking.selector);
        trees.setWeight(1, bob, 0, 5);
        vm.expectRevert(abi.encodeWithSelector(SortitionTrees.InvalidTier.selector, 3));
        trees.totalWeight(3);
    }

    // ------------------------------------------------------- empty ledger

    function test_emptyLedgerAppliesAtOnce() public {
        (uint256 s1, uint256 f1) = _stake(alice, alice, 1000e18);
        assertEq(s1, 1000e18, "first stake 1:1");
        assertEq(f1, 0, "not queued");
        (uint256 s2,) = _stake(bob, alice, 500e18);
        assertEq(s2, 500e18, "delegation at the same price");
        Staking.PoolView memory p = _pool(alice);
        assertEq(p.assets, 1500e18, "assets");
        assertEq(p.backing, 1500e18, "backing");
        assertEq(staking.weightOf(alice), 1500e18 * 1e18 / 1e18 / 1e12, "weight = backing * (r0 + floor)");
        uint256 id = _withdraw(bob, alice, 200e18);
        (Staking.Withdrawal memory rec, uint256 amount, uint256 readyAt) = staking.withdrawalOf(id);
        assertEq(amount, 200e18, "redeemed at once");
        assertEq(readyAt, block.timestamp + 1 days, "cooldown from now");
        assertEq(rec.flow, 0, "not queued");
        assertEq(_pool(alice).assets, 1300e18, "left the pool");
        vm.prank(bob);
        vm.expectRevert(abi.encodeWithSelector(Staking.WithdrawalNotReady.selector, id, readyAt));
        staking.claimWithdrawal(id);
        vm.warp(readyAt);
        vm.prank(carol);
        vm.expectRevert(abi.encodeWithSelector(Staking.NotWithdrawalOwner.selector, id));
        staking.claimWithdrawal(id);
        uint256 before = token.balanceOf(bob);
        vm.prank(bob);
        staking.claimWithdrawal(id);
        assertEq(token.balanceOf(bob) - before, 200e18, "claimed");
        vm.prank(bob);
        vm.expectRevert(abi.encodeWithSelector(Staking.AlreadyClaimed.selector, id));
        staking.claimWithdrawal(id);
        vm.expectRevert(abi.encodeWithSelector(Staking.UnknownWithdrawal.selector, 9));
        staking.claimWithdrawal(9);
        vm.prank(bob);
        vm.expectRevert(abi.encodeWithSelector(Staking.InsufficientShares.selector, 301e18, 300e18));
        staking.requestWithdrawal(alice, 301e18);
        vm.expectRevert(Staking.ZeroAmount.selector);
        staking.stake(alice, 0);
        vm.prank(bob);
        vm.expectRevert(abi.encodeWithSelector(Staking.NotRegistered.selector, carol));
        staking.stake(carol, 1e18);
        _assertConservation();
    }

    // -------------------------------------------------------------- seats

    function test_lockSeatOpensOneEntryPerKey() public {
        _stake(alice, alice, 1000e18);
        vm.prank(alice);
        staking.setCommission(1000);
        vm.warp(block.timestamp + 2 days);
        (bool ok, uint64 rep, uint256 entry) = staking.lockSeat(alice, 1, 7, 100e18, 0);
        assertTrue(ok, "locked");
        assertEq(rep, 0.5e18, "reputation in force");
        assertEq(entry, 1, "first entry");
        (uint256 head, uint256 tail) = staking.ledgerOf(alice);
        assertEq(head, 1, "head");
        assertEq(tail, 2, "one entry");
        (uint256 word,) = staking.entryWordOf(alice, 1);
        (uint256 bps, uint256 r, uint256 locked, uint256 tag) = LedgerPacking.openFields(word);
        assertEq(bps, 1000, "commission recorded");
        assertEq(r, 0.5e18, "reputation recorded");
        assertEq(locked, 100e18, "locked in the entry");
        assertEq(tag, LedgerPacking.keyTag(7), "key tag");
        (ok, rep, entry) = staking.lockSeat(alice, 1, 7, 100e18, 1);
        assertTrue(ok && entry == 1 && rep == 0.5e18, "second seat, same entry");
        assertEq(_pool(alice).locked, 200e18, "pool locked");
        (, tail) = staking.ledgerOf(alice);
        assertEq(tail, 2, "still one entry");
        vm.expectRevert(abi.encodeWithSelector(Staking.EntryMismatch.selector, alice, 1));
        staking.lockSeat(alice, 1, 8, 1, 1);
        vm.expectRevert(abi.encodeWithSelector(Staking.EntryNotPending.selector, alice, 5));
        staking.lockSeat(alice, 1, 7, 1, 5);
        (ok,,) = staking.lockSeat(alice, 1, 9, 801e18, 0);
        assertTrue(!ok, "cannot back beyond its backing");
        (ok,,) = staking.lockSeat(alice, 2, 9, 1, 0);
        assertTrue(!ok, "wrong tier");
        (ok,,) = staking.lockSeat(bob, 1, 9, 1, 0);
        assertTrue(!ok, "not registered");
        (, tail) = staking.ledgerOf(alice);
        assertEq(tail, 2, "refusals change nothing");
        assertEq(_pool(alice).locked, 200e18, "refusals lock nothing");
    }

    function test_lockSeatRefusedBelowMinimumAndWhenLedgerFull() public {
        _stake(alice, alice, 99e18);
        (bool ok,,) = staking.lockSeat(alice, 1, 1, 1, 0);
        assertTrue(!ok, "below the minimum stake");
        _stake(alice, alice, 1e18);
        for (uint256 k = 1; k <= 256; ++k) {
            _lock(alice, k, 1, 0);
        }
        (ok,,) = staking.lockSeat(alice, 1, 999, 1, 0);
        assertTrue(!ok, "ledger full");
        vm.prank(bob);
        vm.expectRevert(abi.encodeWithSelector(StakingLedger.LedgerFull.selector, alice));
        staking.stake(alice, 1e18);
        _resolve(alice, 1, 1, 0, 0);
        (ok,,) = staking.lockSeat(alice, 1, 999, 1, 0);
        assertTrue(ok, "room again after the head applied");
    }

    // ------------------------------------------------------ ledger semantics

    /// @dev Property 3a: a deposit made after a session's draw backs the auditor at once but gets none
    /// of that session's reward.
    function test_RewardsOnlyToDrawTimeShares() public {
        _stake(alice, alice, 1000e18);
        uint256 e1 = _lock(alice, 1, 100e18, 0);
        (uint256 shares, uint256 flow) = _stake(bob, alice, 3000e18);
        assertEq(shares, 0, "queued, not shares yet");
        assertEq(flow, 2, "behind the session");
        (uint256 s, uint256 pending, uint256 pf) = staking.positionOf(alice, bob);
        assertEq(s, 0, "no shares while pending");
        assertEq(pending, 3000e18, "pending deposit");
        assertEq(pf, 2, "its entry");
        assertEq(_pool(alice).backing, 4000e18, "pending deposits back the auditor");
        assertEq(staking.weightOf(alice), 4000e18 / 1e12, "and weigh");
        uint256 e3 = _lock(alice, 3, 3500e18, 0);
        assertEq(e3, 3, "a later session can lock the pending stake");
        _resolve(alice, 1, e1, 100e18, 0);
        (uint256 head,) = staking.ledgerOf(alice);
        assertEq(head, 3, "session and deposit applied, the later session waits");
        _assertNear(_value(alice, alice), 1100e18, 1, "alice's shares took the whole reward");
        _assertNear(_value(alice, bob), 3000e18, 2, "bob's deposit got none of it");
        // The later session's reward falls on both, pro rata.
        _resolve(alice, 3, e3, 410e18, 0);
        _assertNear(_value(alice, alice), 1210e18, 2, "alice: 1100 + 1100/4100 * 410");
        _assertNear(_value(alice, bob), 3300e18, 2, "bob: 3000 + 3000/4100 * 410");
        _assertConservation();
    }

    /// @dev Property 3b: shares queued for withdrawal still bear the slash of a session drawn before.
    function test_SlashesReachExitingShares() public {
        _stake(alice, alice, 1000e18);
        _stake(bob, alice, 1000e18);
        uint256 e1 = _lock(alice, 1, 200e18, 0);
        uint256 id = _withdraw(alice, alice, 1000e18);
        (Staking.Withdrawal memory rec, uint256 amount,) = staking.withdrawalOf(id);
        assertEq(rec.flow, 2, "queued behind the session");
        assertEq(amount, 0, "nothing redeemed yet");
        assertEq(_pool(alice).backing, 1000e18, "exiting shares stop backing at once");
        assertEq(_pool(alice).exitingShares, 1000e18, "exiting shares");
        (bool ok,,) = staking.lockSeat(alice, 1, 2, 801e18, 0);
        assertTrue(!ok, "new locks see only the remaining backing");
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        _resolve(alice, 1, e1, 0, 64e18);
        assertEq(token.balanceOf(address(treasury)) - treasuryBefore, 64e18, "slash to the treasury");
        (, amount,) = staking.withdrawalOf(id);
        uint256 assetsAfter = 1936e18;
        assertEq(amount, 1000e18 * (assetsAfter + 1) / (2000e18 + 1), "the exiting half bore half the slash");
        _assertNear(_value(alice, bob), 968e18, 1, "the delegator bore only its half");
        _assertConservation();
    }

    /// @dev Property 4: the commission in force at the first seat applies, not the one at settlement.
    function test_CommissionFixedAtDraw() public {
        _stake(alice, alice, 1000e18);
        _stake(bob, alice, 1000e18);
        uint256 e1 = _lock(alice, 1, 10e18, 0);
        vm.prank(alice);
        staking.setCommission(2000);
        vm.warp(block.timestamp + 2 days);
        (,, uint256 bps) = staking.auditorOf(alice);
        assertEq(bps, 2000, "raise in force");
        uint256 e2 = _lock(alice, 2, 10e18, 0);
        uint256 wallet = token.balanceOf(alice);
        _resolve(alice, 1, e1, 100e18, 0);
        assertEq(token.balanceOf(alice), wallet, "no commission on a session drawn at 0%");
        assertEq(_pool(alice).assets, 2100e18, "all of it to the pool");
        _resolve(alice, 2, e2, 100e18, 0);
        assertEq(token.balanceOf(alice) - wallet, 20e18, "20% on the session drawn after the raise");
        assertEq(_pool(alice).assets, 2180e18, "net to the pool");
        _assertConservation();
    }

    /// @dev A result that arrives before its entry reaches the head is stored, then applied in order.
    function test_earlyResultsWaitForTheHead() public {
        _stake(alice, alice, 1000e18);
        uint256 e1 = _lock(alice, 1, 100e18, 0);
        uint256 e2 = _lock(alice, 2, 100e18, 0);
        _resolve(alice, 2, e2, 50e18, 10e18);
        assertEq(staking.storedRewards(), 50e18, "held, not pooled");
        assertEq(_pool(alice).assets, 1000e18, "pool untouched");
        assertEq(_pool(alice).locked, 200e18, "still locked");
        (uint256 word, uint256 result) = staking.entryWordOf(alice, e2);
        assertTrue(LedgerPacking.isResolved(word), "stored in the entry");
        (uint256 net, uint256 slash) = LedgerPacking.resultFields(result);
        assertEq(net, 50e18, "stored net reward");
        assertEq(slash, 10e18, "stored slash");
        vm.expectRevert(abi.encodeWithSelector(Staking.EntryMismatch.selector, alice, e2));
        _resolve(alice, 2, e2, 1, 0);
        _resolve(alice, 1, e1, 0, 0);
        assertEq(staking.storedRewards(), 0, "released");
        assertEq(_pool(alice).assets, 1040e18, "both applied");
        assertEq(_pool(alice).locked, 0, "both unlocked");
        vm.expectRevert(abi.encodeWithSelector(Staking.EntryNotPending.selector, alice, e1));
        _resolve(alice, 1, e1, 0, 0);
        _assertConservation();
    }

    function test_resolveChecksTheEntry() public {
        _stake(alice, alice, 1000e18);
        uint256 e1 = _lock(alice, 1, 100e18, 0);
        _stake(bob, alice, 100e18);
        vm.expectRevert(abi.encodeWithSelector(Staking.EntryMismatch.selector, alice, e1));
        _resolve(alice, 2, e1, 0, 0);
        vm.expectRevert(abi.encodeWithSelector(Staking.EntryMismatch.selector, alice, 2));
        _resolve(alice, 1, 2, 0, 0);
        vm.expectRevert(abi.encodeWithSelector(Staking.EntryNotPending.selector, alice, 3));
        _resolve(alice, 1, 3, 0, 0);
        vm.expectRevert(abi.encodeWithSelector(Staking.EntryNotPending.selector, bob, 1));
        _resolve(bob, 1, 1, 0, 0);
    }

    /// @dev Reputation composes in draw order whatever order the results arrive in.
    function test_reputationIndependentOfResultOrder() public {
        _register(dave, 1);
        _stake(alice, alice, 1000e18);
        _stake(dave, dave, 1000e18);
        uint64[3] memory mul = [uint64(0.9e18), uint64(0.81e18), uint64(0.729e18)];
        uint64[3] memory add = [uint64(0.1e18), uint64(0), uint64(0.271e18)];
        uint256[3] memory ea;
        uint256[3] memory ed;
        for (uint256 k = 0; k < 3; ++k) {
            ea[k] = _lock(alice, k + 1, 1e18, 0);
            (bool ok,, uint256 e) = staking.lockSeat(dave, 1, k + 1, 1e18, 0);
            assertTrue(ok, "dave locked");
            ed[k] = e;
        }
        for (uint256 k = 0; k < 3; ++k) {
            staking.resolve(k + 1, _one(alice, ea[k], 0, 0, mul[k], add[k]));
        }
        uint256[3] memory order = [uint256(2), 0, 1];
        for (uint256 i = 0; i < 3; ++i) {
            uint256 k = order[i];
            staking.resolve(k + 1, _one(dave, ed[k], 0, 0, mul[k], add[k]));
        }
        uint256 r = 0.5e18;
        for (uint256 k = 0; k < 3; ++k) {
            r = r * mul[k] / WAD + add[k];
        }
        assertEq(staking.reputationOf(alice), r, "in order");
        assertEq(staking.reputationOf(dave), r, "out of order, same result");
        assertEq(staking.weightOf(alice), 1000e18 * (r + 0.5e18) / WAD / 1e12, "weight follows reputation");
    }

    function test_cooldownStartsWhenApplied() public {
        _stake(alice, alice, 1000e18);
        uint256 e1 = _lock(alice, 1, 100e18, 0);
        uint256 id = _withdraw(alice, alice, 500e18);
        vm.warp(block.timestamp + 5 days);
        vm.prank(alice);
        vm.expectRevert(abi.encodeWithSelector(Staking.WithdrawalPending.selector, id, 2));
        staking.claimWithdrawal(id);
        _resolve(alice, 1, e1, 0, 0);
        (, uint256 amount, uint256 readyAt) = staking.withdrawalOf(id);
        assertEq(amount, 500e18, "redeemed when applied");
        assertEq(readyAt, block.timestamp + 1 days, "cooldown from the application");
        vm.prank(alice);
        vm.expectRevert(abi.encodeWithSelector(Staking.WithdrawalNotReady.selector, id, readyAt));
        staking.claimWithdrawal(id);
        vm.warp(readyAt);
        uint256 before = token.balanceOf(alice);
        vm.prank(alice);
        staking.claimWithdrawal(id);
        assertEq(token.balanceOf(alice) - before, 500e18, "claimed");
        _assertConservation();
    }

    function test_drainIsBoundedAndOpenToAnyone() public {
        _stake(alice, alice, 1000e18);
        uint256[7] memory e;
        for (uint256 k = 1; k <= 6; ++k) {
            e[k] = _lock(alice, k, 10e18, 0);
        }
        for (uint256 k = 6; k >= 2; --k) {
            _resolve(alice, k, e[k], 1e18, 0);
        }
        assertEq(staking.storedRewards(), 5e18, "five stored");
        _resolve(alice, 1, e[1], 1e18, 0);
        (uint256 head,) = staking.ledgerOf(alice);
        assertEq(head, 1 + 1 + staking.SIDE_DRAIN(), "the head plus a bounded side drain");
        vm.prank(carol);
        assertEq(staking.drain(alice, 10), 1, "anyone drains the rest");
        (head,) = staking.ledgerOf(alice);
        assertEq(head, 7, "empty");
        assertEq(staking.drain(alice, 10), 0, "nothing left");
        assertEq(_pool(alice).assets, 1006e18, "all six applied");
        _assertConservation();
    }

    function test_oneEntryPerGapAndOnePendingDepositPerHolder() public {
        _stake(alice, alice, 1000e18);
        uint256 e1 = _lock(alice, 1, 10e18, 0);
        (, uint256 f2) = _stake(bob, alice, 100e18);
        (, uint256 f2b) = _stake(carol, alice, 100e18);
        _withdraw(alice, alice, 10e18);
        (, uint256 f2c) = _stake(bob, alice, 50e18);
        assertTrue(f2 == 2 && f2b == 2 && f2c == 2, "one FLOW entry per gap");
        (, uint256 tail) = staking.ledgerOf(alice);
        assertEq(tail, 3, "two entries in all");
        _lock(alice, 3, 10e18, 0);
        vm.prank(bob);
        vm.expectRevert(abi.encodeWithSelector(Staking.DepositPending.selector, alice, 2));
        staking.stake(alice, 1e18);
        _resolve(alice, 1, e1, 0, 0);
        (, uint256 f4) = _stake(bob, alice, 1e18);
        assertEq(f4, 4, "after its deposit applied, the next one queues");
        (uint256 shares,,) = staking.positionOf(alice, bob);
        assertEq(shares, 150e18, "picked up the applied deposit");
        _assertConservation();
    }

    // ----------------------------------------------------------- slashes

    function test_slashCappedAndPoolReset() public {
        _stake(alice, alice, 100e18);
        _stake(bob, alice, 100e18);
        uint256 e1 = _lock(alice, 1, 200e18, 0);
        uint256 id = _withdraw(bob, alice, 100e18);
        (, uint256 f) = _stake(carol, alice, 300e18);
        assertEq(f, 2, "carol queued behind the session");
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        _resolve(alice, 1, e1, 0, 500e18);
        assertEq(token.balanceOf(address(treasury)) - treasuryBefore, 200e18, "capped by the assets");
        Staking.PoolView memory p = _pool(alice);
        assertEq(p.generation, 1, "pool reset");
        assertEq(p.locked, 0, "unlocked");
        assertEq(_shares(alice, alice), 0, "old shares void");
        assertEq(_shares(alice, carol), 300e18, "carol's deposit entered the new generation 1:1");
        assertEq(_value(alice, carol), 300e18, "worth its deposit");
        vm.warp(block.timestamp + 1 days);
        (, uint256 amount,) = staking.withdrawalOf(id);
        assertEq(amount, 0, "the exiting shares were wiped with the rest");
        vm.prank(bob);
        staking.claimWithdrawal(id);
        (uint256 s,) = _stake(alice, alice, 100e18);
        assertEq(s, 100e18, "fresh shares at par");
        _assertConservation();
    }

    /// @dev A pool that loses all but a sliver (below the price floor) is reset too, so share counts stay
    /// bounded and later deposits cannot overflow.
    function test_priceFloorResetsNearlyEmptyPool() public {
        _stake(alice, alice, 1000e18);
        uint256 e1 = _lock(alice, 1, 1000e18, 0);
        _resolve(alice, 1, e1, 0, 1000e18 - 1e11);
        assertEq(_pool(alice).generation, 1, "below 1e-9 per share: reset");
        assertEq(_pool(alice).assets, 0, "the sliver went with the slash");
        (uint256 s,) = _stake(alice, alice, 200e18);
        assertEq(s, 200e18, "par in the new generation");
        e1 = _lock(alice, 2, 0, 0);
        (s,) = _stake(alice, alice, 500e18);
        assertEq(s, 0, "queued");
        _resolve(alice, 2, e1, 0, 0);
        assertEq(_shares(alice, alice), 700e18, "the queued deposit at par too");
        _assertConservation();
    }

    // ------------------------------------------------------- registration

    function test_registrationMovesWeightBetweenTrees() public {
        ISortition trees = staking.sortition();
        _stake(alice, alice, 500e18);
        assertEq(trees.totalWeight(1), 500e18 / 1e12, "LLM tree");
        vm.prank(alice);
        registry.deregister();
        assertEq(trees.totalWeight(1), 0, "out of sortition");
        vm.prank(bob);
        vm.expectRevert(abi.encodeWithSelector(Staking.NotRegistered.selector, alice));
        staking.stake(alice, 1e18);
        _withdraw(alice, alice, 100e18);
        (bool ok,,) = staking.lockSeat(alice, 1, 1, 1, 0);
        assertTrue(!ok, "deregistered auditors back no seat");
        vm.prank(alice);
        registry.register(2, 5, bytes32("k3"));
        assertEq(trees.totalWeight(1), 0, "left the LLM tree");
        assertEq(trees.totalWeight(2), 400e18 / 1e12, "joined the human tree");
        (bool exists, uint256 leaf) = trees.leafOf(2, alice);
        assertTrue(exists && leaf == 0, "leaf in the human tree");
        vm.prank(alice);
        registry.deregister();
        vm.prank(alice);
        registry.register(1, 5, bytes32("k4"));
        assertEq(trees.totalWeight(1), 400e18 / 1e12, "back in its old LLM leaf");
        (exists, leaf) = trees.leafOf(1, alice);
        assertTrue(exists && leaf == 0, "same leaf as before");
    }

    function test_snapshotViews() public {
        ISortition trees = staking.sortition();
        uint256 e = trees.currentEpoch();
        assertEq(e, block.number / EPOCH_BLOCKS + 1, "current epoch");
        assertEq(trees.epochOf(25), 3, "epoch of a block");
        assertEq(trees.snapshotReadableUntil(e), (e + 2) * EPOCH_BLOCKS - 1, "readable until");
        _stake(alice, alice, 1000e18);
        assertEq(trees.totalWeightAt(1, e), 0, "the snapshot predates the stake");
        vm.roll(block.number + EPOCH_BLOCKS);
        uint256[] memory none = new uint256[](0);
        _stake(alice, alice, 1000e18);
        assertEq(trees.totalWeightAt(1, e + 1), 1000e18 / 1e12, "start of the next epoch");
        (address a, uint256 leaf, uint256 w) = trees.sampleAt(1, e + 1, 999e6, none);
        assertEq(a, alice, "sampled");
        assertEq(leaf, 0, "leaf");
        assertEq(w, 1e9, "snapshot weight");
        assertEq(trees.leafWeightAt(1, e + 1, 0), 1e9, "leaf weight at the snapshot");
        vm.roll(trees.snapshotReadableUntil(e + 1) + 1);
        vm.expectRevert(abi.encodeWithSelector(SnapshotSumTree.SnapshotUnavailable.selector, e + 1, e + 4));
        trees.totalWeightAt(1, e + 1);
    }

    // --------------------------------------------------------------- owner

    function test_paramsPauseAndTreasury() public {
        StakingLedger.StakingParams memory p = _params();
        p.cooldown = 31 days;
        vm.prank(owner);
        vm.expectRevert(Staking.InvalidParams.selector);
        staking.setParams(p);
        p = _params();
        p.minStake[2] = uint96(2e27);
        vm.prank(owner);
        vm.expectRevert(Staking.InvalidParams.selector);
        staking.setParams(p);
        _stake(alice, alice, 1000e18);
        uint256 w = staking.weightOf(alice);
        p = _params();
        p.minStake[1] = 5000e18;
        vm.prank(owner);
        staking.setParams(p);
        assertEq(staking.params().minStake[1], 5000e18, "stored");
        assertEq(staking.weightOf(alice), w, "stale until poked");
        staking.poke(alice);
        assertEq(staking.weightOf(alice), 0, "below the raised minimum");
        vm.prank(owner);
        vm.expectRevert(Staking.ZeroAddress.selector);
        staking.setTreasury(address(0));
        vm.prank(owner);
        staking.setTreasury(address(0xBEEF));
        assertEq(staking.treasury(), address(0xBEEF), "treasury");
        vm.prank(owner);
        staking.pause();
        vm.prank(bob);
        vm.expectRevert(Pausable.EnforcedPause.selector);
        staking.stake(alice, 1e18);
        _withdraw(alice, alice, 1e18);
        vm.prank(owner);
        staking.unpause();
        _stake(bob, alice, 1e18);
    }

    function test_commissionSchedule() public {
        vm.prank(alice);
        vm.expectRevert(abi.encodeWithSelector(Staking.CommissionTooHigh.selector, 2001, 2000));
        staking.setCommission(2001);
        vm.prank(carol);
        vm.expectRevert(abi.encodeWithSelector(Staking.NotRegistered.selector, carol));
        staking.setCommission(10);
        vm.prank(alice);
        staking.setCommission(500);
        (,, uint256 bps) = staking.auditorOf(alice);
        assertEq(bps, 0, "not yet");
        vm.warp(block.timestamp + 2 days);
        (,, bps) = staking.auditorOf(alice);
        assertEq(bps, 500, "effective after the delay");
        vm.prank(alice);
        staking.setCommission(100);
        (,, bps) = staking.auditorOf(alice);
        assertEq(bps, 500, "old rate until the new one is due");
        vm.warp(block.timestamp + 2 days);
        (,, bps) = staking.auditorOf(alice);
        assertEq(bps, 100, "new rate");
    }
}

contract AuditorRegistryTest is StakingTestBase {
    address internal alice = address(0xA1);

    function setUp() public {
        _deployStaking();
        _fund(alice, 1000e18);
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
        assertTrue(staking.sortition().totalWeight(2) > 0, "in the human tree");
        vm.expectRevert(AuditorRegistry.ZeroEncryptionKey.selector);
        registry.updateProfile(1, bytes32(0));
        registry.updateProfile(7, bytes32("k2"));
        assertEq(registry.encryptionKeyOf(alice), bytes32("k2"), "key updated");
        assertEq(registry.profileOf(alice).expertise, 7, "expertise");
        registry.deregister();
        assertTrue(!registry.isRegistered(alice), "deregistered");
        assertEq(staking.sortition().totalWeight(2), 0, "out of sortition");
        staking.requestWithdrawal(alice, 100e18);
        registry.register(1, 5, bytes32("k3"));
        vm.stopPrank();
        assertEq(staking.sortition().totalWeight(1), 400e18 / 1e12, "joined the LLM tree");
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
