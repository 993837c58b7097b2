// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IRandomness} from "./interfaces/IRandomness.sol";

/// @title LookaheadRandomness
/// @notice Randomness from the hash of a block that did not exist when the request was made.
/// @dev A request made at block b targets block b + delay (b + max(delay, minBlocks) for `requestAfter`). Its value can be fixed once the target
/// block is sealed, and only while the EVM still serves its hash (256 blocks): after that the request
/// is `Expired` (it was available and nobody fixed it). It never reports `Failed`: the chain always
/// produces the block. Suitable for local chains and tests; a block producer can bias it, which
/// `VRFRandomness` avoids.
/// Each request is one slot: the target block while pending, then the value with its top bit set, the
/// target in bits 191-254 (`obtainableAt` = target + 1 after the value is fixed too) and 191 random bits,
/// so fixing a value rewrites a warm slot instead of filling a new one.
contract LookaheadRandomness is IRandomness {
    /// @notice The EVM serves hashes of the 256 most recent blocks only.
    uint256 public constant HASH_WINDOW = 256;
    uint256 private constant FIXED = 1 << 255;
    uint256 private constant TARGET_SHIFT = 191;
    uint256 private constant RANDOM_MASK = (1 << TARGET_SHIFT) - 1;
    /// @notice Blocks between a request and its target block.
    uint256 public immutable delay;

    mapping(uint256 => uint256) private _requests;
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
        return _request(0);
    }

    /// @inheritdoc IRandomness
    /// @dev Targets block `block.number + max(delay, minBlocks)`: its hash exists only once it is sealed.
    function requestAfter(uint256 minBlocks) external returns (uint256 requestId) {
        return _request(minBlocks);
    }

    function _request(uint256 minBlocks) private returns (uint256 requestId) {
        requestId = ++requestCount;
        uint256 target = block.number + (minBlocks > delay ? minBlocks : delay);
        _requests[requestId] = target;
        emit RandomnessRequested(requestId, msg.sender, target);
    }

    /// @inheritdoc IRandomness
    function fulfil(uint256 requestId) external returns (bytes32 value) {
        uint256 word = _requests[requestId];
        if (word == 0) revert UnknownRequest(requestId);
        if (word & FIXED != 0) return bytes32(word);
        if (block.number <= word) revert TooEarly(requestId, word);
        if (block.number - word > HASH_WINDOW) revert TooLate(requestId, word);
        uint256 random = uint256(keccak256(abi.encode(blockhash(word), requestId, address(this))));
        value = bytes32(FIXED | (word << TARGET_SHIFT) | (random & RANDOM_MASK));
        _requests[requestId] = uint256(value);
        emit RandomnessFulfilled(requestId, value);
    }

    /// @inheritdoc IRandomness
    function status(uint256 requestId) external view returns (RequestStatus) {
        uint256 word = _requests[requestId];
        if (word == 0) return RequestStatus.Unknown;
        if (word & FIXED != 0) return RequestStatus.Fulfilled;
        if (block.number <= word) return RequestStatus.Pending;
        if (block.number - word > HASH_WINDOW) return RequestStatus.Expired;
        return RequestStatus.Ready;
    }

    /// @inheritdoc IRandomness
    function valueOf(uint256 requestId) external view returns (bytes32) {
        uint256 word = _requests[requestId];
        if (word & FIXED == 0) revert NotFulfilled(requestId);
        return bytes32(word);
    }

    /// @inheritdoc IRandomness
    /// @dev Target + 1: the first block in which `fulfil` succeeds (the target's hash exists once it is sealed).
    function obtainableAt(uint256 requestId) external view returns (uint256) {
        uint256 word = _requests[requestId];
        if (word == 0) return type(uint256).max;
        return (word & FIXED != 0 ? uint64(word >> TARGET_SHIFT) : word) + 1;
    }

    /// @inheritdoc IRandomness
    /// @dev `delay`: a request of block b with `requestAfter(w)` is obtainable from b + max(delay, w) + 1.
    function minDelay() external view returns (uint256) {
        return delay;
    }

    /// @inheritdoc IRandomness
    /// @dev `delay`, fixed at deployment: the same for every request.
    function delayOf(uint256) external view returns (uint256) {
        return delay;
    }

    /// @notice The block whose hash a request uses (0 once its value is fixed, or if unknown).
    function targetBlockOf(uint256 requestId) external view returns (uint256) {
        uint256 word = _requests[requestId];
        return word & FIXED != 0 ? 0 : word;
    }
}
