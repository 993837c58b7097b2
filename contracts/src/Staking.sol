// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Ownable, Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {IStaking} from "./interfaces/IStaking.sol";
import {SumTree} from "./libraries/SumTree.sol";

/// @title Staking
/// @notice One share-accounted pool per auditor, plus the per-tier sortition trees and reputations.
/// @dev Self-stake and delegations buy shares of the auditor's pool. Rewards and slashes change the
/// pool's assets, so every share holder gains or loses pro rata. Shares price with a virtual share
/// and a virtual asset (+1 each) so a drained pool can neither be inflated nor redeem more than it holds.
/// Sortition weight of an eligible auditor = assets * (reputation + rFloor) / 1e18 / WEIGHT_UNIT:
/// stake counts most, reputation scales it between rFloor and 1 + rFloor, and WEIGHT_UNIT (1e12 wei)
/// keeps tree sums inside 64 bits. Eligible = registered, not deregistered, assets >= minStake[tier].
/// Stake that backs open seats is locked (P per seat) and cannot be withdrawn until settlement.
/// Pausing stops new stake only: withdrawals and settlements always work.
contract Staking is IStaking, Ownable2Step, Pausable {
    using SafeERC20 for IERC20;
    using SumTree for SumTree.Tree;

    uint256 private constant WAD = 1e18;
    uint256 private constant BPS = 10_000;
    /// @notice Wei of stake per unit of sortition weight.
    uint256 public constant WEIGHT_UNIT = 1e12;
    /// @notice Hard bounds on owner parameters.
    uint256 public constant MAX_COOLDOWN = 30 days;
    uint256 public constant MAX_COMMISSION_DELAY = 30 days;
    uint256 public constant MAX_COMMISSION_BPS = 5_000;
    uint256 public constant MAX_MIN_STAKE = 1e9 * 1e18;

    /// @notice Owner-set parameters.
    struct StakingParams {
        uint96[3] minStake;
        uint32 cooldown;
        uint32 commissionDelay;
        uint64 initialReputation;
        uint64 reputationFloor;
        uint16 maxCommissionBps;
    }

    /// @notice A pool's hot state, packed in one slot (touched by every settlement).
    struct Pool {
        uint96 assets;
        uint96 locked;
        uint64 reputation;
    }

    /// @notice A pool's cold state.
    struct PoolInfo {
        uint128 totalShares;
        uint16 commissionBps;
        uint16 pendingCommissionBps;
        uint40 commissionEffectiveAt;
        uint8 tier;
        bool registered;
        bool known;
        uint32 leafPlusOne;
    }

    /// @notice A withdrawal waiting for its cooldown.
    struct Withdrawal {
        address owner;
        uint96 amount;
        address auditor;
        uint40 readyAt;
        bool claimed;
    }

    /// @notice The protocol token.
    IERC20 public immutable token;
    /// @notice The auditor registry (set once by `wire`).
    address public registry;
    /// @notice The session contract (set once by `wire`).
    address public sessions;
    /// @notice Receives slashed stake.
    address public treasury;

    StakingParams private _params;
    mapping(address => Pool) private _pools;
    mapping(address => PoolInfo) private _info;
    mapping(address => mapping(address => uint256)) private _shares;
    Withdrawal[] private _withdrawals;
    SumTree.Tree[3] private _trees;
    /// @notice Tokens waiting in withdrawal requests (left the pools, not yet claimed).
    uint256 public pendingWithdrawals;
    /// @notice Sum of all pools' assets.
    uint256 public totalPooled;

    error ZeroAddress();
    error ZeroAmount();
    error AlreadyWired();
    error NotRegistry();
    error NotSessions();
    error NotRegistered(address auditor);
    error InvalidTier(uint256 tier);
    error InvalidParams();
    error InsufficientShares(uint256 requested, uint256 held);
    error StakeLocked(uint256 requested, uint256 free);
    error CommissionTooHigh(uint256 bps, uint256 maxBps);
    error UnknownWithdrawal(uint256 id);
    error NotWithdrawalOwner(uint256 id);
    error WithdrawalNotReady(uint256 id, uint256 readyAt);
    error AlreadyClaimed(uint256 id);
    error AmountOverflow();

    event Wired(address registry, address sessions);
    event TreasuryChanged(address treasury);
    event ParamsChanged(StakingParams params);
    event AuditorActivated(address indexed auditor, uint8 tier, uint256 reputation);
    event AuditorDeactivated(address indexed auditor);
    event Staked(address indexed auditor, address indexed staker, uint256 amount, uint256 shares);
    event WithdrawalRequested(
        uint256 indexed id,
        address indexed auditor,
        address indexed owner,
        uint256 shares,
        uint256 amount,
        uint256 readyAt
    );
    event WithdrawalClaimed(uint256 indexed id, address indexed owner, uint256 amount);
    event CommissionChangeScheduled(address indexed auditor, uint256 bps, uint256 effectiveAt);
    event StakeLockedForSeat(address indexed auditor, uint256 amount, uint256 lockedTotal);
    /// @dev Reward, reputation and unlock are in AuditSessions.AuditorSettled; this adds what only
    /// the pool knows: the commission paid out and the slash actually taken (capped by assets).
    event SettlementApplied(address indexed auditor, uint256 commission, uint256 slashed);

    modifier onlyRegistry() {
        if (msg.sender != registry) revert NotRegistry();
        _;
    }

    modifier onlySessions() {
        if (msg.sender != sessions) revert NotSessions();
        _;
    }

    /// @param token_ The protocol token.
    /// @param owner_ Parameter owner.
    /// @param treasury_ Receives slashed stake.
    /// @param params_ Initial parameters (checked against the hard bounds).
    constructor(IERC20 token_, address owner_, address treasury_, StakingParams memory params_)
        Ownable(owner_)
    {
        if (address(token_) == address(0) || treasury_ == address(0)) revert ZeroAddress();
        token = token_;
        treasury = treasury_;
        _setParams(params_);
    }

    // ------------------------------------------------------------------ owner

    /// @notice Connect the registry and the session contract (once).
    function wire(address registry_, address sessions_) external onlyOwner {
        if (registry != address(0)) revert AlreadyWired();
        if (registry_ == address(0) || sessions_ == address(0)) revert ZeroAddress();
        registry = registry_;
        sessions = sessions_;
        emit Wired(registry_, sessions_);
    }

    /// @notice Change where slashed stake goes.
    function setTreasury(address treasury_) external onlyOwner {
        if (treasury_ == address(0)) revert ZeroAddress();
        treasury = treasury_;
        emit TreasuryChanged(treasury_);
    }

    /// @notice Change the parameters within their hard bounds.
    function setParams(StakingParams calldata params_) external onlyOwner {
        _setParams(params_);
    }

    /// @notice Stop new stake in an emergency (withdrawals and settlement keep working).
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
    function onRegister(address auditor, uint8 tier) external onlyRegistry {
        if (tier > 2) revert InvalidTier(tier);
        PoolInfo storage info = _info[auditor];
        if (info.known && info.tier != tier) {
            if (info.leafPlusOne != 0) _trees[info.tier].setAt(info.leafPlusOne - 1, 0);
            info.leafPlusOne = uint32(_trees[tier].positionOf(auditor));
        }
        info.tier = tier;
        info.registered = true;
        if (!info.known) {
            info.known = true;
            _pools[auditor].reputation = _params.initialReputation;
        }
        emit AuditorActivated(auditor, tier, _pools[auditor].reputation);
        _refresh(auditor);
    }

    /// @inheritdoc IStaking
    function onDeregister(address auditor) external onlyRegistry {
        _info[auditor].registered = false;
        emit AuditorDeactivated(auditor);
        _refresh(auditor);
    }

    // ---------------------------------------------------------------- stakers

    /// @notice Buy shares of `auditor`'s pool with `amount` tokens (self-stake or delegation).
    /// @return shares Shares minted to the caller.
    function stake(address auditor, uint256 amount) external whenNotPaused returns (uint256 shares) {
        if (amount == 0) revert ZeroAmount();
        PoolInfo storage info = _info[auditor];
        if (!info.registered) revert NotRegistered(auditor);
        Pool storage pool = _pools[auditor];
        shares = amount * (uint256(info.totalShares) + 1) / (uint256(pool.assets) + 1);
        if (shares == 0) revert ZeroAmount();
        uint256 newAssets = uint256(pool.assets) + amount;
        uint256 newShares = uint256(info.totalShares) + shares;
        if (newAssets > type(uint96).max || newShares > type(uint128).max) revert AmountOverflow();
        pool.assets = uint96(newAssets);
        info.totalShares = uint128(newShares);
        _shares[auditor][msg.sender] += shares;
        totalPooled += amount;
        emit Staked(auditor, msg.sender, amount, shares);
        token.safeTransferFrom(msg.sender, address(this), amount);
        _refresh(auditor);
    }

    /// @notice Redeem `shareAmount` of the caller's shares in `auditor`'s pool; claimable after the cooldown.
    /// @return id The withdrawal id to claim with.
    function requestWithdrawal(address auditor, uint256 shareAmount) external returns (uint256 id) {
        if (shareAmount == 0) revert ZeroAmount();
        uint256 held = _shares[auditor][msg.sender];
        if (shareAmount > held) revert InsufficientShares(shareAmount, held);
        Pool storage pool = _pools[auditor];
        PoolInfo storage info = _info[auditor];
        uint256 amount = _toAssets(shareAmount, pool.assets, info.totalShares);
        uint256 free = uint256(pool.assets) - pool.locked;
        if (amount > free) revert StakeLocked(amount, free);
        _shares[auditor][msg.sender] = held - shareAmount;
        info.totalShares -= uint128(shareAmount);
        pool.assets -= uint96(amount);
        totalPooled -= amount;
        pendingWithdrawals += amount;
        uint256 readyAt = block.timestamp + _params.cooldown;
        id = _withdrawals.length;
        _withdrawals.push(
            Withdrawal({
                owner: msg.sender,
                amount: uint96(amount),
                auditor: auditor,
                readyAt: uint40(readyAt),
                claimed: false
            })
        );
        emit WithdrawalRequested(id, auditor, msg.sender, shareAmount, amount, readyAt);
        _refresh(auditor);
    }

    /// @notice Collect a withdrawal once its cooldown is over (works while paused).
    function claimWithdrawal(uint256 id) external {
        if (id >= _withdrawals.length) revert UnknownWithdrawal(id);
        Withdrawal storage w = _withdrawals[id];
        if (w.owner != msg.sender) revert NotWithdrawalOwner(id);
        if (w.claimed) revert AlreadyClaimed(id);
        if (block.timestamp < w.readyAt) revert WithdrawalNotReady(id, w.readyAt);
        w.claimed = true;
        pendingWithdrawals -= w.amount;
        emit WithdrawalClaimed(id, msg.sender, w.amount);
        token.safeTransfer(msg.sender, w.amount);
    }

    /// @notice Schedule the caller's commission on rewards; takes effect after the commission delay.
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

    /// @notice Recompute `auditor`'s sortition weight (e.g. after a minimum-stake change).
    function poke(address auditor) external {
        _refresh(auditor);
    }

    // --------------------------------------------------------------- sessions

    /// @inheritdoc IStaking
    function sample(uint8 tier, uint256 randomWord) external view returns (address) {
        SumTree.Tree storage tree = _trees[tier];
        uint256 t = tree.total();
        if (t == 0) return address(0);
        return tree.sample(randomWord % t);
    }

    /// @inheritdoc IStaking
    function lock(address auditor, uint8 tier, uint256 amount) external onlySessions returns (bool) {
        PoolInfo storage info = _info[auditor];
        Pool storage pool = _pools[auditor];
        if (!info.registered || info.tier != tier || pool.assets < _params.minStake[tier]) return false;
        uint256 newLocked = uint256(pool.locked) + amount;
        if (newLocked > pool.assets) return false;
        pool.locked = uint96(newLocked);
        emit StakeLockedForSeat(auditor, amount, newLocked);
        return true;
    }

    /// @inheritdoc IStaking
    function reputationsOf(address[] calldata auditors) external view returns (uint256[] memory reps) {
        reps = new uint256[](auditors.length);
        for (uint256 i = 0; i < auditors.length; ++i) {
            reps[i] = _pools[auditors[i]].reputation;
        }
    }

    /// @inheritdoc IStaking
    function applySettlements(SettlementDelta[] calldata deltas) external onlySessions {
        uint256 slashedTotal = 0;
        uint256 pooledIn = 0;
        uint256 floor = _params.reputationFloor;
        for (uint256 i = 0; i < deltas.length; ++i) {
            (uint256 slashed, uint256 toPool) = _applyOne(deltas[i], floor);
            slashedTotal += slashed;
            pooledIn += toPool;
        }
        totalPooled = totalPooled + pooledIn - slashedTotal;
        if (slashedTotal != 0) token.safeTransfer(treasury, slashedTotal);
    }

    /// @dev One auditor: slash (capped by assets), unlock, reward net of commission, reputation,
    /// and the new sortition weight, with the pool's hot slot written once.
    function _applyOne(SettlementDelta calldata d, uint256 floor)
        private
        returns (uint256 slashed, uint256 toPool)
    {
        address auditor = d.auditor;
        uint256 reward = d.reward;
        uint64 reputation = d.reputation;
        Pool storage pool = _pools[auditor];
        PoolInfo storage info = _info[auditor];
        uint256 assets = pool.assets;
        uint256 locked = pool.locked;
        uint256 commission;
        // All operands are uint96 amounts or bps/WAD factors: no product or sum nears 2^256,
        // and slashed <= assets, commission <= reward, unlock is capped at locked.
        unchecked {
            slashed = d.slash > assets ? assets : d.slash;
            commission = reward == 0 ? 0 : reward * _commissionOf(info) / BPS;
            toPool = reward - commission;
            locked = d.unlock > locked ? 0 : locked - d.unlock;
            assets = assets - slashed + toPool;
        }
        if (assets > type(uint96).max) revert AmountOverflow();
        if (locked > assets) locked = assets;
        _pools[auditor] = Pool({assets: uint96(assets), locked: uint96(locked), reputation: reputation});
        emit SettlementApplied(auditor, commission, slashed);
        if (commission != 0) token.safeTransfer(auditor, commission);
        if (info.known) {
            uint256 w = 0;
            if (info.registered && assets >= _params.minStake[info.tier]) {
                unchecked {
                    w = assets * (uint256(reputation) + floor) / WAD / WEIGHT_UNIT;
                }
            }
            _setWeight(auditor, info, w);
        }
    }

    // ------------------------------------------------------------------ views

    /// @notice The current parameters.
    function params() external view returns (StakingParams memory) {
        return _params;
    }

    /// @notice A pool: assets, locked assets, total shares, reputation, effective commission, tier, registered.
    function poolOf(address auditor)
        external
        view
        returns (
            uint256 assets,
            uint256 locked,
            uint256 totalShares,
            uint256 reputation,
            uint256 commissionBps,
            uint8 tier,
            bool registered
        )
    {
        Pool memory pool = _pools[auditor];
        PoolInfo storage info = _info[auditor];
        return (
            pool.assets,
            pool.locked,
            info.totalShares,
            pool.reputation,
            _commissionOf(info),
            info.tier,
            info.registered
        );
    }

    /// @notice Shares of `holder` in `auditor`'s pool.
    function sharesOf(address auditor, address holder) external view returns (uint256) {
        return _shares[auditor][holder];
    }

    /// @notice Tokens `shareAmount` shares of `auditor`'s pool redeem for now.
    function previewRedeem(address auditor, uint256 shareAmount) external view returns (uint256) {
        return _toAssets(shareAmount, _pools[auditor].assets, _info[auditor].totalShares);
    }

    /// @notice Reputation (WAD) of `auditor`.
    function reputationOf(address auditor) external view returns (uint256) {
        return _pools[auditor].reputation;
    }

    /// @notice Sortition weight of `auditor` in its tier's tree.
    function weightOf(address auditor) external view returns (uint256) {
        return _trees[_info[auditor].tier].weightOf(auditor);
    }

    /// @notice Total sortition weight of `tier`.
    function totalWeight(uint8 tier) external view returns (uint256) {
        if (tier > 2) revert InvalidTier(tier);
        return _trees[tier].total();
    }

    /// @notice A withdrawal request.
    function withdrawalOf(uint256 id) external view returns (Withdrawal memory) {
        if (id >= _withdrawals.length) revert UnknownWithdrawal(id);
        return _withdrawals[id];
    }

    /// @notice Number of withdrawal requests ever made.
    function withdrawalCount() external view returns (uint256) {
        return _withdrawals.length;
    }

    // -------------------------------------------------------------- internals

    function _toAssets(uint256 shareAmount, uint256 assets, uint256 totalShares)
        private
        pure
        returns (uint256)
    {
        return shareAmount * (assets + 1) / (totalShares + 1);
    }

    function _commissionOf(PoolInfo storage info) private view returns (uint256) {
        uint256 at = info.commissionEffectiveAt;
        if (at != 0 && block.timestamp >= at) return info.pendingCommissionBps;
        return info.commissionBps;
    }

    function _weight(address auditor, PoolInfo storage info) private view returns (uint256) {
        Pool memory pool = _pools[auditor];
        if (!info.registered || pool.assets < _params.minStake[info.tier]) return 0;
        return uint256(pool.assets) * (uint256(pool.reputation) + _params.reputationFloor) / WAD / WEIGHT_UNIT;
    }

    /// @dev Weight is derived from assets, reputation and registration, whose changes all emit
    /// events, so the tree update itself emits none.
    function _refresh(address auditor) private {
        PoolInfo storage info = _info[auditor];
        if (!info.known) return;
        _setWeight(auditor, info, _weight(auditor, info));
    }

    /// @dev The leaf position is cached in PoolInfo (read anyway) to skip the tree's member lookup.
    function _setWeight(address auditor, PoolInfo storage info, uint256 w) private {
        uint256 leaf = info.leafPlusOne;
        if (leaf != 0) {
            _trees[info.tier].setAt(leaf - 1, w);
        } else {
            leaf = _trees[info.tier].set(auditor, w);
            if (leaf != 0) info.leafPlusOne = uint32(leaf);
        }
    }
}
