// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title IStaking
/// @notice What the registry and the session contract need from the staking pools.
interface IStaking {
    /// @notice One auditor's outcome of one session, applied by the session contract.
    struct SettlementDelta {
        address auditor;
        uint96 reward;
        uint96 unlock;
        uint96 slash;
        uint64 reputation;
    }

    /// @notice The registry reports a (re-)registration with `tier`.
    function onRegister(address auditor, uint8 tier) external;

    /// @notice The registry reports a deregistration.
    function onDeregister(address auditor) external;

    /// @notice Weighted draw among the eligible auditors of `tier`; address(0) if there are none.
    function sample(uint8 tier, uint256 randomWord) external view returns (address);

    /// @notice Lock `amount` of `auditor`'s pool for an open seat; false if it cannot back it.
    function lock(address auditor, uint8 tier, uint256 amount) external returns (bool);

    /// @notice Reputation (WAD) of each auditor.
    function reputationsOf(address[] calldata auditors) external view returns (uint256[] memory);

    /// @notice Apply settled outcomes; the session contract has already sent the sum of rewards.
    function applySettlements(SettlementDelta[] calldata deltas) external;
}
