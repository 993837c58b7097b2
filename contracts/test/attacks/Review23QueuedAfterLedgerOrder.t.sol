// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "../utils/StakingFixture.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";
import {Staking} from "../../src/Staking.sol";
import {LedgerPacking} from "../../src/libraries/LedgerPacking.sol";
import {Vm} from "../utils/TestBase.sol";

/// @notice One tier-1 auditor (200 TRUST) and a delegator (300 TRUST) in the snapshot.
abstract contract Review23QueuedAfterBase is StakingFixture {
    event log_named_uint(string key, uint256 val);

    bytes32 internal constant APPLIED = keccak256("SessionApplied(address,uint256,uint256,uint256,uint256)");

    address internal a;
    address internal d1 = address(0x23D1);
    uint256 internal _fresh;

    function setUp() public virtual {
        _deploy();
        _addAuditors(1, 1, 200e18);
        a = auditorAddrs[0];
        token.transfer(d1, 1_000e18);
        vm.startPrank(d1);
        token.approve(address(staking), type(uint256).max);
        staking.stake(a, 300e18);
        vm.stopPrank();
        _nextEpoch();
    }

    function _deposit(uint256 amount) internal {
        address h = address(uint160(0x23E00000 + ++_fresh));
        token.transfer(h, amount);
        vm.startPrank(h);
        token.approve(address(staking), amount);
        staking.stake(a, amount);
        vm.stopPrank();
    }

    function _firstLock(uint256 amount) internal {
        IStaking.SeatQuote memory q = staking.seatQuote(a);
        if (!q.eligible || q.nextEntry == 0) return;
        amount = amount % (q.free + 1);
        vm.prank(address(drawModule));
        (bool ok,, uint256 entry) = staking.lockSeat(a, q.tier, 0xB0B0 + q.nextEntry, amount, 0);
        assertTrue(ok, "a first lock within free locks");
        assertEq(entry, q.nextEntry, "entry as quoted");
    }
}

/// @title Review23QueuedAfterLedgerOrder (outside review 23 of 55d381a: `Staking._queuedAfter`)
/// @notice Property SlashableStakeBacksEverySeat: every SESSION entry's lock is collected in full when its
/// entry applies, every earlier lock slashed in full. Attack (a): one pool's ledger driven by a fuzzed
/// sequence of first locks, deposits of any size by fresh holders, withdrawal requests by the auditor and a
/// delegator (parked in a hold: the pool stands in the snapshot), epochs passing (holds expire, batches
/// queued behind or ahead of the entries: `_lockLimit`'s relief), early full-slash results, and extensions
/// of a random pending entry by the largest amount the draw module's rule allows (`seatQuote.free` less
/// `queuedAfter(e)` unless e is the last entry); then every entry slashed in full in ledger order.
/// Checks: `lockSeat` accepts exactly what the draw module's mirror computes (DrawAgreesWithLockSeats at
/// Staking's seam), and every `SessionApplied` takes the entry's whole lock. Result: holds (fuzz runs of the
/// default profile, 256 runs). Gas (d), Review23QueuedAfterGas below: `queuedAfter` with 8 entries after e
/// (4 FLOWs with a deposit, every slot cold) 30,173 gas, the same read again (as `lockSeats` does after the
/// draw module's quote) 6,165; 1 entry after e 4,159; 9 entries (fallback) 3,947. So at most ~32k more per
/// auditor that a draw call extends behind 8 entries (LOW: the drawer pages; reaching 8 entries needs the
/// auditor seated in 4 other panels). Since the O(1) fix (QUEUED_SCAN and its fallback removed) the same
/// reads cost 8,720 (cold), 2,712 (warm), 6,741 (1 after, cold) and 6,717 (9 after, exact now), whatever
/// the number of entries after e.
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review23QueuedAfterLedgerOrder*' -vv`.
contract Review23QueuedAfterLedgerOrder is Review23QueuedAfterBase {
    /// @dev The largest extension of a pending entry the draw module's rule allows; `lockSeat` must agree.
    function _extendMax(uint256 pick) internal {
        (uint256 head, uint256 tail) = staking.ledgerOf(a);
        if (head == tail) return;
        uint256 e = head + pick % (tail - head);
        (uint256 word,) = staking.entryWordOf(a, e);
        if (LedgerPacking.kind(word) != LedgerPacking.KIND_SESSION || LedgerPacking.isResolved(word)) return;
        IStaking.SeatQuote memory q = staking.seatQuote(a);
        uint256 free = q.eligible ? q.free : 0;
        bool barred = !q.eligible;
        if (e != q.lastEntry) {
            uint256 queued = staking.queuedAfter(a, e);
            if (queued > free) barred = true;
            else free -= queued;
        }
        vm.prank(address(drawModule));
        (bool ok,,) = staking.lockSeat(a, q.tier, 0xB0B0 + e, free, e);
        assertTrue(ok == !barred, "lockSeat agrees with the draw module's rule");
        // No "one wei more is refused" here: after a hold `_lockLimit`'s relief grows with the locks ahead of
        // the expired batch (limit = basis + ahead * x / (basis + x)), so repeated locks may reach basis + x,
        // all of it ahead of the batch and backed by it; the walk in `_checkCollected` checks that.
    }

    function _withdraw(address holder, uint256 pct) internal {
        uint256 shares = staking.sharesOf(a, holder) * pct / 100;
        if (shares == 0) return;
        vm.prank(holder);
        try staking.requestWithdrawal(a, shares) {} catch {}
    }

    /// @dev Resolve pending entry `e` (a SESSION, unresolved) with its whole lock as the slash.
    function _slashFull(uint256 e) internal {
        (uint256 word,) = staking.entryWordOf(a, e);
        if (LedgerPacking.kind(word) != LedgerPacking.KIND_SESSION || LedgerPacking.isResolved(word)) return;
        (,, uint256 locked,) = LedgerPacking.openFields(word);
        _slashNow(a, e, locked);
    }

    function _lockOf(uint256 e) internal view returns (uint256 locked) {
        (uint256 word,) = staking.entryWordOf(a, e);
        if (LedgerPacking.kind(word) == LedgerPacking.KIND_SESSION) {
            if (LedgerPacking.isResolved(word)) (locked,,) = LedgerPacking.resolvedFields(word);
            else (,, locked,) = LedgerPacking.openFields(word);
        }
    }

    function testFuzz_SlashableStakeBacksEverySeat_anyLedgerOrder(uint256 seed) public {
        vm.recordLogs();
        for (uint256 i = 0; i < 14; ++i) {
            uint256 r = uint256(keccak256(abi.encode(seed, i)));
            uint256 op = r % 7;
            r >>= 8;
            if (op == 0) {
                _firstLock(r);
            } else if (op == 1) {
                _deposit(1 + r % 300e18);
            } else if (op == 2) {
                _withdraw(r % 2 == 0 ? a : d1, 1 + (r >> 1) % 90);
            } else if (op == 3 || op == 6) {
                _extendMax(r);
            } else if (op == 4) {
                vm.roll(block.number + EPOCH_BLOCKS);
                staking.poke(a);
            } else {
                (uint256 head, uint256 tail) = staking.ledgerOf(a);
                if (head != tail) _slashFull(head + r % (tail - head));
            }
        }
        _checkCollected();
    }

    /// @dev Slash every pending entry in full, in ledger order; each application takes the whole lock.
    function _checkCollected() internal {
        (uint256 head, uint256 tail) = staking.ledgerOf(a);
        uint256[] memory locks = new uint256[](tail - head);
        for (uint256 e = head; e < tail; ++e) {
            locks[e - head] = _lockOf(e);
        }
        // Early results slashed before the walk are in `locks` too (resolved words keep their lock).
        for (uint256 e = head; e < tail; ++e) {
            _slashFull(e);
        }
        vm.roll(block.number + 4 * EPOCH_BLOCKS);
        staking.drain(a, 512);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics[0] != APPLIED || address(uint160(uint256(logs[i].topics[1]))) != a) continue;
            uint256 entry = uint256(logs[i].topics[2]);
            (, uint256 taken,) = abi.decode(logs[i].data, (uint256, uint256, uint256));
            if (entry < head || entry >= tail) continue;
            assertGe(
                taken + 1e6, locks[entry - head], "SlashableStakeBacksEverySeat: the whole lock collected"
            );
        }
        (head, tail) = staking.ledgerOf(a);
        assertEq(head, tail, "drained");
        assertEq(staking.poolOf(a).locked, 0, "every lock released");
    }
}

/// @notice (d) Gas of `queuedAfter` as a draw call pays it (the ledger built in setUp, so every slot is cold
/// in the test's transaction). Command: `scripts/forge test --match-contract Review23QueuedAfterGas -vv`.
contract Review23QueuedAfterGas is Review23QueuedAfterBase {
    uint256 internal e;

    function setUp() public override {
        super.setUp();
        _firstLock(10e18);
        (, uint256 tail) = staking.ledgerOf(a);
        e = tail - 1;
        for (uint256 k = 0; k < 4; ++k) {
            _deposit(1);
            vm.prank(address(drawModule));
            staking.lockSeat(a, 1, 0xC0C0 + k, 1, 0);
        }
    }

    /// @dev 8 entries after e (4 FLOWs with a deposit each), cold, then warm, then 1 entry after; then 9
    /// entries (the fallback before the O(1) fix; exact since).
    function test_QueuedAfterGas() public {
        (, uint256 tail) = staking.ledgerOf(a);
        assertEq(tail - e - 1, 8, "setup: 8 entries after e");
        uint256 g = gasleft();
        uint256 q = staking.queuedAfter(a, e);
        uint256 g8 = g - gasleft();
        assertEq(q, 4, "exact: the 4 dust deposits after e");
        g = gasleft();
        staking.queuedAfter(a, e);
        uint256 g8warm = g - gasleft();
        emit log_named_uint("queuedAfter, 8 entries after e (4 FLOWs), cold", g8);
        emit log_named_uint("queuedAfter, 8 entries after e, warm", g8warm);
    }

    function test_QueuedAfterGasFallback() public {
        _deposit(1);
        uint256 g = gasleft();
        uint256 q = staking.queuedAfter(a, e);
        uint256 g9 = g - gasleft();
        emit log_named_uint("queuedAfter, 9 entries after e (exact), books slot warm from the deposit", g9);
        assertEq(q, 5, "exact: the 5 dust deposits after e");
    }

    function test_QueuedAfterGasOneAfter() public {
        (, uint256 tail) = staking.ledgerOf(a);
        uint256 g = gasleft();
        staking.queuedAfter(a, tail - 2);
        uint256 g1 = g - gasleft();
        emit log_named_uint("queuedAfter, 1 entry after e, cold", g1);
    }
}
