// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IVRFCoordinatorV2Plus, VRFV2PlusClient} from "../../src/interfaces/IVRFCoordinatorV2Plus.sol";

/// @dev The consumer callback a coordinator calls.
interface IVRFConsumer {
    function rawFulfillRandomWords(uint256 requestId, uint256[] calldata randomWords) external;
}

/// @notice A stand-in for the VRF v2.5 coordinator: records requests (decoding extraArgs as the real one
/// does), and lets a test deliver on time, late, never, to the wrong request id, or from a wrong caller.
/// @dev Like the real coordinator, a delivery forwards at most the request's callbackGasLimit and does
/// not revert when the consumer's callback does: it reports success (and the revert data) instead.
contract MockVRFCoordinator is IVRFCoordinatorV2Plus {
    struct Recorded {
        address consumer;
        bytes32 keyHash;
        uint256 subId;
        uint16 requestConfirmations;
        uint32 callbackGasLimit;
        uint32 numWords;
        bool nativePayment;
        uint256 blockNumber;
    }

    mapping(uint256 => Recorded) private _recorded;
    uint256 public requestCount;
    /// @notice When set, the next request returns this id (to test duplicate ids).
    uint256 public forcedId;

    error BadExtraArgs();
    error TooFewConfirmations(uint256 requestId);

    event RandomWordsRequested(uint256 indexed requestId, address indexed consumer);
    event RandomWordsFulfilled(uint256 indexed requestId, bool success, bytes returnData);

    /// @dev Upstream VRFCoordinatorV2_5 holds this lock while it delivers to any consumer and refuses
    /// requests meanwhile (`nonReentrant`).
    bool public reentrancyLock;

    error Reentrant();

    function forceNextId(uint256 id) external {
        forcedId = id;
    }

    function requestRandomWords(VRFV2PlusClient.RandomWordsRequest calldata req)
        external
        returns (uint256 requestId)
    {
        if (reentrancyLock) revert Reentrant();
        bytes calldata extra = req.extraArgs;
        if (extra.length != 36 || bytes4(extra[:4]) != VRFV2PlusClient.EXTRA_ARGS_V1_TAG) {
            revert BadExtraArgs();
        }
        VRFV2PlusClient.ExtraArgsV1 memory args = abi.decode(extra[4:], (VRFV2PlusClient.ExtraArgsV1));
        ++requestCount;
        requestId =
            forcedId != 0 ? forcedId : uint256(keccak256(abi.encode(req.keyHash, msg.sender, requestCount)));
        forcedId = 0;
        _recorded[requestId] = Recorded({
            consumer: msg.sender,
            keyHash: req.keyHash,
            subId: req.subId,
            requestConfirmations: req.requestConfirmations,
            callbackGasLimit: req.callbackGasLimit,
            numWords: req.numWords,
            nativePayment: args.nativePayment,
            blockNumber: block.number
        });
        emit RandomWordsRequested(requestId, msg.sender);
    }

    function recorded(uint256 requestId) external view returns (Recorded memory) {
        return _recorded[requestId];
    }

    /// @notice Deliver `numWords` words derived from `seed` to the request's consumer.
    function fulfill(uint256 requestId, uint256 seed) external returns (bool success) {
        Recorded memory r = _recorded[requestId];
        if (block.number < r.blockNumber + r.requestConfirmations) revert TooFewConfirmations(requestId);
        uint256[] memory words = new uint256[](r.numWords);
        for (uint256 i = 0; i < words.length; ++i) {
            words[i] = uint256(keccak256(abi.encode(seed, i)));
        }
        return deliver(r.consumer, requestId, words, r.callbackGasLimit);
    }

    /// @notice Deliver arbitrary words to any consumer under any id (wrong-id tests).
    function deliver(address consumer, uint256 requestId, uint256[] memory words, uint256 gasLimit)
        public
        returns (bool success)
    {
        // Non-reentrant like upstream's fulfillRandomWords: a delivery inside a callback never releases
        // the lock early (outside review 10).
        if (reentrancyLock) revert Reentrant();
        bytes memory ret;
        reentrancyLock = true;
        (success, ret) = consumer.call{gas: gasLimit}(
            abi.encodeCall(IVRFConsumer.rawFulfillRandomWords, (requestId, words))
        );
        reentrancyLock = false;
        emit RandomWordsFulfilled(requestId, success, ret);
    }
}
