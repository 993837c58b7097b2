// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingLedger} from "./StakingLedger.sol";
import {LedgerPacking} from "./libraries/LedgerPacking.sol";

/// @title StakingHolds
/// @notice Snapshot stake cannot refuse a draw by its owner's own action (docs/protocol-v2.md, 5.1).
/// @dev A draw reads the snapshot "start of epoch e" until the end of epoch e + 2 (SortitionTrees'
/// `snapshotReadableUntil`). A withdrawal request or deregistration made in epoch c by a pool that
/// stands in a readable snapshot (non-zero leaf weight at the start of c - 2, c - 1 or c) therefore
/// leaves what `seatQuote` and a lock count untouched until the end of epoch c + 2 (the pool's
/// `holdEpoch` = c): the weight drops at once (later snapshots do not count the stake), but
/// - a deregistered pool stays eligible in its tier (and cannot change tier) while the hold lasts;
/// - the requested shares are parked in the batch of epoch c (ring of 3, slot c % 3): they stay shares
///   of the pool, are counted in `exitingShares` (no weight) and, at the current price and until the
///   end of epoch c + 2, in the stake a lock may use. After the hold a batch joins the ledger's tail
///   FLOW at the pool's next stake, withdrawal request, result, `drain` or `poke`, and before a lock
///   pushes a SESSION entry; its records point at that FLOW (`_parkFlow`).
/// - after the hold, the locks ahead of a batch still in the pool are shared pro rata with it
///   (`_lockLimit`): its end refuses no draw of a later snapshot that counted the remaining stake.
/// Every lock that counted parked shares pushed its SESSION entry before that FLOW, so those shares
/// bear its result: held stake stays slashable (SlashesReachExitingShares).
abstract contract StakingHolds is StakingLedger {
    /// @notice Epochs a snapshot stays readable after its own (SnapshotSumTree.RING - 1).
    uint256 public constant HOLD_EPOCHS = 2;

    /// @dev Withdrawal shares requested in one epoch by a pool standing in a readable snapshot.
    struct Parked {
        uint128 shares;
        uint32 epoch;
        uint32 generation;
    }

    /// @dev The batches a FLOW entry took after their hold (the newest such FLOW only) and the stake locked
    /// since in entries behind it: while `flow` is pending its shares bear every lock ahead of it.
    struct Held {
        uint32 flow;
        uint32 generation;
        uint96 newLocked;
        uint128 shares;
    }

    mapping(address => Parked[3]) internal _parked;
    mapping(address => Held) internal _held;
    /// @dev The FLOW entry each batch (auditor, epoch) joined after its hold (0 while parked).
    mapping(address => mapping(uint256 => uint256)) internal _parkFlow;

    /// @notice The batch parked in `epoch` joined FLOW entry `flow` (its hold is over).
    event ParkedBatchQueued(address indexed auditor, uint256 indexed epoch, uint256 flow, uint256 shares);

    function _epochNow() internal view returns (uint256) {
        return block.number / _epochBlocks + 1;
    }

    /// @dev Whether the pool's leaf has weight in a snapshot some draw can still read.
    function _standsInSnapshot(PoolInfo storage info) internal view returns (bool) {
        uint256 leafPlusOne = info.leafPlusOne;
        if (leafPlusOne == 0) return false;
        uint256 cur = _epochNow();
        uint256 first = cur > HOLD_EPOCHS ? cur - HOLD_EPOCHS : 1;
        for (uint256 e = cur; e >= first; --e) {
            if (_sortition.leafWeightAt(info.tier, e, leafPlusOne - 1) != 0) return true;
        }
        return false;
    }

    /// @dev Whether a hold started by a withdrawal request or deregistration is still running.
    function _holdActive(PoolInfo storage info) internal view returns (bool) {
        uint256 h = info.holdEpoch;
        return h != 0 && _epochNow() <= h + HOLD_EPOCHS;
    }

    /// @dev What a lock decides on: eligible (registered or held, the basis at the tier's minimum, locked
    /// within the limit) and the limit of locked stake, `basis + relief`. `basis` is the backing plus the
    /// value of the batches in their own hold; `relief` the part of the locks ahead of an expired batch
    /// still in the pool that the batch's shares bear. Expired batches (parked past their hold, or the
    /// last FLOW that took some, while pending) back no new lock, but every lock ahead of them is shared
    /// pro rata with them, so the pool may lock `basis + relief` in all: the remaining stake bears the
    /// locks behind the batch and its part of the rest, relief = ahead * x / (basis - later + x) (x the
    /// batch's value). `later`: the deposits of the batch's FLOW (they mint after it redeems) and of every
    /// FLOW after it (`_queuedAfter`): they bear none of the locks ahead, so they do not dilute the batch's
    /// part (Review25ReliefDilutedByLaterDeposit); the deposits before it and the other exiting shares,
    /// which bear those locks but are left out of `basis`, keep x's part from being overstated. One group
    /// is counted (unqueued batches first): fewer shares, less relief.
    function _lockLimit(address auditor, PoolInfo storage info, Pool memory pool)
        internal
        view
        returns (bool eligible, uint256 limit)
    {
        bool registered = info.registered;
        uint256 basis = pool.backing;
        uint256 relief = 0;
        uint256 holdEpoch = info.holdEpoch;
        if (holdEpoch != 0) {
            if (_epochNow() <= holdEpoch + HOLD_EPOCHS) registered = true;
            (basis, relief) = _heldBasis(auditor, info, basis, pool.locked);
        }
        limit = basis + relief;
        // Locked above the limit (after a slash) refuses every lock, of any amount.
        eligible = registered && basis >= _params.minStake[info.tier] && pool.locked <= limit;
    }

    /// @dev `_lockLimit`'s basis (`backing` plus the batches in their own hold) and relief.
    function _heldBasis(address auditor, PoolInfo storage info, uint256 backing, uint256 locked)
        private
        view
        returns (uint256 basis, uint256 relief)
    {
        (uint256 inHold, uint256 x, uint256 ahead, uint256 flow) = _heldShares(auditor, info, locked);
        basis = backing;
        if (inHold == 0 && x == 0) return (basis, 0);
        PoolBook memory b = _books[auditor];
        basis += inHold * b.assets / b.totalShares;
        x = x * b.assets / b.totalShares;
        if (x != 0) {
            uint256 later = _laterDeposits(auditor, info, flow);
            relief = ahead * x / ((basis > later ? basis - later : 0) + x);
        }
    }

    /// @dev Deposits that apply after the expired batch leaves: those of its FLOW `flow` and of every FLOW
    /// after it. `flow` 0: the batch is not queued yet and will join the tail FLOW, if the tail is one
    /// (`_unparkBatches`), else a new FLOW with no deposit.
    function _laterDeposits(address auditor, PoolInfo storage info, uint256 flow)
        private
        view
        returns (uint256)
    {
        uint256 tail = info.tail;
        if (flow == 0) {
            if (tail == info.head) return 0;
            flow = tail - 1;
            if (LedgerPacking.kind(_ring[auditor][flow % LEDGER_CAPACITY]) != LedgerPacking.KIND_FLOW) {
                return 0;
            }
        }
        // flow + 1, if pending, is a SESSION entry (two FLOWs are never adjacent).
        return _flows[auditor][flow].deposits + _queuedAfter(auditor, flow + 1, tail);
    }

    /// @dev Shares of the batches in their own hold, of the expired ones still in the pool (unqueued, or
    /// else those of the pending held FLOW), the locked stake ahead of the latter and their FLOW (0 while
    /// unqueued).
    function _heldShares(address auditor, PoolInfo storage info, uint256 locked)
        private
        view
        returns (uint256 inHold, uint256 expired, uint256 ahead, uint256 flow)
    {
        uint256 cur = _epochNow();
        uint256 gen = info.generation;
        for (uint256 i = 0; i < 3; ++i) {
            Parked memory m = _parked[auditor][i];
            if (m.epoch == 0 || m.generation != gen) continue;
            // A batch counts in the basis only in its own hold: queuing it then changes no quote.
            if (cur <= m.epoch + HOLD_EPOCHS) inHold += m.shares;
            else expired += m.shares;
        }
        ahead = locked;
        if (expired == 0) {
            Held memory h = _held[auditor];
            if (h.flow >= info.head && h.generation == gen) {
                expired = h.shares;
                ahead = ahead > h.newLocked ? ahead - h.newLocked : 0;
                flow = h.flow;
            }
        }
    }

    /// @dev Whether a first lock now pushes a FLOW before its SESSION entry (`_unparkAt` queues a batch past
    /// its hold and the tail is no FLOW): `seatQuote.nextEntry` is then tail + 1, which the draw module
    /// records as the seat's entry.
    function _pushesFlow(address auditor, PoolInfo storage info) internal view returns (bool) {
        if (info.holdEpoch == 0) return false;
        uint256 tail = info.tail;
        uint256 head = info.head;
        if (tail - head >= LEDGER_CAPACITY) return false;
        if (
            tail > head
                && LedgerPacking.kind(_ring[auditor][(tail - 1) % LEDGER_CAPACITY]) == LedgerPacking.KIND_FLOW
        ) {
            return false;
        }
        uint256 cur = _epochNow();
        for (uint256 i = 0; i < 3; ++i) {
            uint256 epoch = _parked[auditor][i].epoch;
            if (epoch != 0 && cur > epoch + HOLD_EPOCHS) return true;
        }
        return false;
    }

    /// @dev Before a SESSION entry is pushed: queue every batch past its hold, so it bears no session
    /// drawn after its hold (it backed none).
    function _unparkAt(address auditor, PoolInfo storage info) internal {
        Work memory w = _load(auditor);
        _unpark(w);
        info.tail = uint32(w.tail);
    }

    /// @dev A lock in an entry behind the held FLOW: only the remaining stake bears it.
    function _noteLock(address auditor, PoolInfo storage info, uint256 entry, uint256 amount) internal {
        if (info.holdEpoch == 0) return;
        Held storage h = _held[auditor];
        uint256 flow = h.flow;
        if (entry > flow && flow >= info.head) h.newLocked += uint96(amount);
    }

    /// @dev A withdrawal request of `shares`: parked in this epoch's batch if the pool stands in a readable
    /// snapshot (see the contract's notes; the caller counts them in `exitingShares`), else epoch 0.
    function _park(address auditor, uint256 generation, uint256 shares) internal returns (uint256 epoch) {
        PoolInfo storage info = _info[auditor];
        if (!_standsInSnapshot(info)) return 0;
        epoch = _epochNow();
        uint32 gen = uint32(generation);
        Parked memory m = _parked[auditor][epoch % 3];
        if (m.epoch != epoch) {
            // The slot's older batch (hold over) is queued by `_unpark` unless the ledger was full.
            if (m.epoch != 0) revert LedgerFull(auditor);
            m = Parked({shares: 0, epoch: uint32(epoch), generation: gen});
        } else if (m.generation != gen) {
            m.shares = 0; // voided by a pool reset (their records read 0)
            m.generation = gen;
        }
        m.shares += uint128(shares);
        _parked[auditor][epoch % 3] = m;
        info.holdEpoch = uint32(epoch);
    }

    /// @dev A deregistration: held while draws of the snapshots that counted the pool may seat it.
    function _holdOnDeregister(address auditor) internal {
        PoolInfo storage info = _info[auditor];
        if (_standsInSnapshot(info)) info.holdEpoch = uint32(_epochNow());
    }

    /// @dev Queue every batch whose hold is over in the tail FLOW (Staking runs `_unparkBatches` in
    /// `StakingHoldsOps` by DELEGATECALL, for EIP-170 room).
    function _unpark(Work memory w) internal virtual;

    /// @dev `_unpark`'s code: queue every batch whose hold is over (skipped while the ledger is full) and
    /// record the FLOW that took them in `_held`.
    function _unparkBatches(Work memory w) internal {
        address auditor = w.auditor;
        PoolInfo storage info = _info[auditor];
        uint256 holdEpoch = info.holdEpoch;
        if (holdEpoch == 0) return;
        uint256 cur = _epochNow();
        bool left = false;
        for (uint256 i = 0; i < 3; ++i) {
            Parked memory m = _parked[auditor][i];
            if (m.epoch == 0) continue;
            if (cur <= m.epoch + HOLD_EPOCHS || !_canQueue(w)) {
                left = true;
                continue;
            }
            uint256 flow = _tailFlow(w);
            uint256 shares = 0;
            if (m.generation == w.generation) {
                shares = m.shares;
                _queueWithdrawShares(_flows[auditor][flow], shares, w.generation);
                Held memory h = _held[auditor];
                // A newer FLOW replaces the record: the older batch is then counted as bearing nothing.
                if (h.flow != flow) {
                    h = Held({flow: uint32(flow), generation: m.generation, newLocked: 0, shares: 0});
                }
                h.shares += uint128(shares);
                _held[auditor] = h;
            }
            _parkFlow[auditor][m.epoch] = flow;
            delete _parked[auditor][i];
            emit ParkedBatchQueued(auditor, m.epoch, flow, shares);
        }
        // `holdEpoch` stays set while the held FLOW is pending (`_lockLimit` reads `_held` only then).
        if (!left && cur > holdEpoch + HOLD_EPOCHS && _held[auditor].flow < w.head) info.holdEpoch = 0;
    }

    /// @dev Whether `_tailFlow` can return an entry without reverting.
    function _canQueue(Work memory w) private view returns (bool) {
        uint256 tail = w.tail;
        if (tail - w.head < LEDGER_CAPACITY) return true;
        return LedgerPacking.kind(_ring[w.auditor][(tail - 1) % LEDGER_CAPACITY]) == LedgerPacking.KIND_FLOW;
    }

    /// @dev Add withdrawal shares of `generation` to a FLOW entry (shares of an older generation in it
    /// are void: their records pay 0).
    function _queueWithdrawShares(Flow storage f, uint256 shares, uint256 generation) internal {
        uint256 ws = f.withdrawShares;
        if (ws != 0 && f.withdrawGeneration != generation) ws = 0;
        f.withdrawShares = uint128(ws + shares);
        f.withdrawGeneration = uint32(generation);
    }

    /// @dev What a withdrawal record pays (0 while parked or its FLOW is pending) and when.
    function _withdrawalTerms(Withdrawal storage wd) internal view returns (uint256 amount, uint256 readyAt) {
        uint256 flow = wd.flow;
        if (flow == 0) {
            uint256 parkEpoch = wd.parkEpoch;
            if (parkEpoch == 0) return (wd.amount, wd.readyAt);
            flow = _parkFlow[wd.auditor][parkEpoch];
            if (flow == 0) return (0, 0);
        }
        Flow storage f = _flows[wd.auditor][flow];
        uint256 appliedAt = f.appliedAt;
        if (appliedAt == 0) return (0, 0);
        uint256 ws = f.withdrawShares;
        if (ws != 0 && wd.generation == f.withdrawGeneration) {
            amount = uint256(wd.shares) * f.redeemedAssets / ws;
        }
        readyAt = appliedAt + _params.cooldown;
    }
}
