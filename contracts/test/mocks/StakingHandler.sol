// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingModel} from "./StakingModel.sol";
import {Staking} from "../../src/Staking.sol";
import {StakingLedger} from "../../src/StakingLedger.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";

/// @notice Adversarial traffic for the Staking invariants: stakes and withdrawal requests at any moment,
/// seats locked for sessions shared by several auditors, results delivered in any order and any subset,
/// drains at any moment, commission changes, deregistrations, claims, time passing. The handler is the
/// draw and the settlement module. Every successful call is mirrored in the reference model; calls that
/// must succeed (locks, results, drains, claims that are due) are asserted to.
contract StakingHandler is StakingModel {
    uint256 internal constant FUND = 1_000_000e18;

    address[] internal auditors;
    address[] internal holders;
    uint256 public keyCount;
    uint256[] internal openKeys;
    mapping(uint256 => mapping(address => uint256)) internal entryOf;
    uint256 public calls;
    uint256 public resets;
    uint256 public earlyResults;
    uint256 public queuedFlows;
    uint256 public stakesOk;
    uint256 public locksOk;
    /// @dev Lock attempts while a FLOW that took expired batches is pending (the pro-rata relief, 5.1).
    uint256 public locksBehindHeldFlow;
    uint256 public resultsDelivered;
    uint256 public parkedWithdrawals;

    constructor() {
        _deployStaking();
        for (uint256 i = 0; i < 3; ++i) {
            address a = address(uint160(0xA000 + i));
            auditors.push(a);
            holders.push(a);
            _fund(a, FUND);
            mWallet[a] = FUND;
            _register(a, 1);
            _mInit(a);
        }
        for (uint256 i = 0; i < 2; ++i) {
            address d = address(uint160(0xD000 + i));
            holders.push(d);
            _fund(d, FUND);
            mWallet[d] = FUND;
        }
        // Every auditor starts with enough self-stake to be drawn, and one delegation.
        for (uint256 i = 0; i < 3; ++i) {
            address a = auditors[i];
            _stake(a, a, 1000e18);
            _mStake(a, a, 1000e18);
            _stake(holders[3 + i % 2], a, 500e18);
            _mStake(holders[3 + i % 2], a, 500e18);
        }
    }

    function _params() internal pure override returns (StakingLedger.StakingParams memory p) {
        p.minStake = [uint96(100e18), uint96(100e18), uint96(100e18)];
        p.cooldown = 1 days;
        p.commissionDelay = 1 days;
        p.initialReputation = 0.5e18;
        p.reputationFloor = 0.5e18;
        p.maxCommissionBps = 2000;
    }

    // ------------------------------------------------------------ accessors

    function stakingAddr() external view returns (address) {
        return address(staking);
    }

    // -------------------------------------------------------------- actions

    /// @dev Spread low-entropy fuzzer inputs (0, 1, max ...) over every choice.
    function _mix(uint256 x) internal view returns (uint256) {
        return uint256(keccak256(abi.encode(x, calls)));
    }

    function stake(uint256 who, uint256 to, uint256 amount, bool drainFirst) external {
        ++calls;
        address h = holders[who % holders.length];
        address a = auditors[to % auditors.length];
        amount = _mix(amount);
        amount = amount % 2 == 0 ? bound(amount >> 1, 100e18, 5000e18) : bound(amount >> 1, 1e12, 20_000e18);
        if (drainFirst) _drainAll(a);
        vm.prank(h);
        try staking.stake(a, amount) returns (uint256 shares, uint256 flow) {
            ++stakesOk;
            (uint256 es, uint256 ef) = _mStake(h, a, amount);
            assertEq(shares, es, "stake: shares minted");
            assertEq(flow, ef, "stake: flow");
            if (flow != 0) ++queuedFlows;
        } catch (bytes memory err) {
            bytes4 sel = bytes4(err);
            assertTrue(
                sel == Staking.DepositPending.selector || sel == Staking.NotRegistered.selector
                    || sel == Staking.ZeroAmount.selector,
                "stake: unexpected revert"
            );
            if (drainFirst) _assertStakeRefusalExpected(h, a, sel);
        }
    }

    function _assertStakeRefusalExpected(address h, address a, bytes4 sel) internal view {
        MPool storage p = mPool[a];
        if (sel == Staking.NotRegistered.selector) {
            assertTrue(!p.registered, "stake refused to a registered auditor");
        } else if (sel == Staking.DepositPending.selector) {
            MHolder storage m = mHolder[a][h];
            assertTrue(p.head != p.tail && m.depAmount != 0, "stake refused without a pending deposit");
        }
    }

    function withdraw(uint256 who, uint256 from, uint256 fraction, bool drainFirst) external {
        ++calls;
        address h = holders[who % holders.length];
        address a = auditors[from % auditors.length];
        if (drainFirst) _drainAll(a);
        uint256 held = _mSharesOf(a, h);
        if (held == 0) return;
        uint256 shares = held * bound(fraction, 1, 100) / 100;
        if (shares == 0) shares = 1;
        bool stands = _mStands(a);
        vm.prank(h);
        try staking.requestWithdrawal(a, shares) returns (uint256 id) {
            _mWithdraw(h, a, shares, id, stands);
            if (stands) ++parkedWithdrawals;
        } catch (bytes memory err) {
            // Only a side drain that voided the shares (pool reset) can make them insufficient.
            assertTrue(!drainFirst, "withdrawal refused after a full drain");
            assertTrue(bytes4(err) == Staking.InsufficientShares.selector, "withdraw: unexpected revert");
        }
    }

    function claim(uint256 which) external {
        ++calls;
        if (mWithdrawals.length == 0) return;
        uint256 id = which % mWithdrawals.length;
        MWithdrawal storage w = mWithdrawals[id];
        bool due = w.applied && !w.claimed && block.timestamp >= w.appliedAt + 1 days;
        uint256 before = token.balanceOf(w.holder);
        vm.prank(w.holder);
        try staking.claimWithdrawal(id) {
            assertTrue(due, "claim succeeded before it was due");
            assertEq(token.balanceOf(w.holder) - before, w.amount, "claim: amount");
            w.claimed = true;
            mReserve -= w.amount;
            mWallet[w.holder] += w.amount;
        } catch {
            assertTrue(!due, "a due claim failed");
        }
    }

    /// @dev Lock one seat for `auditor` under an open key or a new one.
    function lock(uint256 who, uint256 keySeed, uint256 amount) external {
        ++calls;
        keySeed = _mix(keySeed);
        address a = auditors[who % auditors.length];
        uint256 key;
        if (openKeys.length == 0 || keySeed % 4 == 0) {
            key = ++keyCount;
            openKeys.push(key);
        } else {
            key = openKeys[(keySeed >> 8) % openKeys.length];
        }
        uint256 entry = entryOf[key][a];
        if (entry != 0 && (entry < mPool[a].head || mEntry[a][entry].resolved)) return;
        amount = bound(_mix(amount), 0, 400e18);
        MPool storage p = mPool[a];
        bool expected = _lockExpected(a, entry, amount);
        if (p.heldFlow >= p.head && p.heldShares != 0 && p.heldGen == p.gen) ++locksBehindHeldFlow;
        // 5.1: batches past their hold join the FLOW before the SESSION entry is pushed.
        if (expected && entry == 0) _mUnpark(a);
        expected = expected && (entry != 0 || p.tail - p.head < 256);
        (,, uint256 bps) = staking.auditorOf(a);
        uint256 predicted = staking.seatQuote(a).nextEntry;
        (bool ok, uint64 rep, uint256 got) = staking.lockSeat(a, 1, key, amount, entry);
        assertTrue(ok == expected, "lockSeat: outcome");
        if (!ok) return;
        ++locksOk;
        if (entry == 0) {
            // No batch past its hold is still outside the ledger: it never bears this session.
            uint256[] storage epochs = mParkedEpochs[a];
            for (uint256 i = 0; i < epochs.length; ++i) {
                assertTrue(_mEpoch() <= epochs[i] + 2, "an expired batch would bear a later session");
            }
            assertEq(rep, p.rep, "lockSeat: reputation in force");
            uint256 e = _mOpenSession(a, key, amount, bps);
            assertEq(got, e, "lockSeat: entry index");
            // The draw module records the quote's nextEntry as the seat's entry (LockMismatch otherwise).
            assertEq(got, predicted, "seatQuote.nextEntry predicts the entry");
            entryOf[key][a] = e;
        } else {
            assertEq(rep, mEntry[a][entry].repAtDraw, "lockSeat: reputation recorded at the first seat");
            assertEq(got, entry, "lockSeat: same entry");
            mEntry[a][entry].locked += amount;
            p.locked += amount;
        }
        // No over-lock: what the pool's shares and deposits are worth covers every lock.
        assertLe(p.locked, p.assets + p.pending, "locks within the pool's value");
    }

    /// @dev `lockSeat`'s outcome in the model. Held stake (5.1) counts: a deregistered or withdrawing
    /// owner cannot refuse snapshot stake. Deposits queued after an entry never back more seats of it when
    /// later entries follow (the lock-aggregation review's SlashableStakeBacksEverySeat).
    function _lockExpected(address a, uint256 entry, uint256 amount) internal view returns (bool) {
        MPool storage p = mPool[a];
        (bool eligible, uint256 limit) = _mLockLimit(a);
        return eligible && p.locked + amount <= limit
            && (entry == 0 || entry + 1 == p.tail || p.locked + amount + _mQueuedAfter(a, entry) <= limit);
    }

    /// @dev The model of `Staking.queuedAfter`: the deposits of the FLOW entries after `entry` (they apply
    /// after it), summed one by one however many entries follow it (Staking's O(1) rule must agree).
    function _mQueuedAfter(address a, uint256 entry) internal view returns (uint256 sum) {
        MPool storage p = mPool[a];
        for (uint256 j = entry + 1; j < p.tail; ++j) {
            MEntry storage f = mEntry[a][j];
            if (f.kind != KIND_FLOW) continue;
            for (uint256 i = 0; i < f.depAmounts.length; ++i) {
                sum += f.depAmounts[i];
            }
        }
    }

    /// @dev Deliver results for a subset of one key's unresolved entries, in a random order.
    function resolve(uint256 keySeed, uint256 mask, uint256 seed) external {
        ++calls;
        if (openKeys.length == 0) return;
        keySeed = _mix(keySeed);
        mask = _mix(mask);
        seed = _mix(seed);
        // Half the time the newest key: its results then often arrive before older sessions' results.
        uint256 ki = keySeed % 2 == 0 ? openKeys.length - 1 : (keySeed >> 1) % openKeys.length;
        uint256 key = openKeys[ki];
        IStaking.SessionResult[] memory rs = _results(key, mask, seed);
        if (rs.length == 0) {
            if (_allResolved(key)) _closeKey(ki);
            return;
        }
        staking.resolve(key, rs);
        resultsDelivered += rs.length;
        for (uint256 i = 0; i < rs.length; ++i) {
            IStaking.SessionResult memory r = rs[i];
            if (r.entry != mPool[r.auditor].head) ++earlyResults;
            uint256 genBefore = mPool[r.auditor].gen;
            _mResolve(r.auditor, r.entry, r.reward, r.slash, r.repMul, r.repAdd);
            if (mPool[r.auditor].gen != genBefore) ++resets;
        }
        if (_allResolved(key)) _closeKey(ki);
    }

    function _results(uint256 key, uint256 mask, uint256 seed)
        internal
        view
        returns (IStaking.SessionResult[] memory rs)
    {
        uint256 n = 0;
        uint256 m = auditors.length;
        address[] memory picked = new address[](m);
        uint256 start = seed % m;
        for (uint256 j = 0; j < m; ++j) {
            address a = auditors[(start + j) % m];
            uint256 e = entryOf[key][a];
            if (e == 0 || mEntry[a][e].resolved || (mask >> j) & 1 == 0) continue;
            picked[n++] = a;
        }
        rs = new IStaking.SessionResult[](n);
        for (uint256 i = 0; i < n; ++i) {
            address a = picked[i];
            uint256 e = entryOf[key][a];
            uint256 r = uint256(keccak256(abi.encode(seed, i)));
            uint256 mul = 0.5e18 + r % 0.5e18;
            uint256 slash = 0;
            uint256 kind = (r >> 64) % 10;
            if (kind < 3) slash = (r >> 96) % (mEntry[a][e].locked + 1);
            else if (kind == 3) slash = mPool[a].assets + mEntry[a][e].locked; // wipe-out attempt
            rs[i] = IStaking.SessionResult({
                auditor: a,
                entry: uint32(e),
                reward: uint96((r >> 128) % 200e18),
                slash: uint96(slash),
                repMul: uint64(mul),
                repAdd: uint64((r >> 192) % (WAD - mul + 1))
            });
        }
    }

    function _allResolved(uint256 key) internal view returns (bool) {
        for (uint256 j = 0; j < auditors.length; ++j) {
            address a = auditors[j];
            uint256 e = entryOf[key][a];
            if (e != 0 && !mEntry[a][e].resolved) return false;
        }
        return true;
    }

    function _closeKey(uint256 ki) internal {
        openKeys[ki] = openKeys[openKeys.length - 1];
        openKeys.pop();
    }

    function drain(uint256 who, uint256 max) external {
        ++calls;
        address a = auditors[who % auditors.length];
        max = bound(max, 0, 6);
        uint256 applied = staking.drain(a, max);
        _mUnpark(a);
        assertEq(applied, _mDrain(a, max), "drain: entries applied");
    }

    function _drainAll(address a) internal {
        uint256 applied = staking.drain(a, 256);
        _mUnpark(a);
        assertEq(applied, _mDrain(a, 256), "drain all: entries applied");
    }

    function setCommission(uint256 who, uint256 bps) external {
        ++calls;
        address a = auditors[who % auditors.length];
        vm.prank(a);
        staking.setCommission(bound(bps, 0, 2000));
    }

    function toggleRegistration(uint256 who) external {
        ++calls;
        address a = auditors[who % auditors.length];
        MPool storage p = mPool[a];
        // Mostly registered: deregistration is rare and short.
        if (p.registered && _mix(who) % 4 != 0) return;
        bool stands = _mStands(a);
        vm.prank(a);
        if (p.registered) {
            registry.deregister();
            _mDeregister(a, stands);
        } else {
            registry.register(1, 1, keccak256(abi.encode("x25519", a)));
            p.registered = true;
            _mUnpark(a);
        }
    }

    function passTime(uint256 secs) external {
        ++calls;
        secs = bound(secs, 1, 2 days);
        vm.warp(block.timestamp + secs);
        vm.roll(block.number + 1 + secs / 12);
    }

    // ------------------------------------------------------------ the checks

    /// @dev Staking equals the model: pools, ledgers, positions, withdrawals, weights, tokens.
    function check() external view {
        for (uint256 i = 0; i < auditors.length; ++i) {
            _checkPool(auditors[i]);
        }
        _checkTokens();
        uint256 n = mWithdrawals.length;
        for (uint256 id = n > 40 ? n - 40 : 0; id < n; ++id) {
            MWithdrawal storage w = mWithdrawals[id];
            (, uint256 amount,) = staking.withdrawalOf(id);
            assertEq(amount, w.applied ? w.amount : 0, "withdrawal amount");
        }
    }

    function _checkPool(address a) internal view {
        MPool storage p = mPool[a];
        Staking.PoolView memory v = staking.poolOf(a);
        assertEq(v.assets, p.assets, "pool assets");
        assertEq(v.totalShares, p.shares, "pool shares");
        assertEq(v.exitingShares, p.exiting, "exiting shares");
        assertEq(v.pendingDeposits, p.pending, "pending deposits");
        assertEq(v.locked, p.locked, "locked stake");
        assertEq(v.reputation, p.rep, "reputation composed in draw order");
        assertEq(v.generation, p.gen, "generation");
        assertEq(v.backing, _mBacking(a), "backing");
        (uint256 head, uint256 tail) = staking.ledgerOf(a);
        assertEq(head, p.head, "ledger head");
        assertEq(tail, p.tail, "ledger tail");
        assertEq(staking.weightOf(a), _mWeight(a), "sortition weight");
        _checkQuote(a);
        _checkQueuedAfter(a, head, tail);
        for (uint256 j = 0; j < holders.length; ++j) {
            address h = holders[j];
            (uint256 shares, uint256 dep, uint256 flow) = staking.positionOf(a, h);
            assertEq(shares, _mSharesOf(a, h), "holder shares");
            assertEq(dep, mHolder[a][h].depAmount, "holder pending deposit");
            assertEq(flow, mHolder[a][h].depFlow, "holder pending flow");
        }
    }

    /// @dev `queuedAfter` of every pending entry (and of the last applied one) is the model's brute-force
    /// sum of the deposits of the FLOW entries after it, summed from the tail down (one pass).
    function _checkQueuedAfter(address a, uint256 head, uint256 tail) internal view {
        uint256 after_ = 0;
        for (uint256 e = tail; e > head;) {
            --e;
            assertEq(
                staking.queuedAfter(a, e), after_, "queuedAfter: the deposits of the FLOWs after the entry"
            );
            MEntry storage f = mEntry[a][e];
            if (f.kind != KIND_FLOW) continue;
            for (uint256 i = 0; i < f.depAmounts.length; ++i) {
                after_ += f.depAmounts[i];
            }
        }
        assertEq(after_, mPool[a].pending, "model: every pending deposit waits in a pending FLOW");
        if (head > 1) assertEq(staking.queuedAfter(a, head - 1), after_, "queuedAfter: an applied entry");
    }

    /// @dev The quote is the model's pro-rata limit (5.1): held locks refuse no later snapshot's draw.
    function _checkQuote(address a) internal view {
        (bool eligible, uint256 limit) = _mLockLimit(a);
        IStaking.SeatQuote memory q = staking.seatQuote(a);
        assertTrue(q.eligible == eligible, "quote: eligible");
        assertEq(q.free, eligible ? limit - mPool[a].locked : 0, "quote: free");
    }

    function _checkTokens() internal view {
        uint256 pooled = 0;
        uint256 pending = 0;
        for (uint256 i = 0; i < auditors.length; ++i) {
            pooled += mPool[auditors[i]].assets;
            pending += mPool[auditors[i]].pending;
        }
        assertEq(staking.totalPooled(), pooled, "total pooled");
        assertEq(staking.pendingDeposits(), pending, "pending deposits total");
        assertEq(staking.storedRewards(), mStoredRewards, "stored rewards");
        assertEq(staking.withdrawalReserve(), mReserve, "withdrawal reserve");
        assertEq(
            token.balanceOf(address(staking)),
            pooled + pending + mStoredRewards + mReserve,
            "Staking balance == books"
        );
        assertEq(token.balanceOf(address(treasury)), mToTreasury, "slashes reached the treasury");
        for (uint256 j = 0; j < holders.length; ++j) {
            assertEq(token.balanceOf(holders[j]), mWallet[holders[j]], "wallet (stakes, claims, commission)");
        }
    }
}
