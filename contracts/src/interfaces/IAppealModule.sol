// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IAuditSessions} from "./IAuditSessions.sol";
import {IPanelHost} from "./IPanelHost.sol";

/// @title IAppealModule (issue 15)
/// @notice Appeals to a larger panel. After a session finalizes, the canary reveal window runs
/// (`canaryRevealBlocks`), then an appeal window of `appealBlocks` blocks opens on every segment. Anyone
/// may `appeal(sessionId, segments, maxBond)` segments that are all at the same depth (number of appeal
/// panels they already had): they form the panel of the session's next round `a = 1, 2, ...` (storage and
/// ledger key `PanelKey.keyOf(sessionId, a)`), each named segment getting
/// `k_{d+1} = 2^{d+1} (k_0 + 1) - 1` seats of its tier, drawn with the v2 sound draw (its own randomness
/// request, the snapshot of the epoch of the appeal), excluding the provider and every auditor of the
/// segment's earlier panels. The round runs like round 0 (draw, keys, commit, reveal, finalize); its
/// quorum outcomes replace the named segments' outcomes, and a new window of `appealBlocks` opens on them
/// while rounds remain. The outcome is final when the canary window and every appeal window have closed
/// and no round is running; then the slash seed is requested (core `onOutcomeFinal`),
/// `IAppealSettlement.settleAppeals` resolves the money of every appealed segment (paginated), and every
/// round settles through the settlement module. Reference rules: `src/trustnode/consensus/appeals.py`, `final_settlement.py`.
/// @dev Round statuses reuse `IAuditSessions.Status`: Created (draw randomness pending), Drawing,
/// KeysPublished, Commit, Reveal, Finalized (the panel decided), Cancelled (UNFILLABLE: the draw could not
/// fill the panel, its randomness lapsed, or nobody drew in time; REFUSED if `Round.refused`: the draw
/// failed after sampled auditors refused their locks), Expired (KEYS_WITHHELD).
interface IAppealModule is IPanelHost {
    /// @notice Appeal and canary parameters; a version applies to sessions opened after
    /// `IAppealSettlement.setParams`.
    /// Names are those of `consensus.appeals.AppealParams` / `consensus.canaries.CanaryParams`, camelCased.
    struct AppealParams {
        /// Blocks of each appeal window (0 disables appeals).
        uint32 appealBlocks;
        /// Most appeal panels per segment (<= 4; 0 disables appeals).
        uint8 maxRounds;
        /// Bond of round r per segment = k_r * R * appealBondMultiplierBps / 10000 (10000..100000).
        uint32 appealBondMultiplierBps;
        /// A successful (OVERTURNED) appellant's reward = bond * appealRewardBps / 10000.
        uint16 appealRewardBps;
        /// Most the Treasury grants one session for panel rewards and appellant rewards.
        uint96 appealBudget;
        /// Canaries per session = segmentCount * canaryRateBps / 10000 (<= 3000).
        uint16 canaryRateBps;
        /// Blocks of the canary reveal window after the session finalized (>= 1).
        uint32 canaryRevealBlocks;
        /// Reputation step of a vote on a revealed canary (WAD).
        uint64 canaryGamma;
        /// Treasury refund to the provider per revealed canary = k_0 * R * canaryRefundBps / 10000.
        uint16 canaryRefundBps;
    }

    /// @notice How an appeal ended, judged against the FINAL outcome of its segment.
    enum AppealResult {
        None,
        Upheld,
        Overturned,
        Voided,
        KeysWithheld,
        Unfillable,
        /// The panel's draw failed after sampled auditors refused their stake locks (`Round.refused`):
        /// the segment ends as if its keys were withheld (a contested PASS becomes INCONCLUSIVE), the
        /// bond is refunded whole and the drawn seats are owed by the pot only.
        Refused,
        /// Abandoned by its appellant (outside review 6): the panel's randomness was obtainable while its
        /// snapshot was readable and nobody drew it (status Expired, drawn short). The contested outcome
        /// stands (final), the bond is forfeited (R per seat drawn, the rest to the treasury).
        Abandoned
    }

    /// @notice One appeal round (a panel over one or more segments at the same depth).
    struct Round {
        address appellant;
        IAuditSessions.Status status;
        /// The panel's depth r: each named segment had r - 1 appeal panels before it (k_r seats each).
        uint8 depth;
        /// Named segments.
        uint16 segmentCount;
        /// Sum of the named segments' bonds.
        uint96 bond;
        uint32 epoch;
        uint56 drawRequest;
        uint40 drawDeadline;
        uint40 keyDeadline;
        uint40 commitDeadline;
        uint40 revealDeadline;
        uint16 totalSeats;
        uint16 drawnSeats;
        uint16 drawCursor;
        uint16 auditorCount;
        uint16 committedCount;
        uint16 revealedCount;
        /// The draw failed after sampled auditors refused their stake locks (status Cancelled): see
        /// `AppealResult.Refused`.
        bool refused;
        /// Fixed at admission: a failed draw with lock refusals ends REFUSED only if set, i.e. if each named
        /// segment's eligible auditors (live in the round's snapshot, not the provider, minus every earlier
        /// panel's seats) were at least twice its seats; else it ends UNFILLABLE (`Quote.refusalsCharged`).
        bool refusalsCharged;
    }

    /// @notice One segment's appeal history (an unappealed segment reads depth 0, lastRound 0).
    struct SegmentAppeals {
        /// Appeal panels the segment has had (running one included).
        uint8 depth;
        /// Round number of its latest panel (0 = the session's own).
        uint8 lastRound;
        /// Its current outcome (SegmentWord codes: 1 PASS, 2 FAIL, 3 INCONCLUSIVE).
        uint8 outcome;
        /// A panel is running on it.
        bool pending;
        /// Its last panel did not decide (keys withheld or unfillable): the outcome is final.
        bool closed;
        /// Last block an appeal of it is accepted (0: none is).
        uint40 windowEnd;
        /// Its appeal round numbers, 8 bits each, depth 1 in bits 0-7.
        uint32 rounds;
    }

    /// @notice A session's appeal phase.
    struct SessionAppeals {
        /// Block the session's round 0 finalized; the canary reveal window is (finalizedAt, canaryEnd].
        uint40 finalizedAt;
        uint40 canaryEnd;
        /// Last block of the round-0 appeal window (canaryEnd + appealBlocks).
        uint40 windowEnd;
        /// Latest block any appeal window of the session is open.
        uint40 lastWindowEnd;
        uint8 roundCount;
        uint8 openRounds;
        bool outcomeFinal;
        /// Current trace verdict over the non-canary segments (recomputed after each round).
        bool passed;
        uint16 scoreBps;
        /// Segments with at least one appeal panel.
        uint16 appealedCount;
    }

    /// @notice What `appeal` would open.
    struct Quote {
        uint256 round;
        uint256 depth;
        uint256 bond;
        uint256 totalSeats;
        /// k_depth of each named segment, in the order given.
        uint256[] seats;
        /// Whether refusals would be charged: eligible >= 2 k_depth (`AppealMath.refusalsCharged`). If not,
        /// a draw that fails, refusals or not, ends UNFILLABLE: the contested outcomes stand and are final
        /// and the appellant pays R per drawn seat (a thin tier stays appealable, at that risk).
        bool refusalsCharged;
    }

    // --------------------------------------------------------------- refusals (appeal_admission.check_appeal order)

    error AppealsDisabled(uint256 sessionId);
    /// @notice Staking's current minimum of `tier` (lowered since the opening) cannot back every seat lock
    /// the session can ask of one auditor of the tier (`required` = slashAmount x
    /// `AppealMath.sessionLockSeats`): a round could not fill (outside review 26).
    error MinStakeBelowSessionLocks(uint256 tier, uint256 minStake, uint256 required);
    error AppealWindowClosed(uint256 sessionId, uint256 segment, uint256 windowEnd);
    error SegmentFinal(uint256 sessionId, uint256 segment);
    error NoRoundsLeft(uint256 sessionId, uint256 segment);
    error NotEnoughEligibleAuditors(uint256 sessionId, uint256 segment, uint256 eligible, uint256 needed);
    error BondAboveLimit(uint256 bond, uint256 maxBond);
    /// @notice The round names more segments than the seat cap and more seats than half of what the auditors
    /// who can sit on its segments can seat under it (`capacity` = eligible * seatCap / 2, eligible = the
    /// tier's live members in the round's snapshot, the provider excluded, minus the segments' earlier-panel
    /// seats; outside review 17): appeal fewer segments per round.
    error PanelTooLarge(uint256 sessionId, uint256 seats, uint256 capacity);
    /// @notice The appellant required charged refusals (`appeal(..., requireCharged)`, the quote's
    /// `refusalsCharged`) and the round, judged on the snapshot of the epoch the appeal is mined in, would not
    /// be charged: `eligible` < `needed` = 2 k (outside review 17: the live count moved across an epoch
    /// boundary between the quote and the transaction). Quote again and decide.
    error RefusalsNotCharged(uint256 sessionId, uint256 eligible, uint256 needed);
    /// @notice The round's randomness is fixed but usable only from block `obtainableAt` (a VRF value in its
    /// delivery block): draw again from that block (the selector is LookaheadRandomness's `TooEarly`).
    error TooEarly(uint256 requestId, uint256 obtainableAt);
    // other refusals (checked before the above where they apply)
    error AppealWindowNotOpen(uint256 sessionId, uint256 opensAfter);
    error EmptyAppeal();
    error InvalidSegment(uint256 sessionId, uint256 segment);
    error SegmentsNotAscending(uint256 sessionId, uint256 segment);
    error MixedDepths(uint256 sessionId, uint256 segment);
    /// @notice One appeal round names segments of one tier (a refusal in one tier ends the whole round).
    error MixedTiers(uint256 sessionId, uint256 segment);
    error AppealPending(uint256 sessionId, uint256 segment);
    error SegmentIsCanary(uint256 sessionId, uint256 segment);
    error TooManyRounds(uint256 sessionId);
    /// @notice The proven leavers (`quote`/`appeal` with `leavers`) are not strictly ascending at `leaver`.
    error LeaversNotAscending(address leaver);
    /// @notice More proven leavers than `AppealMath.MAX_LEAVERS` (`max`).
    error TooManyLeavers(uint256 count, uint256 max);
    // lifecycle
    error InvalidParams();
    error NotCore(address caller);
    error NotModule(address caller);
    error NotProvider(uint256 sessionId);
    error UnknownRound(uint256 sessionId, uint256 round);
    error WrongRoundStatus(uint256 sessionId, uint256 round, IAuditSessions.Status status);
    error DrawComplete(uint256 sessionId, uint256 round);
    error DrawIncomplete(uint256 sessionId, uint256 round);
    error EmptyManifest();
    error RevealOpen(uint256 sessionId, uint256 round, uint256 revealDeadline);

    // ------------------------------------------------------------------------------------------ events

    /// @notice Round 0 finalized: the canary window is (finalizedAt, canaryEnd], the first appeal window
    /// (canaryEnd, windowEnd] (windowEnd == canaryEnd when appeals are disabled).
    event AppealPhaseOpened(uint256 indexed sessionId, uint256 canaryEnd, uint256 windowEnd);
    /// @notice An appeal was admitted: `segments` are uint16 big-endian segment indices, each with `seats`
    /// = k_depth seats of its tier; `bond` (sum over segments) was pulled from `appellant`.
    event AppealOpened(
        uint256 indexed sessionId,
        uint256 indexed round,
        address indexed appellant,
        uint256 depth,
        uint256 bond,
        uint256 totalSeats,
        uint256 randomnessId,
        uint256 epoch,
        bytes segments
    );
    event RoundStatusChanged(uint256 indexed sessionId, uint256 indexed round, IAuditSessions.Status status);
    event RoundDrawStarted(
        uint256 indexed sessionId, uint256 indexed round, bytes32 seed, uint256 drawDeadline
    );
    event RoundDrawCompleted(
        uint256 indexed sessionId, uint256 indexed round, uint256 auditorCount, uint256 keyDeadline
    );
    /// @notice The provider published the round's key manifest (segment keys sealed to the panel).
    event PanelKeysPublished(
        uint256 indexed sessionId,
        uint256 indexed round,
        string manifestCid,
        uint256 commitDeadline,
        uint256 revealDeadline
    );
    /// @notice A round ended: `outcomes` one byte per named segment in the order of `AppealOpened`
    /// (the panel's quorum outcome if it decided; for keys withheld or a refused draw INCONCLUSIVE, or the
    /// contested FAIL (`AppealMath.withheldKeeps`); the standing outcome for unfillable), `windowEnd` the
    /// last block its segments may be appealed again (0: none).
    event RoundFinalized(
        uint256 indexed sessionId,
        uint256 indexed round,
        IAuditSessions.Status status,
        bytes outcomes,
        uint256 windowEnd
    );
    /// @notice The trace verdict with the current outcomes (revealed canaries out of both sums, each
    /// unrevealed canary commitment taking the largest segment weight off `passWeight`).
    event TraceVerdictUpdated(
        uint256 indexed sessionId, bool passed, uint256 scoreBps, uint256 passWeight, uint256 totalWeight
    );
    /// @notice Every window closed and no round runs: the outcome is final (one byte per segment).
    event OutcomeFinalized(uint256 indexed sessionId, bool passed, uint256 scoreBps, bytes outcomes);
    // ------------------------------------------------------------------------------------------ owner

    /// @notice The parameters session `sessionId` runs under (kept by the appeal settlement: `setParams`
    /// is IAppealSettlement's, owner only).
    function paramsOf(uint256 sessionId) external view returns (AppealParams memory);

    /// @notice The canary terms of session `sessionId` (its pinned version's `canaryRateBps` and
    /// `canaryRefundBps`), without `paramsOf`'s recomputation of `maxRounds` (cheap, for the canary module).
    function canaryTermsOf(uint256 sessionId) external view returns (uint256 rateBps, uint256 refundBps);

    /// @notice `paramsOf(sessionId).canaryRateBps`, cheaply (see `canaryTermsOf`).
    function canaryRateOf(uint256 sessionId) external view returns (uint256);

    // ------------------------------------------------------------------------------------------ appeal

    /// @notice What `appeal(sessionId, segments, ...)` would open now; reverts with the refusal it would hit.
    function quote(uint256 sessionId, uint256[] calldata segments) external view returns (Quote memory);

    /// @notice `quote(sessionId, segments)` with proven leavers (outside review 22): a named segment's eligible
    /// count assumes every earlier-panel auditor of it still live, unless the caller names it here. A leaver
    /// counts for a segment iff it sat on one of the segment's earlier panels (round 0 or an earlier appeal
    /// panel) and has no weight in the round's snapshot; the others are ignored. Eligible never exceeds the
    /// auditors who can sit on the segment.
    /// @param leavers Strictly ascending (`LeaversNotAscending`), at most `AppealMath.MAX_LEAVERS`
    /// (`TooManyLeavers`).
    function quote(uint256 sessionId, uint256[] calldata segments, address[] calldata leavers)
        external
        view
        returns (Quote memory);

    /// @notice Appeal `segments` (strictly ascending, all at the same depth): pulls the bond (approve the
    /// token first) and opens the next round, whose draw randomness is requested now.
    /// @param maxBond The most the caller agrees to pay (`BondAboveLimit` above it).
    /// @return round The new round number.
    function appeal(uint256 sessionId, uint256[] calldata segments, uint256 maxBond)
        external
        returns (uint256 round);

    /// @notice `appeal(sessionId, segments, maxBond)`, refused `RefusalsNotCharged` if `requireCharged` and
    /// the round's lock refusals would not be charged (outside review 17: `refusalsCharged` is judged on the
    /// epoch the appeal is mined in, which may follow the quote's). Pass the quote's `refusalsCharged` to be
    /// held to no weaker terms than quoted.
    /// @param requireCharged Refuse the appeal unless `Quote.refusalsCharged` holds when it is mined.
    /// @return round The new round number.
    function appeal(uint256 sessionId, uint256[] calldata segments, uint256 maxBond, bool requireCharged)
        external
        returns (uint256 round);

    /// @notice `appeal(sessionId, segments, maxBond, requireCharged)` with proven leavers (see the `quote` with
    /// `leavers`): earlier-panel auditors of the named segments with no weight in the round's snapshot.
    /// @param leavers Strictly ascending, at most `AppealMath.MAX_LEAVERS`.
    /// @return round The new round number.
    function appeal(
        uint256 sessionId,
        uint256[] calldata segments,
        uint256 maxBond,
        bool requireCharged,
        address[] calldata leavers
    ) external returns (uint256 round);

    // ------------------------------------------------------------------------------------------ rounds

    /// @notice Draw up to `maxSeats` seats of the round (whole segments; anyone; repeat until complete).
    /// The first call fixes the seed (reverts while the randomness is not ready).
    function drawPanel(uint256 sessionId, uint256 round, uint256 maxSeats) external returns (uint256 drawn);

    /// @notice The provider publishes the round's key manifest (opens its commit phase).
    function publishPanelKeys(uint256 sessionId, uint256 round, string calldata manifestCid) external;

    /// @notice Decide the round's outcomes once its reveal phase is over (or everyone revealed).
    function finalizeRound(uint256 sessionId, uint256 round) external;

    /// @notice Apply every due transition of the session's rounds (randomness lapsed, draw or keys not in
    /// time, commit to reveal, finalize a due round) and finalize the outcome when every window closed
    /// (anyone). Ends at most 2 rounds per call (each end recomputes the trace verdict), so any number of
    /// rounds lapsing together ends in calls of bounded gas: call again while it returns false and rounds
    /// are due.
    /// @return outcomeFinal Whether the session's outcome is final.
    function advance(uint256 sessionId) external returns (bool outcomeFinal);

    // ------------------------------------------------------------------------------------------ hooks

    /// @notice The core finalized round 0; returns true if the outcome is final already (no canary window
    /// and no appeals), in which case the core requests the slash seed itself. Only the core.
    function onFinalized(uint256 sessionId) external returns (bool outcomeFinal);

    /// @notice Earlier panels (rounds) of `segment`, 8 bits each from bit 0, `count` of them (round 0
    /// not included), for the draw module's exclusions.
    function earlierRounds(uint256 sessionId, uint256 segment)
        external
        view
        returns (uint256 packed, uint256 count);

    /// @notice The appeal settlement (escrow of bonds, pots, budget and appeal panel rewards), deployed
    /// before this module and bound to it (its constructor checks the binding).
    function settlement() external view returns (address);

    /// @notice The appeal settlement takes the pots of appealed segments from the session pool (through
    /// this module: the core pays the appeal module only). Only the appeal settlement.
    function pullPot(uint256 sessionId, uint256 amount) external;

    // ------------------------------------------------------------------------------------------ views

    function roundOf(uint256 sessionId, uint256 round) external view returns (Round memory);

    /// @notice The named segments of a round, ascending.
    function roundSegments(uint256 sessionId, uint256 round) external view returns (uint256[] memory);

    function segmentAppeals(uint256 sessionId, uint256 segment) external view returns (SegmentAppeals memory);

    /// @notice The packed AppealWord of a segment (0 if never appealed; see libraries/AppealWord.sol).
    function appealWordOf(uint256 sessionId, uint256 segment) external view returns (uint256);

    /// @notice Appealed segments: bit i % 256 of word i / 256.
    function appealedBits(uint256 sessionId) external view returns (uint256[] memory);

    function sessionAppeals(uint256 sessionId) external view returns (SessionAppeals memory);

    /// @notice Packed segment word `wordIndex` of round `round` (tallies and outcome of its named segments).
    function roundWord(uint256 sessionId, uint256 round, uint256 wordIndex) external view returns (uint256);

    /// @notice The last block at which some segment of the session can still be appealed (0 if none will
    /// be: appeals disabled, outcome final, or every window closed and no round running).
    function appealableUntil(uint256 sessionId) external view returns (uint256);

    /// @notice Whether the session's outcome is final (slash seed requested).
    function isOutcomeFinal(uint256 sessionId) external view returns (bool);

    /// @notice k_r = 2^r (k_0 + 1) - 1.
    function panelSeats(uint256 k0, uint256 depth) external pure returns (uint256);

    /// @notice A segment's current outcome (its latest panel's, or round 0's).
    function outcomeOf(uint256 sessionId, uint256 segment) external view returns (uint256);

    /// @notice Bond of one segment for a panel of depth `depth`: k_depth * R * multiplierBps / 10000.
    function minBond(uint256 k0, uint256 depth, uint256 reward, uint256 multiplierBps)
        external
        pure
        returns (uint256);
}
