// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "../utils/StakingFixture.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";
import {StakingLedger} from "../../src/StakingLedger.sol";
import {LedgerPacking} from "../../src/libraries/LedgerPacking.sol";

/// @title Review9ExpiredBatchAtFullLedgerKeepsTheQuote (outside review 9 of main a14de6d, StakingHolds)
/// @notice Property (docs/protocol-v2.md 5.1, "Held locks refuse no later snapshot"; DrawModule's
/// `LockMismatch`): at the ledger's capacity edge, with a batch past its hold still outside the ledger,
/// `seatQuote` predicts exactly what `lockSeat` does - the entry (tail + 1: `_lock` first pushes the
/// batch's FLOW), the free stake (the pro-rata relief of the lock ahead of the batch), and at 255 pending
/// entries a refusal (nextEntry 0) that reverts nothing and changes no quote although it queued the batch.
/// A mismatch would let any auditor revert every draw that samples it (`LockMismatch`/`LockRefused`
/// revert the whole `draw` call). The random handlers (`StakingHandler`) rarely fill 254 entries; this
/// pins the edge. The leaver still bears its pro-rata part of the lock it backed.
/// @dev Attack tried (did not work): A (1,000 TRUST) and delegator D (1,000 TRUST) share a pool in the
/// snapshots. In epoch c A parks its whole self-stake; a session locks 400 TRUST on the 2,000 TRUST basis.
/// A fills its ledger with zero-lock entries (other sessions), lets the hold end, and hopes the extra FLOW
/// that `_lock` pushes first makes `lockSeat` disagree with `seatQuote`. Measured
/// (`scripts/forge test --match-path 'contracts/test/attacks/Review9ExpiredBatch*' -vv`): 254 pending
/// entries: nextEntry = tail + 1, free = 800 TRUST (1,000 + 400 * 1,000 / 2,000 - 400), `lockSeat` of 700
/// returns that entry; with 400 then 700 slashed in full A's withdrawal pays 800 and D keeps 100.
/// 255 pending entries: nextEntry = 0, `lockSeat` returns false without reverting, the quote's free and
/// eligibility are unchanged and A's batch is now in the tail FLOW; A's withdrawal pays 800 after the 400
/// slash (its pro-rata 200).
contract Review9ExpiredBatchAtFullLedgerKeepsTheQuote is StakingFixture {
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    uint256 internal constant AHEAD_LOCK = 400e18;
    uint256 internal constant CAP = 256;
    address internal a;
    address internal d = address(0xD0D0);
    uint256 internal withdrawalId;
    uint256 internal aheadEntry;

    function setUp() public {
        _deploy();
        _addAuditors(1, 1, STAKE);
        a = auditorAddrs[0];
        token.transfer(d, STAKE);
        vm.startPrank(d);
        token.approve(address(staking), type(uint256).max);
        staking.stake(a, STAKE);
        vm.stopPrank();
        _nextEpoch();
        _nextEpoch(); // the pool stands in the readable snapshots
        uint256 shares = staking.sharesOf(a, a);
        vm.prank(a);
        withdrawalId = staking.requestWithdrawal(a, shares);
        (StakingLedger.Withdrawal memory rec,,) = staking.withdrawalOf(withdrawalId);
        assertTrue(rec.parkEpoch != 0, "setup: parked");
        // During the hold the parked shares back a lock: 400 of the 2,000 TRUST basis.
        vm.prank(address(drawModule));
        bool ok;
        (ok,, aheadEntry) = staking.lockSeat(a, 1, 0xAAAA, AHEAD_LOCK, 0);
        assertTrue(ok, "setup: lock during the hold");
    }

    /// @dev Zero-lock entries of other sessions until `pending` entries are pending, then the hold's end.
    function _fillAndExpire(uint256 pending) internal {
        (uint256 head, uint256 tail) = staking.ledgerOf(a);
        while (tail - head < pending) {
            _pushEntry(a);
            (head, tail) = staking.ledgerOf(a);
        }
        _nextEpoch();
        _nextEpoch();
        _nextEpoch(); // the batch's hold is over; nobody touched the pool
    }

    /// @dev Resolve every pending SESSION entry (the ahead lock and `later` slashed in full) and drain.
    function _settleAll(uint256 laterEntry, uint256 laterLock) internal {
        IStaking.SessionResult[] memory r = new IStaking.SessionResult[](1);
        r[0] = IStaking.SessionResult({
            auditor: a,
            entry: uint32(aheadEntry),
            reward: 0,
            slash: uint96(AHEAD_LOCK),
            repMul: 1e18,
            repAdd: 0
        });
        vm.prank(address(settlement));
        staking.resolve(0xAAAA, r);
        (uint256 head, uint256 tail) = staking.ledgerOf(a);
        for (uint256 e = head; e < tail; ++e) {
            (uint256 word,) = staking.entryWordOf(a, e);
            if (
                e == aheadEntry || e == laterEntry || word == 0
                    || LedgerPacking.kind(word) == LedgerPacking.KIND_FLOW
            ) {
                continue;
            }
            _slashNow(a, e, 0);
        }
        if (laterEntry != 0) {
            r[0].entry = uint32(laterEntry);
            r[0].slash = uint96(laterLock);
            vm.prank(address(settlement));
            staking.resolve(0xBBBB, r);
        }
        staking.drain(a, CAP);
        staking.drain(a, CAP);
        (head, tail) = staking.ledgerOf(a);
        assertEq(head, tail, "every entry applied");
    }

    function _claimA() internal returns (uint256 got) {
        vm.warp(block.timestamp + 1 days + 1);
        uint256 before = token.balanceOf(a);
        vm.prank(a);
        staking.claimWithdrawal(withdrawalId);
        got = token.balanceOf(a) - before;
    }

    /// @notice 254 pending: the quote names tail + 1 and the relief; the lock agrees; the leaver bears 200.
    function test_OneSlotBelowTheEdgeQuotePredictsTheLock() public {
        _fillAndExpire(CAP - 2);
        (, uint256 tail) = staking.ledgerOf(a);
        IStaking.SeatQuote memory q = staking.seatQuote(a);
        assertTrue(q.eligible, "eligible on D's stake and the relief");
        assertEq(q.nextEntry, tail + 1, "the batch's FLOW comes first");
        uint256 relief = AHEAD_LOCK * STAKE / (STAKE + STAKE);
        _near(q.free, STAKE + relief - AHEAD_LOCK, "free = basis + relief - locked");
        emit log_named_decimal_uint("free (TRUST)", q.free, 18);
        uint256 later = 700e18;
        vm.prank(address(drawModule));
        (bool ok,, uint256 entry) = staking.lockSeat(a, 1, 0xBBBB, later, 0);
        assertTrue(ok, "lock within the quote");
        assertEq(entry, q.nextEntry, "lockSeat's entry is the quoted one (no LockMismatch)");
        _settleAll(entry, later);
        uint256 aGot = _claimA();
        uint256 dValue = staking.previewRedeem(a, staking.sharesOf(a, d));
        emit log_named_decimal_uint("A (leaver) received", aGot, 18);
        emit log_named_decimal_uint("D holds", dValue, 18);
        _near(aGot, STAKE - relief, "the leaver bears its pro-rata part of the lock it backed");
        _near(dValue, STAKE - (AHEAD_LOCK - relief) - later, "D bears the rest and the later lock");
    }

    /// @notice 255 pending: nextEntry 0, the lock refuses without reverting, and the quote stays.
    function test_AtTheEdgeRefusalRevertsNothingAndKeepsTheQuote() public {
        _fillAndExpire(CAP - 1);
        IStaking.SeatQuote memory q = staking.seatQuote(a);
        assertEq(q.nextEntry, 0, "no slot for a first lock");
        vm.prank(address(drawModule));
        (bool ok,, uint256 entry) = staking.lockSeat(a, 1, 0xBBBB, 1e18, 0);
        assertTrue(!ok, "refused: the batch's FLOW took the last slot");
        assertEq(entry, 0, "no entry");
        IStaking.SeatQuote memory q2 = staking.seatQuote(a);
        assertEq(q2.free, q.free, "queuing the batch changed no free stake");
        assertTrue(q2.eligible == q.eligible, "nor the eligibility");
        assertEq(q2.nextEntry, 0, "still full");
        (uint256 head, uint256 tail) = staking.ledgerOf(a);
        assertEq(tail - head, CAP, "the batch's FLOW is the last entry");
        _settleAll(0, 0);
        uint256 aGot = _claimA();
        emit log_named_decimal_uint("A (leaver) received", aGot, 18);
        _near(aGot, STAKE - AHEAD_LOCK / 2, "the leaver bears half the lock it backed");
    }

    function _near(uint256 x, uint256 y, string memory message) internal pure {
        assertTrue(x > y ? x - y <= 1e6 : y - x <= 1e6, message);
    }
}
