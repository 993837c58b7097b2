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
///   end of epoch c + 2, in the stake a lock may use. After the hold a batch joins the ledger's tail FLOW at the pool's next stake,
///   withdrawal request, result, `drain` or `poke`; its records point at that FLOW (`_parkFlow`).
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

    mapping(address => Parked[3]) internal _parked;
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

    /// @dev What a lock decides on: registered (or held), and backing plus the parked shares' value.
    function _lockBasis(address auditor, PoolInfo storage info, uint256 backing)
        internal
        view
        returns (bool registered, uint256 basis)
    {
        registered = info.registered;
        basis = backing;
        if (!_holdActive(info)) return (registered, basis);
        registered = true;
        uint256 shares = 0;
        uint256 gen = info.generation;
        uint256 cur = _epochNow();
        for (uint256 i = 0; i < 3; ++i) {
            Parked memory m = _parked[auditor][i];
            // Only batches still in their own hold: queuing an expired one then changes no quote.
            if (m.generation == gen && cur <= m.epoch + HOLD_EPOCHS) shares += m.shares;
        }
        if (shares != 0) {
            PoolBook memory b = _books[auditor];
            basis += shares * b.assets / b.totalShares;
        }
    }

    /// @dev Park `shares` of a withdrawal request in this epoch's batch (see the contract's notes).
    function _park(Work memory w, PoolInfo storage info, uint256 shares) internal returns (uint256 epoch) {
        epoch = _epochNow();
        address auditor = w.auditor;
        uint32 gen = uint32(w.generation);
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
        w.exitingShares += shares;
        info.holdEpoch = uint32(epoch);
    }

    /// @dev Queue every batch whose hold is over in the tail FLOW (skipped while the ledger is full).
    function _unpark(Work memory w) internal {
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
            }
            _parkFlow[auditor][m.epoch] = flow;
            delete _parked[auditor][i];
            emit ParkedBatchQueued(auditor, m.epoch, flow, shares);
        }
        if (!left && cur > holdEpoch + HOLD_EPOCHS) info.holdEpoch = 0;
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
