// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Review23QueuedAfterBase} from "./Review23QueuedAfterLedgerOrder.t.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";
import {LedgerPacking} from "../../src/libraries/LedgerPacking.sol";

/// @title Review23QueuedAfterExact (the fix of Review23QueuedScanFallbackChargesHonest)
/// @notice Property QueuedAfterExact: `Staking.queuedAfter(a, e)` is the sum of the deposits waiting in the
/// FLOW entries after `e`, for every entry of the ledger however many follow it (a pending SESSION or FLOW
/// entry, the last entry: 0, an applied entry: every pending deposit). `_lock` and `DrawModule._canLock`
/// leave out exactly that much, so no deposit queued before an entry is ever counted against it (the
/// fallback that charged honest refusals, Review23QueuedScanFallbackChargesHonest) and none queued after it
/// backs its seats (SlashableStakeBacksEverySeat).
/// Attack: anything that could make the O(1) rule (`_queuedEver` now less its value at the entry's push)
/// drift from the ledger: deposits of any size (1 wei to 300 TRUST) by fresh holders before and after the
/// entries, first locks (SESSION entries, with and without deposits pending at the push), withdrawal
/// requests (parked in a hold while the pool stands in the snapshot, then queued in a FLOW pushed before a
/// SESSION entry by `_unparkAt`), early and head results with full slashes (pool resets: deposits stay
/// queued), drains, epochs passing, and the ring wrapping (entry e + 256 reusing e's slot and its stale
/// record). After every step every entry's `queuedAfter` is compared with a brute-force sum over `flowOf`.
/// Measured: before the fix (QUEUED_SCAN = 8 and the fallback) the brute force differs as soon as more
/// than 8 entries follow one with earlier deposits pending (LockAggregationReview's
/// test_DepositQueuedBeforeAnEntryBacksItsLaterSeats: 201 TRUST instead of 1 TRUST + 12 wei); after: equal
/// in every step of 256 fuzz runs x 40 steps and of the 300-entry ring walk.
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review23QueuedAfterExact*' -vv`.
contract Review23QueuedAfterExact is Review23QueuedAfterBase {
    /// @dev The deposits of the FLOW entries after `e`, read one by one from the ledger.
    function _brute(uint256 e) internal view returns (uint256 sum) {
        (uint256 head, uint256 tail) = staking.ledgerOf(a);
        uint256 from = e < head ? head : e + 1;
        for (uint256 j = from; j < tail; ++j) {
            (uint256 word,) = staking.entryWordOf(a, j);
            if (LedgerPacking.kind(word) == LedgerPacking.KIND_FLOW) sum += staking.flowOf(a, j).deposits;
        }
    }

    /// @dev Every entry of the ledger, the one applied last, entry 0 and one past the tail.
    function _checkAll() internal view {
        (uint256 head, uint256 tail) = staking.ledgerOf(a);
        uint256 from = head > 1 ? head - 1 : 0;
        for (uint256 e = from; e <= tail; ++e) {
            assertEq(staking.queuedAfter(a, e), _brute(e), "QueuedAfterExact");
        }
        assertEq(
            staking.queuedAfter(a, 0), staking.poolOf(a).pendingDeposits, "entry 0: every pending deposit"
        );
        assertEq(
            _brute(0), staking.poolOf(a).pendingDeposits, "every pending deposit waits in a pending FLOW"
        );
    }

    function _withdraw(address holder, uint256 pct) internal {
        uint256 shares = staking.sharesOf(a, holder) * pct / 100;
        if (shares == 0) return;
        vm.prank(holder);
        try staking.requestWithdrawal(a, shares) {} catch {}
    }

    /// @dev Resolve pending SESSION entry `e` (unresolved) with `pct` percent of its lock as the slash.
    function _result(uint256 e, uint256 pct) internal {
        (uint256 word,) = staking.entryWordOf(a, e);
        if (LedgerPacking.kind(word) != LedgerPacking.KIND_SESSION || LedgerPacking.isResolved(word)) return;
        (,, uint256 locked,) = LedgerPacking.openFields(word);
        _slashNow(a, e, locked * pct / 100);
    }

    /// @dev An extension of a random pending SESSION entry within what the draw module's rule allows.
    function _extend(uint256 pick) internal {
        (uint256 head, uint256 tail) = staking.ledgerOf(a);
        if (head == tail) return;
        uint256 e = head + pick % (tail - head);
        (uint256 word,) = staking.entryWordOf(a, e);
        if (LedgerPacking.kind(word) != LedgerPacking.KIND_SESSION || LedgerPacking.isResolved(word)) return;
        IStaking.SeatQuote memory q = staking.seatQuote(a);
        if (!q.eligible) return;
        uint256 queued = e == q.lastEntry ? 0 : staking.queuedAfter(a, e);
        if (queued > q.free) return;
        uint256 amount = (pick >> 8) % (q.free - queued + 1);
        vm.prank(address(drawModule));
        (bool ok,,) = staking.lockSeat(a, q.tier, 0xB0B0 + e, amount, e);
        assertTrue(ok, "an extension within free less queuedAfter locks");
        // No "one wei more is refused": after a hold `_lockLimit`'s relief grows with the locks ahead of the
        // expired batch (Review23QueuedAfterLedgerOrder); LockAggregationReview checks the refusal.
    }

    /// @dev Random steps; after each one every entry's `queuedAfter` equals the brute force.
    function testFuzz_QueuedAfterMatchesBruteForce(uint256 seed) public {
        for (uint256 i = 0; i < 40; ++i) {
            uint256 r = uint256(keccak256(abi.encode(seed, i)));
            uint256 op = r % 10;
            r >>= 8;
            if (op == 0 || op == 1) {
                _firstLock(r);
            } else if (op == 2) {
                _deposit(1 + r % 300e18);
            } else if (op == 3) {
                _deposit(1 + r % 3);
            } else if (op == 4) {
                _withdraw(r % 2 == 0 ? a : d1, 1 + (r >> 1) % 90);
            } else if (op == 5) {
                _extend(r);
            } else if (op == 6) {
                vm.roll(block.number + EPOCH_BLOCKS);
                staking.poke(a);
            } else if (op == 7) {
                staking.drain(a, 1 + r % 4);
            } else {
                (uint256 head, uint256 tail) = staking.ledgerOf(a);
                if (head != tail) {
                    _result(head + r % (tail - head), (r >> 16) % 2 == 0 ? 100 : (r >> 17) % 50);
                }
            }
            _checkAll();
        }
    }

    /// @dev 300 SESSION entries (the ring of 256 wraps: entry e + 256 reuses e's slot and finds e's record
    /// there), a 1-wei deposit after every other one, results kept 1 to 3 entries behind so the ledger is
    /// never empty: records written with deposits pending, stale records of an older lap, no record.
    function test_QueuedAfterExactAcrossRingWrap() public {
        uint256 pendingSessions = 0;
        for (uint256 k = 0; k < 300; ++k) {
            _pushEntry(a);
            ++pendingSessions;
            if (k % 2 == 0) _deposit(1);
            _checkAll();
            if (pendingSessions > 1 + k % 3) {
                // The oldest pending SESSION entry (FLOWs ahead of it apply with it).
                (uint256 head, uint256 tail) = staking.ledgerOf(a);
                for (uint256 j = head; j < tail; ++j) {
                    (uint256 word,) = staking.entryWordOf(a, j);
                    if (LedgerPacking.kind(word) == LedgerPacking.KIND_SESSION) {
                        _slashNow(a, j, 0);
                        break;
                    }
                }
                --pendingSessions;
                _checkAll();
            }
        }
        (, uint256 end) = staking.ledgerOf(a);
        assertGe(end, 256 + 3, "the ring wrapped");
    }

    /// @dev A full slash resets the pool (shares void) while deposits wait after a later entry: they stay
    /// queued and `queuedAfter` still counts exactly them (the record of e2, pushed with 10 TRUST pending).
    function test_QueuedAfterExactThroughPoolReset() public {
        _deposit(50e18); // the ledger is empty: minted at once
        uint256 e0 = _pushEntry(a);
        _deposit(7e18); // a FLOW after e0
        IStaking.SeatQuote memory q = staking.seatQuote(a);
        vm.prank(address(drawModule));
        (bool ok,, uint256 e1) = staking.lockSeat(a, 1, 0xB0B0 + q.nextEntry, 100e18, 0);
        assertTrue(ok, "setup: e1 pushed with 7 TRUST pending");
        _deposit(3e18); // a FLOW after e1
        uint256 e2 = _pushEntry(a);
        _deposit(2e18); // a FLOW after e2
        _checkAll();
        assertEq(staking.queuedAfter(a, e0), 12e18, "every deposit after e0");
        assertEq(staking.queuedAfter(a, e1), 5e18, "3 + 2 after e1");
        assertEq(staking.queuedAfter(a, e2), 2e18, "2 after e2");
        _slashNow(a, e1, 10_000e18); // early: every asset when it applies
        _checkAll();
        uint256 gen = staking.poolOf(a).generation;
        _slashNow(a, e0, 0); // e0, the 7, e1 (the pool resets) and the 3 apply
        assertEq(staking.poolOf(a).generation, gen + 1, "setup: pool reset");
        (uint256 head,) = staking.ledgerOf(a);
        assertEq(head, e2, "setup: e2 at the head");
        _checkAll();
        assertEq(staking.queuedAfter(a, e2), 2e18, "the 2 TRUST after e2, still queued");
        assertEq(staking.queuedAfter(a, e1), 2e18, "an applied entry: every pending deposit");
    }

    /// @dev Gas of what the counter adds to: a queued deposit (a new FLOW; then a second one in it) and a
    /// first lock pushing a SESSION entry with deposits pending (the record; GasBench's draw measures the
    /// locks on empty ledgers, which read nothing more). Measured (one transaction, after / before the fix):
    /// stake in a new FLOW 217,438 / 195,087 (+22,351: the pool's counter written from zero, ~5k later),
    /// stake in the same FLOW 73,278 / 72,827 (counter warm), first lock with deposits pending 54,812 /
    /// 32,112 (+22,700: a ring slot's record written from zero; ~5k once the slot was used).
    /// Command: `scripts/forge test --match-test test_gasOfQueuedDepositAndFirstLock -vv`.
    function test_gasOfQueuedDepositAndFirstLock() public {
        _pushEntry(a);
        address h = address(0x23A1);
        token.transfer(h, 2e18);
        vm.startPrank(h);
        token.approve(address(staking), 2e18);
        uint256 g = gasleft();
        staking.stake(a, 1e18);
        emit log_named_uint("stake, queued in a new FLOW", g - gasleft());
        vm.stopPrank();
        address h2 = address(0x23A2);
        token.transfer(h2, 1e18);
        vm.startPrank(h2);
        token.approve(address(staking), 1e18);
        g = gasleft();
        staking.stake(a, 1e18);
        emit log_named_uint("stake, queued in the same FLOW", g - gasleft());
        vm.stopPrank();
        vm.prank(address(drawModule));
        g = gasleft();
        staking.lockSeat(a, 1, 0xF00D, 1e18, 0);
        emit log_named_uint("lockSeat, first lock with deposits pending", g - gasleft());
    }
}
