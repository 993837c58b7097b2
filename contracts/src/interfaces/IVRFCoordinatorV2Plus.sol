// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title VRFV2PlusClient
/// @notice The request types of Chainlink VRF v2.5, written from the upstream definitions
/// (smartcontractkit/chainlink, contracts/src/v0.8/vrf/dev/libraries/VRFV2PlusClient.sol): only the
/// parts this project uses, so no npm package is needed. The struct layout and the extraArgs encoding
/// (tag `bytes4(keccak256("VRF ExtraArgsV1"))` followed by the ABI-encoded ExtraArgsV1) must match
/// the live coordinator byte for byte; the mock coordinator decodes them the same way in tests.
library VRFV2PlusClient {
    /// @notice Tag that prefixes version-1 extra arguments.
    bytes4 internal constant EXTRA_ARGS_V1_TAG = bytes4(keccak256("VRF ExtraArgsV1"));

    /// @notice Version-1 extra arguments: pay the request in the native token instead of LINK.
    struct ExtraArgsV1 {
        bool nativePayment;
    }

    /// @notice A request to the coordinator.
    struct RandomWordsRequest {
        bytes32 keyHash;
        uint256 subId;
        uint16 requestConfirmations;
        uint32 callbackGasLimit;
        uint32 numWords;
        bytes extraArgs;
    }

    /// @notice Encode extra arguments as the coordinator expects them.
    function argsToBytes(ExtraArgsV1 memory extraArgs) internal pure returns (bytes memory) {
        return abi.encodeWithSelector(EXTRA_ARGS_V1_TAG, extraArgs);
    }
}

/// @title IVRFCoordinatorV2Plus
/// @notice The one coordinator function a VRF v2.5 consumer calls (upstream:
/// contracts/src/v0.8/vrf/dev/interfaces/IVRFCoordinatorV2Plus.sol). The coordinator later calls the
/// consumer's `rawFulfillRandomWords(uint256 requestId, uint256[] randomWords)`.
interface IVRFCoordinatorV2Plus {
    /// @notice Request `req.numWords` random words; returns the request id the fulfilment will carry.
    function requestRandomWords(VRFV2PlusClient.RandomWordsRequest calldata req)
        external
        returns (uint256 requestId);
}
