// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IRandomness} from "../../src/interfaces/IRandomness.sol";

/// @notice An IRandomness whose requests the test answers by hand: a value, a failure, or an expiry.
contract ScriptedRandomness is IRandomness {
    struct Req {
        RequestStatus status;
        bytes32 value;
        uint256 obtainable;
    }

    mapping(uint256 => Req) internal _reqs;
    uint256 public requestCount;
    uint256 public lastMinBlocks;
    /// @notice What `minDelay` reports (the test sets it; requests are answered by hand regardless).
    uint256 public minDelay;
    /// @notice What `minDelay` reported when each request was made (`IRandomness.delayOf`).
    mapping(uint256 => uint256) public delayOf;
    /// @notice While true, `request`/`requestAfter` revert (a source that stops taking requests).
    bool public refusing;

    error NotReady(uint256 requestId, RequestStatus status);
    error Refused();

    function setMinDelay(uint256 delay) external {
        minDelay = delay;
    }

    function setRefusing(bool on) external {
        refusing = on;
    }

    function request() external returns (uint256 requestId) {
        return requestAfter(0);
    }

    /// @dev The test decides when a request is answered, so `minBlocks` is only recorded.
    function requestAfter(uint256 minBlocks) public returns (uint256 requestId) {
        if (refusing) revert Refused();
        lastMinBlocks = minBlocks;
        requestId = ++requestCount;
        _reqs[requestId].status = RequestStatus.Pending;
        delayOf[requestId] = minDelay;
    }

    /// @dev The value becomes obtainable in this block.
    function answer(uint256 requestId, bytes32 value) external {
        _reqs[requestId] = Req({status: RequestStatus.Ready, value: value, obtainable: block.number});
    }

    function obtainableAt(uint256 requestId) external view returns (uint256) {
        Req storage r = _reqs[requestId];
        return r.obtainable == 0 ? type(uint256).max : r.obtainable;
    }

    /// @dev Failed: the value was never obtainable.
    function fail(uint256 requestId) external {
        _reqs[requestId].status = RequestStatus.Failed;
        _reqs[requestId].obtainable = 0;
    }

    /// @dev Expired means the value was available: obtainable from now on unless answered before.
    function expire(uint256 requestId) external {
        _reqs[requestId].status = RequestStatus.Expired;
        if (_reqs[requestId].obtainable == 0) _reqs[requestId].obtainable = block.number;
    }

    function fulfil(uint256 requestId) external returns (bytes32) {
        Req storage r = _reqs[requestId];
        if (r.status != RequestStatus.Ready && r.status != RequestStatus.Fulfilled) {
            revert NotReady(requestId, r.status);
        }
        r.status = RequestStatus.Fulfilled;
        return r.value;
    }

    function status(uint256 requestId) external view returns (RequestStatus) {
        return _reqs[requestId].status;
    }

    function valueOf(uint256 requestId) external view returns (bytes32) {
        Req storage r = _reqs[requestId];
        if (r.status != RequestStatus.Fulfilled) revert NotReady(requestId, r.status);
        return r.value;
    }
}
