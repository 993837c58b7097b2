// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {StakingLedger} from "./StakingLedger.sol";
import {StakingHolds} from "./StakingHolds.sol";
import {SortitionTrees} from "./SortitionTrees.sol";

/// @title StakingAccounts
/// @notice What `Staking` and `StakingHoldsOps` share beyond the ledger and the holds: the token, the wiring
/// and the load/apply/store cycle of one pool.
/// @dev Both contracts inherit it in the same place (StakingLedger, StakingHolds, StakingAccounts: Staking's
/// own bases, Ownable2Step and Pausable, come after it), so the code `StakingHoldsOps` runs by DELEGATECALL
/// reads and writes Staking's storage at the slots Staking's own code uses.
abstract contract StakingAccounts is StakingHolds {
    using SafeERC20 for IERC20;

    /// @notice The protocol token.
    IERC20 public immutable token;
    /// @notice The auditor registry (set once by `wire`).
    address public registry;
    /// @notice The module allowed to lock seats (set once by `wire`).
    address public drawModule;
    /// @notice The module allowed to deliver results (set once by `wire`).
    address public settlementModule;
    /// @notice Receives slashed stake.
    address public treasury;

    constructor(IERC20 token_) {
        token = token_;
    }

    /// @dev Write the totals back and send what the pools lost to the treasury.
    function _settleGlobals(Globals memory g) internal {
        _storeGlobals(g);
        if (g.toTreasury != 0) token.safeTransfer(treasury, g.toTreasury);
    }

    /// @dev Load a pool and the totals, queue its expired batches and apply up to `max` ready entries.
    function _begin(address auditor, uint256 max)
        internal
        returns (Work memory w, Globals memory g, uint256 applied)
    {
        g = _loadGlobals();
        w = _load(auditor);
        _unpark(w);
        applied = _drain(w, g, max);
    }

    /// @dev Recompute a pool's backing and weight (its ready entries wait for `drain` or the next operation).
    function _refresh(address auditor) internal {
        (Work memory w, Globals memory g,) = _begin(auditor, 0);
        _store(w, g);
        _settleGlobals(g);
    }
}

/// @title StakingHoldsOps
/// @notice Code of Staking that Staking runs by DELEGATECALL, off the draw and settlement paths (EIP-170
/// room, docs/protocol-v2.md 5.1): the hold rules' writes (`unpark`, for results and first locks) and the
/// operations that need code those paths do not: `stake` and `requestWithdrawal` (positions, parking) and
/// the registry hooks (tier moves, the deregistration hold). Staking exposes each under the same signature
/// and forwards its calldata here after its own checks on state only it reads (the pause). Deployed by
/// Staking's constructor with Staking's storage layout (StakingAccounts), token, epoch length and trees.
/// Every entry reverts `NotStaking` unless run by DELEGATECALL, so a direct call touches no storage; nothing
/// here can self-destruct, delegate further or be initialised.
contract StakingHoldsOps is StakingAccounts {
    using SafeERC20 for IERC20;

    /// @dev This contract's own address: code run by DELEGATECALL sees the caller's.
    address private immutable _self;

    error NotStaking();

    // Staking's errors and events that this code raises, declared again with the same signatures, so the
    // same selectors and topics (`StakingOpsTest` checks them). Staking declares its own: callers and tests
    // name them `Staking.X`, which Solidity resolves only for a contract's own declarations.
    error ZeroAmount();
    error NotRegistry();
    error NotRegistered(address auditor);
    error InvalidTier(uint256 tier);
    error InsufficientShares(uint256 requested, uint256 held);
    error DepositPending(address auditor, uint256 flow);
    /// @notice A re-registration in another tier while the old tier's snapshots may still draw it.
    error TierHeld(address auditor, uint256 untilEpoch);
    /// @notice A re-registration in another tier while the pool holds `locked` stake of seats (Review26).
    error TierLocked(address auditor, uint256 locked);

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

    modifier onlyDelegated() {
        if (address(this) == _self) revert NotStaking();
        _;
    }

    modifier onlyRegistry() {
        if (msg.sender != registry) revert NotRegistry();
        _;
    }

    constructor(IERC20 token_, uint256 epochBlocks_, SortitionTrees sortition_)
        StakingLedger(epochBlocks_, sortition_)
        StakingAccounts(token_)
    {
        _self = address(this);
    }

    // ------------------------------------------------------------------ holds

    /// @notice `_unparkBatches` on the pool's ledger bounds (as held in the caller's memory): the new tail.
    function unpark(address auditor, uint256 head, uint256 tail, uint256 generation)
        external
        onlyDelegated
        returns (uint256)
    {
        Work memory w;
        w.auditor = auditor;
        w.head = head;
        w.tail = tail;
        w.generation = generation;
        _unparkBatches(w);
        return w.tail;
    }

    function _unpark(Work memory w) internal override {
        _unparkBatches(w);
    }

    // --------------------------------------------------------------- registry

    /// @notice `Staking.onRegister`'s code: a tier change is refused while a hold lasts (`TierHeld`) or
    /// while the pool holds locked stake (`TierLocked`); a re-registration in the same tier always passes.
    function onRegister(address auditor, uint8 tier) external onlyDelegated onlyRegistry {
        if (tier > 2) revert InvalidTier(tier);
        PoolInfo storage info = _info[auditor];
        if (!info.known) {
            info.known = true;
            info.head = 1;
            info.tail = 1;
            _pools[auditor].reputation = _params.initialReputation;
        } else if (info.tier != tier) {
            if (_holdActive(info)) revert TierHeld(auditor, info.holdEpoch + HOLD_EPOCHS);
            // Seats it holds in one tier would count against its seats of a session's other tier, which
            // the stake premise rule (SessionOps `_checkStakeBacksLocks`, per tier) does not bound
            // (Review26TierMoveCarriesSessionLocks): it moves once every lock is released.
            uint256 locked = _pools[auditor].locked;
            if (locked != 0) revert TierLocked(auditor, locked);
            if (info.leafPlusOne != 0) _sortition.setWeight(info.tier, auditor, info.leafPlusOne, 0);
            (bool exists, uint256 leaf) = _sortition.leafOf(tier, auditor);
            info.leafPlusOne = exists ? uint32(leaf + 1) : 0;
        }
        info.tier = tier;
        info.registered = true;
        emit AuditorActivated(auditor, tier, _pools[auditor].reputation);
        _refresh(auditor);
    }

    /// @notice `Staking.onDeregister`'s code.
    function onDeregister(address auditor) external onlyDelegated onlyRegistry {
        PoolInfo storage info = _info[auditor];
        info.registered = false;
        // Draws of the snapshots that counted it may still seat it (StakingHolds).
        _holdOnDeregister(auditor);
        emit AuditorDeactivated(auditor);
        _refresh(auditor);
    }

    // ---------------------------------------------------------------- stakers

    /// @notice `Staking.stake`'s code (Staking checks the pause first).
    function stake(address auditor, uint256 amount)
        external
        onlyDelegated
        returns (uint256 shares, uint256 flow)
    {
        if (amount == 0) revert ZeroAmount();
        if (!_info[auditor].registered) revert NotRegistered(auditor);
        (Work memory w, Globals memory g,) = _begin(auditor, SIDE_DRAIN);
        _syncPosition(auditor, msg.sender, w.generation);
        Position storage p = _positions[auditor][msg.sender];
        if (w.head == w.tail) {
            shares = amount * (w.totalShares + 1) / (w.assets + 1);
            if (shares == 0) revert ZeroAmount();
            w.assets += amount;
            w.totalShares += shares;
            if (w.totalShares > type(uint128).max) revert AmountOverflow();
            p.shares += uint128(shares);
        } else {
            flow = _tailFlow(w);
            uint256 pendingFlow = p.depositFlow;
            if (p.depositAmount != 0 && pendingFlow != flow) revert DepositPending(auditor, pendingFlow);
            Flow storage f = _flows[auditor][flow];
            uint256 total = f.deposits + amount;
            if (total > type(uint96).max) revert AmountOverflow();
            f.deposits = uint96(total);
            p.depositFlow = uint32(flow);
            p.depositAmount += uint96(amount);
            _queueDeposit(w, g, amount);
        }
        emit Staked(auditor, msg.sender, amount, shares, flow);
        _store(w, g);
        _settleGlobals(g);
        token.safeTransferFrom(msg.sender, address(this), amount);
    }

    /// @notice `Staking.requestWithdrawal`'s code.
    function requestWithdrawal(address auditor, uint256 shareAmount)
        external
        onlyDelegated
        returns (uint256 id)
    {
        if (shareAmount == 0) revert ZeroAmount();
        (Work memory w, Globals memory g,) = _begin(auditor, SIDE_DRAIN);
        uint256 held = _syncPosition(auditor, msg.sender, w.generation);
        if (shareAmount > held) revert InsufficientShares(shareAmount, held);
        _positions[auditor][msg.sender].shares = uint128(held - shareAmount);
        id = _withdrawals.length;
        uint256 amount = 0;
        uint256 flow = 0;
        uint256 readyAt = 0;
        uint256 parkEpoch = _park(auditor, w.generation, shareAmount);
        if (parkEpoch != 0) {
            w.exitingShares += shareAmount;
        } else if (w.head == w.tail) {
            amount = shareAmount * (w.assets + 1) / (w.totalShares + 1);
            w.assets -= amount;
            w.totalShares -= shareAmount;
            g.withdrawals += amount;
            readyAt = block.timestamp + _params.cooldown;
        } else {
            flow = _tailFlow(w);
            _queueWithdrawShares(_flows[auditor][flow], shareAmount, w.generation);
            w.exitingShares += shareAmount;
        }
        _withdrawals.push(
            Withdrawal({
                owner: msg.sender,
                readyAt: uint40(readyAt),
                claimed: false,
                auditor: auditor,
                flow: uint32(flow),
                generation: uint32(w.generation),
                shares: uint128(shareAmount),
                amount: uint96(amount),
                parkEpoch: uint32(parkEpoch)
            })
        );
        emit WithdrawalRequested(id, auditor, msg.sender, shareAmount, amount, flow, readyAt);
        _store(w, g);
        _settleGlobals(g);
    }

    // ------------------------------------------------------- Staking's only

    function lockSeat(address, uint8, uint256, uint256, uint256)
        external
        pure
        returns (bool, uint64, uint256)
    {
        revert NotStaking();
    }

    function lockSeats(address, uint8, uint256, uint256, uint256) external pure returns (uint64, uint256) {
        revert NotStaking();
    }

    function seatQuote(address) external pure returns (SeatQuote memory) {
        revert NotStaking();
    }

    function queuedAfter(address, uint256) external pure returns (uint256) {
        revert NotStaking();
    }

    function resolve(uint256, SessionResult[] calldata) external pure {
        revert NotStaking();
    }

    function drain(address, uint256) external pure returns (uint256) {
        revert NotStaking();
    }
}
