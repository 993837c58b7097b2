// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IDrawModule} from "../interfaces/IDrawModule.sol";
import {IStaking} from "../interfaces/IStaking.sol";
import {ISortition} from "../interfaces/ISortition.sol";
import {PanelKey} from "../libraries/PanelKey.sol";
import {SegmentWord} from "../libraries/SegmentWord.sol";
import {SeatWord} from "../libraries/SeatWord.sol";
import {ExclusionList} from "../libraries/ExclusionList.sol";
import {DrawScratch} from "../libraries/DrawScratch.sol";
import {IAuditSessions} from "../interfaces/IAuditSessions.sol";
import {IAppealModule} from "../interfaces/IAppealModule.sol";

/// @title DrawModule
/// @notice Sortition of a panel: every seat is sampled by weight from the staking snapshot "start of the
/// session's opening epoch", which was final before the session existed and before its randomness could
/// be known, so no stake change can move the weights a draw reads.
/// @dev Sampling is without replacement: a seat's word is keccak256(seed, segment, seatInSegment,
/// rejections) reduced modulo the tier's snapshot weight minus the weight of excluded leaves, and
/// Staking walks the snapshot with those leaves taken out. Excluded for the segment: the auditors
/// already on it and auditors whose stake cannot back one more seat now (lock refused: the auditor
/// controls that after the seed is public, so its refusal must re-roll nothing beyond its segment);
/// for the rest of the panel: the provider and auditors at the seat cap. Every rejection removes
/// weight from the segment, so a draw always progresses, and a panel fails only when a segment's
/// eligible weight is exhausted.
/// A call completes whole segments (its budget rounded up), so segment exclusions live in memory;
/// only a call stopped by MAX_REJECTIONS_PER_CALL inside a segment stores them for the next call.
/// Gas: a call reads each sampled auditor's seat word and Staking's `seatQuote` once, decides every
/// lock in memory exactly as `IStaking.lockSeat` would seat by seat (nothing else changes the pool
/// within the call), and at its end locks each auditor's seats with one `lockSeats` and writes its
/// seat word once.
contract DrawModule is IDrawModule {
    using ExclusionList for ExclusionList.List;

    /// @notice Rejections one call absorbs before it stops (the next call resumes where it stopped).
    uint256 public constant MAX_REJECTIONS_PER_CALL = 64;
    uint256 private constant REASON_PROVIDER = 1;
    uint256 private constant REASON_SEAT_CAP = 2;
    uint256 private constant REASON_LOCK_REFUSED = 3;
    uint256 private constant REASON_EARLIER_PANEL = 4;
    uint256 private constant REASON_SESSION_HELD = 5;
    /// @dev Rounds of the session one refusal check reads per rejection it is charged as (see `_sessionHeld`).
    uint256 private constant ROUNDS_PER_REJECTION = 16;
    /// @dev Stored exclusion: weight (bits 0-127), leaf (128-191), tier (192-199).
    uint256 private constant EXCLUSION_LEAF_SHIFT = 128;
    uint256 private constant LOCK_SHORT = 1;
    uint256 private constant LOCK_BARRED = 2;
    uint256 private constant EXCLUSION_TIER_SHIFT = 192;

    /// @notice The session core (the only caller of `draw`).
    address public immutable core;
    /// @notice Stake locks and ledger entries.
    IStaking public immutable staking;
    /// @notice The snapshot sum trees (Staking's).
    ISortition public immutable sortition;

    mapping(uint256 key => mapping(address => uint256)) private _seats;
    mapping(uint256 key => mapping(address => mapping(uint256 => uint256))) private _high;
    mapping(uint256 key => uint256[]) private _excluded;
    mapping(uint256 key => uint256[]) private _resume;
    /// @dev 1 | seatInSegment << 8 | lock refusals in the segment << 16 | rejections << 32 when a call
    /// stopped inside a segment, else 0.
    mapping(uint256 key => uint256) private _resumeAt;
    /// @dev With `_resumeAt`: the stopped segment's refused weight (bits 0-127) and earlier-panel weight
    /// (128-255), see `Walk.refusedWeight`.
    mapping(uint256 key => uint256) private _resumeWeights;

    /// @dev Lock refusals over the whole panel so far (any segment, any call): a failed draw reports them all
    /// (round 0: `DrawRefused` with any; an appeal round: REFUSED with any if its admission charged
    /// refusals, `IAppealModule.Round.refusalsCharged`), since an account that refuses early segments can
    /// push the seats that later fail onto the seat cap.
    mapping(uint256 key => uint256) private _panelRefusals;

    /// @dev One sampled auditor within a call: its seat word with this call's seats, the seats this
    /// call locks for it, and Staking's quote (read at its first lock decision).
    struct Held {
        address auditor;
        uint256 word;
        uint256 entryBefore;
        uint256 seatsNow;
        bool quoted;
        IStaking.SeatQuote q;
        /// 0 not asked yet, 1 its shortfall is not the session's other appeal rounds' doing, 2 it is.
        uint256 sessionHeld;
    }

    /// @dev One call's position, in memory.
    struct Walk {
        uint256 key;
        uint256 segment;
        uint256 seat;
        uint256 rejections;
        uint256 refusals;
        /// Snapshot weight of the current segment's counted refusals (reason 3) and of its candidates
        /// that sat on an earlier panel of it (reason 4): rule R of a failed appeal draw (`DrawResult`).
        uint256 refusedWeight;
        uint256 earlierWeight;
        uint256 panelRefusals;
        uint256 refusalsBefore;
        uint256 drawnNow;
        uint256 rejectedNow;
        uint256 drawnSeats;
        uint256 auditorCount;
        uint256 firstWord;
        uint256 firstSegment;
        uint256 firstSeat;
        uint256[3] totals;
        address[] seated;
        Held[] held;
        uint256 heldCount;
        /// The session's appeal round count + 1 (0: not read yet).
        uint256 roundsPlusOne;
    }

    constructor(address core_, IStaking staking_) {
        core = core_;
        staking = staking_;
        sortition = staking_.sortition();
    }

    /// @inheritdoc IDrawModule
    function draw(DrawJob calldata job) external returns (DrawResult memory r) {
        if (msg.sender != core && (job.round == 0 || msg.sender != IAuditSessions(core).appealModule())) {
            revert NotCore(msg.sender);
        }
        Walk memory w = _begin(job);
        ExclusionList.List[3] memory ex = _loadExclusions(w, job);
        bool failed = false;
        while (w.segment < job.segmentCount) {
            if (w.seat == 0 && w.rejections == 0 && w.drawnNow >= job.maxSeats) break;
            uint256 laneValue =
                SegmentWord.lane(job.segmentWords[SegmentWord.wordOf(w.segment) - w.firstWord], w.segment);
            if (job.round != 0 && SegmentWord.weight(laneValue) == 0) {
                ++w.segment; // an appeal panel draws only its named segments
                continue;
            }
            uint256 tier = SegmentWord.tier(laneValue);
            ExclusionList.List memory list = ex[tier];
            uint256 total = _total(w, tier, job.epoch);
            if (total <= list.weightSum) {
                r.eligibleWeight = _fail(job, w, list, tier, total);
                failed = true;
                break;
            }
            if (w.rejectedNow >= MAX_REJECTIONS_PER_CALL) break;
            if (_sampleSeat(job, w, list, tier, total)) {
                if (w.seat == job.seatsPerTier[tier]) _closeSegment(w, list);
            }
        }
        if (w.seated.length != 0) {
            emit SeatsDrawn(job.sessionId, job.round, w.firstSegment, w.firstSeat, w.seated);
        }
        _flushLocks(w, job);
        bool complete = w.segment == job.segmentCount;
        if (!failed && !complete) _saveProgress(w, ex, job);
        r.cursor = w.segment;
        r.drawnSeats = w.drawnSeats;
        r.auditorCount = w.auditorCount;
        r.failed = failed;
        if (failed) {
            r.lockRefusals = w.panelRefusals;
            r.refusedWeight = w.refusedWeight;
        } else if (w.panelRefusals != w.refusalsBefore) {
            _panelRefusals[w.key] = w.panelRefusals;
        }
    }

    /// @dev Sample one candidate for the current seat; seat it or exclude it. True if seated.
    function _sampleSeat(
        DrawJob calldata job,
        Walk memory w,
        ExclusionList.List memory list,
        uint256 tier,
        uint256 total
    ) private returns (bool) {
        uint256 value = DrawScratch.seatWord(job.seed, w.segment, w.seat, w.rejections)
            % (total - list.weightSum);
        (address auditor, uint256 leaf, uint256 weight) =
            sortition.sampleAt(uint8(tier), job.epoch, value, list.leaves);
        if (auditor == address(0) || weight == 0) revert SampleOutOfSnapshot(auditor, leaf);
        (uint256 word, uint256 reason) = _admit(job, w, tier, auditor);
        if (reason != 0) {
            // A refused lock is the auditor's own doing (a withdrawal request, deregistration, stake
            // locked by another draw it chose to run first), decided after the seed is public. Excluded
            // for this segment only, it moves no seat of any segment it would not have sat on; a
            // panel-wide exclusion would change every later modulus and re-roll the rest of the draw.
            if (reason >= REASON_LOCK_REFUSED) list.addLocal(leaf, weight);
            else list.addPermanent(leaf, weight);
            if (reason == REASON_LOCK_REFUSED) {
                ++w.refusals;
                ++w.panelRefusals;
                w.refusedWeight += weight;
            } else if (reason == REASON_EARLIER_PANEL) {
                w.earlierWeight += weight;
            }
            ++w.rejections;
            ++w.rejectedNow;
            emit AuditorExcluded(job.sessionId, job.round, auditor, reason);
            return false;
        }
        if (SeatWord.count(word) >= job.seatCap) list.addPermanent(leaf, weight);
        else list.addLocal(leaf, weight);
        DrawScratch.push(w.seated, auditor);
        ++w.drawnSeats;
        ++w.drawnNow;
        ++w.seat;
        w.rejections = 0;
        return true;
    }

    /// @dev Seat `auditor` on the current segment if it is eligible; else the exclusion reason.
    function _admit(DrawJob calldata job, Walk memory w, uint256 tier, address auditor)
        private
        returns (uint256 word, uint256 reason)
    {
        uint256 key = w.key;
        uint256 segment = w.segment;
        Held memory h = _held(w, auditor);
        word = h.word;
        if (_hasSeat(key, auditor, word, segment)) revert SampleOutOfSnapshot(auditor, segment);
        if (auditor == job.provider) return (word, REASON_PROVIDER);
        if (job.round != 0 && _satBefore(job.sessionId, segment, auditor)) {
            return (word, REASON_EARLIER_PANEL);
        }
        if (SeatWord.count(word) >= job.seatCap) return (word, REASON_SEAT_CAP);
        uint256 refused = _canLock(h, tier, job.lockAmount);
        if (refused != 0) {
            if (refused == LOCK_SHORT && job.round != 0 && _sessionHeld(job, w, h)) {
                return (word, REASON_SESSION_HELD);
            }
            return (word, REASON_LOCK_REFUSED);
        }
        ++h.seatsNow;
        if (word == 0) word = SeatWord.create(w.auditorCount++, h.q.reputation, h.q.nextEntry);
        word = SeatWord.addSeat(word, segment);
        if (segment >= SeatWord.WINDOW_BITS) {
            _high[key][auditor][SeatWord.windowOf(segment)] |= SeatWord.bitOf(segment);
        }
        h.word = word;
    }

    /// @dev `IStaking.lockSeat`'s decision for one more seat, from the quote and this call's locks: 0 it
    /// locks, LOCK_SHORT the free stake cannot back it (the one refusal another panel's locks can cause),
    /// LOCK_BARRED any other refusal (not eligible, other tier, later deposits, full ledger).
    function _canLock(Held memory h, uint256 tier, uint256 amount) private view returns (uint256) {
        if (!h.quoted) {
            h.q = staking.seatQuote(h.auditor);
            h.quoted = true;
            // Seats added to an entry that later entries follow: deposits queued after it cannot back
            // them (refused outright when they exceed the free stake, as `lockSeat` does even for 0).
            uint256 e = h.entryBefore;
            if (e != 0 && e != h.q.lastEntry) {
                uint256 queued = staking.queuedAfter(h.auditor, e);
                if (queued > h.q.free) {
                    h.q.eligible = false;
                } else {
                    h.q.free -= queued;
                    h.q.limit -= queued; // limit >= free + queued: the same shortfall rule below
                }
            }
        }
        IStaking.SeatQuote memory q = h.q;
        if (!q.eligible || q.tier != tier) return LOCK_BARRED;
        if (h.word == 0 && q.nextEntry == 0) return LOCK_BARRED; // a first lock needs a free ledger slot
        if (q.free < amount) return LOCK_SHORT;
        q.free -= amount;
        return 0;
    }

    /// @dev Whether `h.auditor`'s stake-short refusal is explained by the session's own panels alone:
    /// `limit - lockedBySession < amount`, where `limit` is what the free stake is measured against
    /// (`IStaking.SeatQuote.limit`; a withdrawal does not lower it while the snapshot can draw the auditor) and
    /// lockedBySession = the auditor's seats in every other panel of the session (round 0 and the other appeal
    /// rounds) plus its seats of this round so far, x `job.lockAmount` (the session's `slashAmount`: round 0
    /// (`SessionStore._drawJob`) and every appeal round (`AppealModule._job`) read it from the session's one
    /// params version, so one value for all). Such a refusal is one the session's own rounds cause
    /// (Review11ConcurrentRoundsExhaustStake: an honest auditor filled by round 0, rounds A and B and its first
    /// seats of C): excluded for the segment, not charged (reason 5). Any other shortfall - another session's
    /// locks - is charged (reason 3): an auditor seated elsewhere in the session that empties the rest of its
    /// stake refuses at its own cost (Review19SeatedDefenderWithholdsUncharged). Round 0 and this round count
    /// because without them an honest auditor that the session's rounds exhausted (its round-0 seats are most
    /// of its locks) would be charged (Review11ConcurrentRoundsGenuineRefusals' control measured REFUSED); the
    /// seats are placed by sortition, so nobody can raise its own session locks to escape a charge. No round
    /// of the session settles while one draws (settlement waits for every round), so every lock counted stands.
    /// Read once per auditor per call (cached in `h`); the scan reads one seat word per round of the session
    /// (at most `PanelKey.MAX_ROUND`) and is charged as one rejection per ROUNDS_PER_REJECTION rounds, so a
    /// call reads at most about (MAX_REJECTIONS_PER_CALL + 15) x 16 seat words whatever the round count (it
    /// stops, and the next call resumes, like any call stopped by rejections).
    /// Adversarial limit (the mirror of the fixed attack): whoever wants a contested outcome to stand can open
    /// concurrent rounds of the session and draw them first to exhaust the tier, ending the victim round
    /// UNFILLABLE instead of REFUSED; it pays those rounds' bonds (lost when upheld: 672 TRUST in
    /// Review11ConcurrentRoundsExhaustStake's large tier) and must draw before the victim, whose round,
    /// opened earlier, has its randomness earlier.
    function _sessionHeld(DrawJob calldata job, Walk memory w, Held memory h) private view returns (bool) {
        if (h.sessionHeld != 0) return h.sessionHeld == 2;
        uint256 n = w.roundsPlusOne;
        if (n == 0) {
            n = uint256(IAppealModule(msg.sender).sessionAppeals(job.sessionId).roundCount) + 1;
            w.roundsPlusOne = n;
        }
        --n;
        // This round's own seats so far (this call's included): its locks are the session's too, and after
        // the auditor's first refusal in the call its word grows no more, so the cached answer stands.
        uint256 seats = SeatWord.count(h.word);
        for (uint256 r = 0; r <= n; ++r) {
            if (r != job.round) seats += SeatWord.count(_seats[PanelKey.keyOf(job.sessionId, r)][h.auditor]);
        }
        uint256 held = seats * job.lockAmount;
        h.sessionHeld = held > h.q.limit || h.q.limit - held < job.lockAmount ? 2 : 1;
        w.rejectedNow += n / ROUNDS_PER_REJECTION;
        return h.sessionHeld == 2;
    }

    /// @dev The call's record of `auditor`, created (seat word read from storage) at its first sample.
    function _held(Walk memory w, address auditor) private view returns (Held memory h) {
        Held[] memory held = w.held;
        uint256 n = w.heldCount;
        // A plain scan of the first `n` pointers (all set; `auditor` is each struct's first word).
        assembly ("memory-safe") {
            let p := add(held, 0x20)
            for { let end := add(p, mul(n, 0x20)) } lt(p, end) { p := add(p, 0x20) } {
                let e := mload(p)
                if eq(mload(e), auditor) {
                    h := e
                    break
                }
            }
        }
        if (h.auditor == auditor) return h;
        uint256 word = _seats[w.key][auditor];
        h.auditor = auditor;
        h.word = word;
        h.entryBefore = SeatWord.entry(word);
        held[n] = h;
        w.heldCount = n + 1;
    }

    /// @dev Lock each auditor's seats of this call at once and store its seat word.
    function _flushLocks(Walk memory w, DrawJob calldata job) private {
        uint256 n = w.heldCount;
        for (uint256 i = 0; i < n; ++i) {
            Held memory h = w.held[i];
            if (h.seatsNow == 0) continue;
            (, uint256 entry) =
                staking.lockSeats(h.auditor, h.q.tier, w.key, h.seatsNow * job.lockAmount, h.entryBefore);
            if (entry != SeatWord.entry(h.word)) revert LockMismatch(h.auditor, entry);
            _seats[w.key][h.auditor] = h.word;
        }
    }

    /// @dev Whether `auditor` sat on `segment` in round 0 or in an earlier appeal panel of it (asked of the
    /// appeal module, the caller of an appeal panel's draw).
    function _satBefore(uint256 sessionId, uint256 segment, address auditor) private view returns (bool) {
        (uint256 packed, uint256 n) = IAppealModule(msg.sender).earlierRounds(sessionId, segment);
        return _satIn(sessionId, segment, auditor, packed, n);
    }

    /// @dev `_satBefore` with the segment's `earlierRounds` read: n + 1 <= AppealMath.MAX_ROUNDS seat words.
    function _satIn(uint256 sessionId, uint256 segment, address auditor, uint256 packed, uint256 n)
        private
        view
        returns (bool)
    {
        for (uint256 i = 0; i <= n; ++i) {
            uint256 key = PanelKey.keyOf(sessionId, i == 0 ? 0 : (packed >> (8 * (i - 1))) & 0xff);
            uint256 word = _seats[key][auditor];
            if (word != 0 && _hasSeat(key, auditor, word, segment)) return true;
        }
        return false;
    }

    function _closeSegment(Walk memory w, ExclusionList.List memory list) private pure {
        list.dropLocal();
        ++w.segment;
        w.seat = 0;
        w.refusals = 0;
        w.refusedWeight = 0;
        w.earlierWeight = 0;
    }

    /// @dev Emit `DrawFailed`; for an appeal panel return the failed segment's eligible weight W_E (rule R,
    /// `DrawResult.eligibleWeight`). The draw ran dry: every leaf of the tier with snapshot weight is in
    /// `list` (total <= its weight sum, each leaf once). So W_E = total - the provider's snapshot weight -
    /// the weight of every earlier-panel auditor of the segment (round 0 and its earlier appeal panels,
    /// `_satBefore`), each counted once in one of two disjoint places: a segment-only entry excluded with
    /// reason 4 (`w.earlierWeight`, carried across calls by `_resumeWeights`), or a panel-wide entry, i.e.
    /// an auditor at the seat cap on the round's earlier segments, never sampled here (`_cappedEarlier`;
    /// `_admit` checks reason 4 before the cap, so an entry made panel-wide on this segment is never one).
    /// Other auditors at the cap stay in E: eligible but full, they served this panel and refused nothing,
    /// and counting them out would let a refusing minority become a "majority" of whatever stake the cap
    /// has not yet filled (refusing early segments pushes honest auditors onto the cap). Before outside
    /// review 21 a capped earlier-panel auditor stayed in W_E too, so a defender's topped-up round-0 account
    /// turned rule R's REFUSED into UNFILLABLE (Review21CappedEarlierAuditorInflatesEligible: W_R 2,500 of
    /// W_E 4,600, the contract's 7,600). Subtractions saturate: the draw must end, not revert.
    function _fail(
        DrawJob calldata job,
        Walk memory w,
        ExclusionList.List memory list,
        uint256 tier,
        uint256 total
    ) private returns (uint256 eligibleWeight) {
        if (job.round != 0) {
            (bool exists, uint256 leaf) = sortition.leafOf(uint8(tier), job.provider);
            uint256 out = w.earlierWeight + _cappedEarlier(job, list, tier, w.segment);
            if (exists) out += sortition.leafWeightAt(uint8(tier), job.epoch, leaf);
            if (total > out) eligibleWeight = total - out;
        }
        emit DrawFailed(
            job.sessionId,
            job.round,
            w.segment,
            tier,
            job.seatsPerTier[tier] - w.seat,
            list.length() - list.permanent - w.refusals,
            w.panelRefusals
        );
    }

    /// @dev Snapshot weight of the panel-wide entries of `list` (the provider, auditors at the seat cap)
    /// that sat on `segment` in an earlier panel. Bounded: at most 1 + drawnSeats / seatCap entries, the
    /// ones every call already loads (`_loadExclusions`); each costs one `memberAt` and at most
    /// AppealMath.MAX_ROUNDS seat words (`_satIn`).
    function _cappedEarlier(
        DrawJob calldata job,
        ExclusionList.List memory list,
        uint256 tier,
        uint256 segment
    ) private view returns (uint256 weight) {
        (uint256 packed, uint256 n) = IAppealModule(msg.sender).earlierRounds(job.sessionId, segment);
        for (uint256 i = 0; i < list.permanent; ++i) {
            address a = sortition.memberAt(uint8(tier), list.leaves[i]);
            if (a != job.provider && _satIn(job.sessionId, segment, a, packed, n)) weight += list.weights[i];
        }
    }

    function _total(Walk memory w, uint256 tier, uint256 epoch) private view returns (uint256 total) {
        total = w.totals[tier];
        if (total == 0) {
            total = sortition.totalWeightAt(uint8(tier), epoch);
            w.totals[tier] = total;
        }
    }

    function _hasSeat(uint256 key, address auditor, uint256 word, uint256 segment)
        private
        view
        returns (bool)
    {
        if (segment < SeatWord.WINDOW_BITS) {
            return SeatWord.window0(word) & SeatWord.bitOf(segment) != 0;
        }
        return _high[key][auditor][SeatWord.windowOf(segment)] & SeatWord.bitOf(segment) != 0;
    }

    // ------------------------------------------------------- call state

    function _begin(DrawJob calldata job) private returns (Walk memory w) {
        w.key = PanelKey.keyOf(job.sessionId, job.round);
        w.segment = job.cursor;
        w.drawnSeats = job.drawnSeats;
        w.auditorCount = job.auditorCount;
        w.firstWord = SegmentWord.wordOf(job.cursor);
        // A call draws at most maxSeats seats plus the rest of the segment it is in (appeal panels: <= 63).
        w.seated = DrawScratch.emptyList(job.maxSeats + 64);
        // Auditors sampled: at most one per seat or rejection of the call.
        w.held = _pointers(job.maxSeats + 64 + MAX_REJECTIONS_PER_CALL);
        w.panelRefusals = _panelRefusals[w.key];
        w.refusalsBefore = w.panelRefusals;
        uint256 resumeAt = _resumeAt[w.key];
        if (resumeAt != 0) {
            w.seat = (resumeAt >> 8) & 0xff;
            w.refusals = (resumeAt >> 16) & 0xffff;
            w.rejections = resumeAt >> 32;
            delete _resumeAt[w.key];
            uint256 weights = _resumeWeights[w.key];
            if (weights != 0) {
                w.refusedWeight = weights & type(uint128).max;
                w.earlierWeight = weights >> 128;
                delete _resumeWeights[w.key];
            }
        }
        w.firstSegment = w.segment;
        w.firstSeat = w.seat;
    }

    /// @dev The panel's stored exclusions, per tier, plus the segment exclusions of a resumed segment.
    function _loadExclusions(Walk memory w, DrawJob calldata job)
        private
        returns (ExclusionList.List[3] memory ex)
    {
        uint256[] storage stored = _excluded[w.key];
        uint256 n = stored.length;
        for (uint256 t = 0; t < 3; ++t) {
            ex[t] = ExclusionList.create(n + 8);
        }
        for (uint256 i = 0; i < n; ++i) {
            uint256 e = stored[i];
            ExclusionList.List memory list = ex[(e >> EXCLUSION_TIER_SHIFT) & 0xff];
            list.addPermanent((e >> EXCLUSION_LEAF_SHIFT) & type(uint64).max, e & type(uint128).max);
            list.stored = list.permanent;
        }
        uint256[] storage resume = _resume[w.key];
        uint256 m = resume.length;
        if (m != 0) {
            uint256 laneValue =
                SegmentWord.lane(job.segmentWords[SegmentWord.wordOf(w.segment) - w.firstWord], w.segment);
            ExclusionList.List memory list = ex[SegmentWord.tier(laneValue)];
            for (uint256 i = 0; i < m; ++i) {
                uint256 e = resume[i];
                list.addLocal((e >> EXCLUSION_LEAF_SHIFT) & type(uint64).max, e & type(uint128).max);
            }
            delete _resume[w.key];
        }
    }

    /// @dev The draw continues in a later call: store new panel exclusions and, if the call stopped
    /// inside a segment, that segment's position and exclusions.
    function _saveProgress(Walk memory w, ExclusionList.List[3] memory ex, DrawJob calldata job) private {
        uint256[] storage stored = _excluded[w.key];
        for (uint256 t = 0; t < 3; ++t) {
            ExclusionList.List memory list = ex[t];
            for (uint256 i = list.stored; i < list.permanent; ++i) {
                stored.push(_packExclusion(t, list.leaves[i], list.weights[i]));
            }
        }
        if (w.seat == 0 && w.rejections == 0) return;
        uint256 laneValue =
            SegmentWord.lane(job.segmentWords[SegmentWord.wordOf(w.segment) - w.firstWord], w.segment);
        ExclusionList.List memory cur = ex[SegmentWord.tier(laneValue)];
        uint256[] storage resume = _resume[w.key];
        for (uint256 i = cur.permanent; i < cur.length(); ++i) {
            resume.push(_packExclusion(0, cur.leaves[i], cur.weights[i]));
        }
        _resumeAt[w.key] = 1 | (w.seat << 8) | (w.refusals << 16) | (w.rejections << 32);
        uint256 weights = w.refusedWeight | (w.earlierWeight << 128);
        if (weights != 0) _resumeWeights[w.key] = weights;
    }

    function _packExclusion(uint256 tier, uint256 leaf, uint256 weight) private pure returns (uint256) {
        return (tier << EXCLUSION_TIER_SHIFT) | (uint256(uint64(leaf)) << EXCLUSION_LEAF_SHIFT)
            | uint256(uint128(weight));
    }

    /// @dev A memory array of `n` struct pointers, left unset: entries are assigned before they are read.
    function _pointers(uint256 n) private pure returns (Held[] memory a) {
        assembly ("memory-safe") {
            a := mload(0x40)
            mstore(a, n)
            mstore(0x40, add(a, mul(add(n, 1), 0x20)))
        }
    }

    // ------------------------------------------------------------- views

    /// @inheritdoc IDrawModule
    function seatWords(uint256 key, address[] calldata auditors)
        external
        view
        returns (uint256[] memory words)
    {
        words = new uint256[](auditors.length);
        for (uint256 i = 0; i < auditors.length; ++i) {
            words[i] = _seats[key][auditors[i]];
        }
    }

    /// @inheritdoc IDrawModule
    function seatWordOf(uint256 key, address auditor) external view returns (uint256) {
        return _seats[key][auditor];
    }

    /// @inheritdoc IDrawModule
    function highSeats(uint256 key, address auditor, uint256 window) external view returns (uint256) {
        return _high[key][auditor][window];
    }

    /// @inheritdoc IDrawModule
    function seatsOf(uint256 sessionId, uint256 round, address auditor)
        external
        view
        returns (uint256[] memory segments)
    {
        uint256 key = PanelKey.keyOf(sessionId, round);
        uint256 word = _seats[key][auditor];
        uint256 count = SeatWord.count(word);
        segments = new uint256[](count);
        uint256 j = 0;
        uint256 bits = SeatWord.window0(word);
        for (uint256 window = 0; j < count; ++window) {
            if (window != 0) bits = _high[key][auditor][window];
            while (bits != 0) {
                uint256 b = SeatWord.lowest(bits);
                bits &= bits - 1;
                segments[j++] = window * SeatWord.WINDOW_BITS + b;
            }
        }
    }
}
