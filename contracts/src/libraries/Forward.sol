// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title Forward
/// @notice The one DELEGATECALL forwarder behind every core/ops split (AuditSessions -> SessionOps,
/// Staking -> StakingHoldsOps, AppealModule -> AppealAdmission): the same function of the ops contract runs
/// on the caller's storage, and the call ends with its return or revert data, byte for byte.
library Forward {
    /// @dev Run this call's own calldata in `ops` and end the call. Never returns to the caller's code.
    /// Within a STATICCALL the DELEGATECALL stays static, so a forwarded view writes nothing.
    function toOps(address ops) internal {
        assembly {
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), ops, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            if iszero(ok) { revert(0, returndatasize()) }
            return(0, returndatasize())
        }
    }
}
