// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title IRandomness
/// @notice A source of session seeds: request now, obtain the value later. A lookahead-blockhash source
/// serves local chains; a VRF adapter can implement the same interface in production.
interface IRandomness {
    /// @notice Lifecycle of a request as seen by a consumer.
    enum RequestStatus {
        Unknown,
        Pending,
        Ready,
        Fulfilled,
        Expired
    }

    /// @notice Open a request; returns its id.
    function request() external returns (uint256 requestId);

    /// @notice Fix and return the random value of a Ready (or already Fulfilled) request.
    function fulfil(uint256 requestId) external returns (bytes32 value);

    /// @notice Where the request stands.
    function status(uint256 requestId) external view returns (RequestStatus);

    /// @notice The fulfilled value (reverts unless Fulfilled).
    function valueOf(uint256 requestId) external view returns (bytes32);
}
