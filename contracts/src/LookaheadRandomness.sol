// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IRandomness} from "./interfaces/IRandomness.sol";

/// @title LookaheadRandomness
/// @notice Randomness from the hash of a block that did not exist when the request was made.
/// @dev A request made at block b targets block b + delay. Its value can be fixed once the target
/// block is sealed, and only while the EVM still serves its hash (256 blocks). Suitable for local
/// chains and tests; a block producer can bias it, which a VRF implementation of IRandomness avoids.
contract LookaheadRandomness is IRandomness {
    /// @notice The EVM serves hashes of the 256 most recent blocks only.
    uint256 public constant HASH_WINDOW = 256;
    /// @notice Blocks between a request and its target block.
    uint256 public immutable delay;

    struct Request {
        uint64 targetBlock;
        address requester;
        bytes32 value;
    }

    mapping(uint256 => Request) private _requests;
    /// @notice Number of requests made so far (ids start at 1).
    uint256 public requestCount;

    /// @notice The delay is outside [1, 128].
    error InvalidDelay(uint256 delay);
    /// @notice No request with that id.
    error UnknownRequest(uint256 requestId);
    /// @notice The target block is not sealed yet.
    error TooEarly(uint256 requestId, uint256 targetBlock);
    /// @notice The target block's hash is no longer available.
    error TooLate(uint256 requestId, uint256 targetBlock);
    /// @notice The value is read before it was fixed.
    error NotFulfilled(uint256 requestId);

    /// @notice A request was opened.
    event RandomnessRequested(uint256 indexed requestId, address indexed requester, uint256 targetBlock);
    /// @notice A request's value was fixed.
    event RandomnessFulfilled(uint256 indexed requestId, bytes32 value);

    /// @param delay_ Blocks to wait between request and target block (1..128).
    constructor(uint256 delay_) {
        if (delay_ == 0 || delay_ > 128) revert InvalidDelay(delay_);
        delay = delay_;
    }

    /// @inheritdoc IRandomness
    function request() external returns (uint256 requestId) {
        requestId = ++requestCount;
        uint256 target = block.number + delay;
        _requests[requestId] =
            Request({targetBlock: uint64(target), requester: msg.sender, value: bytes32(0)});
        emit RandomnessRequested(requestId, msg.sender, target);
    }

    /// @inheritdoc IRandomness
    function fulfil(uint256 requestId) external returns (bytes32 value) {
        Request storage r = _requests[requestId];
        if (r.targetBlock == 0) revert UnknownRequest(requestId);
        value = r.value;
        if (value != bytes32(0)) return value;
        uint256 target = r.targetBlock;
        if (block.number <= target) revert TooEarly(requestId, target);
        if (block.number - target > HASH_WINDOW) revert TooLate(requestId, target);
        value = keccak256(abi.encode(blockhash(target), requestId, address(this)));
        r.value = value;
        emit RandomnessFulfilled(requestId, value);
    }

    /// @inheritdoc IRandomness
    function status(uint256 requestId) external view returns (RequestStatus) {
        Request storage r = _requests[requestId];
        uint256 target = r.targetBlock;
        if (target == 0) return RequestStatus.Unknown;
        if (r.value != bytes32(0)) return RequestStatus.Fulfilled;
        if (block.number <= target) return RequestStatus.Pending;
        if (block.number - target > HASH_WINDOW) return RequestStatus.Expired;
        return RequestStatus.Ready;
    }

    /// @inheritdoc IRandomness
    function valueOf(uint256 requestId) external view returns (bytes32) {
        bytes32 v = _requests[requestId].value;
        if (v == bytes32(0)) revert NotFulfilled(requestId);
        return v;
    }

    /// @notice The block whose hash a request will use.
    function targetBlockOf(uint256 requestId) external view returns (uint256) {
        return _requests[requestId].targetBlock;
    }
}
