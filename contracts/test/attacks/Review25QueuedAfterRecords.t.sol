// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Review23QueuedAfterBase} from "./Review23QueuedAfterLedgerOrder.t.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";
import {LedgerPacking} from "../../src/libraries/LedgerPacking.sol";

/// @dev The two storage cheatcodes TestBase's Vm leaves out.
interface VmStorage {
    function load(address target, bytes32 slot) external view returns (bytes32);
    function store(address target, bytes32 slot, bytes32 value) external;
}

/// @notice Review 25 helpers: a second tier-1 pool `b` (200 TRUST), deposits into either pool by fresh
/// holders, the brute-force sum of the deposits of the FLOW entries after an entry, read from the ledger.
abstract contract Review25QueuedAfterBase is Review23QueuedAfterBase {
    address internal b;

    function setUp() public virtual override {
        super.setUp();
        _addAuditors(1, 1, 200e18);
        b = auditorAddrs[1];
        _nextEpoch();
    }

    function _depositTo(address pool, uint256 amount) internal returns (uint256 gas) {
        address h = address(uint160(0x25E00000 + ++_fresh));
        token.transfer(h, amount);
        vm.startPrank(h);
        token.approve(address(staking), amount);
        gas = gasleft();
        staking.stake(pool, amount);
        gas -= gasleft();
        vm.stopPrank();
    }

    /// @dev The deposits of the FLOW entries after `e` (every pending one for an applied `e`).
    function _brute(address pool, uint256 e) internal view returns (uint256 sum) {
        (uint256 head, uint256 tail) = staking.ledgerOf(pool);
        uint256 from = e < head ? head : e + 1;
        for (uint256 j = from; j < tail; ++j) {
            (uint256 word,) = staking.entryWordOf(pool, j);
            if (LedgerPacking.kind(word) == LedgerPacking.KIND_FLOW) sum += staking.flowOf(pool, j).deposits;
        }
    }

    /// @dev Every entry of `pool`'s ledger (and the last applied one, and one past the tail).
    function _checkPool(address pool) internal view {
        (uint256 head, uint256 tail) = staking.ledgerOf(pool);
        uint256 from = head > 1 ? head - 1 : 0;
        for (uint256 e = from; e <= tail; ++e) {
            assertEq(staking.queuedAfter(pool, e), _brute(pool, e), "QueuedAfterExact");
        }
        assertEq(_brute(pool, 0), staking.poolOf(pool).pendingDeposits, "every pending deposit in a FLOW");
    }

    /// @dev A first lock of `pool` within its free stake (a new SESSION entry), if a slot is free.
    function _firstLockOf(address pool, uint256 amount) internal {
        IStaking.SeatQuote memory q = staking.seatQuote(pool);
        if (!q.eligible || q.nextEntry == 0) return;
        amount = amount % (q.free + 1);
        vm.prank(address(drawModule));
        (bool ok,, uint256 entry) = staking.lockSeat(pool, q.tier, 0xB0B0 + q.nextEntry, amount, 0);
        assertTrue(ok, "a first lock within free locks");
        assertEq(entry, q.nextEntry, "entry as quoted");
    }
}

/// @title Review25QueuedAfterRecords (outside review 25 of 3c633be/a1efb6f: the O(1) `queuedAfter`)
/// @notice Property QueuedAfterExact (and through it SlashableStakeBacksEverySeat / no charged refusal for
/// deposits queued before an entry): `queuedAfter(p, e)` equals the brute-force sum of the deposits in the
/// FLOW entries after `e`, whatever other pools, the registry or the counter do.
/// Attacks, all HELD (no finding):
/// (a) counter wrap: `_queuedEver` set (vm.store, found by scanning for its slot) 7 wei below 2^128, records
///     written on both sides of the wrap: differences taken mod 2^128 stay exact (e0 18, e1 13, e2 3 wei).
/// (b) cross-pool and registry churn: a fuzzed sequence over two pools (first locks, 1-wei and large
///     deposits, extensions within the draw module's rule, withdrawals, results with full slashes: pool
///     resets, drains, epochs, deregistration and re-registration of `b`, which starts holds and unparks
///     batches in FLOWs pushed by `_unparkAt` ahead of SESSION entries); both pools checked after every step.
/// (c) a record of entry e at slot e % 256 and a later entry e + 256 pushed with NO deposit pending (no
///     write): the stale word names e, so e + 256 reads every pending deposit (all queued after it), exact.
/// No other path opens a SESSION entry (`_openEntry` has one caller, `_lock`), none grows pending deposits
/// but `_queueDeposit` (stake's queued branch), and FLOWs are pushed only by `_tailFlow` (never adjacent).
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review25*' -vv`.
contract Review25QueuedAfterRecords is Review25QueuedAfterBase {
    VmStorage internal constant VMS = VmStorage(0x7109709ECfa91a80626fF3989D68f67F5b1DD12D);

    /// @dev The storage slot of `_queuedEver[pool]`: the mapping base whose word for `pool` reads `value`.
    function _counterSlot(address pool, uint256 value) internal view returns (bytes32) {
        for (uint256 s = 0; s < 128; ++s) {
            bytes32 slot = keccak256(abi.encode(pool, s));
            if (uint256(VMS.load(address(staking), slot)) == value) return slot;
        }
        revert("counter slot not found");
    }

    function test_QueuedAfterExactAcrossCounterWrap() public {
        uint256 e0 = _pushEntry(a);
        _deposit(123_457); // counter 123,457 (a value no other slot of the pool holds)
        bytes32 slot = _counterSlot(a, 123_457);
        // No record exists yet (e0 was pushed on an empty ledger): any counter value is consistent.
        VMS.store(address(staking), slot, bytes32(uint256(type(uint128).max) - 6 - 123_457));
        uint256 e1 = _pushEntry(a); // record: 2^128 - 7 - 123,457 (123,457 pending)
        _deposit(123_457 + 5); // counter 2^128 - 2
        uint256 e2 = _pushEntry(a); // record: 2^128 - 2
        _deposit(10); // counter wraps to 8
        uint256 e3 = _pushEntry(a); // record: 8
        _deposit(3); // counter 11
        assertLe(uint256(VMS.load(address(staking), slot)), 99, "setup: the counter wrapped");
        _checkPool(a);
        assertEq(staking.queuedAfter(a, e0), 123_457 + 123_462 + 13, "every deposit after e0");
        assertEq(staking.queuedAfter(a, e1), 123_462 + 13, "the record before the wrap");
        assertEq(staking.queuedAfter(a, e2), 13, "recorded 2 below 2^128, read after the wrap: 10 + 3");
        assertEq(staking.queuedAfter(a, e3), 3, "recorded after the wrap");
    }

    /// @dev (c): e's record is left in slot e % 256 when e + 256 is pushed with nothing pending.
    function test_StaleRecordOfAnOlderLapIsIgnored() public {
        uint256 e = _pushEntry(a);
        _deposit(1); // FLOW e + 1
        uint256 e2 = _pushEntry(a); // record for e2 (1 wei pending)
        _deposit(2);
        assertEq(staking.queuedAfter(a, e2), 2, "setup: e2's record");
        // Apply everything, then walk the ring to e2 + 256 with nothing pending at its push.
        _slashNow(a, e, 0);
        _slashNow(a, e2, 0);
        (uint256 head, uint256 tail) = staking.ledgerOf(a);
        assertEq(head, tail, "setup: empty ledger, nothing pending");
        while (true) {
            (, tail) = staking.ledgerOf(a);
            if (tail == e2 + 255) break;
            uint256 x = _pushEntry(a);
            _slashNow(a, x, 0); // applied at once: the ledger stays empty
        }
        uint256 keep = _pushEntry(a); // keeps the ledger non-empty: `lap` takes `_noteQueuedAt`'s path
        uint256 lap = _pushEntry(a);
        assertEq(lap, e2 + 256, "setup: e2's slot reused");
        assertEq(lap % 256, e2 % 256, "same slot");
        _deposit(40); // after `lap`: must count 40, not 40 - (counter at e2's push)
        _checkPool(a);
        assertEq(staking.queuedAfter(a, lap), 40, "a stale record of an older lap is ignored");
        assertEq(staking.queuedAfter(a, keep), 40, "and the entry before it counts the same 40");
    }

    function _withdrawFrom(address pool, address holder, uint256 pct) internal {
        uint256 shares = staking.sharesOf(pool, holder) * pct / 100;
        if (shares == 0) return;
        vm.prank(holder);
        try staking.requestWithdrawal(pool, shares) {} catch {}
    }

    function _resultOf(address pool, uint256 r) internal {
        (uint256 head, uint256 tail) = staking.ledgerOf(pool);
        if (head == tail) return;
        uint256 e = head + r % (tail - head);
        (uint256 word,) = staking.entryWordOf(pool, e);
        if (LedgerPacking.kind(word) != LedgerPacking.KIND_SESSION || LedgerPacking.isResolved(word)) return;
        (,, uint256 locked,) = LedgerPacking.openFields(word);
        _slashNow(pool, e, (r >> 16) % 2 == 0 ? 1_000e18 : locked * ((r >> 17) % 100) / 100);
    }

    function _extendOf(address pool, uint256 pick) internal {
        (uint256 head, uint256 tail) = staking.ledgerOf(pool);
        if (head == tail) return;
        uint256 e = head + pick % (tail - head);
        (uint256 word,) = staking.entryWordOf(pool, e);
        if (LedgerPacking.kind(word) != LedgerPacking.KIND_SESSION || LedgerPacking.isResolved(word)) return;
        IStaking.SeatQuote memory q = staking.seatQuote(pool);
        if (!q.eligible) return;
        uint256 queued = e == q.lastEntry ? 0 : staking.queuedAfter(pool, e);
        if (queued > q.free) return;
        uint256 amount = (pick >> 8) % (q.free - queued + 1);
        vm.prank(address(drawModule));
        (bool ok,,) = staking.lockSeat(pool, q.tier, 0xB0B0 + e, amount, e);
        assertTrue(ok, "an extension within free less queuedAfter locks");
    }

    bool internal _bOut;

    /// @dev A deposit by a fresh holder; refused (NotRegistered) while `b` is deregistered.
    function _tryDepositTo(address pool, uint256 amount) internal {
        address h = address(uint160(0x25F00000 + ++_fresh));
        token.transfer(h, amount);
        vm.startPrank(h);
        token.approve(address(staking), amount);
        try staking.stake(pool, amount) {} catch {}
        vm.stopPrank();
    }

    function _churnB() internal {
        vm.startPrank(b);
        if (_bOut) {
            try registry.register(1, uint64(1) << 1, keccak256(abi.encode("x25519", b))) {
                _bOut = false;
            } catch {}
        } else {
            try registry.deregister() {
                _bOut = true;
            } catch {}
        }
        vm.stopPrank();
    }

    /// @dev (b): two pools, registry churn; both checked after every step.
    function testFuzz_QueuedAfterExactTwoPoolsAndChurn(uint256 seed) public {
        for (uint256 i = 0; i < 40; ++i) {
            uint256 r = uint256(keccak256(abi.encode(seed, i)));
            address pool = r % 2 == 0 ? a : b;
            r >>= 1;
            uint256 op = r % 11;
            r >>= 8;
            if (op <= 1) {
                _firstLockOf(pool, r);
            } else if (op == 2) {
                _tryDepositTo(pool, 1 + r % 300e18);
            } else if (op == 3) {
                _tryDepositTo(pool, 1 + r % 3);
            } else if (op == 4) {
                _extendOf(pool, r);
            } else if (op == 5) {
                vm.roll(block.number + EPOCH_BLOCKS);
                staking.poke(pool);
            } else if (op == 6) {
                staking.drain(pool, 1 + r % 4);
            } else if (op == 7) {
                _withdrawFrom(pool, pool == a ? d1 : b, 1 + r % 90);
            } else if (op == 8) {
                _churnB();
            } else {
                _resultOf(pool, r);
            }
            _checkPool(a);
            _checkPool(b);
        }
    }
}

/// @title Review25DustRecordGas (gas griefing of the `_queuedAt` record, LOW, accepted cost)
/// @notice Property: a third party's deposit should not make other parties' draws cost much more.
/// Attack: a 1-wei deposit into a busy pool (ledger not empty) by a stranger stays queued until every
/// session ahead of it settles; meanwhile every first lock of that pool (each draw seating it in a new
/// session, paid by whoever calls the draw) writes a `_queuedAt` record, from zero in each of the pool's 256
/// ring slots the first time (~22.7k), ~5k in later laps (Review23QueuedAfterExact's figure).
/// Measured (this test, one transaction, slots cold): first lock 33,370 gas with nothing pending, 54,881
/// with the stranger's 1 wei pending (avg of 20): +21,511 per first lock, +430,237 over the 20 sessions
/// opened while the dust waits, for one 186,741-gas, 1-wei stake by the griefer (~2.3x; bounded by
/// 256 x ~21.5k = ~5.5M per pool over its lifetime at the first lap, ~5k a lock after; any honest
/// delegator's deposit costs the same). Severity LOW: no block-gas DoS (a 96-seat draw grows by at most
/// ~2.1M if all 96 pools were dusted, each dust a stake of the griefer's), no loss of funds. Fix direction
/// if wanted: pre-warm the 256 `_queuedAt` slots at registration (paid once by the auditor), or keep the
/// record in a word the push writes anyway.
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review25*' -vv`.
contract Review25DustRecordGas is Review25QueuedAfterBase {
    function _lockGas() internal returns (uint256 gas) {
        IStaking.SeatQuote memory q = staking.seatQuote(a);
        vm.prank(address(drawModule));
        gas = gasleft();
        (bool ok,,) = staking.lockSeat(a, 1, 0xF00D + q.nextEntry, 1e18, 0);
        gas -= gasleft();
        assertTrue(ok, "setup: first lock");
    }

    function test_DustDepositTaxesEveryFirstLockWhilePending() public {
        _pushEntry(a); // a busy pool: a pending session ahead
        uint256 clean = 0;
        for (uint256 i = 0; i < 5; ++i) {
            clean += _lockGas();
        }
        clean /= 5;
        uint256 grief = _depositTo(a, 1);
        uint256 dusted = 0;
        for (uint256 i = 0; i < 20; ++i) {
            dusted += _lockGas();
        }
        emit log_named_uint("first lock, nothing pending (avg of 5)", clean);
        emit log_named_uint("first lock, 1 wei of a stranger pending (avg of 20)", dusted / 20);
        emit log_named_uint("extra per first lock", dusted / 20 - clean);
        emit log_named_uint("extra over 20 sessions", dusted - 20 * clean);
        emit log_named_uint("griefer's 1-wei stake", grief);
        assertGe(dusted / 20 - clean, 21_000, "a fresh record slot per first lock");
        assertLe(dusted / 20 - clean, 25_000, "and nothing more");
    }
}
