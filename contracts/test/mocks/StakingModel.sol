// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingTestBase} from "./StakingTestBase.sol";

/// @notice A plain reference model of the pools and their ledgers, for differential invariant tests.
/// @dev It follows docs/protocol-v2.md sections 3-4 with none of Staking's machinery: entries are
/// array elements applied strictly in index order, every holder's share of a FLOW is credited eagerly
/// when the FLOW applies, and results carry plain numbers. If Staking applied a result to the wrong
/// shares, in the wrong order, at the wrong price or with the wrong commission, its state would leave
/// the model's.
abstract contract StakingModel is StakingTestBase {
    uint256 internal constant KIND_SESSION = 1;
    uint256 internal constant KIND_FLOW = 2;
    uint256 internal constant SIDE = 4;
    uint256 internal constant FLOOR = 1e9;

    struct MPool {
        uint256 assets;
        uint256 shares;
        uint256 exiting;
        uint256 pending;
        uint256 locked;
        uint256 rep;
        uint256 gen;
        uint256 head;
        uint256 tail;
        bool registered;
        uint256 holdEpoch;
        // The newest FLOW that took batches after their hold (5.1): its batches' shares, their generation.
        uint256 heldFlow;
        uint256 heldShares;
        uint256 heldGen;
    }

    struct MEntry {
        uint256 kind;
        uint256 key;
        uint256 locked;
        uint256 bps;
        uint256 repAtDraw;
        bool resolved;
        uint256 net;
        uint256 slash;
        uint256 mul;
        uint256 add;
        address[] depHolders;
        uint256[] depAmounts;
        uint256[] withdrawIds;
    }

    struct MWithdrawal {
        address holder;
        address auditor;
        uint256 shares;
        uint256 gen;
        bool applied;
        uint256 amount;
        uint256 appliedAt;
        bool claimed;
    }

    struct MHolder {
        uint256 shares;
        uint256 gen;
        uint256 depAmount;
        uint256 depFlow;
    }

    mapping(address => MPool) internal mPool;
    mapping(address => mapping(uint256 => MEntry)) internal mEntry;
    mapping(address => mapping(address => MHolder)) internal mHolder;
    MWithdrawal[] internal mWithdrawals;
    uint256 internal mStoredRewards;
    uint256 internal mToTreasury;
    uint256 internal mReserve;
    mapping(address => uint256) internal mWallet;
    /// @dev Withdrawal ids parked per (auditor, epoch), and the epochs with a batch not yet queued.
    mapping(address => mapping(uint256 => uint256[])) internal mParked;
    mapping(address => uint256[]) internal mParkedEpochs;

    function _mInit(address auditor) internal {
        MPool storage p = mPool[auditor];
        p.rep = _params().initialReputation;
        p.head = 1;
        p.tail = 1;
        p.registered = true;
    }

    function _mBacking(address auditor) internal view returns (uint256) {
        MPool storage p = mPool[auditor];
        uint256 b = p.pending;
        if (p.shares != 0) b += p.assets * (p.shares - p.exiting) / p.shares;
        return b;
    }

    function _mWeight(address auditor) internal view returns (uint256) {
        MPool storage p = mPool[auditor];
        uint256 b = _mBacking(auditor);
        if (!p.registered || b < _params().minStake[1]) return 0;
        return b * (p.rep + _params().reputationFloor) / WAD / 1e12;
    }

    function _mSharesOf(address auditor, address holder) internal view returns (uint256) {
        MHolder storage h = mHolder[auditor][holder];
        return h.gen == mPool[auditor].gen ? h.shares : 0;
    }

    function _mCredit(address auditor, address holder, uint256 minted, uint256 gen) internal {
        MHolder storage h = mHolder[auditor][holder];
        if (h.gen != gen) {
            h.shares = minted;
            h.gen = gen;
        } else {
            h.shares += minted;
        }
    }

    // ------------------------------------------------------------ holds (docs/protocol-v2.md 5.1)

    function _mEpoch() internal view returns (uint256) {
        return block.number / EPOCH_BLOCKS + 1;
    }

    /// @dev Whether the pool has weight in a snapshot a draw can still read (read from the trees, whose
    /// weights `check` compares with the model's at every step).
    function _mStands(address auditor) internal view returns (bool) {
        (bool exists, uint256 leaf) = staking.sortition().leafOf(1, auditor);
        if (!exists) return false;
        uint256 cur = _mEpoch();
        for (uint256 e = cur; e + 2 >= cur && e >= 1; --e) {
            if (staking.sortition().leafWeightAt(1, e, leaf) != 0) return true;
        }
        return false;
    }

    function _mHoldActive(address auditor) internal view returns (bool) {
        uint256 h = mPool[auditor].holdEpoch;
        return h != 0 && _mEpoch() <= h + 2;
    }

    /// @dev What a lock decides on (5.1): eligible, and the limit of locked stake = basis + relief, where
    /// basis = backing + the value of the batches in their own hold, and relief = the part of the locks
    /// ahead of the expired batches still in the pool (unqueued ones, else those of the pending held FLOW:
    /// every lock but those of the entries behind that FLOW, summed here from the entries) that their
    /// shares bear pro rata: ahead * x / (basis - later + x), `later` the deposits of the FLOW they leave in
    /// and of every FLOW after it (minted after they redeem, those bear none of the locks ahead: Review25).
    function _mLockLimit(address auditor) internal view returns (bool eligible, uint256 limit) {
        MPool storage p = mPool[auditor];
        bool registered = p.registered || _mHoldActive(auditor);
        uint256 basis = _mBacking(auditor);
        uint256 inHold = 0;
        uint256 expired = 0;
        uint256[] storage epochs = mParkedEpochs[auditor];
        for (uint256 i = 0; i < epochs.length; ++i) {
            uint256[] storage ids = mParked[auditor][epochs[i]];
            uint256 sum = 0;
            for (uint256 j = 0; j < ids.length; ++j) {
                if (mWithdrawals[ids[j]].gen == p.gen) sum += mWithdrawals[ids[j]].shares;
            }
            if (_mEpoch() > epochs[i] + 2) expired += sum;
            else inHold += sum;
        }
        uint256 ahead = p.locked;
        // The FLOW the expired shares leave in: the tail FLOW an unqueued batch will join (none: a new one).
        uint256 flow = p.tail > p.head && mEntry[auditor][p.tail - 1].kind == KIND_FLOW ? p.tail - 1 : p.tail;
        if (expired == 0 && p.heldFlow >= p.head && p.heldGen == p.gen) {
            expired = p.heldShares;
            flow = p.heldFlow;
            uint256 behind = 0;
            for (uint256 e = p.heldFlow + 1; e < p.tail; ++e) {
                behind += mEntry[auditor][e].locked;
            }
            ahead = ahead > behind ? ahead - behind : 0;
        }
        if (inHold != 0) basis += inHold * p.assets / p.shares;
        if (expired != 0) {
            uint256 x = expired * p.assets / p.shares;
            if (x != 0) limit = ahead * x / (basis - _mDepositsFrom(auditor, flow) + x);
        }
        limit += basis;
        eligible = registered && basis >= 100e18 && p.locked <= limit;
    }

    /// @dev The deposits waiting in FLOW entries from `flow` to the tail, summed one by one.
    function _mDepositsFrom(address auditor, uint256 flow) internal view returns (uint256 sum) {
        MPool storage p = mPool[auditor];
        for (uint256 e = flow; e < p.tail; ++e) {
            MEntry storage f = mEntry[auditor][e];
            if (f.kind != KIND_FLOW) continue;
            for (uint256 i = 0; i < f.depAmounts.length; ++i) {
                sum += f.depAmounts[i];
            }
        }
    }

    /// @dev Batches whose hold is over join the tail FLOW (skipped while the ledger is full).
    function _mUnpark(address auditor) internal {
        MPool storage p = mPool[auditor];
        if (p.holdEpoch == 0) return;
        uint256 cur = _mEpoch();
        uint256[] storage epochs = mParkedEpochs[auditor];
        for (uint256 i = epochs.length; i > 0; --i) {
            uint256 ep = epochs[i - 1];
            bool full = p.tail - p.head >= 256 && mEntry[auditor][p.tail - 1].kind != KIND_FLOW;
            if (cur <= ep + 2 || full) continue;
            uint256 flow = _mPushFlowIfNeeded(auditor);
            uint256[] storage ids = mParked[auditor][ep];
            uint256 sum = 0;
            for (uint256 j = 0; j < ids.length; ++j) {
                mEntry[auditor][flow].withdrawIds.push(ids[j]);
                if (mWithdrawals[ids[j]].gen == p.gen) sum += mWithdrawals[ids[j]].shares;
            }
            if (sum != 0) {
                if (p.heldFlow != flow) (p.heldFlow, p.heldShares, p.heldGen) = (flow, 0, p.gen);
                p.heldShares += sum;
            }
            epochs[i - 1] = epochs[epochs.length - 1];
            epochs.pop();
        }
        if (epochs.length == 0 && cur > p.holdEpoch + 2) p.holdEpoch = 0;
    }

    /// @dev A deregistration (`onDeregister`): held while the pool stands in a readable snapshot.
    function _mDeregister(address auditor, bool stands) internal {
        MPool storage p = mPool[auditor];
        p.registered = false;
        if (stands) p.holdEpoch = _mEpoch();
        _mUnpark(auditor);
    }

    // ------------------------------------------------------------ ledger

    function _mPushFlowIfNeeded(address auditor) internal returns (uint256 flow) {
        MPool storage p = mPool[auditor];
        if (p.tail > p.head && mEntry[auditor][p.tail - 1].kind == KIND_FLOW) return p.tail - 1;
        flow = p.tail;
        mEntry[auditor][flow].kind = KIND_FLOW;
        p.tail = flow + 1;
    }

    function _mDrain(address auditor, uint256 max) internal returns (uint256 applied) {
        MPool storage p = mPool[auditor];
        while (applied < max && p.head < p.tail) {
            MEntry storage e = mEntry[auditor][p.head];
            if (e.kind == KIND_FLOW) {
                _mApplyFlow(auditor, e);
            } else if (e.resolved) {
                mStoredRewards -= e.net;
                _mApplySession(auditor, e);
            } else {
                break;
            }
            ++p.head;
            ++applied;
        }
    }

    function _mApplySession(address auditor, MEntry storage e) internal {
        MPool storage p = mPool[auditor];
        uint256 assets = p.assets + e.net;
        uint256 taken = e.slash > assets ? assets : e.slash;
        assets -= taken;
        p.locked = e.locked > p.locked ? 0 : p.locked - e.locked;
        uint256 r = p.rep * e.mul / WAD + e.add;
        p.rep = r > WAD ? WAD : r;
        mToTreasury += taken;
        if (p.shares == 0 ? assets != 0 : assets * FLOOR < p.shares) {
            mToTreasury += assets;
            assets = 0;
            if (p.shares != 0) {
                p.shares = 0;
                p.exiting = 0;
                ++p.gen;
            }
        }
        p.assets = assets;
    }

    function _mApplyFlow(address auditor, MEntry storage e) internal {
        MPool storage p = mPool[auditor];
        uint256 ws = 0;
        for (uint256 i = 0; i < e.withdrawIds.length; ++i) {
            MWithdrawal storage w = mWithdrawals[e.withdrawIds[i]];
            if (w.gen == p.gen) ws += w.shares;
        }
        uint256 redeemed = 0;
        if (ws != 0) {
            redeemed = ws * (p.assets + 1) / (p.shares + 1);
            p.assets -= redeemed;
            p.shares -= ws;
            p.exiting -= ws;
            mReserve += redeemed;
        }
        for (uint256 i = 0; i < e.withdrawIds.length; ++i) {
            MWithdrawal storage w = mWithdrawals[e.withdrawIds[i]];
            w.applied = true;
            w.appliedAt = block.timestamp;
            w.amount = ws != 0 && w.gen == p.gen ? w.shares * redeemed / ws : 0;
        }
        uint256 deposits = 0;
        for (uint256 i = 0; i < e.depAmounts.length; ++i) {
            deposits += e.depAmounts[i];
        }
        if (deposits == 0) return;
        uint256 minted = deposits * (p.shares + 1) / (p.assets + 1);
        p.assets += deposits;
        p.shares += minted;
        p.pending -= deposits;
        for (uint256 i = 0; i < e.depHolders.length; ++i) {
            address h = e.depHolders[i];
            _mCredit(auditor, h, e.depAmounts[i] * minted / deposits, p.gen);
            mHolder[auditor][h].depAmount = 0;
            mHolder[auditor][h].depFlow = 0;
        }
    }

    // ------------------------------------------------------------ operations

    /// @dev A successful stake: side drain, then mint now or queue. Returns (shares, flow) expected.
    function _mStake(address holder, address auditor, uint256 amount)
        internal
        returns (uint256 shares, uint256 flow)
    {
        _mUnpark(auditor);
        _mDrain(auditor, SIDE);
        MPool storage p = mPool[auditor];
        mWallet[holder] -= amount;
        if (p.head == p.tail) {
            shares = amount * (p.shares + 1) / (p.assets + 1);
            p.assets += amount;
            p.shares += shares;
            _mCredit(auditor, holder, shares, p.gen);
            return (shares, 0);
        }
        flow = _mPushFlowIfNeeded(auditor);
        MEntry storage e = mEntry[auditor][flow];
        MHolder storage h = mHolder[auditor][holder];
        if (h.depAmount == 0) {
            e.depHolders.push(holder);
            e.depAmounts.push(amount);
        } else {
            for (uint256 i = 0; i < e.depHolders.length; ++i) {
                if (e.depHolders[i] == holder) e.depAmounts[i] += amount;
            }
        }
        h.depAmount += amount;
        h.depFlow = flow;
        p.pending += amount;
    }

    /// @dev A successful withdrawal request (id = the contract's id); `stands`: the pool had weight in a
    /// readable snapshot, so the shares are parked (5.1).
    function _mWithdraw(address holder, address auditor, uint256 shares, uint256 id, bool stands)
        internal
        returns (uint256 flow)
    {
        _mUnpark(auditor);
        _mDrain(auditor, SIDE);
        MPool storage p = mPool[auditor];
        MHolder storage h = mHolder[auditor][holder];
        h.shares = _mSharesOf(auditor, holder) - shares;
        h.gen = p.gen;
        mWithdrawals.push(
            MWithdrawal({
                holder: holder,
                auditor: auditor,
                shares: shares,
                gen: p.gen,
                applied: false,
                amount: 0,
                appliedAt: 0,
                claimed: false
            })
        );
        assertEq(mWithdrawals.length - 1, id, "model withdrawal id");
        if (stands) {
            uint256 ep = _mEpoch();
            if (mParked[auditor][ep].length == 0) mParkedEpochs[auditor].push(ep);
            mParked[auditor][ep].push(id);
            p.exiting += shares;
            p.holdEpoch = ep;
            return 0;
        }
        if (p.head == p.tail) {
            uint256 amount = shares * (p.assets + 1) / (p.shares + 1);
            p.assets -= amount;
            p.shares -= shares;
            mReserve += amount;
            MWithdrawal storage w = mWithdrawals[id];
            w.applied = true;
            w.amount = amount;
            w.appliedAt = block.timestamp;
            return 0;
        }
        flow = _mPushFlowIfNeeded(auditor);
        mEntry[auditor][flow].withdrawIds.push(id);
        p.exiting += shares;
    }

    function _mOpenSession(address auditor, uint256 key, uint256 amount, uint256 bps)
        internal
        returns (uint256 entry)
    {
        MPool storage p = mPool[auditor];
        entry = p.tail;
        MEntry storage e = mEntry[auditor][entry];
        e.kind = KIND_SESSION;
        e.key = key;
        e.locked = amount;
        e.bps = bps;
        e.repAtDraw = p.rep;
        p.tail = entry + 1;
        p.locked += amount;
    }

    function _mResolve(
        address auditor,
        uint256 entry,
        uint256 reward,
        uint256 slash,
        uint256 mul,
        uint256 add
    ) internal {
        MPool storage p = mPool[auditor];
        MEntry storage e = mEntry[auditor][entry];
        uint256 commission = reward * e.bps / 10_000;
        mWallet[auditor] += commission;
        e.resolved = true;
        e.net = reward - commission;
        e.slash = slash;
        e.mul = mul;
        e.add = add;
        if (entry == p.head) {
            _mApplySession(auditor, e);
            ++p.head;
        } else {
            mStoredRewards += e.net;
        }
        _mUnpark(auditor);
        _mDrain(auditor, SIDE);
    }
}
