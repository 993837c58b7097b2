// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Ownable, Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {IStaking} from "./interfaces/IStaking.sol";
import {StakingViews} from "./StakingViews.sol";
import {StakingLedger} from "./StakingLedger.sol";
import {StakingAccounts, StakingHoldsOps} from "./StakingHoldsOps.sol";
import {SortitionTrees} from "./SortitionTrees.sol";
import {SnapshotSumTree} from "./libraries/SnapshotSumTree.sol";
import {LedgerPacking} from "./libraries/LedgerPacking.sol";
import {Forward} from "./libraries/Forward.sol";

/// @title Staking
/// @notice One share-accounted pool per auditor with a FIFO ledger that makes delegation pro rata, plus
/// the per-tier sortition trees whose epoch snapshots the draws read (docs/protocol-v2.md, 1, 3, 4).
/// @dev Self-stake and delegations buy shares of the auditor's pool. A session's result falls exactly on
/// the shares that backed the auditor when it was drawn: deposits and withdrawal requests made while the
/// ledger holds entries wait in FLOW entries behind the sessions drawn before them (see StakingLedger).
/// Sortition weight = backing * (reputation + floor) / 1e18 / WEIGHT_UNIT for a registered auditor at or
/// above its tier's minimum stake, written to the tree at every change. The constructor checks that the
/// whole token supply at the highest weight fits a tree lane, so no stake can overflow a tree sum.
/// Pausing stops new stake only: withdrawals, claims, draws and results always work.
contract Staking is StakingViews, Ownable2Step, Pausable {
    using SafeERC20 for IERC20;

    /// @notice Hard bounds on owner parameters.
    uint256 public constant MAX_COOLDOWN = 30 days;
    uint256 public constant MAX_COMMISSION_DELAY = 30 days;
    uint256 public constant MAX_COMMISSION_BPS = 5_000;
    uint256 public constant MAX_MIN_STAKE = 1e9 * 1e18;
    uint256 public constant MAX_EPOCH_BLOCKS = 1e6;

    /// @dev Code off the draw and settlement paths, run by DELEGATECALL (`_unpark` and the operations that
    /// `_forward`), deployed by the constructor.
    address private immutable _holdsOps;

    error ZeroAddress();
    error ZeroAmount();
    error AlreadyWired();
    error NotRegistry();
    error NotDrawModule();
    error NotSettlementModule();
    error NotRegistered(address auditor);
    error InvalidTier(uint256 tier);
    error InvalidParams();
    error InvalidEpochBlocks(uint256 epochBlocks);
    error SupplyTooLarge(uint256 supply);
    error InsufficientShares(uint256 requested, uint256 held);
    error DepositPending(address auditor, uint256 flow);
    error CommissionTooHigh(uint256 bps, uint256 maxBps);
    error NotWithdrawalOwner(uint256 id);
    error WithdrawalPending(uint256 id, uint256 flow);
    error WithdrawalNotReady(uint256 id, uint256 readyAt);
    error UnknownWithdrawal(uint256 id);
    error AlreadyClaimed(uint256 id);
    error EntryNotPending(address auditor, uint256 entry);
    error EntryMismatch(address auditor, uint256 entry);
    /// @notice `lockSeats` asked for more than `seatQuote` allowed.
    error LockRefused(address auditor);
    /// @notice A re-registration in another tier while the old tier's snapshots may still draw it.
    error TierHeld(address auditor, uint256 untilEpoch);
    /// @notice A re-registration in another tier while the pool holds `locked` stake of seats (Review26).
    error TierLocked(address auditor, uint256 locked);

    event Wired(address registry, address drawModule, address settlementModule);
    event TreasuryChanged(address treasury);
    event ParamsChanged(StakingParams params);
    event AuditorActivated(address indexed auditor, uint8 tier, uint256 reputation);
    event AuditorDeactivated(address indexed auditor);
    /// @notice A deposit: minted now (`shares`, flow 0) or queued in FLOW entry `flow` (shares 0).
    event Staked(
        address indexed auditor, address indexed holder, uint256 amount, uint256 shares, uint256 flow
    );
    /// @notice A withdrawal request: redeemed now (`amount`, flow 0) or queued in FLOW entry `flow`.
    event WithdrawalRequested(
        uint256 indexed id,
        address indexed auditor,
        address indexed owner,
        uint256 shares,
        uint256 amount,
        uint256 flow,
        uint256 readyAt
    );
    event WithdrawalClaimed(uint256 indexed id, address indexed owner, uint256 amount);
    event CommissionChangeScheduled(address indexed auditor, uint256 bps, uint256 effectiveAt);
    /// @notice A SESSION entry was pushed at an auditor's first seat under `key`.
    event SessionEntryOpened(
        address indexed auditor, uint256 indexed key, uint256 entry, uint256 commissionBps, uint256 reputation
    );
    /// @notice Stake of one more seat (`lockSeat`), or of all the seats one draw call gave the auditor
    /// (`lockSeats`), is locked under entry `entry`.
    event SeatLocked(address indexed auditor, uint256 indexed entry, uint256 amount, uint256 lockedTotal);
    /// @notice A result arrived: commission paid now, the rest applied in ledger order (`early`: stored).
    event SessionResolved(
        address indexed auditor,
        uint256 indexed key,
        uint256 entry,
        uint256 reward,
        uint256 commission,
        uint256 slash,
        bool early
    );

    /// @param token_ The protocol token (its whole supply must fit a tree lane at the highest weight).
    /// @param owner_ Parameter owner.
    /// @param treasury_ Receives slashed stake.
    /// @param epochBlocks_ Blocks per snapshot epoch (1 .. MAX_EPOCH_BLOCKS).
    /// @param params_ Initial parameters (checked against the hard bounds).
    constructor(
        IERC20 token_,
        address owner_,
        address treasury_,
        uint256 epochBlocks_,
        StakingParams memory params_
    ) StakingLedger(epochBlocks_, new SortitionTrees(epochBlocks_)) StakingAccounts(token_) Ownable(owner_) {
        if (address(token_) == address(0) || treasury_ == address(0)) {
            revert ZeroAddress();
        }
        if (epochBlocks_ == 0 || epochBlocks_ > MAX_EPOCH_BLOCKS) revert InvalidEpochBlocks(epochBlocks_);
        uint256 supply = token_.totalSupply();
        if (supply * 2 / WEIGHT_UNIT > SnapshotSumTree.LANE_MAX) revert SupplyTooLarge(supply);
        treasury = treasury_;
        _holdsOps = address(new StakingHoldsOps(token_, epochBlocks_, _sortition));
        _setParams(params_);
    }

    /// @dev Queue the pool's expired batches (StakingHolds), by DELEGATECALL into `StakingHoldsOps`; a pool
    /// that never held pays one warm read.
    function _unpark(Work memory w) internal override {
        if (_info[w.auditor].holdEpoch == 0) return;
        w.tail = _ops(abi.encodeCall(StakingHoldsOps.unpark, (w.auditor, w.head, w.tail, w.generation)));
    }

    /// @dev Run `call` in `StakingHoldsOps` on this contract's storage; its one-word result.
    function _ops(bytes memory call) private returns (uint256) {
        (bool ok, bytes memory ret) = _holdsOps.delegatecall(call);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(ret, 32), mload(ret))
            }
        }
        return abi.decode(ret, (uint256));
    }

    /// @dev Run this call's own calldata (the same function of `StakingHoldsOps`) on this contract's storage
    /// and end the call with its return or revert data. Stubs name their parameters and results (no-op
    /// statements) so that Staking's ABI stays what the callers decode.
    function _forward() private {
        Forward.toOps(_holdsOps);
    }

    // ------------------------------------------------------------------ owner

    /// @notice Connect the registry and the session modules (once).
    function wire(address registry_, address drawModule_, address settlementModule_) external onlyOwner {
        if (registry != address(0)) revert AlreadyWired();
        if (registry_ == address(0) || drawModule_ == address(0) || settlementModule_ == address(0)) {
            revert ZeroAddress();
        }
        registry = registry_;
        drawModule = drawModule_;
        settlementModule = settlementModule_;
        emit Wired(registry_, drawModule_, settlementModule_);
    }

    /// @notice Change where slashed stake goes.
    function setTreasury(address treasury_) external onlyOwner {
        if (treasury_ == address(0)) revert ZeroAddress();
        treasury = treasury_;
        emit TreasuryChanged(treasury_);
    }

    /// @notice Change the parameters within their hard bounds (weights follow at each pool's next change
    /// or `poke`).
    function setParams(StakingParams calldata params_) external onlyOwner {
        _setParams(params_);
    }

    /// @notice Stop new stake in an emergency (everything else keeps working).
    function pause() external onlyOwner {
        _pause();
    }

    /// @notice Resume new stake.
    function unpause() external onlyOwner {
        _unpause();
    }

    function _setParams(StakingParams memory p) private {
        for (uint256 t = 0; t < 3; ++t) {
            if (p.minStake[t] > MAX_MIN_STAKE) revert InvalidParams();
        }
        if (
            p.cooldown > MAX_COOLDOWN || p.commissionDelay > MAX_COMMISSION_DELAY || p.initialReputation > WAD
                || p.reputationFloor > WAD || p.maxCommissionBps > MAX_COMMISSION_BPS
        ) revert InvalidParams();
        _params = p;
        emit ParamsChanged(p);
    }

    // --------------------------------------------------------------- registry

    /// @inheritdoc IStaking
    /// @dev Run in `StakingHoldsOps` (only the registry).
    function onRegister(address auditor, uint8 tier) external {
        auditor;
        tier;
        _forward();
    }

    /// @inheritdoc IStaking
    /// @dev Run in `StakingHoldsOps` (only the registry).
    function onDeregister(address auditor) external {
        auditor;
        _forward();
    }

    // ---------------------------------------------------------------- stakers

    /// @notice Stake `amount` tokens in `auditor`'s pool (self-stake or delegation).
    /// @dev With an empty ledger (after a bounded side drain) shares are minted at once. Otherwise the
    /// deposit joins the FLOW entry at the tail: it backs the auditor from now on and becomes shares
    /// when the entry is applied, at the price left by every session drawn before it. A holder has at
    /// most one pending deposit per pool (`DepositPending` until it applies; `drain` helps). Run in
    /// `StakingHoldsOps` after the pause check.
    /// @return shares Shares minted now (0 when queued).
    /// @return flow The FLOW entry the deposit waits in (0 when minted now).
    function stake(address auditor, uint256 amount)
        external
        whenNotPaused
        returns (uint256 shares, uint256 flow)
    {
        auditor;
        amount;
        shares;
        flow;
        _forward();
    }

    /// @notice Redeem `shareAmount` of the caller's shares in `auditor`'s pool.
    /// @dev With an empty ledger the shares are redeemed at once and the cooldown starts now. Otherwise
    /// they join the FLOW entry at the tail: they stop backing new draws at once, still bear the result
    /// of every session drawn before, and are redeemed when the entry is applied (cooldown from then).
    /// A pool standing in a readable snapshot parks them instead (StakingHolds). Run in `StakingHoldsOps`.
    /// @return id The withdrawal id to claim with.
    function requestWithdrawal(address auditor, uint256 shareAmount) external returns (uint256 id) {
        auditor;
        shareAmount;
        id;
        _forward();
    }

    /// @notice Collect a withdrawal once it is redeemed and its cooldown is over.
    function claimWithdrawal(uint256 id) external {
        if (id >= _withdrawals.length) revert UnknownWithdrawal(id);
        Withdrawal storage wd = _withdrawals[id];
        if (wd.owner != msg.sender) revert NotWithdrawalOwner(id);
        if (wd.claimed) revert AlreadyClaimed(id);
        (uint256 amount, uint256 readyAt) = _withdrawalTerms(wd);
        if (readyAt == 0) revert WithdrawalPending(id, wd.flow);
        if (block.timestamp < readyAt) revert WithdrawalNotReady(id, readyAt);
        wd.claimed = true;
        wd.amount = uint96(amount);
        wd.readyAt = uint40(readyAt);
        withdrawalReserve -= uint128(amount);
        emit WithdrawalClaimed(id, msg.sender, amount);
        if (amount != 0) token.safeTransfer(msg.sender, amount);
    }

    /// @notice Schedule the caller's commission on rewards; it takes effect after the commission delay
    /// and applies to sessions whose first seat is locked from then on.
    function setCommission(uint256 bps) external {
        PoolInfo storage info = _info[msg.sender];
        if (!info.known) revert NotRegistered(msg.sender);
        if (bps > _params.maxCommissionBps) revert CommissionTooHigh(bps, _params.maxCommissionBps);
        if (info.commissionEffectiveAt != 0 && block.timestamp >= info.commissionEffectiveAt) {
            info.commissionBps = info.pendingCommissionBps;
        }
        uint256 effectiveAt = block.timestamp + _params.commissionDelay;
        info.pendingCommissionBps = uint16(bps);
        info.commissionEffectiveAt = uint40(effectiveAt);
        emit CommissionChangeScheduled(msg.sender, bps, effectiveAt);
    }

    /// @inheritdoc IStaking
    function drain(address auditor, uint256 maxEntries) external returns (uint256 applied) {
        Work memory w;
        Globals memory g;
        (w, g, applied) = _begin(auditor, maxEntries);
        _store(w, g);
        _settleGlobals(g);
    }

    /// @notice Recompute `auditor`'s backing and weight (e.g. after a parameter change).
    function poke(address auditor) external {
        _refresh(auditor);
    }

    // ------------------------------------------------------------- draw module

    /// @inheritdoc IStaking
    function lockSeat(address auditor, uint8 tier, uint256 key, uint256 amount, uint256 entry)
        external
        returns (bool ok, uint64 reputation, uint256 entryIndex)
    {
        if (msg.sender != drawModule) revert NotDrawModule();
        return _lock(auditor, tier, key, amount, entry);
    }

    /// @inheritdoc IStaking
    function lockSeats(address auditor, uint8 tier, uint256 key, uint256 amount, uint256 entry)
        external
        returns (uint64 reputation, uint256 entryIndex)
    {
        if (msg.sender != drawModule) revert NotDrawModule();
        bool ok;
        (ok, reputation, entryIndex) = _lock(auditor, tier, key, amount, entry);
        if (!ok) revert LockRefused(auditor);
    }

    /// @inheritdoc IStaking
    function seatQuote(address auditor) external view returns (SeatQuote memory q) {
        Pool memory pool = _pools[auditor];
        PoolInfo storage info = _info[auditor];
        q.tier = info.tier;
        uint256 limit;
        (q.eligible, limit) = _lockLimit(auditor, info, pool);
        if (q.eligible) {
            q.free = limit - pool.locked;
            q.limit = limit;
        }
        q.reputation = pool.reputation;
        uint256 tail = info.tail;
        // A first lock queues the batches past their hold first (5.1): its entry follows their FLOW.
        uint256 next = _pushesFlow(auditor, info) ? tail + 1 : tail;
        if (next - info.head < LEDGER_CAPACITY) q.nextEntry = next;
        q.lastEntry = tail - 1;
    }

    /// @inheritdoc IStaking
    function queuedAfter(address auditor, uint256 entry) external view returns (uint256) {
        return _queuedAfter(auditor, entry, _info[auditor].tail);
    }

    /// @dev `lockSeat`'s rule: refuse (nothing changes) unless registered in `tier`, at the tier's minimum
    /// and able to back `amount` more (`_lockLimit`: the pro-rata rule of 5.1 after a hold); a first lock
    /// under `key` (`entry` 0) queues the batches past their hold, then pushes the SESSION entry (a
    /// refusal for a full ledger may leave them queued, which changes no quote).
    /// Extending an entry that later entries follow counts no deposit queued after it (`_queuedAfter`);
    /// deposits queued before it apply first and back it (a third party's deposit into the pool after the
    /// entry cannot take them away: Review21DustDepositChargesHonest).
    function _lock(address auditor, uint8 tier, uint256 key, uint256 amount, uint256 entry)
        private
        returns (bool ok, uint64 reputation, uint256 entryIndex)
    {
        Pool memory pool = _pools[auditor];
        PoolInfo storage info = _info[auditor];
        (bool eligible, uint256 basis) = _lockLimit(auditor, info, pool);
        if (!eligible || info.tier != tier) return (false, 0, 0);
        uint256 lockedTotal = uint256(pool.locked) + amount;
        if (lockedTotal > basis) return (false, 0, 0);
        if (entry == 0) {
            // Expired batches join the FLOW first: a session drawn after a hold is not theirs (5.1).
            if (info.holdEpoch != 0) _unparkAt(auditor, info);
            entryIndex = info.tail;
            uint256 head = info.head;
            if (entryIndex - head >= LEDGER_CAPACITY) return (false, 0, 0);
            reputation = pool.reputation;
            _openEntry(auditor, info, key, entryIndex, amount, reputation);
            // An empty ledger holds no pending deposit (they wait in its FLOW entries): nothing to read.
            if (head != entryIndex) _noteQueuedAt(auditor, entryIndex);
        } else {
            // Deposits queued after `entry` become shares after it applies: its slash cannot reach
            // them, so they back no more of its seats (SlashableStakeBacksEverySeat).
            uint256 tail = info.tail;
            if (entry + 1 != tail && lockedTotal + _queuedAfter(auditor, entry, tail) > basis) {
                return (false, 0, 0);
            }
            reputation = _extendEntry(auditor, info, key, entry, amount);
            entryIndex = entry;
        }
        _noteLock(auditor, info, entryIndex, amount);
        _pools[auditor].locked = uint96(lockedTotal);
        emit SeatLocked(auditor, entryIndex, amount, lockedTotal);
        ok = true;
    }

    /// @dev Push the SESSION entry of `key` at the tail, recording the commission and reputation.
    function _openEntry(
        address auditor,
        PoolInfo storage info,
        uint256 key,
        uint256 tail,
        uint256 amount,
        uint256 reputation
    ) private {
        uint256 bps = _commissionOf(info);
        _ring[auditor][tail % LEDGER_CAPACITY] =
            LedgerPacking.packOpen(bps, reputation, amount, LedgerPacking.keyTag(key));
        info.tail = uint32(tail + 1);
        emit SessionEntryOpened(auditor, key, tail, bps, reputation);
    }

    /// @dev Record `_queuedEver` for SESSION entry `entry`, pushed now, if deposits are pending (see
    /// `_queuedAfter`; none pending: no write, every deposit pending later was queued after `entry`).
    function _noteQueuedAt(address auditor, uint256 entry) private {
        if (_books[auditor].pendingDeposits == 0) return;
        _queuedAt[auditor][entry % LEDGER_CAPACITY] = (entry << 128) | _queuedEver[auditor];
    }

    /// @dev Add `amount` to the locked stake of the open SESSION entry `entry` of `key`.
    function _extendEntry(address auditor, PoolInfo storage info, uint256 key, uint256 entry, uint256 amount)
        private
        returns (uint64 reputation)
    {
        if (entry < info.head || entry >= info.tail) revert EntryNotPending(auditor, entry);
        uint256 slot = entry % LEDGER_CAPACITY;
        uint256 word = _ring[auditor][slot];
        (, uint256 rep, uint256 locked, uint256 tag) = LedgerPacking.openFields(word);
        if (
            LedgerPacking.kind(word) != LedgerPacking.KIND_SESSION || LedgerPacking.isResolved(word)
                || tag != LedgerPacking.keyTag(key)
        ) revert EntryMismatch(auditor, entry);
        _ring[auditor][slot] = LedgerPacking.withLocked(word, locked + amount);
        reputation = uint64(rep);
    }

    // ------------------------------------------------------- settlement module

    /// @inheritdoc IStaking
    function resolve(uint256 key, SessionResult[] calldata results) external {
        if (msg.sender != settlementModule) revert NotSettlementModule();
        uint256 n = results.length;
        uint256 rewards = 0;
        for (uint256 i = 0; i < n; ++i) {
            rewards += results[i].reward;
        }
        if (rewards != 0) token.safeTransferFrom(msg.sender, address(this), rewards);
        uint256 tag = LedgerPacking.keyTag(key);
        Globals memory g = _loadGlobals();
        for (uint256 i = 0; i < n; ++i) {
            _resolveOne(key, tag, results[i], g);
        }
        _settleGlobals(g);
    }

    function _resolveOne(uint256 key, uint256 tag, SessionResult calldata r, Globals memory g) private {
        address auditor = r.auditor;
        uint256 entry = r.entry;
        Work memory w = _load(auditor);
        (uint256 bps, uint256 locked) = _pendingSession(w, entry, tag);
        uint256 commission = uint256(r.reward) * bps / BPS;
        uint256 net = r.reward - commission;
        bool early = entry != w.head;
        if (early) {
            uint256 slot = entry % LEDGER_CAPACITY;
            _ring[auditor][slot] = LedgerPacking.packResolved(bps, locked, r.repMul, r.repAdd);
            _results[auditor][slot] = LedgerPacking.packResult(net, r.slash);
            g.storedRewards += net;
        } else {
            _applySession(
                w,
                g,
                entry,
                Effect({locked: locked, netReward: net, slash: r.slash, repMul: r.repMul, repAdd: r.repAdd})
            );
            w.head = entry + 1;
        }
        emit SessionResolved(auditor, key, entry, r.reward, commission, r.slash, early);
        _unpark(w);
        _drain(w, g, SIDE_DRAIN);
        _store(w, g);
        if (commission != 0) token.safeTransfer(auditor, commission);
    }

    /// @dev The commission and locked stake of `entry`, which must be a pending, unresolved SESSION
    /// entry whose key has tag `tag`.
    function _pendingSession(Work memory w, uint256 entry, uint256 tag)
        private
        view
        returns (uint256 bps, uint256 locked)
    {
        if (entry < w.head || entry >= w.tail) revert EntryNotPending(w.auditor, entry);
        uint256 word = _ring[w.auditor][entry % LEDGER_CAPACITY];
        uint256 entryTag;
        (bps,, locked, entryTag) = LedgerPacking.openFields(word);
        if (
            LedgerPacking.kind(word) != LedgerPacking.KIND_SESSION || LedgerPacking.isResolved(word)
                || entryTag != tag
        ) revert EntryMismatch(w.auditor, entry);
    }

    // ------------------------------------------------------------------ views

    /// @notice A withdrawal record with what it pays and when (amount 0 and readyAt 0 while queued).
    function withdrawalOf(uint256 id)
        external
        view
        returns (Withdrawal memory record, uint256 amount, uint256 readyAt)
    {
        if (id >= _withdrawals.length) revert UnknownWithdrawal(id);
        Withdrawal storage wd = _withdrawals[id];
        (amount, readyAt) = _withdrawalTerms(wd);
        record = wd;
    }

    /// @notice Number of withdrawal requests ever made.
    function withdrawalCount() external view returns (uint256) {
        return _withdrawals.length;
    }
}
