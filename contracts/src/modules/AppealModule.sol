// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IAppealModule} from "../interfaces/IAppealModule.sol";
import {IAuditSessions} from "../interfaces/IAuditSessions.sol";
import {IPanelHost} from "../interfaces/IPanelHost.sol";
import {IDrawModule} from "../interfaces/IDrawModule.sol";
import {IRandomness} from "../interfaces/IRandomness.sol";
import {AuditSessions} from "../AuditSessions.sol";
import {AppealSettlement} from "./AppealSettlement.sol";
import {PanelKey} from "../libraries/PanelKey.sol";
import {SegmentWord} from "../libraries/SegmentWord.sol";
import {AppealWord} from "../libraries/AppealWord.sol";
import {AppealMath} from "../libraries/AppealMath.sol";
import {DrawWindow} from "../libraries/DrawWindow.sol";
import {AppealStore} from "./AppealStore.sol";
import {AppealAdmission} from "./AppealAdmission.sol";
import {Forward} from "../libraries/Forward.sol";

/// @title AppealModule
/// @notice Appeal rounds of a session (see IAppealModule): admission and bond, the round's sound draw
/// (through the draw module), keys, the voting callbacks, the round's quorum, the appeal windows, the
/// moment the outcome becomes final. Reproduces `consensus/appeals.py` (`check_appeal`, `resolve`) in the
/// same integer arithmetic.
/// @dev Admission (`appeal`, `quote`) runs in `AppealAdmission` by DELEGATECALL on this storage (issue 12:
/// EIP-170 margin), deployed by the constructor. Holds no tokens: bonds go to its appeal settlement (`settlement`, deployed first and bound to it), which resolves the
/// money once the outcome is final (IAppealSettlement).
contract AppealModule is AppealStore {
    using SafeERC20 for IERC20;

    /// @dev Most rounds one `advance` call ends.
    uint256 private constant MAX_ENDS = 2;

    /// @dev The admission code (`appeal`, `quote`) this module runs by DELEGATECALL (issue 12: EIP-170 margin).
    address private immutable _admission;

    /// @param core_ The session core (its modules already set: the draw module is read from it).
    /// @param settlement_ The appeal settlement deployed for this module's address and `core_` (AppealStore).
    /// @dev Deploys its `AppealAdmission` (same immutables, bound to this module) so that Python's deployment
    /// stays one contract.
    constructor(AuditSessions core_, AppealSettlement settlement_)
        AppealStore(core_, settlement_, address(this))
    {
        _admission = address(new AppealAdmission(core_, settlement_));
    }

    // ------------------------------------------------------------------------------ appeal

    /// @inheritdoc IAppealModule
    /// @dev Run in `AppealAdmission` by DELEGATECALL (read-only there: `_check` writes nothing).
    function quote(uint256 sessionId, uint256[] calldata segments) external view returns (Quote memory q) {
        sessionId;
        segments;
        q;
        function() internal f = _forward;
        function() internal view g;
        assembly ("memory-safe") {
            g := f
        }
        g();
    }

    /// @inheritdoc IAppealModule
    /// @dev Run in `AppealAdmission` by DELEGATECALL.
    function appeal(uint256 sessionId, uint256[] calldata segments, uint256 maxBond)
        external
        returns (uint256 round)
    {
        sessionId;
        segments;
        maxBond;
        round;
        _forward();
    }

    /// @inheritdoc IAppealModule
    /// @dev Run in `AppealAdmission` by DELEGATECALL.
    function appeal(uint256 sessionId, uint256[] calldata segments, uint256 maxBond, bool requireCharged)
        external
        returns (uint256 round)
    {
        sessionId;
        segments;
        maxBond;
        requireCharged;
        round;
        _forward();
    }

    /// @inheritdoc IAppealModule
    /// @dev Run in `AppealAdmission` by DELEGATECALL (read-only there).
    function quote(uint256 sessionId, uint256[] calldata segments, address[] calldata leavers)
        external
        view
        returns (Quote memory q)
    {
        sessionId;
        segments;
        leavers;
        q;
        function() internal f = _forward;
        function() internal view g;
        assembly ("memory-safe") {
            g := f
        }
        g();
    }

    /// @inheritdoc IAppealModule
    /// @dev Run in `AppealAdmission` by DELEGATECALL.
    function appeal(
        uint256 sessionId,
        uint256[] calldata segments,
        uint256 maxBond,
        bool requireCharged,
        address[] calldata leavers
    ) external returns (uint256 round) {
        sessionId;
        segments;
        maxBond;
        requireCharged;
        leavers;
        round;
        _forward();
    }

    /// @dev Run this call's own calldata (the same function of `AppealAdmission`) on this contract's storage
    /// and end the call with its return or revert data, as `AuditSessions._forward` does with `SessionOps`.
    /// Within a STATICCALL (`quote` as an `eth_call` or from a view) the DELEGATECALL stays static.
    function _forward() private {
        Forward.toOps(_admission);
    }

    // ------------------------------------------------------------------------------ rounds

    /// @inheritdoc IAppealModule
    function drawPanel(uint256 sessionId, uint256 round, uint256 maxSeats) external returns (uint256 drawn) {
        (Round storage rd, uint256 key) = _round(sessionId, round);
        _sync(sessionId, round, rd);
        if (rd.status == IAuditSessions.Status.Created) {
            _startDraw(sessionId, round, rd);
        } else if (rd.status != IAuditSessions.Status.Drawing) {
            revert WrongRoundStatus(sessionId, round, rd.status);
        }
        uint256 before = rd.drawnSeats;
        if (before == rd.totalSeats) revert DrawComplete(sessionId, round);
        if (maxSeats == 0) maxSeats = 1;
        IDrawModule.DrawResult memory r =
            IDrawModule(address(core.drawModule())).draw(_job(sessionId, round, key, rd, maxSeats));
        rd.drawnSeats = uint16(r.drawnSeats);
        rd.auditorCount = uint16(r.auditorCount);
        rd.drawCursor = uint16(r.cursor);
        drawn = r.drawnSeats - before;
        if (r.failed) {
            // Refused (outside review 3): a draw that sampled auditors' lock refusals failed is nobody's
            // provable fault - the contested outcome's defender may hold the refusing accounts - so it
            // ends like a withheld round (a contested PASS never survives it), the bond refunded whole.
            // Only if admission found the margin (`refusalsCharged`: eligible >= 2 k accounts) and the refusers
            // of the failed segment hold more than half of its eligible snapshot weight (rule R: the honesty
            // assumption is stake-weighted, Review17SybilsBuyTheRefusalMargin); else UNFILLABLE (outside
            // reviews 11, 13 and 15: the appellant's own minimum-stake account made one busy auditor's
            // refusal decisive).
            rd.refused = rd.refusalsCharged && 2 * r.refusedWeight > r.eligibleWeight;
            _end(sessionId, round, rd, IAuditSessions.Status.Cancelled);
        } else if (r.drawnSeats == rd.totalSeats) {
            uint256 keyDeadline = block.number + _coreParams(sessionId).keyBlocks;
            rd.keyDeadline = uint40(keyDeadline);
            emit RoundDrawCompleted(sessionId, round, r.auditorCount, keyDeadline);
        }
    }

    function _startDraw(uint256 sessionId, uint256 round, Round storage rd) private {
        IRandomness src = core.sourceOf(sessionId);
        uint256 id = rd.drawRequest;
        bytes32 seed = src.fulfil(id);
        // Never before `obtainableAt`, as `AuditSessions._startDraw`: a VRF value delivered in the snapshot's
        // last readable block is refunded, so a draw ordered behind it in that block would be a free option.
        uint256 first = src.obtainableAt(id);
        if (block.number < first) revert TooEarly(id, first);
        // Past the snapshot `_sync` (always called first) has ended the round.
        uint256 readable = _readableUntil(rd.epoch);
        uint256 deadline = block.number + _coreParams(sessionId).drawBlocks;
        if (deadline > readable) deadline = readable;
        rd.drawDeadline = uint40(deadline);
        _setStatus(sessionId, round, rd, IAuditSessions.Status.Drawing);
        emit RoundDrawStarted(sessionId, round, seed, deadline);
    }

    function _job(uint256 sessionId, uint256 round, uint256 key, Round storage rd, uint256 maxSeats)
        private
        view
        returns (IDrawModule.DrawJob memory job)
    {
        IAuditSessions.Session memory s = core.sessionOf(sessionId);
        IAuditSessions.SessionParams memory c = core.paramsAt(s.paramsVersion);
        uint256 cursor = rd.drawCursor;
        uint256 first = SegmentWord.wordOf(cursor);
        uint256[] memory words = new uint256[](SegmentWord.wordCount(s.segmentCount) - first);
        for (uint256 w = 0; w < words.length; ++w) {
            words[w] = _words[key][first + w];
        }
        job.sessionId = sessionId;
        job.round = round;
        job.seed = core.sourceOf(sessionId).valueOf(rd.drawRequest);
        job.epoch = rd.epoch;
        job.provider = s.provider;
        job.maxSeats = maxSeats;
        job.segmentCount = s.segmentCount;
        job.cursor = cursor;
        job.drawnSeats = rd.drawnSeats;
        job.auditorCount = rd.auditorCount;
        job.seatCap = c.seatCap;
        job.lockAmount = c.slashAmount;
        for (uint256 t = 0; t < 3; ++t) {
            job.seatsPerTier[t] = uint8(AppealMath.panelSeats(c.seatsPerTier[t], rd.depth));
        }
        job.segmentWords = words;
    }

    /// @inheritdoc IAppealModule
    function publishPanelKeys(uint256 sessionId, uint256 round, string calldata manifestCid) external {
        (Round storage rd,) = _round(sessionId, round);
        _sync(sessionId, round, rd);
        if (msg.sender != core.sessionOf(sessionId).provider) revert NotProvider(sessionId);
        if (rd.status != IAuditSessions.Status.Drawing) revert WrongRoundStatus(sessionId, round, rd.status);
        if (rd.drawnSeats != rd.totalSeats) revert DrawIncomplete(sessionId, round);
        if (bytes(manifestCid).length == 0) revert EmptyManifest();
        IAuditSessions.SessionParams memory c = _coreParams(sessionId);
        uint256 commitDeadline = block.number + c.commitBlocks;
        uint256 revealDeadline = commitDeadline + c.revealBlocks;
        rd.commitDeadline = uint40(commitDeadline);
        rd.revealDeadline = uint40(revealDeadline);
        _setStatus(sessionId, round, rd, IAuditSessions.Status.KeysPublished);
        emit PanelKeysPublished(sessionId, round, manifestCid, commitDeadline, revealDeadline);
    }

    /// @inheritdoc IPanelHost
    function onCommits(uint256 sessionId, uint256 round, uint256 newCommitters) external {
        if (msg.sender != core.votingModule()) revert NotModule(msg.sender);
        (Round storage rd,) = _round(sessionId, round);
        _sync(sessionId, round, rd);
        IAuditSessions.Status st = rd.status;
        if (st != IAuditSessions.Status.KeysPublished && st != IAuditSessions.Status.Commit) {
            revert WrongRoundStatus(sessionId, round, st);
        }
        uint256 committed = rd.committedCount + newCommitters;
        rd.committedCount = uint16(committed);
        if (committed != 0 && st == IAuditSessions.Status.KeysPublished) {
            _setStatus(sessionId, round, rd, IAuditSessions.Status.Commit);
        }
        if (committed == rd.auditorCount) {
            rd.revealDeadline = uint40(block.number + _coreParams(sessionId).revealBlocks);
            _setStatus(sessionId, round, rd, IAuditSessions.Status.Reveal);
        }
    }

    /// @inheritdoc IPanelHost
    function onReveals(uint256 sessionId, uint256 round, uint256 revealers, uint256[] calldata tallyDeltas)
        external
    {
        if (msg.sender != core.votingModule()) revert NotModule(msg.sender);
        (Round storage rd, uint256 key) = _round(sessionId, round);
        _sync(sessionId, round, rd);
        if (rd.status != IAuditSessions.Status.Reveal || block.number > rd.revealDeadline) {
            revert WrongRoundStatus(sessionId, round, rd.status);
        }
        for (uint256 w = 0; w < tallyDeltas.length; ++w) {
            // Lanes never carry: each seat is revealed once and a panel has at most 63 seats per segment.
            if (tallyDeltas[w] != 0) _words[key][w] += tallyDeltas[w];
        }
        rd.revealedCount += uint16(revealers);
    }

    /// @inheritdoc IAppealModule
    function finalizeRound(uint256 sessionId, uint256 round) public {
        (Round storage rd, uint256 key) = _round(sessionId, round);
        _sync(sessionId, round, rd);
        if (rd.status != IAuditSessions.Status.Reveal) revert WrongRoundStatus(sessionId, round, rd.status);
        if (block.number <= rd.revealDeadline && rd.revealedCount < rd.auditorCount) {
            revert RevealOpen(sessionId, round, rd.revealDeadline);
        }
        _decide(sessionId, round, key, rd);
    }

    /// @dev The panel's quorum outcome per named segment: q = ceil(tau * k_r); PASS if pass >= q, else
    /// FAIL if fail >= q, else INCONCLUSIVE.
    function _decide(uint256 sessionId, uint256 round, uint256 key, Round storage rd) private {
        IAuditSessions.SessionParams memory c = _coreParams(sessionId);
        uint256 words = SegmentWord.wordCount(_count(sessionId));
        for (uint256 w = 0; w < words; ++w) {
            uint256 word = _words[key][w];
            if (word == 0) continue;
            for (uint256 i = w << 3; i < (w + 1) << 3; ++i) {
                uint256 laneValue = SegmentWord.lane(word, i);
                if (SegmentWord.weight(laneValue) == 0) continue;
                uint256 k = AppealMath.panelSeats(c.seatsPerTier[SegmentWord.tier(laneValue)], rd.depth);
                uint256 outcome = AppealMath.quorumOutcome(
                    SegmentWord.passVotes(laneValue), SegmentWord.failVotes(laneValue), k, c.tauBps
                );
                word = SegmentWord.setOutcome(word, i, outcome);
            }
            _words[key][w] = word;
        }
        _end(sessionId, round, rd, IAuditSessions.Status.Finalized);
    }

    /// @dev A round ended: Finalized (decided), Cancelled (UNFILLABLE, or REFUSED if `rd.refused`) or
    /// Expired (KEYS_WITHHELD). Its
    /// segments take their new outcome and, if they decided with rounds left, a new appeal window.
    function _end(uint256 sessionId, uint256 round, Round storage rd, IAuditSessions.Status to) private {
        uint256 key = PanelKey.keyOf(sessionId, round);
        _setStatus(sessionId, round, rd, to);
        SessionAppeals storage sa = _sessions[sessionId];
        --sa.openRounds;
        AppealParams memory p = paramsOf(sessionId);
        bool decided = to == IAuditSessions.Status.Finalized;
        uint256 window = decided && rd.depth < p.maxRounds ? block.number + p.appealBlocks : 0;
        if (window > sa.lastWindowEnd) sa.lastWindowEnd = uint40(window);
        // Withheld: Expired after a full draw (drawn short: abandoned, the contested outcome stands).
        bool asWithheld =
            (to == IAuditSessions.Status.Expired && rd.drawnSeats == rd.totalSeats) || rd.refused;
        bytes memory outcomes = _endSegments(sessionId, key, decided, asWithheld, window, rd.segmentCount);
        emit RoundFinalized(sessionId, round, to, outcomes, window);
        _updateVerdict(sessionId, sa);
    }

    /// @dev The trace verdict with the outcomes after a round ended.
    function _updateVerdict(uint256 sessionId, SessionAppeals storage sa) private {
        (bool passed, uint256 score, uint256 passW, uint256 totalW,) =
            AppealSettlement(settlement).verdictOf(sessionId);
        sa.passed = passed;
        sa.scoreBps = uint16(score);
        emit TraceVerdictUpdated(sessionId, passed, score, passW, totalW);
    }

    /// @dev Each named segment of the ended round takes its new outcome (decided: the panel's; keys
    /// withheld or draw refused (`asWithheld`): INCONCLUSIVE, or unchanged if `AppealMath.withheldKeeps`;
    /// unfillable: unchanged) and its next window.
    function _endSegments(
        uint256 sessionId,
        uint256 key,
        bool decided,
        bool asWithheld,
        uint256 window,
        uint256 count
    ) private returns (bytes memory outcomes) {
        outcomes = new bytes(count);
        uint256 j = 0;
        uint256 words = SegmentWord.wordCount(_count(sessionId));
        for (uint256 w = 0; w < words && j < count; ++w) {
            uint256 word = _words[key][w];
            if (word == 0) continue;
            for (uint256 i = w << 3; i < (w + 1) << 3; ++i) {
                uint256 laneValue = SegmentWord.lane(word, i);
                if (SegmentWord.weight(laneValue) == 0) continue;
                outcomes[j] = bytes1(uint8(_endSegment(sessionId, i, laneValue, decided, asWithheld, window)));
                unchecked {
                    ++j; // j < count
                }
            }
        }
    }

    function _endSegment(
        uint256 sessionId,
        uint256 seg,
        uint256 laneValue,
        bool decided,
        bool asWithheld,
        uint256 window
    ) private returns (uint256 o) {
        uint256 sw = _seg[sessionId][seg];
        o = AppealWord.outcome(sw); // the outcome the round contested
        if (decided) {
            o = SegmentWord.outcome(laneValue);
        } else if (asWithheld && !AppealMath.withheldKeeps(AppealWord.depth(sw), o)) {
            o = SegmentWord.OUTCOME_INCONCLUSIVE;
        }
        _seg[sessionId][seg] = AppealWord.end(sw, o, !decided, window);
    }

    /// @dev Apply the round's deadline transitions (as the core's `_sync` does for round 0).
    function _sync(uint256 sessionId, uint256 round, Round storage rd) private {
        IAuditSessions.Status st = rd.status;
        if (st == IAuditSessions.Status.Created) {
            // Past the snapshot nobody can draw, whatever the randomness (a value fixed by anyone but never
            // drawn on included): the round ends here, so `advance` alone ends every lapsed round.
            IRandomness.RequestStatus r = core.sourceOf(sessionId).status(rd.drawRequest);
            if (
                r == IRandomness.RequestStatus.Expired || r == IRandomness.RequestStatus.Failed
                    || block.number > _readableUntil(rd.epoch)
            ) _endUndrawn(sessionId, round, rd);
        } else if (st == IAuditSessions.Status.Drawing) {
            // A draw that fails ends at once (UNFILLABLE or REFUSED, `drawPanel`); one merely left short past
            // its deadline ends as one never drawn.
            if (rd.drawnSeats != rd.totalSeats) {
                if (block.number > rd.drawDeadline) _endUndrawn(sessionId, round, rd);
            } else if (block.number > rd.keyDeadline) {
                _end(sessionId, round, rd, IAuditSessions.Status.Expired);
            }
        } else if (st == IAuditSessions.Status.KeysPublished || st == IAuditSessions.Status.Commit) {
            if (block.number > rd.commitDeadline) {
                _setStatus(sessionId, round, rd, IAuditSessions.Status.Reveal);
            }
        }
    }

    /// @dev End a round nobody drew, or left short, in time. As round 0 (`AuditSessions._endUndrawn`, outside
    /// reviews 6, 11 and 12): Expired (ABANDONED: the contested outcome stands, the bond is forfeited) when
    /// its randomness was in time (`DrawWindow.inTime`): the seed was public and anyone could have drawn,
    /// so looking at the panel and walking away is never a refund; else Cancelled (UNFILLABLE: a late
    /// oracle blames nobody; R per drawn seat from the bond, the rest refunded).
    function _endUndrawn(uint256 sessionId, uint256 round, Round storage rd) private {
        uint256 epoch = rd.epoch;
        bool ok = DrawWindow.inTime(
            core.sourceOf(sessionId),
            rd.drawRequest,
            _readableUntil(epoch),
            epoch * _epochBlocks - 1,
            _coreParams(sessionId).drawBlocks,
            0
        );
        _end(sessionId, round, rd, ok ? IAuditSessions.Status.Expired : IAuditSessions.Status.Cancelled);
    }

    function _setStatus(uint256 sessionId, uint256 round, Round storage rd, IAuditSessions.Status to)
        private
    {
        rd.status = to;
        emit RoundStatusChanged(sessionId, round, to);
    }

    // ------------------------------------------------------------------------------ outcome final

    /// @inheritdoc IAppealModule
    function onFinalized(uint256 sessionId) external returns (bool outcomeFinal) {
        if (msg.sender != address(core)) revert NotCore(msg.sender);
        SessionAppeals storage sa = _sessions[sessionId];
        AppealParams memory p = paramsOf(sessionId);
        uint256 n = _count(sessionId);
        uint256 canaryEnd = block.number;
        if (n * p.canaryRateBps / BPS != 0) canaryEnd += p.canaryRevealBlocks;
        uint256 windowEnd = canaryEnd;
        if (p.appealBlocks != 0 && p.maxRounds != 0) windowEnd += p.appealBlocks;
        sa.finalizedAt = uint40(block.number);
        sa.canaryEnd = uint40(canaryEnd);
        sa.windowEnd = uint40(windowEnd);
        sa.lastWindowEnd = uint40(windowEnd);
        emit AppealPhaseOpened(sessionId, canaryEnd, windowEnd);
        if (windowEnd == block.number) {
            _close(sessionId, sa);
            return true;
        }
        return false;
    }

    /// @inheritdoc IAppealModule
    function advance(uint256 sessionId) external returns (bool outcomeFinal) {
        SessionAppeals storage sa = _sessions[sessionId];
        if (sa.finalizedAt == 0 || sa.outcomeFinal) return sa.outcomeFinal;
        uint256 count = sa.roundCount;
        // Each round end recomputes the O(n) trace verdict: at most MAX_ENDS per call, so that any number
        // of rounds lapsing together ends in calls of bounded gas (the caller repeats until final).
        uint256 ends = 0;
        for (uint256 round = 1; round <= count && sa.openRounds != 0 && ends < MAX_ENDS; ++round) {
            (Round storage rd, uint256 key) = _round(sessionId, round);
            if (uint8(rd.status) >= uint8(IAuditSessions.Status.Finalized)) continue;
            _sync(sessionId, round, rd);
            if (
                rd.status == IAuditSessions.Status.Reveal
                    && (block.number > rd.revealDeadline || rd.revealedCount == rd.auditorCount)
            ) _decide(sessionId, round, key, rd);
            if (uint8(rd.status) >= uint8(IAuditSessions.Status.Finalized)) ++ends;
        }
        if (sa.openRounds == 0 && block.number > sa.lastWindowEnd) {
            _close(sessionId, sa);
            core.onOutcomeFinal(sessionId);
        }
        return sa.outcomeFinal;
    }

    function _close(uint256 sessionId, SessionAppeals storage sa) private {
        sa.outcomeFinal = true;
        (bool passed, uint256 score,,, bytes memory outcomes) =
            AppealSettlement(settlement).verdictOf(sessionId);
        sa.passed = passed;
        sa.scoreBps = uint16(score);
        emit OutcomeFinalized(sessionId, passed, score, outcomes);
    }

    /// @inheritdoc IAppealModule
    function pullPot(uint256 sessionId, uint256 amount) external {
        if (msg.sender != settlement) revert NotModule(msg.sender);
        core.takePot(sessionId, amount);
        token.safeTransfer(settlement, amount);
    }
}
