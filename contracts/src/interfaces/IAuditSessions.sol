// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IPanelHost} from "./IPanelHost.sol";

/// @title IAuditSessions
/// @notice The session core as its modules and the nodes see it: the lifecycle, the parameters each
/// session pins, the segment words, and the narrow callbacks through which the voting and settlement
/// modules report work (each callback accepts one caller only).
interface IAuditSessions is IPanelHost {
    /// @notice Session lifecycle. Cancelled: the draw could not fill its seats. Expired: abandoned, or
    /// ended for a reason nobody controls (see Termination).
    enum Status {
        None,
        Created,
        Drawing,
        KeysPublished,
        Commit,
        Reveal,
        Finalized,
        Cancelled,
        Expired
    }

    /// @notice Why a session ended without a verdict, and so who gets the pool back.
    /// Refunded to the provider (minus R per drawn seat): RandomnessFailed (the VRF coordinator never
    /// answered), DrawFailed (the snapshot's eligible auditors could not fill a segment, nobody having
    /// refused a lock there). Sent to the treasury (minus R per drawn seat): RandomnessMissed,
    /// SnapshotUnavailable, DrawAbandoned, KeysWithheld, DrawRefused (a segment unfilled after sampled
    /// auditors refused their locks) - each is something the provider, or anyone, could have prevented
    /// or chosen after the seed became knowable.
    enum Termination {
        None,
        RandomnessMissed,
        RandomnessFailed,
        SnapshotUnavailable,
        DrawFailed,
        DrawAbandoned,
        KeysWithheld,
        DrawRefused
    }

    /// @notice Owner-set protocol parameters; each session pins the version current at its opening.
    struct SessionParams {
        uint16 tauBps;
        uint16 betaBps;
        uint8 seatCap;
        uint8[3] seatsPerTier;
        uint16[3] tierWeight;
        uint64 gamma;
        uint64 pMin;
        uint64 pMax;
        uint96 reward;
        uint96 slashAmount;
        uint32 drawBlocks;
        uint32 keyBlocks;
        uint32 commitBlocks;
        uint32 revealBlocks;
        /// Blocks the canary operator has, after the opening, to commit a session's canaries: the draw's
        /// randomness is requested so that nobody knows it before `open + max(delay, canaryCommitBlocks)`
        /// (0..199, under the VRF v2.5 cap of 200 confirmations; only for sessions owing canaries).
        uint32 canaryCommitBlocks;
    }

    /// @notice A session's record, four storage words. Seeds live in the randomness source
    /// (`seedOf`, `slashSeedOf`); the trace weights are in `SessionFinalized`.
    struct Session {
        address provider;
        Status status;
        Termination termination;
        bool passed;
        uint16 paramsVersion;
        uint16 segmentCount;
        uint16 scoreBps;
        uint8 source;
        bytes32 merkleRoot;
        uint96 pool;
        uint16 totalSeats;
        uint32 epoch;
        uint56 drawRequest;
        /// @dev 0 until the outcome is final; `type(uint56).max` when the source refused the request
        /// (`SlashSeedRefused`: no slash seed, every incorrect vote slashed).
        uint56 slashRequest;
        uint40 drawDeadline;
        uint40 keyDeadline;
        uint40 commitDeadline;
        uint40 revealDeadline;
        uint16 drawnSeats;
        uint16 drawCursor;
        uint16 auditorCount;
        uint16 committedCount;
        uint16 revealedCount;
        uint16 settledCount;
    }

    /// @notice What the settlement module needs to score a panel.
    struct SettlementContext {
        bool finalized;
        bool hasSlashSeed;
        bytes32 slashSeed;
        uint256 reward;
        uint256 slashAmount;
        uint256 gamma;
        uint256 pMin;
        uint256 pMax;
        uint256 segmentCount;
        uint256[] segmentWords;
    }

    error UnknownSession(uint256 sessionId);
    error WrongStatus(uint256 sessionId, Status status);
    error UnsupportedRound(uint256 round);
    error NotModule(address caller);
    error ExtensionsAlreadySet();
    error ZeroExtension();

    /// @notice The appeal and canary modules were wired (issue 15).
    event ExtensionsSet(address appealModule, address canaryModule);
    /// @notice The appeal module took the pots of appealed segments from the session pool.
    event PotTaken(uint256 indexed sessionId, uint256 amount);

    /// @notice A session's record.
    function sessionOf(uint256 sessionId) external view returns (Session memory);

    /// @notice A session's status.
    function statusOf(uint256 sessionId) external view returns (Status);

    /// @notice Parameters of `version`.
    function paramsAt(uint256 version) external view returns (SessionParams memory);

    /// @notice Packed segment word `wordIndex` of `round` of a session (see SegmentWord).
    function segmentWord(uint256 sessionId, uint256 round, uint256 wordIndex) external view returns (uint256);

    /// @notice The appeal module (issue 15; zero when the deployment has none: the outcome is final at
    /// `finalize`). Rounds > 0 of a session live there.
    function appealModule() external view returns (address);

    /// @notice The canary module (issue 15; zero when none).
    function canaryModule() external view returns (address);

    /// @notice The first session opened with the canary module wired (0 before `setExtensions`): a session
    /// owes canaries, and got the canary commit window, only from this id on.
    function canariesFromSession() external view returns (uint256);

    /// @notice The appeal module reports that the session's outcome is final (canary window and every
    /// appeal window closed, no round running): the core requests the slash seed. Only the appeal module.
    function onOutcomeFinal(uint256 sessionId) external;

    /// @notice The appeal module takes `amount` of the session pool: the pots of appealed segments (the
    /// part of their k_0 R reservation not paid to agreeing round-0 votes). Only the appeal module, only
    /// once the outcome is final.
    function takePot(uint256 sessionId, uint256 amount) external;

    /// @notice The settlement module asks what it needs; fixes the slash seed if it is ready.
    function settlementContext(uint256 sessionId, uint256 round) external returns (SettlementContext memory);

    /// @notice The settlement module settled `auditors` more auditors owed `rewards` in total: the core
    /// sends the rewards to the settlement module (for Staking to pull in `resolve`) and sweeps the pool
    /// once everybody is settled.
    function payOut(uint256 sessionId, uint256 round, uint256 rewards, uint256 auditors) external;
}
