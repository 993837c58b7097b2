// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Review23QueuedAfterBase} from "./Review23QueuedAfterLedgerOrder.t.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";

/// @title Review25ReliefDilutedByLaterDeposit (outside review 25: over-counted refusals, LOW, fixed)
/// @notice Property: a third party's deposit into a pool never lowers what the pool's auditor can lock
/// (Review21DustDepositChargesHonest: a deposit queued after an entry is left out of the basis and out of
/// the lock, so it changes nothing; a refused lock can be CHARGED in an appeal round, docs/appeals-canaries.md).
/// Attack: `StakingHolds._lockLimit` after a hold: `relief = ahead * x / (basis + x)` (the share of the locks
/// ahead of an expired withdrawal batch that the leaving batch bears). `basis` is the pool's backing, which
/// counts every pending deposit - also those queued after the held FLOW, which bear none of the locks ahead
/// of it. A stranger's deposit D there adds D to the basis and D to `queuedAfter` (net 0 for an extension,
/// +D for a first lock) but shrinks the relief to `ahead * x / (basis + D + x)`.
/// World: auditor 200 + delegator 300 TRUST; the delegator withdraws half (150 TRUST, parked: the pool stands
/// in the snapshot); e0 locks 300 during the hold; the hold expires; e1 is pushed (the batch's FLOW ahead of
/// it). True backing of more seats of e1: 500 - 300 (e0 slashed in full) - 150 x 200/500 (the batch redeemed
/// after e0) = 140 TRUST, and the quote agrees (limit 350 + 90 relief, locked 300): free 140.
/// Measured (this test): after a stranger deposits D = 350 TRUST behind e1, an extension of e1 can take
/// only ~102.9 TRUST (free 452.9 less 350 queued): 37.1 TRUST of really slashable stake (26% of its free
/// stake) refused; a first lock of a new entry likewise ~37.1 TRUST less than its true 490. The control
/// locks 139 TRUST in e1 and collects all of it (and e0's 300) by full slashes in ledger order.
/// Severity LOW: needs an expired hold with locks ahead (a delegator's withdrawal while the pool stood in
/// the snapshot), and capital comparable to the pool (the effect is ahead*x*D/((B+x)(B+x+D)), at most the
/// relief itself); the depositor's stake is not lost. Not introduced by the O(1) queuedAfter (3c633be).
/// Fix direction: weigh the relief against the stake that bears the locks ahead: `basis - queuedAfter(h.flow)`
/// (deposits after the held FLOW bear none of them; O(1) now), i.e. `relief = ahead * x / (basis - q + x)`.
/// Fix: `relief = ahead * x / (basis - later + x)`, `later` the deposits of the held FLOW itself (they mint
/// after the batch redeems) and of every FLOW after it (`_queuedAfter(flow + 1)`, O(1)); an unqueued expired
/// batch counts the deposits of the tail FLOW it will join. After the fix (`test_StrangerDepositShrinksRelief`):
/// the extension capacity of e1 stays 140 TRUST after the deposit, a first lock's free stake grows by exactly
/// the 350 deposited (140 -> 490), the 139-TRUST extension passes and full slashes in ledger order collect all
/// 439 TRUST; a stranger's deposit INTO the held FLOW (before e1 is pushed, Review25DepositIntoHeldFlow) leaves
/// the first-lock figure at 140 + D too. Before the fix the test failed at "capacity unchanged" (102.9 TRUST).
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review25*' -vv`.
contract Review25ReliefDilutedByLaterDeposit is Review23QueuedAfterBase {
    uint256 internal e0;
    uint256 internal e1;

    function setUp() public override {
        super.setUp();
        e0 = _lockNew(300e18);
        uint256 shares = staking.sharesOf(a, d1) / 2;
        vm.prank(d1);
        staking.requestWithdrawal(a, shares); // parked: the pool stands in the snapshot
        vm.roll(block.number + 3 * EPOCH_BLOCKS); // the batch's hold (2 epochs) is over
        IStaking.SeatQuote memory q = staking.seatQuote(a);
        emit log_named_uint("free after the hold (relief counted)", q.free);
        e1 = _lockNew(0); // the batch's FLOW, then e1
        (uint256 head, uint256 tail) = staking.ledgerOf(a);
        assertEq(tail - head, 3, "setup: e0, the batch's FLOW, e1");
    }

    function _lockNew(uint256 amount) internal returns (uint256 entry) {
        IStaking.SeatQuote memory q = staking.seatQuote(a);
        vm.prank(address(drawModule));
        bool ok;
        (ok,, entry) = staking.lockSeat(a, 1, 0xB0B0 + q.nextEntry, amount, 0);
        assertTrue(ok, "setup: first lock");
    }

    /// @dev What an extension of e1 can take now (the draw module's rule: free less queuedAfter(e1)).
    function _capacity() internal view returns (uint256) {
        IStaking.SeatQuote memory q = staking.seatQuote(a);
        uint256 queued = e1 == q.lastEntry ? 0 : staking.queuedAfter(a, e1);
        return q.eligible && q.free >= queued ? q.free - queued : 0;
    }

    function _extend(uint256 amount) internal returns (bool ok) {
        vm.prank(address(drawModule));
        (ok,,) = staking.lockSeat(a, 1, 0xB0B0 + e1, amount, e1);
    }

    /// @dev Control: without the stranger's deposit e1 takes 139 TRUST more, and slashes of the whole locks
    /// collect every wei of them (e0's 300 first, then the batch leaves with 60, then e1's 139 of the 140 left).
    function test_control_ExtensionBackedAndCollected() public {
        uint256 cap = _capacity();
        emit log_named_uint("capacity of e1, no deposit", cap);
        assertGe(cap, 139e18, "~140 TRUST free");
        assertTrue(_extend(139e18), "139 TRUST more in e1");
        uint256 before = staking.poolOf(a).assets;
        _slashNow(a, e1, 139e18); // early: e1 applies after e0 and the batch
        _slashNow(a, e0, 300e18);
        (uint256 head, uint256 tail) = staking.ledgerOf(a);
        assertEq(head, tail, "every entry applied");
        uint256 redeemed = staking.withdrawalReserve();
        emit log_named_uint("assets before", before);
        emit log_named_uint("redeemed by the batch", redeemed);
        emit log_named_uint("assets left", staking.poolOf(a).assets);
        // Collected: 300 (e0) + 139 (e1); the batch left with its share after e0's slash.
        assertEq(before - redeemed - staking.poolOf(a).assets, 439e18, "both locks collected in full");
    }

    /// @dev The attack: a stranger's 350 TRUST queued behind e1 takes none of e1's capacity now, and every
    /// wei locked is collected by full slashes in ledger order.
    function test_StrangerDepositShrinksRelief() public {
        uint256 cap0 = _capacity();
        uint256 free0 = staking.seatQuote(a).free;
        _deposit(350e18);
        uint256 cap1 = _capacity();
        uint256 free1 = staking.seatQuote(a).free;
        emit log_named_uint("capacity of e1, no deposit", cap0);
        emit log_named_uint("capacity of e1, 350 TRUST queued after it", cap1);
        emit log_named_uint("first-lock free, no deposit", free0);
        emit log_named_uint("first-lock free, 350 TRUST queued", free1);
        assertEq(staking.queuedAfter(a, e1), 350e18, "setup: the deposit is after e1");
        assertEq(cap1, cap0, "capacity unchanged by a later deposit");
        assertEq(free1, free0 + 350e18, "a first lock gains the whole deposit");
        assertTrue(_extend(139e18), "139 TRUST of backed stake locked");
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        _slashNow(a, e1, 139e18);
        _slashNow(a, e0, 300e18);
        (uint256 head, uint256 tail) = staking.ledgerOf(a);
        assertEq(head, tail, "every entry applied");
        assertEq(token.balanceOf(address(treasury)) - treasuryBefore, 439e18, "both locks collected in full");
    }

    /// @dev Gas of a lock behind the held FLOW with a deposit after it (the relief reads `later`).
    /// Command: `scripts/forge test --match-test test_gasOfLocksAfterHold -vv`.
    function test_gasOfLocksAfterHold() public {
        _deposit(350e18);
        vm.prank(address(drawModule));
        uint256 g = gasleft();
        staking.lockSeat(a, 1, 0xB0B0 + e1, 10e18, e1);
        emit log_named_uint("lockSeat, extension of e1 after the hold", g - gasleft());
        IStaking.SeatQuote memory q = staking.seatQuote(a);
        vm.prank(address(drawModule));
        g = gasleft();
        staking.lockSeat(a, 1, 0xB0B0 + q.nextEntry, 10e18, 0);
        emit log_named_uint("lockSeat, first lock after the hold", g - gasleft());
    }

    /// @dev The figures as measured (before the fix: 140 -> 102.9 and 140 -> 452.9; now 140 and 490).
    function test_StrangerDepositShrinksRelief_measured() public {
        uint256 cap0 = _capacity();
        IStaking.SeatQuote memory q0 = staking.seatQuote(a);
        _deposit(350e18);
        uint256 cap1 = _capacity();
        IStaking.SeatQuote memory q1 = staking.seatQuote(a);
        emit log_named_uint("extension capacity before", cap0);
        emit log_named_uint("extension capacity after", cap1);
        emit log_named_uint("first-lock free before", q0.free);
        emit log_named_uint("first-lock free after (true: before + 350)", q1.free);
        assertLe(cap1, cap0, "a later deposit never raises e1's capacity");
        assertGe(q1.free, q0.free, "a deposit never lowers a first lock's free stake");
    }
}

/// @title Review25DepositIntoHeldFlow (outside review 25, the same dilution through the held FLOW itself)
/// @notice After the hold a stranger's stake queues the batch in a new FLOW and its deposit joins that FLOW,
/// ahead of any later entry: minted after the batch redeems, it bears none of e0's lock either, so it must not
/// shrink the relief. Measured: first-lock free 140 TRUST before the deposit, 140 + 350 after (the fix's
/// `later` counts the held FLOW's own deposits; `basis - queuedAfter(flow)` alone would give 452.9).
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review25*' -vv`.
contract Review25DepositIntoHeldFlow is Review23QueuedAfterBase {
    function test_DepositIntoHeldFlowKeepsRelief() public {
        IStaking.SeatQuote memory q = staking.seatQuote(a);
        vm.prank(address(drawModule));
        (bool ok,, uint256 e0) = staking.lockSeat(a, 1, 0xB0B0 + q.nextEntry, 300e18, 0);
        assertTrue(ok, "setup: e0");
        uint256 shares = staking.sharesOf(a, d1) / 2;
        vm.prank(d1);
        staking.requestWithdrawal(a, shares);
        vm.roll(block.number + 3 * EPOCH_BLOCKS);
        uint256 free0 = staking.seatQuote(a).free;
        _deposit(350e18); // queues the batch in a FLOW behind e0, then joins it
        (uint256 head, uint256 tail) = staking.ledgerOf(a);
        assertEq(tail - head, 2, "setup: e0 and the batch's FLOW");
        assertEq(staking.flowOf(a, e0 + 1).deposits, 350e18, "setup: the deposit is in the held FLOW");
        uint256 free1 = staking.seatQuote(a).free;
        emit log_named_uint("first-lock free before the deposit", free0);
        emit log_named_uint("first-lock free after (deposit in the held FLOW)", free1);
        assertEq(free0, 140e18, "setup: 140 TRUST free after the hold");
        assertEq(free1, free0 + 350e18, "the deposit adds itself, takes no relief");
        // Lock all of it in a new entry; full slashes in ledger order collect every wei.
        q = staking.seatQuote(a);
        vm.prank(address(drawModule));
        uint256 e1;
        (ok,, e1) = staking.lockSeat(a, 1, 0xB0B0 + q.nextEntry, q.free, 0);
        assertTrue(ok, "a lock of the whole free stake");
        uint256 before = token.balanceOf(address(treasury));
        _slashNow(a, e1, free1);
        _slashNow(a, e0, 300e18);
        (head, tail) = staking.ledgerOf(a);
        assertEq(head, tail, "every entry applied");
        assertEq(token.balanceOf(address(treasury)) - before, 300e18 + free1, "every locked wei collected");
    }
}
