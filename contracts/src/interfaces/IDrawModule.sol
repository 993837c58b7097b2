// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title IDrawModule
/// @notice Sortition of a panel from the staking snapshot of the session's opening epoch, and the
/// seats it assigns (one SeatWord per auditor).
interface IDrawModule {
    /// @notice One paginated draw call, prepared by the core.
    struct DrawJob {
        uint256 sessionId;
        uint256 round;
        bytes32 seed;
        uint256 epoch;
        address provider;
        uint256 maxSeats;
        uint256 segmentCount;
        uint256 cursor;
        uint256 drawnSeats;
        uint256 auditorCount;
        uint256 seatCap;
        uint256 lockAmount;
        uint8[3] seatsPerTier;
        /// Segment words from word `cursor / 8` on (enough for the call's budget).
        uint256[] segmentWords;
    }

    /// @notice Where the draw stands after a call.
    struct DrawResult {
        uint256 cursor;
        uint256 drawnSeats;
        uint256 auditorCount;
        bool failed;
        /// @dev Lock refusals over the whole panel, every segment and call, that the failure is charged
        /// with (0 unless `failed`): a failure after refusals is not the snapshot's own lack of auditors
        /// (refusing early segments can push the others onto the seat cap), so the core refunds nothing
        /// (no re-roll by refusing). The appeal module charges an appeal panel (round > 0) with them only if
        /// its admission found the honest-majority margin (`IAppealModule.Round.refusalsCharged`). Exclusions
        /// of reason 5 (stake held by another appeal panel of the session) are not counted.
        uint256 lockRefusals;
        /// @dev Rule R of a failed appeal panel (0 unless `failed`; `eligibleWeight` 0 in round 0): the
        /// snapshot weight of the failed segment's candidates excluded with a counted refusal (reason 3), and
        /// of its eligible candidates E (the tier's live leaves at the round's epoch, less the provider and
        /// the segment's earlier-panel auditors; auditors at the seat cap included). The appeal module ends
        /// the round REFUSED iff its admission charged refusals and 2 x refusedWeight > eligibleWeight:
        /// more than half of the eligible STAKE refused (the honesty assumption is stake-weighted, so
        /// minimum-stake accounts cannot buy the majority: Review17SybilsBuyTheRefusalMargin).
        uint256 refusedWeight;
        uint256 eligibleWeight;
    }

    error NotCore(address caller);
    error SampleOutOfSnapshot(address auditor, uint256 leaf);
    /// @notice Staking opened a different ledger entry than its quote announced (cannot happen while
    /// nothing else changes the pool within the draw call).
    error LockMismatch(address auditor, uint256 entry);

    /// @notice The seats one draw call filled, in seat order from seat `firstSeat` of segment
    /// `firstSegment`: each segment takes the next k_t entries (its seats in draw order), the last one
    /// possibly fewer if the call stopped inside it (a failed draw, or too many rejections).
    event SeatsDrawn(
        uint256 indexed sessionId, uint256 round, uint256 firstSegment, uint256 firstSeat, address[] auditors
    );
    /// @notice The eligible snapshot weight of `tier` ran out with `seatsNeeded` seats of `segment`
    /// unfilled; `eligibleLeft` auditors could still serve the session, all already on this segment;
    /// `lockRefusals` sampled auditors refused their stake lock over the whole panel so far.
    event DrawFailed(
        uint256 indexed sessionId,
        uint256 round,
        uint256 segment,
        uint256 tier,
        uint256 seatsNeeded,
        uint256 eligibleLeft,
        uint256 lockRefusals
    );
    /// @notice A sampled auditor was excluded: `reason` is 1 provider, 2 seat cap (both for the rest of
    /// the panel), 3 stake lock refused, 4 sat on an earlier panel of the segment, 5 stake lock refused for
    /// want of free stake that the auditor's seats in the session's other appeal panels alone explain (its
    /// lock limit less their locks cannot back a seat; 3 to 5 for the segment; 5 is not counted in
    /// `lockRefusals` nor `refusedWeight`: the session's own concurrent rounds took the stake,
    /// Review11ConcurrentRoundsExhaustStake).
    event AuditorExcluded(uint256 indexed sessionId, uint256 round, address indexed auditor, uint256 reason);

    /// @notice Draw up to `job.maxSeats` seats (whole segments); only the core (round 0) and the appeal
    /// module (rounds > 0) call it. In an appeal panel (`job.round > 0`) only segments whose word lane has
    /// a non-zero weight are drawn (the named ones), and the auditors of their earlier panels
    /// (`IAppealModule.earlierRounds`, asked of the caller) are excluded.
    function draw(DrawJob calldata job) external returns (DrawResult memory);

    /// @notice The SeatWord of each of `auditors` in panel `key` (zero if not drawn).
    function seatWords(uint256 key, address[] calldata auditors) external view returns (uint256[] memory);

    /// @notice `auditor`'s SeatWord in panel `key`.
    function seatWordOf(uint256 key, address auditor) external view returns (uint256);

    /// @notice Seat bitmap window `window` (>= 1) of `auditor` in panel `key`.
    function highSeats(uint256 key, address auditor, uint256 window) external view returns (uint256);

    /// @notice `auditor`'s seats in seat order (segment indices ascending): seat j is verdict bit j.
    function seatsOf(uint256 sessionId, uint256 round, address auditor)
        external
        view
        returns (uint256[] memory segments);
}
