// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {ICanaryModule} from "../interfaces/ICanaryModule.sol";
import {IAppealModule} from "../interfaces/IAppealModule.sol";
import {IAuditSessions} from "../interfaces/IAuditSessions.sol";
import {IRandomness} from "../interfaces/IRandomness.sol";
import {AuditSessions} from "../AuditSessions.sol";
import {Treasury} from "../Treasury.sol";
import {SegmentWord} from "../libraries/SegmentWord.sol";

/// @title CanaryModule
/// @notice Gold canaries of a session (see ICanaryModule; reference `consensus/canaries.py`). Stores
/// nothing about a session until its canary operator commits, and nothing canary-specific the voters could
/// read before the reveal window: commitments are hashes with a 256-bit salt.
/// @dev Who writes the truth: an operator the core's owner authorized, never the session's provider (even
/// an authorized one), and only the operator that committed reveals. The commitment format, the windows and
/// the count are those of the provider-written canaries before the operator role.
/// The count owed is `segmentCount * canaryRateBps / 10000` whether or not an operator committed, and the
/// provider still bears it: a session whose canaries were never committed or never revealed loses the
/// largest segment weight per canary owed from its trace's passed weight (`canaryMasks` reports them as
/// unrevealed). Kept on purpose: the provider alone places the canaries (it holds the HDAG) and so can
/// withhold the placement the operator needs to commit; charging the provider for uncommitted canaries keeps
/// skipping them from ever helping it. An operator that fails to commit or reveal a correctly placed
/// session costs the provider the same; the provider's recourse is governance revoking that operator.
contract CanaryModule is ICanaryModule {
    uint256 private constant BPS = 10_000;

    /// @notice The session core.
    AuditSessions public immutable core;

    mapping(uint256 sessionId => CanaryState) private _state;
    /// @dev Canary operators authorized by the core's owner.
    mapping(address => bool) private _operators;
    mapping(uint256 sessionId => bytes32[]) private _commitments;
    /// @dev Revealed segments and their truth (set = FAIL): bit i % 256 of word i / 256.
    mapping(uint256 sessionId => mapping(uint256 => uint256)) private _revealed;
    mapping(uint256 sessionId => mapping(uint256 => uint256)) private _fails;
    /// @dev Revealed slots, one bit per commitment.
    mapping(uint256 sessionId => mapping(uint256 => uint256)) private _slots;
    /// @dev Reveal order: segment index << 8 | verdict.
    mapping(uint256 sessionId => uint256[]) private _order;

    constructor(AuditSessions core_) {
        core = core_;
    }

    // ------------------------------------------------------------------------------ operators

    /// @inheritdoc ICanaryModule
    function setCanaryOperator(address operator, bool allowed) external {
        if (msg.sender != core.owner()) revert NotCoreOwner(msg.sender);
        if (operator == address(0)) revert ZeroOperator();
        _operators[operator] = allowed;
        emit CanaryOperatorSet(operator, allowed);
    }

    /// @inheritdoc ICanaryModule
    function isCanaryOperator(address operator) external view returns (bool) {
        return _operators[operator];
    }

    // ------------------------------------------------------------------------------ commit

    /// @inheritdoc ICanaryModule
    function commitCanaries(uint256 sessionId, bytes32[] calldata commitments) external {
        if (!_operators[msg.sender]) revert NotCanaryOperator(msg.sender);
        IAuditSessions.Session memory s = core.sessionOf(sessionId);
        if (msg.sender == s.provider) revert ProviderIsCanaryOperator(sessionId);
        // The operator marks the commit (an empty list, owed when 0 canaries are, commits too).
        if (_state[sessionId].operator != address(0)) revert CanariesAlreadyCommitted(sessionId);
        if (
            s.status != IAuditSessions.Status.Created
                || core.sourceOf(sessionId).status(s.drawRequest) != IRandomness.RequestStatus.Pending
        ) revert CommitTooLate(sessionId);
        uint256 required = _required(sessionId, s.segmentCount);
        if (commitments.length != required) revert WrongCanaryCount(sessionId, commitments.length, required);
        bytes32[] storage list = _commitments[sessionId];
        for (uint256 i = 0; i < commitments.length; ++i) {
            if (commitments[i] == bytes32(0)) revert ZeroCommitment(sessionId, i);
            list.push(commitments[i]);
        }
        _state[sessionId].committed = uint16(commitments.length);
        _state[sessionId].operator = msg.sender;
        emit CanariesCommitted(sessionId, commitments);
    }

    // ------------------------------------------------------------------------------ reveal

    /// @inheritdoc ICanaryModule
    function revealCanary(uint256 sessionId, CanaryReveal calldata item) external {
        _onlyCommittingOperator(sessionId);
        Ctx memory c = _context(sessionId);
        bytes4 reason = _reveal(sessionId, item, c);
        if (reason != bytes4(0)) _revertWith(reason, sessionId, item.slot);
        _refund(sessionId, c);
    }

    /// @inheritdoc ICanaryModule
    function revealCanaries(uint256 sessionId, CanaryReveal[] calldata items)
        external
        returns (uint256 applied)
    {
        if (items.length == 0) revert EmptyBatch();
        _onlyCommittingOperator(sessionId);
        Ctx memory c = _context(sessionId);
        for (uint256 i = 0; i < items.length; ++i) {
            bytes4 reason = _reveal(sessionId, items[i], c);
            if (reason == bytes4(0)) ++applied;
            else emit ItemSkipped(sessionId, items[i].slot, reason);
        }
        _refund(sessionId, c);
    }

    /// @dev Reveals come from the operator that committed, while it is still authorized (a revoked operator's
    /// canaries stay unrevealed unless governance re-authorizes it).
    function _onlyCommittingOperator(uint256 sessionId) private view {
        if (!_operators[msg.sender]) revert NotCanaryOperator(msg.sender);
        if (_state[sessionId].operator != msg.sender) revert NotCommittingOperator(sessionId, msg.sender);
    }

    /// @dev What a reveal call needs: the session's size, k_0 per tier, R and the refund rate.
    struct Ctx {
        uint256 n;
        uint256 reward;
        uint8[3] seats;
        uint256 refundBps;
        uint256 due;
        address provider;
    }

    /// @dev The window check (never per item: the whole call is early or late) and the reveal context.
    function _context(uint256 sessionId) private view returns (Ctx memory c) {
        IAppealModule appeals = IAppealModule(core.appealModule());
        IAppealModule.SessionAppeals memory sa = appeals.sessionAppeals(sessionId);
        if (sa.finalizedAt == 0 || block.number <= sa.finalizedAt) {
            revert CanaryRevealNotOpen(sessionId, sa.finalizedAt);
        }
        if (block.number > sa.canaryEnd) revert CanaryRevealClosed(sessionId, sa.canaryEnd);
        IAuditSessions.Session memory s = core.sessionOf(sessionId);
        IAuditSessions.SessionParams memory p = core.paramsAt(s.paramsVersion);
        c.n = s.segmentCount;
        c.reward = p.reward;
        c.seats = p.seatsPerTier;
        (, c.refundBps) = appeals.canaryTermsOf(sessionId);
        c.provider = s.provider;
    }

    /// @dev `canaries.check_reveal` then record; returns the refusal's selector (0 if recorded).
    function _reveal(uint256 sessionId, CanaryReveal calldata it, Ctx memory c) private returns (bytes4) {
        bytes32[] storage list = _commitments[sessionId];
        uint256 slot = it.slot;
        uint256 index = it.index;
        if (slot >= list.length) return UnknownCanarySlot.selector;
        if ((_slots[sessionId][slot >> 8] >> (slot & 255)) & 1 == 1) return CanaryAlreadyRevealed.selector;
        if (index >= c.n) return InvalidSegment.selector;
        if ((_revealed[sessionId][index >> 8] >> (index & 255)) & 1 == 1) {
            return SegmentAlreadyCanary.selector;
        }
        if (it.verdict != SegmentWord.OUTCOME_PASS && it.verdict != SegmentWord.OUTCOME_FAIL) {
            return InvalidVerdict.selector;
        }
        if (canaryCommitment(sessionId, index, it.verdict, it.salt) != list[slot]) {
            return CanaryMismatch.selector;
        }
        _slots[sessionId][slot >> 8] |= uint256(1) << (slot & 255);
        _revealed[sessionId][index >> 8] |= uint256(1) << (index & 255);
        if (it.verdict == SegmentWord.OUTCOME_FAIL) {
            _fails[sessionId][index >> 8] |= uint256(1) << (index & 255);
        }
        _order[sessionId].push((index << 8) | it.verdict);
        ++_state[sessionId].revealed;
        uint256 tier = SegmentWord.tier(
            SegmentWord.lane(core.segmentWord(sessionId, 0, SegmentWord.wordOf(index)), index)
        );
        c.due += uint256(c.seats[tier]) * c.reward * c.refundBps / BPS;
        emit CanaryRevealed(sessionId, slot, index, it.verdict);
        return bytes4(0);
    }

    /// @dev `canaries.canary_refund` of the canaries this call revealed, paid by the Treasury as far as
    /// the canary module's allowance and the Treasury's balance reach (never blocking).
    function _refund(uint256 sessionId, Ctx memory c) private {
        if (c.due == 0) return;
        uint256 paid = Treasury(core.treasury()).spend(c.provider, c.due);
        CanaryState storage st = _state[sessionId];
        st.refundDue += uint96(c.due);
        st.refundPaid += uint96(paid);
        emit CanaryRefund(sessionId, c.provider, c.due, paid);
    }

    function _revertWith(bytes4 reason, uint256 sessionId, uint256 slot) private pure {
        bytes memory data = abi.encodeWithSelector(reason, sessionId, slot);
        assembly ("memory-safe") {
            revert(add(data, 0x20), mload(data))
        }
    }

    /// @inheritdoc ICanaryModule
    function canariesOwed(uint256 sessionId, uint256 segmentCount) external view returns (uint256) {
        return _required(sessionId, segmentCount);
    }

    /// @dev Sessions opened before the core wired this module (`canariesFromSession`, fixed at wiring) got
    /// no canary commit window and owe none (outside review 4: one opened between this module's deployment
    /// and `setExtensions` owed a canary nobody could commit, and lost the largest weight from its trace).
    function _required(uint256 sessionId, uint256 n) private view returns (uint256) {
        uint256 from = core.canariesFromSession();
        if (from == 0 || sessionId < from) return 0;
        return canaryCount(n, IAppealModule(core.appealModule()).canaryRateOf(sessionId));
    }

    // ------------------------------------------------------------------------------ views

    /// @inheritdoc ICanaryModule
    function canaryCount(uint256 segmentCount, uint256 rateBps) public pure returns (uint256) {
        return segmentCount * rateBps / BPS;
    }

    /// @inheritdoc ICanaryModule
    function canaryCommitment(uint256 sessionId, uint256 index, uint8 verdict, bytes32 salt)
        public
        pure
        returns (bytes32)
    {
        return keccak256(abi.encode(sessionId, index, verdict, salt));
    }

    /// @inheritdoc ICanaryModule
    function canariesOf(uint256 sessionId) external view returns (CanaryState memory st) {
        st = _state[sessionId];
        IAppealModule.SessionAppeals memory sa = IAppealModule(core.appealModule()).sessionAppeals(sessionId);
        st.revealOpensAfter = sa.finalizedAt;
        st.revealCloses = sa.canaryEnd;
    }

    /// @inheritdoc ICanaryModule
    function commitmentsOf(uint256 sessionId) external view returns (bytes32[] memory) {
        return _commitments[sessionId];
    }

    /// @inheritdoc ICanaryModule
    function revealedOf(uint256 sessionId)
        external
        view
        returns (uint256[] memory indices, uint8[] memory verdicts)
    {
        uint256[] storage order = _order[sessionId];
        indices = new uint256[](order.length);
        verdicts = new uint8[](order.length);
        for (uint256 i = 0; i < order.length; ++i) {
            indices[i] = order[i] >> 8;
            verdicts[i] = uint8(order[i]);
        }
    }

    /// @inheritdoc ICanaryModule
    function canaryMasks(uint256 sessionId)
        external
        view
        returns (uint256[] memory revealedBits, uint256[] memory failBits, uint256 unrevealed)
    {
        uint256 n = core.sessionOf(sessionId).segmentCount;
        uint256 words = (n + 255) >> 8;
        revealedBits = new uint256[](words);
        failBits = new uint256[](words);
        for (uint256 w = 0; w < words; ++w) {
            revealedBits[w] = _revealed[sessionId][w];
            failBits[w] = _fails[sessionId][w];
        }
        uint256 required = _required(sessionId, n);
        uint256 revealed = _state[sessionId].revealed;
        unrevealed = required > revealed ? required - revealed : 0;
    }
}
