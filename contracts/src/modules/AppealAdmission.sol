// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IAppealModule} from "../interfaces/IAppealModule.sol";
import {IAuditSessions} from "../interfaces/IAuditSessions.sol";
import {AuditSessions} from "../AuditSessions.sol";
import {AppealSettlement} from "./AppealSettlement.sol";
import {PanelKey} from "../libraries/PanelKey.sol";
import {SegmentWord} from "../libraries/SegmentWord.sol";
import {AppealWord} from "../libraries/AppealWord.sol";
import {AppealMath} from "../libraries/AppealMath.sol";
import {AppealStore} from "./AppealStore.sol";
import {IStakingParams} from "../SessionOps.sol";
import {IDrawModule} from "../interfaces/IDrawModule.sol";
import {SeatWord} from "../libraries/SeatWord.sol";

/// @title AppealAdmission
/// @notice The admission of appeals (`appeal`, `quote`: `appeal_admission.check_appeal`), run by its
/// AppealModule by DELEGATECALL on the module's storage. Split out so that the module keeps an EIP-170
/// margin (issue 12); behaviour and the module's ABI are unchanged.
/// @dev Deployed by AppealModule's constructor with the same core and settlement, so it has the module's
/// storage layout (AppealStore) and immutables; the settlement must be bound to the deploying module.
/// Every entry reverts `NotCore` unless run by DELEGATECALL (a direct call touches no storage); the
/// module's other entry points are stubs here that revert `NotCore`. Nothing here can self-destruct or
/// delegate further.
contract AppealAdmission is AppealStore {
    using SafeERC20 for IERC20;

    address private immutable _self;

    modifier onlyDelegated() {
        if (address(this) == _self) revert NotCore(msg.sender);
        _;
    }

    /// @param core_ The module's core.
    /// @param settlement_ The module's settlement, bound to the deployer (the module, `msg.sender`).
    constructor(AuditSessions core_, AppealSettlement settlement_)
        AppealStore(core_, settlement_, msg.sender)
    {
        _self = address(this);
    }

    /// @inheritdoc IAppealModule
    function quote(uint256 sessionId, uint256[] calldata segments)
        external
        view
        onlyDelegated
        returns (Quote memory q)
    {
        (q,) = _check(sessionId, segments, new address[](0));
    }

    /// @inheritdoc IAppealModule
    function quote(uint256 sessionId, uint256[] calldata segments, address[] calldata leavers)
        external
        view
        onlyDelegated
        returns (Quote memory q)
    {
        (q,) = _check(sessionId, segments, leavers);
    }

    /// @inheritdoc IAppealModule
    function appeal(uint256 sessionId, uint256[] calldata segments, uint256 maxBond)
        external
        onlyDelegated
        returns (uint256 round)
    {
        return _open(sessionId, segments, maxBond, false, new address[](0));
    }

    /// @inheritdoc IAppealModule
    function appeal(uint256 sessionId, uint256[] calldata segments, uint256 maxBond, bool requireCharged)
        external
        onlyDelegated
        returns (uint256 round)
    {
        return _open(sessionId, segments, maxBond, requireCharged, new address[](0));
    }

    /// @inheritdoc IAppealModule
    function appeal(
        uint256 sessionId,
        uint256[] calldata segments,
        uint256 maxBond,
        bool requireCharged,
        address[] calldata leavers
    ) external onlyDelegated returns (uint256 round) {
        return _open(sessionId, segments, maxBond, requireCharged, leavers);
    }

    /// @dev Admit and open the round: `_check`, then the appellant's own terms (bond limit, charged refusals).
    function _open(
        uint256 sessionId,
        uint256[] calldata segments,
        uint256 maxBond,
        bool requireCharged,
        address[] memory leavers
    ) private returns (uint256 round) {
        (Quote memory q, uint256 eligible) = _check(sessionId, segments, leavers);
        if (q.bond > maxBond) revert BondAboveLimit(q.bond, maxBond);
        if (requireCharged && !q.refusalsCharged) {
            revert RefusalsNotCharged(sessionId, eligible, 2 * q.seats[0]);
        }
        SessionAppeals storage sa = _sessions[sessionId];
        round = q.round;
        sa.roundCount = uint8(round);
        ++sa.openRounds;
        uint256 key = PanelKey.keyOf(sessionId, round);
        Round storage rd = _rounds[key];
        rd.appellant = msg.sender;
        rd.status = IAuditSessions.Status.Created;
        rd.depth = uint8(q.depth);
        rd.segmentCount = uint16(segments.length);
        rd.bond = uint96(q.bond);
        rd.totalSeats = uint16(q.totalSeats);
        rd.epoch = uint32(_epochNow());
        rd.refusalsCharged = q.refusalsCharged;
        rd.drawRequest = uint56(core.sourceOf(sessionId).request());
        bytes memory list = new bytes(2 * segments.length);
        for (uint256 i = 0; i < segments.length; ++i) {
            uint256 seg = segments[i];
            _openSegment(sessionId, key, round, seg);
            // i < segments.length, a calldata length: 2 i + 1 cannot overflow.
            unchecked {
                list[2 * i] = bytes1(uint8(seg >> 8));
                list[2 * i + 1] = bytes1(uint8(seg));
            }
        }
        emit AppealOpened(
            sessionId, round, msg.sender, q.depth, q.bond, q.totalSeats, rd.drawRequest, rd.epoch, list
        );
        emit RoundStatusChanged(sessionId, round, IAuditSessions.Status.Created);
        token.safeTransferFrom(msg.sender, settlement, q.bond);
    }

    /// @dev Name `seg` in round `round` (panel `key`): it contests its current outcome.
    function _openSegment(uint256 sessionId, uint256 key, uint256 round, uint256 seg) private {
        uint256 w = _seg[sessionId][seg];
        uint256 lane0 = _lane0(sessionId, seg);
        uint256 current = SegmentWord.outcome(lane0);
        if (AppealWord.depth(w) == 0) {
            _appealed[sessionId][seg >> 8] |= uint256(1) << (seg & 255);
            ++_sessions[sessionId].appealedCount;
        } else {
            current = AppealWord.outcome(w);
        }
        _seg[sessionId][seg] = AppealWord.open(w, round, current);
        _words[
            key
        ][SegmentWord.wordOf(seg)] |= SegmentWord.encode(SegmentWord.tier(lane0), SegmentWord.weight(lane0))
        << SegmentWord.shiftOf(seg);
    }

    /// @dev `_check`'s round-wide figures: the first segment's tier (every segment's), its live members but the
    /// provider, the proven leavers with no weight in the snapshot, the least eligible of the named segments.
    struct Tally {
        uint256 tier;
        uint256 members;
        address[] gone;
        uint256 eligible;
    }

    /// @dev `appeal_admission.check_appeal` for every named segment, in its order of refusals (a segment that can
    /// never be appealed again says why - SegmentFinal, NoRoundsLeft - rather than AppealWindowClosed).
    /// Returns the round's eligible auditors too: the least of its named segments' (one tier, one depth: one
    /// count, less the segment's proven leavers).
    function _check(uint256 sessionId, uint256[] calldata segments, address[] memory leavers)
        private
        view
        returns (Quote memory q, uint256 eligible)
    {
        SessionAppeals storage sa = _sessions[sessionId];
        AppealParams memory p = paramsOf(sessionId);
        {
            // Sessions opened before the core wired this module never had their opening check the stake
            // premise (SessionOps `_checkStakeBacksLocks`): not appealable (outside review 26, as canaries).
            uint256 from = core.canariesFromSession();
            if (p.appealBlocks == 0 || p.maxRounds == 0 || from == 0 || sessionId < from) {
                revert AppealsDisabled(sessionId);
            }
        }
        if (sa.finalizedAt == 0) revert AppealWindowNotOpen(sessionId, 0);
        if (segments.length == 0) revert EmptyAppeal();
        if (sa.outcomeFinal) revert AppealWindowClosed(sessionId, segments[0], sa.lastWindowEnd);
        if (block.number <= sa.canaryEnd) revert AppealWindowNotOpen(sessionId, sa.canaryEnd);
        IAuditSessions.Session memory s = core.sessionOf(sessionId);
        IAuditSessions.SessionParams memory c = core.paramsAt(s.paramsVersion);
        q.round = uint256(sa.roundCount) + 1;
        {
            uint256 limit = p.maxRounds * s.segmentCount;
            if (q.round > (limit < PanelKey.MAX_ROUND ? limit : PanelKey.MAX_ROUND)) {
                revert TooManyRounds(sessionId);
            }
        }
        uint256[] memory canaries = _canaryBits(sessionId);
        q.seats = new uint256[](segments.length);
        // One round names segments of one tier (`_checkOne`): the first one's (an invalid first segment
        // reverts in the loop before the count is used).
        Tally memory t;
        t.tier = SegmentWord.tier(_lane0(sessionId, segments[0]));
        t.members = _members(uint8(t.tier), s.provider);
        t.gone = _gone(uint8(t.tier), leavers);
        t.eligible = type(uint256).max;
        for (uint256 i = 0; i < segments.length; ++i) {
            uint256 seg = segments[i];
            if (seg >= s.segmentCount) revert InvalidSegment(sessionId, seg);
            if (i != 0 && seg <= segments[i - 1]) revert SegmentsNotAscending(sessionId, seg);
            if (canaries.length != 0 && (canaries[seg >> 8] >> (seg & 255)) & 1 == 1) {
                revert SegmentIsCanary(sessionId, seg);
            }
            _checkOne(sessionId, seg, i, q, c, p, t);
        }
        _checkStakeBacksLocks(sessionId, s.segmentCount, t.tier, c, p);
        eligible = t.eligible;
        // One test for the round, on its least eligible segment (each has k = q.seats[0]).
        q.refusalsCharged = AppealMath.refusalsCharged(eligible, q.seats[0]);
        // The seat cap binds only when a round names more segments than it: then the round's seats are
        // bounded so that the cap ends its draw only if more than half of the auditors who can sit on its
        // segments refuse (outside review 9). Those are the eligible, members - earlierSeats(k_0, depth) (plus
        // the least segment's proven leavers), not every live member: a segment's earlier-panel auditors cannot sit on it (outside review 17).
        // The bound counts the auditors at the cap on earlier segments, out of the draw for the last one
        // (`AppealMath.cappedCapacity`, outside review 20); every segment has k = q.seats[0].
        if (segments.length > c.seatCap) {
            uint256 capacity = AppealMath.cappedCapacity(eligible, q.seats[0], c.seatCap);
            if (q.totalSeats > capacity) revert PanelTooLarge(sessionId, q.totalSeats, capacity);
        }
    }

    /// @dev The per-segment checks of `_check`, adding the segment's seats and bond to `q`. One round names
    /// segments of one depth and one tier: a refusal in one tier's panel ends the whole round REFUSED, so
    /// mixing tiers would let a thin tier's refusals void a thick tier's outcomes (outside review 6). So
    /// every segment of a round has the same `eligible` and `k`, and the round's `refusalsCharged` is one
    /// test, decided here at admission and never redone at the draw.
    function _checkOne(
        uint256 sessionId,
        uint256 seg,
        uint256 i,
        Quote memory q,
        IAuditSessions.SessionParams memory c,
        AppealParams memory p,
        Tally memory t
    ) private view {
        uint256 w = _seg[sessionId][seg];
        uint256 d = AppealWord.depth(w);
        uint256 tier = SegmentWord.tier(_lane0(sessionId, seg));
        if (i == 0) q.depth = d + 1;
        else if (d + 1 != q.depth) revert MixedDepths(sessionId, seg);
        else if (tier != t.tier) revert MixedTiers(sessionId, seg);
        if (AppealWord.pending(w)) revert AppealPending(sessionId, seg);
        if (AppealWord.closed(w)) revert SegmentFinal(sessionId, seg);
        if (d >= p.maxRounds) revert NoRoundsLeft(sessionId, seg);
        uint256 windowEnd = d == 0 ? _sessions[sessionId].windowEnd : AppealWord.windowEnd(w);
        if (block.number > windowEnd) revert AppealWindowClosed(sessionId, seg, windowEnd);
        uint256 k0 = c.seatsPerTier[tier];
        uint256 k = AppealMath.panelSeats(k0, d + 1);
        // Auditors of the tier who can sit on the segment's next panel: the live members (the provider
        // excluded) minus k_0 + ... + k_d, as if every earlier-panel auditor were still live, but for the
        // caller's proven leavers (outside review 22): each one that sat on an earlier panel of this segment
        // and has no weight in the round's snapshot is a real earlier seat not among the live members, so it
        // is not taken from them. E never exceeds the true count; without leavers, a round-0 auditor who
        // leaves lowers E by one (conservative: it can veto or de-charge the appeal, not inflate it).
        uint256 taken = AppealMath.earlierSeats(k0, d + 1);
        uint256 proven = _proven(sessionId, seg, d, w, t.gone);
        taken = taken > proven ? taken - proven : 0;
        uint256 eligible = t.members > taken ? t.members - taken : 0;
        if (eligible < k) revert NotEnoughEligibleAuditors(sessionId, seg, eligible, k);
        if (eligible < t.eligible) t.eligible = eligible;
        q.seats[i] = k;
        // At most 63 seats per segment, segments bounded by calldata: no overflow.
        unchecked {
            q.totalSeats += k;
        }
        q.bond += AppealMath.minBond(k0, d + 1, c.reward, p.appealBondMultiplierBps);
    }

    /// @dev Outside review 26: the opening's stake premise (`minStake[t] >= slashAmount x
    /// AppealMath.sessionLockSeats`, SessionOps `_checkStakeBacksLocks`) rechecked with Staking's CURRENT
    /// minimum for the round's tier, so a minimum lowered after the opening refuses the round here instead of
    /// admitting one its draw cannot fill (session-held exclusions, nobody refusing). The tier's segment count
    /// is walked (<= MAX_SEGMENTS / 8 words) only when the bound with every segment of the tier fails.
    function _checkStakeBacksLocks(
        uint256 sessionId,
        uint256 n,
        uint256 tier,
        IAuditSessions.SessionParams memory c,
        AppealParams memory p
    ) private view {
        uint256 minStake = IStakingParams(address(core.staking())).params().minStake[tier];
        if (minStake >= c.slashAmount * AppealMath.sessionLockSeats(n, n, c.seatCap, p.maxRounds)) return;
        uint256 tierSegments = 0;
        uint256 words = SegmentWord.wordCount(n);
        for (uint256 w = 0; w < words; ++w) {
            uint256 word = core.segmentWord(sessionId, 0, w);
            for (uint256 seg = 8 * w; seg < 8 * w + 8 && seg < n; ++seg) {
                if (SegmentWord.tier(SegmentWord.lane(word, seg)) == tier) ++tierSegments;
            }
        }
        uint256 required =
            c.slashAmount * AppealMath.sessionLockSeats(tierSegments, n, c.seatCap, p.maxRounds);
        if (minStake < required) revert MinStakeBelowSessionLocks(tier, minStake, required);
    }

    /// @dev The proven leavers that have no weight in the round's snapshot (`_members`' epoch), checked
    /// strictly ascending and at most `AppealMath.MAX_LEAVERS`; the array is `leavers`, shortened in place.
    function _gone(uint8 tier, address[] memory leavers) private view returns (address[] memory gone) {
        uint256 n = leavers.length;
        if (n > AppealMath.MAX_LEAVERS) revert TooManyLeavers(n, AppealMath.MAX_LEAVERS);
        uint256 epoch = _epochNow();
        uint256 kept = 0;
        address prev;
        gone = leavers;
        for (uint256 i = 0; i < n; ++i) {
            address a = leavers[i];
            if (i != 0 && a <= prev) revert LeaversNotAscending(a);
            prev = a;
            (bool exists, uint256 leaf) = sortition.leafOf(tier, a);
            if (exists && sortition.leafWeightAt(tier, epoch, leaf) != 0) continue;
            gone[kept++] = a;
        }
        assembly ("memory-safe") {
            mstore(gone, kept)
        }
    }

    /// @dev How many of `gone` sat on `seg` in round 0 or one of its `d` earlier appeal panels (`AppealWord`
    /// rounds; not pending: checked): the DrawModule's seat words, <= MAX_LEAVERS x (d + 1) reads.
    function _proven(uint256 sessionId, uint256 seg, uint256 d, uint256 w, address[] memory gone)
        private
        view
        returns (uint256 n)
    {
        if (gone.length == 0) return 0;
        IDrawModule draw = IDrawModule(address(core.drawModule()));
        uint256 packed = AppealWord.rounds(w);
        for (uint256 j = 0; j < gone.length; ++j) {
            for (uint256 r = 0; r <= d; ++r) {
                uint256 key = PanelKey.keyOf(sessionId, r == 0 ? 0 : (packed >> (8 * (r - 1))) & 0xff);
                if (_sat(draw, key, gone[j], seg)) {
                    ++n;
                    break;
                }
            }
        }
    }

    /// @dev Whether `auditor` holds a seat of `seg` on panel `key` (DrawModule `_hasSeat`).
    function _sat(IDrawModule draw, uint256 key, address auditor, uint256 seg) private view returns (bool) {
        uint256 word = draw.seatWordOf(key, auditor);
        if (word == 0) return false;
        uint256 bits = seg < SeatWord.WINDOW_BITS
            ? SeatWord.window0(word)
            : draw.highSeats(key, auditor, SeatWord.windowOf(seg));
        return bits & SeatWord.bitOf(seg) != 0;
    }

    /// @dev The tier's live members but the provider: leaves with weight in the snapshot a round appealed now
    /// draws from (the start of the current epoch, final already: `Round.epoch`), one per account.
    function _members(uint8 tier, address provider) private view returns (uint256) {
        return sortition.liveCountAtExcept(tier, _epochNow(), provider);
    }

    /// @dev The current epoch (`ISortition.epochOf(block.number)`): an appeal's snapshot epoch.
    function _epochNow() private view returns (uint256) {
        return block.number / _epochBlocks + 1;
    }

    // ------------------------------------------------------------------------------ the module's (stubs)

    /// @notice Not here: the module's own code (never reached by its DELEGATECALL).
    function drawPanel(uint256, uint256, uint256) external view returns (uint256) {
        revert NotCore(msg.sender);
    }

    /// @notice Not here: the module's own code.
    function publishPanelKeys(uint256, uint256, string calldata) external view {
        revert NotCore(msg.sender);
    }

    /// @notice Not here: the module's own code.
    function onCommits(uint256, uint256, uint256) external view {
        revert NotCore(msg.sender);
    }

    /// @notice Not here: the module's own code.
    function onReveals(uint256, uint256, uint256, uint256[] calldata) external view {
        revert NotCore(msg.sender);
    }

    /// @notice Not here: the module's own code.
    function finalizeRound(uint256, uint256) external view {
        revert NotCore(msg.sender);
    }

    /// @notice Not here: the module's own code.
    function onFinalized(uint256) external view returns (bool) {
        revert NotCore(msg.sender);
    }

    /// @notice Not here: the module's own code.
    function advance(uint256) external view returns (bool) {
        revert NotCore(msg.sender);
    }

    /// @notice Not here: the module's own code.
    function pullPot(uint256, uint256) external view {
        revert NotCore(msg.sender);
    }
}
