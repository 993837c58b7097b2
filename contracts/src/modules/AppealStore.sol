// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IAppealModule} from "../interfaces/IAppealModule.sol";
import {IAuditSessions} from "../interfaces/IAuditSessions.sol";
import {IPanelHost} from "../interfaces/IPanelHost.sol";
import {IDrawModule} from "../interfaces/IDrawModule.sol";
import {ISortition} from "../interfaces/ISortition.sol";
import {IRandomness} from "../interfaces/IRandomness.sol";
import {ICanaryModule} from "../interfaces/ICanaryModule.sol";
import {AuditSessions} from "../AuditSessions.sol";
import {AppealSettlement} from "./AppealSettlement.sol";
import {PanelKey} from "../libraries/PanelKey.sol";
import {SegmentWord} from "../libraries/SegmentWord.sol";
import {AppealWord} from "../libraries/AppealWord.sol";
import {AppealMath} from "../libraries/AppealMath.sol";

/// @title AppealStore
/// @notice The storage of the AppealModule with its views and the helpers both read through. Split from
/// the module so that each file keeps one job; the deployed contract and its ABI are AppealModule's.
abstract contract AppealStore is IAppealModule {
    uint256 internal constant BPS = 10_000;

    /// @notice The session core.
    AuditSessions public immutable core;
    /// @notice The protocol token.
    IERC20 public immutable token;
    /// @notice Snapshot trees (eligibility counts, epochs).
    ISortition public immutable sortition;
    /// @inheritdoc IAppealModule
    address public immutable settlement;
    /// @dev The trees' epoch length and readable span (`snapshotReadableUntil(e) = e * epochBlocks + span`),
    /// read once, as `AuditSessions` does: each external call site cost bytes this module does not have.
    uint256 internal immutable _epochBlocks;
    uint256 internal immutable _readableSpan;

    mapping(uint256 sessionId => SessionAppeals) internal _sessions;
    mapping(uint256 key => Round) internal _rounds;
    /// @dev Round segment words (SegmentWord lanes of its named segments; other lanes 0).
    mapping(uint256 key => mapping(uint256 => uint256)) internal _words;
    mapping(uint256 sessionId => mapping(uint256 segment => uint256)) internal _seg;
    /// @dev Appealed segments: bit i % 256 of word i / 256.
    mapping(uint256 sessionId => mapping(uint256 => uint256)) internal _appealed;

    /// @notice The settlement given to the constructor was not deployed for this module and its core (its
    /// immutable `appeals` is another address, its `core` another core) or is no contract.
    error SettlementNotBound(address settlement);

    /// @param core_ The session core (its modules already set: the draw module is read from it).
    /// @param settlement_ The appeal settlement, deployed just before with this module's address (predicted:
    /// the deployer's next CREATE address) and `core_`; it keeps the parameter versions and their owner.
    /// @dev Why the settlement is deployed separately: a `new AppealSettlement(...)` here would embed the
    /// settlement's whole initcode (24,259 B) in this module's, which then stood at 48,747 B of EIP-3860's
    /// 49,152 B initcode limit, leaving no room in either contract. The binding stays one-to-one and
    /// fixed: the settlement's `appeals` and `core` are immutables set by its own constructor (no setter
    /// exists), and this constructor refuses (`SettlementNotBound`) a settlement naming another module or
    /// another core, so nobody can pre-deploy a settlement for this address that the deployer did not
    /// pass, nor re-bind one later. Hot paths read `settlement`, `core` and `token` from immutables, as
    /// before.
    /// @param module_ The module the settlement must serve: this contract, or for `AppealAdmission` the
    /// module that deploys it.
    constructor(AuditSessions core_, AppealSettlement settlement_, address module_) {
        if (
            address(settlement_).code.length == 0 || address(settlement_.appeals()) != module_
                || address(settlement_.core()) != address(core_)
        ) revert SettlementNotBound(address(settlement_));
        core = core_;
        token = core_.token();
        ISortition trees = core_.sortition();
        sortition = trees;
        settlement = address(settlement_);
        uint256 e = trees.epochBlocks();
        _epochBlocks = e;
        _readableSpan = trees.snapshotReadableUntil(1) - e;
    }

    /// @dev `ISortition.snapshotReadableUntil(epoch)`.
    function _readableUntil(uint256 epoch) internal view returns (uint256) {
        return epoch * _epochBlocks + _readableSpan;
    }

    // ------------------------------------------------------------------------------ parameters

    /// @inheritdoc IAppealModule
    function paramsOf(uint256 sessionId) public view returns (AppealParams memory) {
        return AppealSettlement(settlement).paramsOf(sessionId);
    }

    /// @inheritdoc IAppealModule
    function canaryTermsOf(uint256 sessionId) external view returns (uint256, uint256) {
        return AppealSettlement(settlement).canaryTermsOf(sessionId);
    }

    /// @inheritdoc IAppealModule
    function canaryRateOf(uint256 sessionId) external view returns (uint256) {
        return AppealSettlement(settlement).canaryRateOf(sessionId);
    }

    // ------------------------------------------------------------------------------ views

    /// @inheritdoc IAppealModule
    function appealWordOf(uint256 sessionId, uint256 segment) external view returns (uint256) {
        return _seg[sessionId][segment];
    }

    /// @inheritdoc IAppealModule
    function appealedBits(uint256 sessionId) external view returns (uint256[] memory bits) {
        bits = new uint256[]((_count(sessionId) + 255) >> 8);
        for (uint256 w = 0; w < bits.length; ++w) {
            bits[w] = _appealed[sessionId][w];
        }
    }

    /// @inheritdoc IAppealModule
    function outcomeOf(uint256 sessionId, uint256 segment) external view returns (uint256) {
        return _outcome(sessionId, segment, _lane0(sessionId, segment));
    }

    /// @inheritdoc IAppealModule
    function earlierRounds(uint256 sessionId, uint256 segment)
        external
        view
        returns (uint256 packed, uint256 count)
    {
        uint256 w = _seg[sessionId][segment];
        count = AppealWord.depth(w);
        if (AppealWord.pending(w) && count != 0) --count;
        packed = AppealWord.rounds(w) & ((uint256(1) << (8 * count)) - 1);
    }

    /// @inheritdoc IAppealModule
    function roundOf(uint256 sessionId, uint256 round) external view returns (Round memory) {
        return _rounds[PanelKey.keyOf(sessionId, round)];
    }

    /// @inheritdoc IAppealModule
    function roundSegments(uint256 sessionId, uint256 round) external view returns (uint256[] memory list) {
        uint256 key = PanelKey.keyOf(sessionId, round);
        list = new uint256[](_rounds[key].segmentCount);
        uint256 j = 0;
        uint256 n = _count(sessionId);
        for (uint256 i = 0; i < n && j < list.length; ++i) {
            if ((_words[key][i >> 3] >> SegmentWord.shiftOf(i)) & SegmentWord.LANE_MASK != 0) list[j++] = i;
        }
    }

    /// @inheritdoc IAppealModule
    function segmentAppeals(uint256 sessionId, uint256 segment)
        external
        view
        returns (SegmentAppeals memory a)
    {
        uint256 w = _seg[sessionId][segment];
        a.depth = uint8(AppealWord.depth(w));
        if (a.depth == 0) {
            a.outcome = uint8(SegmentWord.outcome(_lane0(sessionId, segment)));
            a.windowEnd = _sessions[sessionId].windowEnd;
            return a;
        }
        a.lastRound = uint8(AppealWord.lastRound(w));
        a.outcome = uint8(AppealWord.outcome(w));
        a.pending = AppealWord.pending(w);
        a.closed = AppealWord.closed(w);
        a.windowEnd = uint40(AppealWord.windowEnd(w));
        a.rounds = uint32(AppealWord.rounds(w));
    }

    /// @inheritdoc IAppealModule
    function sessionAppeals(uint256 sessionId) external view returns (SessionAppeals memory) {
        return _sessions[sessionId];
    }

    /// @inheritdoc IAppealModule
    function roundWord(uint256 sessionId, uint256 round, uint256 wordIndex) external view returns (uint256) {
        return _words[PanelKey.keyOf(sessionId, round)][wordIndex];
    }

    /// @inheritdoc IAppealModule
    function appealableUntil(uint256 sessionId) external view returns (uint256) {
        SessionAppeals storage sa = _sessions[sessionId];
        if (sa.finalizedAt == 0 || sa.outcomeFinal) return 0;
        if (sa.openRounds == 0 && block.number > sa.lastWindowEnd) return 0;
        AppealParams memory p = paramsOf(sessionId);
        if (p.appealBlocks == 0 || p.maxRounds == 0) return 0;
        return sa.lastWindowEnd;
    }

    /// @inheritdoc IAppealModule
    function isOutcomeFinal(uint256 sessionId) external view returns (bool) {
        return _sessions[sessionId].outcomeFinal;
    }

    /// @inheritdoc IAppealModule
    function panelSeats(uint256 k0, uint256 depth) external pure returns (uint256) {
        return AppealMath.panelSeats(k0, depth);
    }

    /// @inheritdoc IAppealModule
    function minBond(uint256 k0, uint256 depth, uint256 reward, uint256 multiplierBps)
        external
        pure
        returns (uint256)
    {
        return AppealMath.minBond(k0, depth, reward, multiplierBps);
    }

    /// @dev A segment's current outcome: its latest panel's if appealed, else round 0's.
    function _outcome(uint256 sessionId, uint256 seg, uint256 lane0) internal view returns (uint256) {
        if ((_appealed[sessionId][seg >> 8] >> (seg & 255)) & 1 == 0) return SegmentWord.outcome(lane0);
        return AppealWord.outcome(_seg[sessionId][seg]);
    }

    // ------------------------------------------------------------------------------ helpers

    function _round(uint256 sessionId, uint256 round) internal view returns (Round storage rd, uint256 key) {
        key = PanelKey.keyOf(sessionId, round);
        rd = _rounds[key];
        if (round == 0 || rd.status == IAuditSessions.Status.None) revert UnknownRound(sessionId, round);
    }

    function _lane0(uint256 sessionId, uint256 seg) internal view returns (uint256) {
        return SegmentWord.lane(core.segmentWord(sessionId, 0, SegmentWord.wordOf(seg)), seg);
    }

    function _count(uint256 sessionId) internal view returns (uint256) {
        return core.sessionOf(sessionId).segmentCount;
    }

    function _coreParams(uint256 sessionId) internal view returns (IAuditSessions.SessionParams memory) {
        return core.paramsAt(core.sessionOf(sessionId).paramsVersion);
    }

    function _canaryMasks(uint256 sessionId)
        private
        view
        returns (uint256[] memory bits, uint256[] memory fails, uint256 unrevealed)
    {
        address canaries = core.canaryModule();
        if (canaries == address(0)) return (bits, fails, 0);
        return ICanaryModule(canaries).canaryMasks(sessionId);
    }

    function _canaryBits(uint256 sessionId) internal view returns (uint256[] memory bits) {
        (bits,,) = _canaryMasks(sessionId);
    }

    function _bit(uint256[] memory bits, uint256 i) internal pure returns (bool) {
        return bits.length > i >> 8 && (bits[i >> 8] >> (i & 255)) & 1 == 1;
    }
}
