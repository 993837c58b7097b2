// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase} from "../utils/TestBase.sol";
import {LockReviewHandler} from "../LockAggregationReviewInvariants.t.sol";
import {Staking} from "../../src/Staking.sol";
import {LedgerPacking} from "../../src/libraries/LedgerPacking.sol";
import {SeatWord} from "../../src/libraries/SeatWord.sol";

/// @notice LockReviewHandler plus the traffic that 55d381a's rule (an extension of entry e leaves out only
/// `queuedAfter(e)`) has to survive, between any two pages of a draw: third-party deposits of any size from fresh
/// addresses (one more FLOW after e each time), other sessions' pages that seat the auditor after e (SESSION entries
/// after e, so more than 8 - the old QUEUED_SCAN - entries may follow it), withdrawal requests by the seated auditor
/// itself (parked while its pool stands in a readable snapshot, so `_lockLimit`'s hold basis and relief apply), top-ups
/// by the seated auditor, and whole epochs passing (holds expire, batches are queued behind or ahead of the open
/// entries). Every draw it makes records a `LockRefused` revert (the draw module and `lockSeats` disagreeing: every
/// draw of the panel reverts).
contract Review23QueuedAfterHandler is LockReviewHandler {
    uint256 public lockRefusedReverts;
    uint256 internal _fresh;

    /// @notice Coverage: draw calls made while a seated auditor's entry had later entries and deposits
    /// queued before it (the case 55d381a changed), and while more than 8 (the old QUEUED_SCAN) followed it.
    uint256 internal constant OLD_QUEUED_SCAN = 8;
    uint256 public ghostBehindEarlierDeposits;
    uint256 public ghostPastScan;

    function _drawChecked(uint256 sid, uint256 seats) internal {
        address[] memory seated = _auditors(sid);
        for (uint256 i = 0; i < seated.length; ++i) {
            uint256 e = SeatWord.entry(_seatWord(sid, seated[i]));
            (uint256 head, uint256 tail) = staking.ledgerOf(seated[i]);
            if (e < head || e + 1 >= tail) continue;
            uint256 queued = staking.queuedAfter(seated[i], e);
            assertEq(queued, _bruteQueuedAfter(seated[i], e, tail), "queuedAfter: exact");
            if (tail - e - 1 > OLD_QUEUED_SCAN) {
                ++ghostPastScan;
            } else if (queued < staking.poolOf(seated[i]).pendingDeposits) {
                ++ghostBehindEarlierDeposits;
            }
        }
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        try sessions.draw(sid, seats) {}
        catch (bytes memory err) {
            if (err.length >= 4 && bytes4(err) == Staking.LockRefused.selector) ++lockRefusedReverts;
        }
    }

    /// @dev The deposits of the FLOW entries after `e`, read one by one.
    function _bruteQueuedAfter(address a, uint256 e, uint256 tail) internal view returns (uint256 sum) {
        for (uint256 j = e + 1; j < tail; ++j) {
            (uint256 word,) = staking.entryWordOf(a, j);
            if (LedgerPacking.kind(word) == LedgerPacking.KIND_FLOW) sum += staking.flowOf(a, j).deposits;
        }
    }

    function _drawingSession(uint256 which) internal view returns (uint256 sid) {
        sid = _pick(which);
        if (sid != 0 && !_drawing(sid)) sid = 0;
    }

    function _deposit(address a, uint256 amount) internal {
        address h = address(uint160(0x23F00000 + ++_fresh));
        token.transfer(h, amount);
        vm.startPrank(h);
        token.approve(address(staking), amount);
        try staking.stake(a, amount) {} catch {}
        vm.stopPrank();
    }

    /// @dev Third parties deposit into the pools `sid` has seated (a FLOW after their entry), another
    /// session draws a page (SESSION entries after it), more deposits, then `sid` draws on.
    function depositsAndCrowdBetweenPages(uint256 which, uint256 other, uint256 amount, uint256 page)
        external
        sweep
    {
        uint256 sid = _drawingSession(which);
        if (sid == 0) return;
        address[] memory seated = _auditors(sid);
        amount = amount % 4 == 0 ? 1 : bound(amount, 1, 150e18);
        uint256 rounds = 1 + page % 3;
        for (uint256 r = 0; r < rounds; ++r) {
            for (uint256 i = 0; i < seated.length && i < 4; ++i) {
                _deposit(seated[(i + page) % seated.length], amount);
            }
            uint256 o = _pick(other + r);
            if (o != 0 && o != sid && _drawing(o)) _drawChecked(o, bound(page, 1, 9));
        }
        for (uint256 i = 0; i < 3 && _drawing(sid); ++i) {
            _drawChecked(sid, bound(page, 1, 9));
        }
    }

    /// @dev A seated auditor requests a withdrawal of part of its own shares (parked in a hold while its
    /// pool stands in a snapshot), or tops up, then the draw goes on.
    function seatedMovesBetweenPages(uint256 which, uint256 who, uint256 fraction, uint256 page)
        external
        sweep
    {
        uint256 sid = _drawingSession(which);
        if (sid == 0) return;
        address[] memory seated = _auditors(sid);
        if (seated.length == 0) return;
        address a = seated[who % seated.length];
        if (fraction % 3 == 0) {
            uint256 amount = bound(fraction, 1e18, 120e18);
            if (token.balanceOf(a) < amount) token.transfer(a, amount);
            vm.startPrank(a);
            token.approve(address(staking), amount);
            try staking.stake(a, amount) {} catch {}
            vm.stopPrank();
        } else {
            uint256 shares = staking.sharesOf(a, a) * bound(fraction, 1, 90) / 100;
            if (shares != 0) {
                vm.prank(a);
                try staking.requestWithdrawal(a, shares) {} catch {}
            }
        }
        for (uint256 i = 0; i < 2 && _drawing(sid); ++i) {
            _drawChecked(sid, bound(page, 1, 9));
        }
    }

    /// @dev A whole epoch passes (holds expire; expired batches join the tail FLOW at the next move).
    function passEpoch(uint256 who) external sweep {
        vm.roll(block.number + EPOCH_BLOCKS);
        vm.warp(block.timestamp + EPOCH_BLOCKS * 12);
        if (who % 2 == 0) staking.poke(auditorAddrs[who % auditorAddrs.length]);
    }

    /// @dev A checked page of any session.
    function drawChecked(uint256 which, uint256 maxSeats) external sweep {
        uint256 sid = _pick(which);
        if (sid == 0) return;
        _drawChecked(sid, bound(maxSeats, 1, 9));
    }
}

/// @title Review23QueuedAfterInvariants (outside review 23 of 55d381a)
/// @notice Property SlashableStakeBacksEverySeat under 55d381a's `queuedAfter` rule, and the draw module
/// agreeing with `lockSeats` (no draw reverts `LockRefused`). Attack: the handler above, adversarial
/// deposits, other panels, withdrawals/holds and epochs between every two pages. Result: holds (no
/// counterexample in 100 runs x 100 calls, 21 s). Coverage (a temporary `afterInvariant` probe on the ghosts):
/// the first run alone made 7 draw calls with a seated auditor extending an entry that later entries follow
/// while deposits queued before it backed it (the case 55d381a changed); none past QUEUED_SCAN (the
/// fallback is covered by Review23QueuedScanFallbackChargesHonest instead). Since the fix (QUEUED_SCAN
/// removed, `queuedAfter` exact in O(1)) every checked page also asserts `queuedAfter(e)` equals the
/// brute-force sum of the FLOW deposits after e. Command:
/// `scripts/forge test --match-path 'contracts/test/attacks/Review23QueuedAfterInvariants*' -vv`.
contract Review23QueuedAfterInvariants is TestBase {
    struct FuzzSelector {
        address addr;
        bytes4[] selectors;
    }

    Review23QueuedAfterHandler internal handler;

    function setUp() public {
        handler = new Review23QueuedAfterHandler();
    }

    function targetContracts() public view returns (address[] memory targets) {
        targets = new address[](1);
        targets[0] = address(handler);
    }

    function targetSelectors() public view returns (FuzzSelector[] memory s) {
        s = new FuzzSelector[](1);
        bytes4[] memory sel = new bytes4[](13);
        sel[0] = LockReviewHandler.open.selector;
        sel[1] = Review23QueuedAfterHandler.drawChecked.selector;
        sel[2] = LockReviewHandler.drive.selector;
        sel[3] = LockReviewHandler.settleSome.selector;
        sel[4] = LockReviewHandler.passTime.selector;
        sel[5] = LockReviewHandler.stakeMore.selector;
        sel[6] = LockReviewHandler.withdraw.selector;
        sel[7] = LockReviewHandler.toggleRegistration.selector;
        sel[8] = LockReviewHandler.drainAny.selector;
        sel[9] = LockReviewHandler.stakeBetweenPages.selector;
        sel[10] = Review23QueuedAfterHandler.depositsAndCrowdBetweenPages.selector;
        sel[11] = Review23QueuedAfterHandler.seatedMovesBetweenPages.selector;
        sel[12] = Review23QueuedAfterHandler.passEpoch.selector;
        s[0] = FuzzSelector({addr: address(handler), selectors: sel});
    }

    function _staking() internal view returns (Staking st) {
        (, address s,,,,,) = handler.contracts();
        st = Staking(s);
    }

    /// @dev Every pending SESSION entry's lock is collectable when it applies (the walk of
    /// LockAggregationReviewInvariants), the pool's lock is the sum of its entries' locks, and no draw
    /// reverted `LockRefused`.
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_SlashableStakeBacksEverySeat_queuedAfter() public view {
        assertEq(handler.lockRefusedReverts(), 0, "DrawAgreesWithLockSeats: a draw reverted LockRefused");
        Staking st = _staking();
        address[] memory list = handler.auditorList();
        for (uint256 i = 0; i < list.length; ++i) {
            Staking.PoolView memory p = st.poolOf(list[i]);
            (uint256 head, uint256 tail) = st.ledgerOf(list[i]);
            assertEq(
                p.locked, _walkLedger(st, list[i], p, head, tail), "locked = the locks of pending entries"
            );
            assertLe(p.locked, p.assets + p.pendingDeposits, "locked stake within the pool's stake");
        }
    }

    /// @dev As LockAggregationReviewInvariantsTest._walkLedger: each SESSION entry slashed in full, each
    /// FLOW redeeming its withdrawal shares at the price of then and adding its deposits.
    function _walkLedger(Staking st, address a, Staking.PoolView memory p, uint256 head, uint256 tail)
        internal
        view
        returns (uint256 sum)
    {
        uint256 assets = p.assets;
        uint256 shares = p.totalShares;
        for (uint256 e = head; e < tail; ++e) {
            (uint256 word,) = st.entryWordOf(a, e);
            if (LedgerPacking.kind(word) == LedgerPacking.KIND_SESSION) {
                (,, uint256 locked,) = LedgerPacking.openFields(word);
                sum += locked;
                assertLe(locked, assets + 1e6, "SlashableStakeBacksEverySeat: a lock its slash cannot reach");
                assets = assets > locked ? assets - locked : 0;
            } else {
                Staking.Flow memory f = st.flowOf(a, e);
                if (f.withdrawShares != 0 && f.withdrawGeneration == p.generation && shares != 0) {
                    uint256 out = f.withdrawShares >= shares ? assets : assets * f.withdrawShares / shares;
                    assets -= out;
                    shares = f.withdrawShares >= shares ? 0 : shares - f.withdrawShares;
                }
                if (f.deposits != 0) {
                    shares += assets == 0 || shares == 0 ? f.deposits : f.deposits * shares / assets;
                    assets += f.deposits;
                }
            }
        }
    }
}
