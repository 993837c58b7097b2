// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title ISettlementModule
/// @notice Scores each auditor's seats against the final outcomes and sends the results to Staking.
interface ISettlementModule {
    error NotSeated(uint256 sessionId, address auditor);
    error AlreadySettled(uint256 sessionId, address auditor);
    error EmptyBatch();

    /// @notice A batch item was not applied; `reason` is the selector of the error `settle` would raise.
    event ItemSkipped(uint256 indexed sessionId, address indexed auditor, bytes4 reason);
    /// @notice One auditor's result in a panel. For a session that ended without a verdict every seat
    /// counts as paid (`reward` = R per seat) and nothing else moves.
    event AuditorSettled(
        uint256 indexed sessionId,
        uint256 round,
        address indexed auditor,
        uint256 correct,
        uint256 incorrect,
        uint256 abstained,
        uint256 slashes,
        uint256 reward,
        uint256 repMul,
        uint256 repAdd
    );

    /// @notice Settle one auditor (reverts with the named error).
    function settle(uint256 sessionId, uint256 round, address auditor) external;

    /// @notice Settle many auditors in any order; unknown or settled ones are skipped.
    function settleBatch(uint256 sessionId, uint256 round, address[] calldata auditors)
        external
        returns (uint256 applied);

    /// @notice Whether `auditor` is settled in the panel.
    function isSettled(uint256 sessionId, uint256 round, address auditor) external view returns (bool);
}
