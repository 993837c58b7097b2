// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title IPanelHost
/// @notice Whoever keeps a panel's phase and tallies: the session core for round 0, the appeal module
/// for appeal rounds (1, 2, ...). The voting module reports to `round == 0 ? core : core.appealModule()`.
interface IPanelHost {
    /// @notice The voting module reports `newCommitters` first-time commits of a batch (phase checked here).
    function onCommits(uint256 sessionId, uint256 round, uint256 newCommitters) external;

    /// @notice The voting module reports `revealers` openings and their packed tally deltas, one per
    /// segment word from word 0 (SegmentWord lanes, global segment indices).
    function onReveals(uint256 sessionId, uint256 round, uint256 revealers, uint256[] calldata tallyDeltas)
        external;
}
