// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IStaking} from "./interfaces/IStaking.sol";
import {ISortition} from "./interfaces/ISortition.sol";
import {SortitionTrees} from "./SortitionTrees.sol";
import {LedgerPacking} from "./libraries/LedgerPacking.sol";

/// @title StakingLedger
/// @notice Storage and mechanics of the staking pools: share accounting, the per-auditor FIFO ledger,
/// and the sortition weights in the epoch-snapshot sum trees. `Staking` adds the external API.
/// @dev A pool's assets belong to its shares. `backing` (what a seat lock and the weight count) is the
/// value of the shares not queued for withdrawal plus the pool's pending deposits. The ledger is a
/// ring of `LEDGER_CAPACITY` one-slot words (slots are reused, so a push costs a warm rewrite):
/// SESSION entries (one per auditor and session key, pushed at the first locked seat) and FLOW
/// entries (the deposits and withdrawal requests made while the ledger was not empty, merged per gap
/// between two SESSION entries, so the ledger holds at most two entries per pending session).
/// Entries apply strictly from the head: a FLOW at once, a SESSION once its result is in. A FLOW
/// applies its withdrawals then its deposits at the price left by every earlier session; holders
/// pick up their share of a FLOW lazily (positions and withdrawal records point at it).
/// If a slash leaves a share worth less than 1/PRICE_FLOOR_INVERSE wei, the pool is reset: the
/// remaining assets go to the treasury with the slash and the shares of the old generation are void.
/// This keeps share counts bounded (< 2^127), so no later arithmetic can overflow and block a ledger.
abstract contract StakingLedger is IStaking {
    uint256 internal constant WAD = 1e18;
    uint256 internal constant BPS = 10_000;
    /// @notice Wei of backing per unit of sortition weight.
    uint256 public constant WEIGHT_UNIT = 1e12;
    /// @notice Pending entries an auditor's ledger can hold.
    uint256 public constant LEDGER_CAPACITY = 256;
    /// @notice Ready entries applied as a side effect of stake, withdrawal requests and results.
    uint256 public constant SIDE_DRAIN = 4;
    /// @notice A pool is reset when assets * PRICE_FLOOR_INVERSE < shares after a slash.
    uint256 public constant PRICE_FLOOR_INVERSE = 1e9;

    /// @notice Owner-set parameters.
    struct StakingParams {
        uint96[3] minStake;
        uint32 cooldown;
        uint32 commissionDelay;
        uint64 initialReputation;
        uint64 reputationFloor;
        uint16 maxCommissionBps;
    }

    /// @notice A pool's hot slot: what a seat lock reads and writes.
    struct Pool {
        uint96 backing;
        uint96 locked;
        uint64 reputation;
    }

    /// @notice A pool's registration, commission schedule and ledger bounds [head, tail).
    struct PoolInfo {
        uint8 tier;
        bool registered;
        bool known;
        uint32 leafPlusOne;
        uint16 commissionBps;
        uint16 pendingCommissionBps;
        uint40 commissionEffectiveAt;
        uint32 head;
        uint32 tail;
        uint32 generation;
        uint32 holdEpoch;
    }

    /// @notice A pool's share book.
    struct PoolBook {
        uint96 assets;
        uint96 pendingDeposits;
        uint128 totalShares;
        uint128 exitingShares;
    }

    /// @notice A FLOW entry: queued deposits and withdrawal requests, and how they were applied.
    struct Flow {
        uint96 deposits;
        uint128 withdrawShares;
        uint32 withdrawGeneration;
        uint128 mintedShares;
        uint32 generation;
        uint40 appliedAt;
        uint96 redeemedAssets;
    }

    /// @notice A holder's shares of one pool (of `generation`) and its pending deposit, if any.
    struct Position {
        uint128 shares;
        uint96 depositAmount;
        uint32 generation;
        uint32 depositFlow;
    }

    /// @notice A withdrawal: immediate (flow 0, amount and readyAt known) or queued in a FLOW entry
    /// (amount and readyAt known once the entry is applied and the record claimed).
    struct Withdrawal {
        address owner;
        uint40 readyAt;
        bool claimed;
        address auditor;
        uint32 flow;
        uint32 generation;
        uint128 shares;
        uint96 amount;
        uint32 parkEpoch;
    }

    /// @dev Working copy of one pool during an operation; written back once by `_store`.
    struct Work {
        address auditor;
        uint256 backing;
        uint256 locked;
        uint256 reputation;
        uint256 assets;
        uint256 assetsBefore;
        uint256 pendingDeposits;
        uint256 totalShares;
        uint256 exitingShares;
        uint256 head;
        uint256 tail;
        uint256 generation;
    }

    /// @dev A session's result as applied to its pool.
    struct Effect {
        uint256 locked;
        uint256 netReward;
        uint256 slash;
        uint256 repMul;
        uint256 repAdd;
    }

    /// @dev Contract-wide totals, loaded once per operation and written back once.
    struct Globals {
        uint256 pooled;
        uint256 storedRewards;
        uint256 pendingDeposits;
        uint256 withdrawals;
        uint256 toTreasury;
    }

    /// @notice The sortition trees (deployed here; this contract is their only writer).
    SortitionTrees internal immutable _sortition;
    /// @dev Blocks per snapshot epoch (the trees' `epochBlocks`).
    uint256 internal immutable _epochBlocks;

    StakingParams internal _params;
    mapping(address => Pool) internal _pools;
    mapping(address => PoolInfo) internal _info;
    mapping(address => PoolBook) internal _books;
    mapping(address => uint256[LEDGER_CAPACITY]) internal _ring;
    mapping(address => uint256[LEDGER_CAPACITY]) internal _results;
    mapping(address => mapping(uint256 => Flow)) internal _flows;
    mapping(address => mapping(address => Position)) internal _positions;
    Withdrawal[] internal _withdrawals;
    /// @notice Sum of all pools' assets.
    uint128 public totalPooled;
    /// @notice Net rewards held for results that arrived before their entry reached the head.
    uint128 public storedRewards;
    /// @notice Deposits waiting in FLOW entries.
    uint128 public pendingDeposits;
    /// @notice Redeemed tokens not yet claimed.
    uint128 public withdrawalReserve;
    /// @dev Per pool: every deposit ever queued in its FLOW entries, mod 2^128 (`_queueDeposit`, the one
    /// place a pool's pending deposits grow). It never decreases: a queued deposit leaves the FLOW only
    /// when its entry applies (no cancel, no early withdrawal; holds and resets leave it queued).
    mapping(address => uint256) internal _queuedEver;
    /// @dev Per pool and ring slot: `(entry << 128) | _queuedEver` at the push of SESSION entry `entry`,
    /// written only if deposits were pending then (`_noteQueuedAt`). A word of another entry (an older
    /// lap of the ring, or 0) means none were.
    mapping(address => uint256[LEDGER_CAPACITY]) internal _queuedAt;

    error AmountOverflow();
    error LedgerFull(address auditor);

    /// @notice A ready SESSION entry was applied to the pool.
    event SessionApplied(
        address indexed auditor, uint256 indexed entry, uint256 netReward, uint256 slashed, uint256 reputation
    );
    /// @notice A FLOW entry was applied: withdrawals redeemed, then deposits turned into shares.
    event FlowApplied(
        address indexed auditor,
        uint256 indexed entry,
        uint256 deposits,
        uint256 mintedShares,
        uint256 withdrawShares,
        uint256 redeemedAssets
    );
    /// @notice A FLOW entry was pushed at the tail of `auditor`'s ledger.
    event FlowOpened(address indexed auditor, uint256 indexed entry);
    /// @notice The pool fell below the share price floor: `swept` assets went to the treasury and the
    /// shares of the previous generation are void.
    event PoolReset(address indexed auditor, uint256 generation, uint256 swept);
    /// @notice A holder's pending deposit became shares (picked up lazily after its FLOW applied).
    event SharesIssued(address indexed auditor, address indexed holder, uint256 indexed flow, uint256 shares);
    /// @notice The pool's backing and sortition weight after a change.
    event PoolUpdated(address indexed auditor, uint256 backing, uint256 weight);

    /// @param sortition_ The trees (created by Staking, their only writer; none in `StakingHoldsOps`).
    constructor(uint256 epochBlocks_, SortitionTrees sortition_) {
        _sortition = sortition_;
        _epochBlocks = epochBlocks_;
    }

    /// @inheritdoc IStaking
    function sortition() external view returns (ISortition) {
        return _sortition;
    }

    // -------------------------------------------------------------- load/store

    function _load(address auditor) internal view returns (Work memory w) {
        Pool memory pool = _pools[auditor];
        PoolInfo storage info = _info[auditor];
        PoolBook memory book = _books[auditor];
        w.auditor = auditor;
        w.backing = pool.backing;
        w.locked = pool.locked;
        w.reputation = pool.reputation;
        w.assets = book.assets;
        w.assetsBefore = book.assets;
        w.pendingDeposits = book.pendingDeposits;
        w.totalShares = book.totalShares;
        w.exitingShares = book.exitingShares;
        w.head = info.head;
        w.tail = info.tail;
        w.generation = info.generation;
    }

    function _loadGlobals() internal view returns (Globals memory g) {
        g.pooled = totalPooled;
        g.storedRewards = storedRewards;
        g.pendingDeposits = pendingDeposits;
        g.withdrawals = withdrawalReserve;
    }

    /// @dev Write the pool back, recompute its backing and weight, and fold its asset change into `g`.
    function _store(Work memory w, Globals memory g) internal {
        address auditor = w.auditor;
        PoolInfo storage info = _info[auditor];
        if (w.assets > type(uint96).max || w.pendingDeposits > type(uint96).max) revert AmountOverflow();
        uint256 backing = w.pendingDeposits;
        if (w.totalShares != 0) backing += w.assets * (w.totalShares - w.exitingShares) / w.totalShares;
        _pools[auditor] =
            Pool({backing: uint96(backing), locked: uint96(w.locked), reputation: uint64(w.reputation)});
        _books[auditor] = PoolBook({
            assets: uint96(w.assets),
            pendingDeposits: uint96(w.pendingDeposits),
            totalShares: uint128(w.totalShares),
            exitingShares: uint128(w.exitingShares)
        });
        info.head = uint32(w.head);
        info.tail = uint32(w.tail);
        info.generation = uint32(w.generation);
        g.pooled = g.pooled + w.assets - w.assetsBefore;
        w.assetsBefore = w.assets;
        uint256 weight = _weightFor(info, backing, w.reputation);
        _setWeight(auditor, info, weight);
        emit PoolUpdated(auditor, backing, weight);
    }

    function _storeGlobals(Globals memory g) internal {
        if ((g.pooled | g.storedRewards | g.pendingDeposits | g.withdrawals) > type(uint128).max) {
            revert AmountOverflow();
        }
        totalPooled = uint128(g.pooled);
        storedRewards = uint128(g.storedRewards);
        pendingDeposits = uint128(g.pendingDeposits);
        withdrawalReserve = uint128(g.withdrawals);
    }

    // ------------------------------------------------------------------ weight

    function _weightFor(PoolInfo storage info, uint256 backing, uint256 reputation)
        internal
        view
        returns (uint256)
    {
        if (!info.registered) return 0;
        uint8 tier = info.tier;
        if (backing < _params.minStake[tier]) return 0;
        return backing * (reputation + _params.reputationFloor) / WAD / WEIGHT_UNIT;
    }

    /// @dev The leaf index is cached in PoolInfo (read anyway) to skip the tree's member lookup.
    function _setWeight(address auditor, PoolInfo storage info, uint256 weight) internal {
        uint256 leaf = info.leafPlusOne;
        uint256 got = _sortition.setWeight(info.tier, auditor, leaf, weight);
        if (got != leaf) info.leafPlusOne = uint32(got);
    }

    // ------------------------------------------------------------------ ledger

    /// @dev Apply up to `max` ready entries from the head.
    function _drain(Work memory w, Globals memory g, uint256 max) internal returns (uint256 applied) {
        address auditor = w.auditor;
        uint256 head = w.head;
        uint256 tail = w.tail;
        while (applied < max && head < tail) {
            uint256 slot = head % LEDGER_CAPACITY;
            uint256 word = _ring[auditor][slot];
            if (LedgerPacking.kind(word) == LedgerPacking.KIND_FLOW) {
                _applyFlow(w, g, head);
            } else if (LedgerPacking.isResolved(word)) {
                Effect memory e;
                (e.locked, e.repMul, e.repAdd) = LedgerPacking.resolvedFields(word);
                (e.netReward, e.slash) = LedgerPacking.resultFields(_results[auditor][slot]);
                g.storedRewards -= e.netReward;
                _applySession(w, g, head, e);
            } else {
                break;
            }
            unchecked {
                ++head;
                ++applied;
            }
        }
        w.head = head;
    }

    /// @dev A session's result: net reward in, slash out (capped by assets), unlock, reputation.
    function _applySession(Work memory w, Globals memory g, uint256 entry, Effect memory e) internal {
        uint256 assets = w.assets + e.netReward;
        uint256 taken = e.slash > assets ? assets : e.slash;
        assets -= taken;
        w.assets = assets;
        w.locked = e.locked > w.locked ? 0 : w.locked - e.locked;
        uint256 rep = w.reputation * e.repMul / WAD + e.repAdd;
        w.reputation = rep > WAD ? WAD : rep;
        g.toTreasury += taken;
        emit SessionApplied(w.auditor, entry, e.netReward, taken, w.reputation);
        uint256 shares = w.totalShares;
        if (shares == 0 ? assets != 0 : assets * PRICE_FLOOR_INVERSE < shares) {
            g.toTreasury += assets;
            w.assets = 0;
            if (shares != 0) {
                w.totalShares = 0;
                w.exitingShares = 0;
                ++w.generation;
            }
            emit PoolReset(w.auditor, w.generation, assets);
        }
    }

    /// @dev A FLOW entry: redeem its withdrawal shares (if still of the pool's generation), then turn
    /// its deposits into shares, both at the current price; record the rates for lazy pick-up.
    function _applyFlow(Work memory w, Globals memory g, uint256 entry) internal {
        Flow storage f = _flows[w.auditor][entry];
        uint256 ws = f.withdrawShares;
        uint256 redeemed = 0;
        if (ws != 0 && f.withdrawGeneration == w.generation) {
            // ws <= totalShares, so redeemed <= assets.
            redeemed = ws * (w.assets + 1) / (w.totalShares + 1);
            w.assets -= redeemed;
            w.totalShares -= ws;
            w.exitingShares -= ws;
            g.withdrawals += redeemed;
        }
        uint256 deposits = f.deposits;
        uint256 minted = 0;
        if (deposits != 0) {
            minted = deposits * (w.totalShares + 1) / (w.assets + 1);
            w.assets += deposits;
            w.totalShares += minted;
            w.pendingDeposits -= deposits;
            g.pendingDeposits -= deposits;
        }
        f.mintedShares = uint128(minted);
        f.generation = uint32(w.generation);
        f.appliedAt = uint40(block.timestamp);
        f.redeemedAssets = uint96(redeemed);
        emit FlowApplied(w.auditor, entry, deposits, minted, ws, redeemed);
    }

    /// @dev Queue `amount` of deposits in the pool's tail FLOW: pending deposits (pool and total) and the
    /// pool's `_queuedEver` grow together, here only, so `queuedAfter` cannot drift from them. `amount`
    /// < 2^96 and the counter < 2^128, so the sum cannot overflow before it wraps to 128 bits.
    function _queueDeposit(Work memory w, Globals memory g, uint256 amount) internal {
        w.pendingDeposits += amount;
        g.pendingDeposits += amount;
        unchecked {
            _queuedEver[w.auditor] = uint128(_queuedEver[w.auditor] + amount);
        }
    }

    /// @dev The FLOW entry at the tail, pushed if the tail is a SESSION entry.
    function _tailFlow(Work memory w) internal returns (uint256 entry) {
        uint256 tail = w.tail;
        if (tail > w.head) {
            entry = tail - 1;
            if (LedgerPacking.kind(_ring[w.auditor][entry % LEDGER_CAPACITY]) == LedgerPacking.KIND_FLOW) {
                return entry;
            }
        }
        if (tail - w.head >= LEDGER_CAPACITY) revert LedgerFull(w.auditor);
        _ring[w.auditor][tail % LEDGER_CAPACITY] = LedgerPacking.KIND_FLOW;
        w.tail = tail + 1;
        emit FlowOpened(w.auditor, tail);
        return tail;
    }

    /// @dev Deposits waiting in the FLOW entries after `entry` (up to `tail`): they become shares after
    /// `entry` applies, so its slash cannot reach them. Exact in O(1) (at most 4 reads, no loop):
    /// - pending SESSION entry e: a deposit queued before e's push waits in a FLOW before e, one queued
    ///   after it in a FLOW after e (the tail FLOW, pushed behind e if need be); a queued deposit leaves
    ///   the FLOW only when its entry applies, and no FLOW after e applies before e. So the deposits after
    ///   e are those queued since its push: `_queuedEver` now less its value then (`_queuedAt`, mod 2^128;
    ///   the difference is at most the pool's pending deposits, < 2^96). If nothing was pending at the push
    ///   (no record: no gas spent on it), every pending deposit was queued since.
    /// - pending FLOW entry f (not the last): f + 1 is a SESSION entry (two FLOWs are never adjacent), and
    ///   f's own deposits are not after f, so the answer is f + 1's.
    /// - applied entry (below the head): every pending deposit waits in a FLOW after it.
    /// - the last entry or any index at or past the tail: 0.
    function _queuedAfter(address auditor, uint256 entry, uint256 tail) internal view returns (uint256) {
        if (entry >= tail || entry + 1 == tail) return 0;
        if (entry >= _info[auditor].head) {
            uint256 slot = entry % LEDGER_CAPACITY;
            uint256 at = _queuedAt[auditor][slot];
            if (at >> 128 == entry) {
                unchecked {
                    return uint128(_queuedEver[auditor] - uint128(at));
                }
            }
            if (LedgerPacking.kind(_ring[auditor][slot]) == LedgerPacking.KIND_FLOW) {
                return _queuedAfter(auditor, entry + 1, tail);
            }
        }
        return _books[auditor].pendingDeposits;
    }

    // --------------------------------------------------------------- positions

    /// @dev Bring a holder's position up to date: pick up its applied deposit and void shares of an
    /// older generation. Returns the shares it holds now.
    function _syncPosition(address auditor, address holder, uint256 generation) internal returns (uint256) {
        Position storage p = _positions[auditor][holder];
        Position memory m = p;
        bool changed = false;
        if (m.depositAmount != 0) {
            Flow storage f = _flows[auditor][m.depositFlow];
            if (f.appliedAt != 0) {
                uint256 minted = uint256(m.depositAmount) * f.mintedShares / f.deposits;
                if (f.generation != m.generation) {
                    m.shares = uint128(minted);
                    m.generation = f.generation;
                } else {
                    m.shares += uint128(minted);
                }
                emit SharesIssued(auditor, holder, m.depositFlow, minted);
                m.depositAmount = 0;
                m.depositFlow = 0;
                changed = true;
            }
        }
        if (m.generation != generation) {
            m.shares = 0;
            m.generation = uint32(generation);
            changed = true;
        }
        if (changed) _positions[auditor][holder] = m;
        return m.shares;
    }

    /// @dev `_syncPosition` without writing: (shares now, pending deposit amount, its flow).
    function _viewPosition(address auditor, address holder)
        internal
        view
        returns (uint256 shares, uint256 depositAmount, uint256 depositFlow)
    {
        Position memory m = _positions[auditor][holder];
        shares = m.shares;
        uint256 generation = m.generation;
        depositAmount = m.depositAmount;
        depositFlow = m.depositFlow;
        if (depositAmount != 0) {
            Flow storage f = _flows[auditor][depositFlow];
            if (f.appliedAt != 0) {
                uint256 minted = depositAmount * f.mintedShares / f.deposits;
                if (f.generation != generation) {
                    shares = minted;
                    generation = f.generation;
                } else {
                    shares += minted;
                }
                depositAmount = 0;
                depositFlow = 0;
            }
        }
        if (generation != _info[auditor].generation) shares = 0;
    }
}
