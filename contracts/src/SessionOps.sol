// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {IStaking} from "./interfaces/IStaking.sol";
import {IRandomness} from "./interfaces/IRandomness.sol";
import {IAppealModule} from "./interfaces/IAppealModule.sol";
import {StakingLedger} from "./StakingLedger.sol";
import {AppealMath} from "./libraries/AppealMath.sol";
import {PanelKey} from "./libraries/PanelKey.sol";
import {SegmentWord} from "./libraries/SegmentWord.sol";
import {SessionLifecycle} from "./SessionLifecycle.sol";

/// @dev The one Staking view the opening reads (`StakingViews.params`; not part of IStaking, the draw's seam).
interface IStakingParams {
    function params() external view returns (StakingLedger.StakingParams memory);
}

/// @title SessionOps
/// @notice Code of AuditSessions that AuditSessions runs by DELEGATECALL, off the draw, voting and
/// settlement paths (issue 12: EIP-170 room): the owner's source and parameter changes and the opening
/// (once per session). AuditSessions exposes each under the same signature and forwards its calldata
/// here; the checks (owner, pause, module) run here on AuditSessions' storage. Deployed by AuditSessions'
/// constructor with AuditSessions' storage layout (SessionLifecycle), token and staking.
/// Every entry reverts `NotCore` unless run by DELEGATECALL, so a direct call touches no storage; nothing
/// here can self-destruct or delegate further, and `initialize` runs once, in AuditSessions' constructor
/// (AuditSessions forwards no call to it).
contract SessionOps is SessionLifecycle {
    using SafeERC20 for IERC20;
    using SafeCast for uint256;

    /// @dev This contract's own address: code run by DELEGATECALL sees the caller's.
    address private immutable _self;

    /// @notice SessionOps was called directly: it runs only as AuditSessions' code (DELEGATECALL).
    error NotCore();

    // AuditSessions' errors and events that only this code raises, declared again with the same signatures,
    // so the same selectors and topics. AuditSessions declares its own: callers and tests name them
    // `AuditSessions.X`, and its ABI (which the node decodes logs and reverts with) lists them.
    error ZeroAddress();
    error TooManySources();
    error InvalidParams();
    /// @notice The randomness source's delay (`max(minDelay, canary window)`) exceeds `limit` blocks: the
    /// epoch (configuration), or the blocks left before the opening's snapshot stops being readable.
    error RandomnessTooSlow(uint256 delay, uint256 limit);
    error InvalidSegments();
    error InvalidTier(uint256 index, uint256 tier);
    error InvalidWeight(uint256 index, uint256 weight);
    error FeeTooLow(uint256 pool, uint256 required);
    error FeeTooHigh(uint256 fee);
    /// @notice Appeals are enabled and the minimum stake of `tier` cannot back every seat lock the session can
    /// ask of one auditor of the tier (`required` = slashAmount x `AppealMath.sessionLockSeats`).
    error MinStakeBelowSessionLocks(uint256 tier, uint256 minStake, uint256 required);

    modifier onlyDelegated() {
        if (address(this) == _self) revert NotCore();
        _;
    }

    /// @param token_ AuditSessions' token.
    /// @param staking_ AuditSessions' staking contract.
    constructor(IERC20 token_, IStaking staking_) SessionLifecycle(token_, staking_) Ownable(msg.sender) {
        _self = address(this);
    }

    // ------------------------------------------------------------------ owner

    /// @notice Publish a new parameter version (applies to sessions opened from now on).
    function setParams(SessionParams calldata params_) external onlyDelegated onlyOwner {
        _pushParams(params_);
    }

    /// @notice Change the randomness source for sessions opened from now on (open ones keep theirs).
    function setRandomness(IRandomness source) external onlyDelegated onlyOwner {
        _addSource(source);
    }

    /// @notice The first source and parameter version: AuditSessions' constructor runs it (by DELEGATECALL,
    /// the same rules as `setRandomness` and `setParams`); refused once a source exists.
    function initialize(IRandomness source, SessionParams calldata params_) external onlyDelegated {
        if (_sources.length != 0) revert NotCore();
        _addSource(source);
        _pushParams(params_);
    }

    function _addSource(IRandomness source) private {
        if (address(source) == address(0)) revert ZeroAddress();
        if (_sources.length > type(uint8).max) revert TooManySources();
        // Every ending reads the delay a request was made with (`DrawWindow.inTime`): a source without
        // `delayOf` (an adapter written to the older interface) would strand each lapsed session pinned to
        // it, so it is refused here (outside review 16: `advance` reverted and the pool stayed in the core).
        source.delayOf(0);
        if (_params.length != 0) _checkDelay(source, _params[_params.length - 1].canaryCommitBlocks);
        _sources.push(source);
        emit RandomnessSourceChanged(_sources.length - 1, address(source));
    }

    function _pushParams(SessionParams memory p) private {
        if (!_validParams(p)) revert InvalidParams();
        _checkDelay(_sources[_sources.length - 1], p.canaryCommitBlocks);
        _params.push(p);
        emit ParamsChanged(_params.length - 1, p);
    }

    /// @dev The one rule for a source and a canary window: `max(source.minDelay(), window) <= epochBlocks`.
    /// A draw value is then obtainable by `open + epochBlocks + 1` (VRF with a window of at least its
    /// confirmations: + 2, `IRandomness.minDelay`), and the shortest readability after an opening is
    /// `2 * epochBlocks` (an epoch's last block), so every session keeps an epoch less one block (two) to be
    /// drawn in (outside reviews 4 and 5: a slower source or window left accepted sessions undrawable).
    /// The window's half stays InvalidParams (a parameter error); the source's is RandomnessTooSlow.
    function _checkDelay(IRandomness source, uint256 window) private view {
        if (window > _epochBlocks) revert InvalidParams();
        uint256 delay = source.minDelay();
        if (delay > _epochBlocks) revert RandomnessTooSlow(delay, _epochBlocks);
    }

    // ------------------------------------------------------------------- open

    /// @notice Open a session; the fee is pulled with transferFrom (approve first). There is no
    /// cancel: the draw's randomness is requested now, so the session's fate is fixed from here.
    /// @param merkleRoot Root of the segment leaves.
    /// @param tiersWeights 3 bytes per segment: tier (uint8), weight (uint16 big-endian).
    /// @param fee Tokens paid; 80% funds the audit pool, 20% goes to the treasury.
    /// @return sessionId The new session's id (from 1).
    function openSession(bytes32 merkleRoot, bytes calldata tiersWeights, uint256 fee)
        external
        onlyDelegated
        whenNotPaused
        returns (uint256 sessionId)
    {
        return _open(merkleRoot, tiersWeights, fee);
    }

    /// @notice Open a session paying the fee with an EIP-2612 permit (no approval transaction).
    /// @dev A permit that fails (e.g. front-run) is ignored if the allowance already suffices.
    function openSessionWithPermit(
        bytes32 merkleRoot,
        bytes calldata tiersWeights,
        uint256 fee,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external onlyDelegated whenNotPaused returns (uint256 sessionId) {
        try IERC20Permit(address(token)).permit(msg.sender, address(this), fee, deadline, v, r, s) {} catch {}
        return _open(merkleRoot, tiersWeights, fee);
    }

    function _open(bytes32 merkleRoot, bytes calldata tw, uint256 fee) private returns (uint256 sessionId) {
        uint256 n = tw.length / 3;
        if (n == 0 || n > MAX_SEGMENTS || tw.length % 3 != 0 || merkleRoot == bytes32(0)) {
            revert InvalidSegments();
        }
        if (fee > type(uint96).max) revert FeeTooHigh(fee);
        uint256 version = _params.length - 1;
        SessionParams storage p = _params[version];
        sessionId = ++_sessionCount;
        uint256 window = _commitWindow(sessionId, n, p.canaryCommitBlocks);
        uint256 totalSeats = _storeSegments(PanelKey.keyOf(sessionId, 0), tw, n, p);
        _checkStakeBacksLocks(sessionId, tw, n, p);
        uint256 pool = fee * AUDIT_POOL_BPS / BPS;
        uint256 required = totalSeats * p.reward;
        if (pool < required) revert FeeTooLow(pool, required);
        Session storage s = _sessions[sessionId];
        s.provider = msg.sender;
        s.status = Status.Created;
        s.paramsVersion = uint16(version);
        s.segmentCount = uint16(n);
        s.merkleRoot = merkleRoot;
        s.pool = uint96(pool);
        s.totalSeats = uint16(totalSeats);
        _requestDraw(s, window);
        _emitOpened(sessionId, s, fee, tw);
        token.safeTransferFrom(msg.sender, address(this), fee);
        if (fee > pool) token.safeTransfer(treasury, fee - pool);
    }

    /// @dev Outside review 22 (the premise of appeal admission): admission counts a tier's live accounts and
    /// `AppealMath.cappedCapacity` assumes each can take `seatCap` seats of a round, but a seat needs a lock of
    /// `slashAmount`, and an auditor whose stake the session's own locks (round 0, every appeal round) already
    /// hold is excluded uncounted (the draw's reason 5), so accounts at the minimum stake made admitted rounds
    /// UNFILLABLE with nobody refusing (Review22CapacityAssumesStakeForSeats, Review22MinStakeSybilsInflate-
    /// Capacity). An auditor the draw can lock is eligible (`Staking._lockLimit`: basis >= minStake) and its
    /// limit is at least its basis; so when minStake >= slashAmount x the most locks the session can hold on
    /// one auditor of the tier (`AppealMath.sessionLockSeats`), the session's own locks never refuse it a seat
    /// (reason 5 cannot occur) and every eligible account can take `seatCap` seats of any round. Checked when
    /// the session's appeal params enable appeals (the raw `maxRounds`: the session has no record yet, so
    /// `paramsOf` does not cap it; a larger `maxRounds` only asks more). Staking's minimum is read now: it may
    /// rise later (Staking.setParams), never lower an eligible auditor's basis below itself.
    /// Tiers are valid here (`_storeSegments` ran).
    function _checkStakeBacksLocks(uint256 sessionId, bytes calldata tw, uint256 n, SessionParams storage p)
        private
        view
    {
        address appeals = appealModule;
        if (appeals == address(0)) return;
        IAppealModule.AppealParams memory a = IAppealModule(appeals).paramsOf(sessionId);
        if (a.appealBlocks == 0 || a.maxRounds == 0) return;
        uint256[3] memory perTier;
        for (uint256 i = 0; i < n; ++i) {
            ++perTier[uint8(tw[3 * i])];
        }
        uint96[3] memory minStake = IStakingParams(address(staking)).params().minStake;
        uint256 seatCap = p.seatCap;
        uint256 lock = p.slashAmount;
        for (uint256 t = 0; t < 3; ++t) {
            if (perTier[t] == 0) continue;
            uint256 required = lock * AppealMath.sessionLockSeats(perTier[t], n, seatCap, a.maxRounds);
            if (minStake[t] < required) revert MinStakeBelowSessionLocks(t, minStake[t], required);
        }
    }

    /// @dev Pin the source and the snapshot epoch; ask for a draw randomness unknown for `minBlocks` blocks.
    /// The source's delay may have grown since `setRandomness` (VRF `setConfig`): an opening whose value
    /// could not be obtained while its snapshot is readable reverts, so nothing is paid for a session that
    /// can never be drawn (outside review 5). The VRF window case's extra block (`IRandomness.minDelay`) is
    /// not counted: window <= epochBlocks <= left - epochBlocks covers it whenever epochBlocks >= 2 (VRF
    /// v2.5 asks at least 3 confirmations, <= epochBlocks).
    function _requestDraw(Session storage s, uint256 minBlocks) private {
        uint256 sourceIndex = _sources.length - 1;
        IRandomness source = _sources[sourceIndex];
        s.source = uint8(sourceIndex);
        uint256 epoch = block.number / _epochBlocks + 1; // ISortition.epochOf
        s.epoch = uint32(epoch);
        uint256 delay = source.minDelay();
        if (delay < minBlocks) delay = minBlocks;
        uint256 left = _readableUntil(epoch) - block.number; // >= 2 * epochBlocks
        if (delay >= left) revert RandomnessTooSlow(delay, left - 1);
        s.drawRequest = source.requestAfter(minBlocks).toUint56();
    }

    function _emitOpened(uint256 sessionId, Session storage s, uint256 fee, bytes calldata tw) private {
        emit SessionOpened(
            sessionId,
            s.provider,
            s.merkleRoot,
            s.segmentCount,
            s.totalSeats,
            fee,
            s.pool,
            s.paramsVersion,
            s.drawRequest,
            s.epoch,
            tw
        );
        emit StatusChanged(sessionId, Status.Created);
    }

    function _storeSegments(uint256 key, bytes calldata tw, uint256 n, SessionParams storage p)
        private
        returns (uint256 totalSeats)
    {
        uint256 word = 0;
        uint16[3] memory fixedWeight = p.tierWeight;
        uint8[3] memory seats = p.seatsPerTier;
        for (uint256 i = 0; i < n; ++i) {
            uint256 tier = uint8(tw[3 * i]);
            uint256 weight = (uint256(uint8(tw[3 * i + 1])) << 8) | uint8(tw[3 * i + 2]);
            if (tier > 2) revert InvalidTier(i, tier);
            if (weight == 0 || (fixedWeight[tier] != 0 && weight != fixedWeight[tier])) {
                revert InvalidWeight(i, weight);
            }
            totalSeats += seats[tier];
            word |= SegmentWord.encode(tier, weight) << SegmentWord.shiftOf(i);
            if (i & 7 == 7 || i == n - 1) {
                _segWords[key][SegmentWord.wordOf(i)] = word;
                word = 0;
            }
        }
    }

    // ------------------------------------- entry points AuditSessions runs itself

    /// @dev Never forwarded here (AuditSessions' own code: the voting and settlement paths).
    function onCommits(uint256, uint256, uint256) external pure {
        revert NotCore();
    }

    /// @dev Never forwarded here.
    function onReveals(uint256, uint256, uint256, uint256[] calldata) external pure {
        revert NotCore();
    }

    /// @dev Never forwarded here.
    function onOutcomeFinal(uint256) external pure {
        revert NotCore();
    }

    /// @dev Never forwarded here.
    function takePot(uint256, uint256) external pure {
        revert NotCore();
    }

    /// @dev Never forwarded here.
    function settlementContext(uint256, uint256) external pure returns (SettlementContext memory) {
        revert NotCore();
    }

    /// @dev Never forwarded here.
    function payOut(uint256, uint256, uint256, uint256) external pure {
        revert NotCore();
    }
}
