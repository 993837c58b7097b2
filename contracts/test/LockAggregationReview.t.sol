// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "./utils/StakingFixture.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {IStaking} from "../src/interfaces/IStaking.sol";
import {Staking} from "../src/Staking.sol";
import {SeatWord} from "../src/libraries/SeatWord.sol";
import {LedgerPacking} from "../src/libraries/LedgerPacking.sol";
import {IDrawModule} from "../src/interfaces/IDrawModule.sol";
import {ISettlementModule} from "../src/interfaces/ISettlementModule.sol";
import {Vm} from "./utils/TestBase.sol";

/// @notice Outside review of the draw's lock aggregation (`seatQuote` + `lockSeats`): each test is one
/// attack, named after the property it protects (docs/protocol-v2.md, "Reviewed: lock aggregation").
contract LockAggregationReviewTest is StakingFixture {
    uint256 internal constant FEE = 4000e18;
    uint256 internal constant LOCK = 8e18; // slashAmount of the fixture's session params

    function setUp() public {
        _deploy();
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.seatCap = 64;
        vm.prank(owner);
        sessions.setParams(p);
    }

    // ------------------------------------------------ stake that backs a seat can be slashed

    /// @dev Attack: the auditor's seats of a panel share one ledger entry, opened at its first seat.
    /// A deposit made between two pages waits in a FLOW entry behind that entry, yet backs the locks
    /// the next page adds to it; when the entry is applied its slash is capped by the assets of the
    /// shares that existed before the deposit. The attacker (huge snapshot weight, 100 TRUST left at
    /// the draw) holds 12 seats after page one, deposits 200 TRUST and takes 12 more on page two,
    /// never reveals: 24 seats x 8 TRUST are owed, and on the old code only 100 are taken while the
    /// deposit comes back whole. Property (SlashableStakeBacksEverySeat): every seat's lock is
    /// collected in full when its entry applies.
    function test_SlashableStakeBacksEverySeat_depositBetweenPages() public {
        address attacker = _attackerWithSnapshotWeight();
        uint256 sid = _open(_uniform(24, 1), FEE);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        sessions.draw(sid, 36); // 12 segments
        uint256 firstPage = SeatWord.count(_seatWord(sid, attacker));
        assertEq(firstPage, 12, "setup: the attacker's 100 TRUST back 12 seats, all taken on page one");

        token.transfer(attacker, 200e18);
        vm.prank(attacker);
        staking.stake(attacker, 200e18);
        while (_drawing(sid)) sessions.draw(sid, 36);
        assertTrue(sessions.statusOf(sid) != IAuditSessions.Status.Cancelled, "the draw completes");

        uint256 seats = SeatWord.count(_seatWord(sid, attacker));
        Staking.PoolView memory before = staking.poolOf(attacker);
        _voteAllButAndSettle(sid, attacker);
        staking.drain(attacker, 16);
        Staking.PoolView memory after_ = staking.poolOf(attacker);
        assertEq(after_.locked, 0, "every lock released");
        assertEq(
            before.assets + before.pendingDeposits - after_.assets - after_.pendingDeposits,
            seats * LOCK,
            "SlashableStakeBacksEverySeat: a seat's lock was not collected from the stake that backed it"
        );
    }

    /// @dev The rule at Staking's seam, for the per-seat `lockSeat` path (and the quote the draw reads):
    /// a deposit queued behind an entry backs a new entry and more seats of the last entry, never more
    /// seats of an entry that it follows. Property (SlashableStakeBacksEverySeat).
    function test_SlashableStakeBacksEverySeat_lockSeatRule() public {
        _addAuditors(1, 1, 100e18);
        address a = auditorAddrs[0];
        vm.prank(address(drawModule));
        (bool ok,, uint256 e1) = staking.lockSeat(a, 1, 11, 80e18, 0);
        assertTrue(ok, "setup: first entry");
        vm.prank(a);
        staking.stake(a, 100e18); // queued in a FLOW behind e1
        IStaking.SeatQuote memory q = staking.seatQuote(a);
        assertEq(staking.queuedAfter(a, e1), 100e18, "queued after e1");
        assertEq(q.lastEntry, e1 + 1, "quote: the FLOW is last");
        vm.prank(address(drawModule));
        (ok,,) = staking.lockSeat(a, 1, 11, 24e18, e1); // 80 + 24 > the 100 of shares
        assertTrue(!ok, "SlashableStakeBacksEverySeat: the deposit backs no more seats of e1");
        uint256 e2;
        vm.prank(address(drawModule));
        (ok,, e2) = staking.lockSeat(a, 1, 12, 100e18, 0);
        assertTrue(ok, "the deposit backs a new entry");
        vm.prank(address(drawModule));
        (ok,,) = staking.lockSeat(a, 1, 12, 20e18, e2);
        assertTrue(ok, "and more seats of the last entry");
        assertEq(staking.poolOf(a).locked, 200e18, "locked");
        assertEq(staking.seatQuote(a).free, 0, "nothing free");
    }

    /// @dev A deposit queued BEFORE an entry applies before it, so its slash reaches it: it backs more seats
    /// of that entry even when a later FLOW (anyone's deposit) or SESSION entry follows it; only deposits
    /// queued after the entry are left out (`queuedAfter`), exactly however many entries follow it (12
    /// SESSION entries and 12 more FLOWs of dust here: the old QUEUED_SCAN fallback counted all 201 TRUST).
    /// Property (Review21DustDepositChargesHonest: a third party's deposit takes no backing away) within
    /// SlashableStakeBacksEverySeat.
    function test_DepositQueuedBeforeAnEntryBacksItsLaterSeats() public {
        _addAuditors(1, 1, 100e18);
        address a = auditorAddrs[0];
        vm.prank(address(drawModule));
        (bool ok,, uint256 e0) = staking.lockSeat(a, 1, 10, 50e18, 0);
        assertTrue(ok, "setup: round 0's entry");
        token.transfer(a, 200e18);
        vm.prank(a);
        staking.stake(a, 200e18); // queued in the FLOW after e0
        vm.prank(address(drawModule));
        uint256 e1;
        (ok,, e1) = staking.lockSeat(a, 1, 11, 100e18, 0);
        assertTrue(ok && e1 == e0 + 2, "setup: the round's entry after the FLOW");
        address third = address(0xD057);
        token.transfer(third, 1e18);
        vm.startPrank(third);
        token.approve(address(staking), 1e18);
        staking.stake(a, 1e18); // a FLOW after e1
        vm.stopPrank();
        assertEq(staking.queuedAfter(a, e1), 1e18, "only the dust follows e1");
        assertEq(staking.queuedAfter(a, e0), 201e18, "both FLOWs follow e0");
        vm.prank(address(drawModule));
        (ok,,) = staking.lockSeat(a, 1, 11, 150e18, e1); // 50 + 250 = 300 = 100 + 200 before e1
        assertTrue(ok, "the deposit queued before e1 backs more of its seats despite the dust after it");
        vm.prank(address(drawModule));
        (ok,,) = staking.lockSeat(a, 1, 11, 1e18, e1);
        assertTrue(!ok, "the dust after e1 backs none of them");
        // 24 more entries after e1 (a SESSION entry, then a FLOW of 1 wei from a fresh holder, 12 times):
        // still exact, and the 200 TRUST queued before e1 still back its seats.
        for (uint256 k = 0; k < 12; ++k) {
            vm.prank(address(drawModule));
            (ok,,) = staking.lockSeat(a, 1, 100 + k, 0, 0);
            assertTrue(ok, "setup: a zero lock opens an entry");
            address h = address(uint160(0xD0570 + k));
            token.transfer(h, 1);
            vm.startPrank(h);
            token.approve(address(staking), 1);
            staking.stake(a, 1);
            vm.stopPrank();
        }
        (, uint256 tail) = staking.ledgerOf(a);
        assertEq(tail - e1 - 1, 25, "setup: 25 entries after e1");
        assertEq(staking.queuedAfter(a, e1), 1e18 + 12, "exact: the dust after e1, not the 200 before it");
        assertEq(staking.queuedAfter(a, e0), 201e18 + 12, "exact: every FLOW after e0");
        assertEq(staking.queuedAfter(a, e0 + 1), 1e18 + 12, "a FLOW entry: the deposits after it");
        assertEq(staking.queuedAfter(a, tail - 1), 0, "the last entry: none");
        vm.prank(address(drawModule));
        (ok,,) = staking.lockSeat(a, 1, 11, 1, e1);
        assertTrue(!ok, "the dust after e1 still backs none of its seats");
    }

    /// @dev The same attack through a delegator: a delegation made between two pages backs no more
    /// seats under the auditor's open entry (the seats it would back go to others).
    function test_SlashableStakeBacksEverySeat_delegationBetweenPages() public {
        address attacker = _attackerWithSnapshotWeight();
        uint256 sid = _open(_uniform(24, 1), FEE);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        sessions.draw(sid, 36);
        address delegator = address(0xDE1E);
        token.transfer(delegator, 500e18);
        vm.startPrank(delegator);
        token.approve(address(staking), type(uint256).max);
        staking.stake(attacker, 500e18);
        vm.stopPrank();
        while (_drawing(sid)) sessions.draw(sid, 36);
        assertEq(SeatWord.count(_seatWord(sid, attacker)), 12, "no seat backed by the queued delegation");
        Staking.PoolView memory p = staking.poolOf(attacker);
        assertLe(p.locked, p.assets, "every lock backed by shares its entry's slash reaches");
    }

    /// @dev The fix refuses only what a later FLOW would shield: with no deposit queued, an entry that
    /// another session's entry follows still takes seats on the next page.
    function test_ExtensionBehindAnotherSessionStillLocks() public {
        _addAuditors(1, 1, 10_000e18);
        address big = auditorAddrs[0];
        _addAuditors(1, 3, 400e18);
        _nextEpoch();
        uint256 a = _open(_uniform(8, 1), FEE);
        uint256 b = _open(_uniform(2, 1), FEE);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        sessions.draw(a, 12); // 4 segments
        uint256 before = SeatWord.count(_seatWord(a, big));
        _drawAll(b);
        assertTrue(_seatWord(b, big) != 0, "setup: session b's entry follows session a's");
        (, uint256 tail) = staking.ledgerOf(big);
        assertTrue(SeatWord.entry(_seatWord(a, big)) + 1 != tail, "setup: a's entry is not the last one");
        while (_drawing(a)) sessions.draw(a, 12);
        assertTrue(SeatWord.count(_seatWord(a, big)) > before, "later pages still seat the auditor");
        _assertLocksExact(a);
        _assertLocksExact(b);
    }

    /// @dev Attack: make `lockSeats` refuse what the draw decided from the quote, so `_flushLocks`
    /// reverts and nobody can draw the session (it would expire as abandoned). Lock amount 0 (a legal
    /// slashAmount) on an entry that a FLOW follows, with locks of another session above the shares'
    /// value but within the backing that queued deposits add: the draw must refuse the seat itself.
    /// Property (DrawAgreesWithLockSeats).
    function test_DrawAgreesWithLockSeats_zeroLockBehindQueuedDeposit() public {
        _addAuditors(1, 1, 10_000e18);
        address x = auditorAddrs[0];
        _addAuditors(1, 3, 400e18);
        _nextEpoch();
        uint256 slashEntry = _pushEntry(x); // another session's, resolved below with a slash
        uint256 a = _open(_uniform(2, 1), FEE);
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.seatCap = 64;
        p.slashAmount = 0;
        vm.prank(owner);
        sessions.setParams(p);
        uint256 b = _open(_uniform(24, 1), FEE);
        _drawAll(a);
        uint256 lockedA = staking.poolOf(x).locked;
        assertTrue(lockedA > 0, "setup: x holds seats of a");
        sessions.draw(b, 9);
        uint256 seatsB = SeatWord.count(_seatWord(b, x));
        assertTrue(seatsB > 0, "setup: x holds seats of b");
        // Stake worth lockedA / 2 stays (a slash: a withdrawal of snapshot stake would stay lockable).
        _slashNow(x, slashEntry, 10_000e18 - lockedA / 2);
        token.transfer(x, 200e18);
        vm.prank(x);
        staking.stake(x, 200e18);
        Staking.PoolView memory pv = staking.poolOf(x);
        assertTrue(pv.locked <= pv.backing && pv.locked + pv.pendingDeposits > pv.backing, "setup: the gap");
        while (_drawing(b)) sessions.draw(b, 9);
        assertEq(SeatWord.count(_seatWord(b, x)), seatsB, "DrawAgreesWithLockSeats: no seat, no revert");
        assertTrue(sessions.statusOf(b) == IAuditSessions.Status.Drawing, "the draw completes");
    }

    // ------------------------------------------------- locks within one call or transaction

    /// @dev Attack: one call draws 40 segments (120 seats) from four auditors whose stakes back 12 to 24
    /// seats each: the in-memory quote must run out exactly where per-seat locks would. Property
    /// (LockedNeverExceedsBacking): no auditor's locks exceed its backing, and each entry locks
    /// exactly seats x lock.
    function test_LockedNeverExceedsBacking_oneCallManySegments() public {
        _addAuditors(1, 2, 100e18);
        _addAuditors(1, 2, 199e18);
        _nextEpoch();
        uint256 sid = _open(_uniform(40, 1), FEE);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        sessions.draw(sid, 120);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            Staking.PoolView memory p = staking.poolOf(auditorAddrs[i]);
            assertLe(p.locked, p.backing, "LockedNeverExceedsBacking");
        }
        _assertLocksExact(sid);
    }

    /// @dev Attack: two sessions drawn in one transaction from the same thin stakes (each call quotes
    /// after the other's locks were written). Property (LockedNeverExceedsBacking).
    function test_LockedNeverExceedsBacking_twoSessionsOneTransaction() public {
        _addAuditors(1, 4, 100e18);
        _nextEpoch();
        uint256 a = _open(_uniform(10, 1), FEE);
        uint256 b = _open(_uniform(10, 1), FEE);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        sessions.draw(a, 30);
        sessions.draw(b, 30);
        uint256 seats = 0;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            Staking.PoolView memory p = staking.poolOf(auditorAddrs[i]);
            assertLe(p.locked, p.backing, "LockedNeverExceedsBacking");
            seats += SeatWord.count(_seatWord(a, auditorAddrs[i]))
            + SeatWord.count(_seatWord(b, auditorAddrs[i]));
        }
        assertLe(seats * LOCK, 400e18, "seats within the stake of the tier");
        _assertLocksExact(a);
        _assertLocksExact(b);
    }

    /// @dev Property (DrawMovesNoTokens): a draw transfers no token, so no token hook can run between
    /// `seatQuote` and `lockSeats` (the draw's other external calls are static).
    function test_DrawMovesNoTokens() public {
        _addAuditors(1, 4, 400e18);
        _nextEpoch();
        uint256 sid = _open(_uniform(12, 1), FEE);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        vm.recordLogs();
        sessions.draw(sid, 36);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        bytes32 transfer = keccak256("Transfer(address,address,uint256)");
        for (uint256 i = 0; i < logs.length; ++i) {
            assertTrue(logs[i].topics[0] != transfer, "DrawMovesNoTokens");
        }
    }

    /// @dev Property (OnlyTheDrawModuleLocks): nobody else reaches `lockSeats`/`lockSeat`, and only the
    /// core draws round 0.
    function test_OnlyTheDrawModuleLocks() public {
        _addAuditors(1, 1, 400e18);
        address a = auditorAddrs[0];
        vm.startPrank(a);
        vm.expectRevert(Staking.NotDrawModule.selector);
        staking.lockSeats(a, 1, 1, 8e18, 0);
        vm.expectRevert(Staking.NotDrawModule.selector);
        staking.lockSeat(a, 1, 1, 8e18, 0);
        vm.stopPrank();
        vm.prank(address(sessions));
        vm.expectRevert(Staking.NotDrawModule.selector);
        staking.lockSeats(a, 1, 1, 8e18, 0);
        IDrawModule.DrawJob memory job;
        vm.expectRevert(abi.encodeWithSelector(IDrawModule.NotCore.selector, address(this)));
        drawModule.draw(job);
        assertEq(staking.poolOf(a).locked, 0, "nothing locked");
    }

    // ------------------------------------------------------------------- seat cap, snapshot

    /// @dev Property (SeatCapAndDistinctSeatsHold): whatever the cap, page size and lock amount (odd
    /// amounts included, so any rounding would show), every auditor holds at most `seatCap` seats, each
    /// segment seats k distinct auditors, and each entry locks exactly seats x lock.
    function testFuzz_SeatCapAndDistinctSeatsHold(uint8 cap, uint8 page, uint8 segments, uint96 lock) public {
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.seatCap = uint8(bound(cap, 2, 8));
        p.slashAmount = uint96(bound(lock, 1, 30e18));
        vm.prank(owner);
        sessions.setParams(p);
        for (uint256 i = 0; i < 8; ++i) {
            _addAuditors(1, 1, 100e18 + i * 37e18 + 1);
        }
        _nextEpoch();
        uint256 n = bound(segments, 2, 20);
        uint256 sid = _open(_uniform(n, 1), FEE);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        while (_drawing(sid) || sessions.statusOf(sid) == IAuditSessions.Status.Created) {
            sessions.draw(sid, bound(page, 1, 12));
        }
        uint256[] memory perSegment = new uint256[](n);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            uint256[] memory segs = _seats(sid, auditorAddrs[i]);
            assertLe(segs.length, p.seatCap, "seat cap");
            for (uint256 j = 0; j < segs.length; ++j) {
                ++perSegment[segs[j]];
            }
        }
        if (sessions.statusOf(sid) != IAuditSessions.Status.Cancelled) {
            for (uint256 s = 0; s < n; ++s) {
                assertEq(perSegment[s], 3, "k distinct auditors per segment");
            }
        }
        _assertLocksExactWith(sid, p.slashAmount);
    }

    /// @dev Attack: weight in the snapshot that is no longer eligible - an auditor that redeemed below
    /// the minimum, one that deregistered, one whose whole stake one seat locks (lock = 100 TRUST) -
    /// is sampled again and again. Property (IneligibleWeightWinsNoSeat): none of them gets a seat it
    /// cannot back, and the draw still completes from the eligible auditors.
    function test_IneligibleWeightWinsNoSeat() public {
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.seatCap = 64;
        p.slashAmount = 100e18;
        vm.prank(owner);
        sessions.setParams(p);
        _addAuditors(1, 3, 10_000e18);
        (address below, address gone, address locked) = (auditorAddrs[0], auditorAddrs[1], auditorAddrs[2]);
        _addAuditors(1, 4, 1000e18);
        _nextEpoch();
        // Slashes by other sessions after the snapshot (an owner's own withdrawal or deregistration
        // would leave the stake lockable until the snapshot is unreadable, docs/protocol-v2.md 5.1).
        _slashNow(below, _pushEntry(below), 9_950e18);
        vm.prank(gone);
        registry.deregister();
        _slashNow(gone, _pushEntry(gone), 10_000e18);
        _slashNow(locked, _pushEntry(locked), 9_900e18);
        assertLe(staking.poolOf(below).backing, 100e18 - 1, "setup: below the minimum");
        assertLe(staking.poolOf(locked).backing, 101e18, "setup: backs one seat");

        uint256 sid = _open(_uniform(8, 1), FEE);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        vm.recordLogs();
        while (_drawing(sid) || sessions.statusOf(sid) == IAuditSessions.Status.Created) {
            sessions.draw(sid, 24);
        }
        assertEq(_seatWord(sid, below), 0, "below the minimum: no seat");
        assertEq(_seatWord(sid, gone), 0, "deregistered and slashed out: no seat");
        assertLe(SeatWord.count(_seatWord(sid, locked)), 1, "locked stake: no second seat");
        assertLe(staking.poolOf(locked).locked, staking.poolOf(locked).backing, "within backing");
        assertTrue(sessions.statusOf(sid) == IAuditSessions.Status.Drawing, "the draw completes");
        _assertLocksExactWith(sid, 100e18);
    }

    // ------------------------------------------------------------------------ release

    /// @dev Attack: locks of a draw that failed (cancelled) and of a session whose keys were withheld
    /// (expired) must come back once, and a second settlement must not release anything again.
    /// Property (EveryLockReleasedOnce).
    function test_EveryLockReleasedOnce_cancelledAndExpired() public {
        _addAuditors(1, 3, 100e18);
        _addAuditors(1, 1, 400e18);
        _nextEpoch();
        uint256 failed = _open(_uniform(40, 1), FEE); // 120 seats, the tier backs 86
        uint256 withheld = _open(_uniform(2, 1), FEE);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        sessions.draw(withheld, 6);
        while (_drawing(failed) || sessions.statusOf(failed) == IAuditSessions.Status.Created) {
            sessions.draw(failed, 12);
        }
        assertTrue(sessions.statusOf(failed) == IAuditSessions.Status.Cancelled, "setup: the draw failed");
        vm.roll(block.number + 30);
        sessions.advance(withheld);
        assertTrue(sessions.statusOf(withheld) == IAuditSessions.Status.Expired, "setup: keys withheld");

        address[] memory lf = _auditors(failed);
        address[] memory lw = _auditors(withheld);
        settlement.settleBatch(failed, 0, lf);
        settlement.settleBatch(withheld, 0, lw);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            staking.drain(auditorAddrs[i], 16);
            assertEq(staking.poolOf(auditorAddrs[i]).locked, 0, "EveryLockReleasedOnce: released");
            (uint256 head, uint256 tail) = staking.ledgerOf(auditorAddrs[i]);
            assertEq(head, tail, "every entry applied");
        }
        // Locks of a new session, then the old results again: nothing of the new locks is released.
        uint256 next = _open(_uniform(2, 1), FEE);
        _nextEpoch();
        next = _open(_uniform(2, 1), FEE);
        _drawAll(next);
        uint256 lockedBefore = 0;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            lockedBefore += staking.poolOf(auditorAddrs[i]).locked;
        }
        assertEq(lockedBefore, 6 * LOCK, "setup: the new session's locks");
        assertEq(settlement.settleBatch(failed, 0, lf), 0, "nothing settles twice");
        vm.expectRevert(abi.encodeWithSelector(ISettlementModule.AlreadySettled.selector, withheld, lw[0]));
        settlement.settle(withheld, 0, lw[0]);
        uint256 lockedAfter = 0;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            staking.drain(auditorAddrs[i], 16);
            lockedAfter += staking.poolOf(auditorAddrs[i]).locked;
        }
        assertEq(lockedAfter, lockedBefore, "EveryLockReleasedOnce: no lock released twice");
    }

    // ------------------------------------------------------------------------- helpers

    /// @dev Each seated auditor's pending entry locks exactly its seats x LOCK, and its pool's locked
    /// stake is the sum of its pending entries' locks.
    function _assertLocksExact(uint256 sid) internal view {
        _assertLocksExactWith(sid, LOCK);
    }

    function _assertLocksExactWith(uint256 sid, uint256 lock) internal view {
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address a = auditorAddrs[i];
            uint256 w = _seatWord(sid, a);
            (uint256 head, uint256 tail) = staking.ledgerOf(a);
            uint256 sum = 0;
            for (uint256 e = head; e < tail; ++e) {
                (uint256 word,) = staking.entryWordOf(a, e);
                if (LedgerPacking.kind(word) == LedgerPacking.KIND_SESSION) {
                    (,, uint256 l,) = LedgerPacking.openFields(word);
                    sum += l;
                }
            }
            assertEq(staking.poolOf(a).locked, sum, "pool lock = its entries' locks");
            if (w == 0) continue;
            (uint256 entryWord,) = staking.entryWordOf(a, SeatWord.entry(w));
            (,, uint256 locked,) = LedgerPacking.openFields(entryWord);
            assertEq(locked, SeatWord.count(w) * lock, "entry lock = seats x lock");
        }
    }

    /// @dev Tier-1 auditors: the attacker with 10,000 TRUST in the snapshot and three honest ones with
    /// 400 each; after the snapshot another session's slash leaves it 100 TRUST (a withdrawal request
    /// cannot: snapshot stake stays lockable, docs/protocol-v2.md 5.1): it keeps most of the weight but
    /// backs only 12 seats of 8 TRUST.
    function _attackerWithSnapshotWeight() internal returns (address attacker) {
        _addAuditors(1, 1, 10_000e18);
        attacker = auditorAddrs[0];
        _addAuditors(1, 3, 400e18);
        _nextEpoch();
        _slashNow(attacker, _pushEntry(attacker), 9_900e18);
        assertLe(staking.poolOf(attacker).backing, 101e18, "setup: 100 TRUST left");
    }

    /// @dev Everyone commits PASS everywhere; everyone but `skip` reveals; finalize and settle all.
    function _voteAllButAndSettle(uint256 sid, address skip) internal {
        _publish(sid);
        address[] memory list = _auditors(sid);
        uint256 skipMask = 0;
        for (uint256 i = 0; i < list.length; ++i) {
            if (list[i] == skip) skipMask = uint256(1) << i;
        }
        _commitAll(sid, 0, 0);
        _revealAll(sid, 0, 0, skipMask);
        _finalizeAndWait(sid);
        settlement.settleBatch(sid, 0, list);
    }
}
