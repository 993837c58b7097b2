// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";

/// @notice The forge cheatcodes these tests use (forge-std from npm ships without ds-test, so the
/// tests carry their own minimal base instead of importing it).
interface Vm {
    struct Gas {
        uint64 gasLimit;
        uint64 gasTotalUsed;
        uint64 gasMemoryUsed;
        int64 gasRefunded;
        uint64 gasRemaining;
    }

    struct Log {
        bytes32[] topics;
        bytes data;
        address emitter;
    }

    function prank(address sender) external;
    function startPrank(address sender) external;
    function stopPrank() external;
    function roll(uint256 blockNumber) external;
    function warp(uint256 timestamp) external;
    function chainId(uint256 newChainId) external;
    function expectRevert(bytes calldata revertData) external;
    function expectRevert(bytes4 revertData) external;
    function expectRevert() external;
    function expectEmit(bool checkTopic1, bool checkTopic2, bool checkTopic3, bool checkData, address emitter)
        external;
    function sign(uint256 privateKey, bytes32 digest) external pure returns (uint8 v, bytes32 r, bytes32 s);
    function addr(uint256 privateKey) external pure returns (address);
    function assume(bool condition) external pure;
    function recordLogs() external;
    function mockCall(address callee, bytes calldata data, bytes calldata returnData) external;
    function clearMockedCalls() external;
    function getRecordedLogs() external returns (Log[] memory);
    function label(address account, string calldata newLabel) external;
    function lastCallGas() external view returns (Gas memory gas);
    function snapshotState() external returns (uint256 snapshotId);
    function revertToState(uint256 snapshotId) external returns (bool success);
    function etch(address target, bytes calldata newRuntimeBytecode) external;
}

/// @notice Assertions that revert with a readable message (forge reports a reverting test as failed).
abstract contract TestBase {
    Vm internal constant vm = Vm(address(uint160(uint256(keccak256("hevm cheat code")))));

    function _fail(string memory message) internal pure {
        revert(message);
    }

    function assertTrue(bool condition, string memory message) internal pure {
        if (!condition) _fail(message);
    }

    function assertEq(uint256 a, uint256 b, string memory message) internal pure {
        if (a != b) {
            _fail(string.concat(message, ": ", Strings.toString(a), " != ", Strings.toString(b)));
        }
    }

    function assertEq(address a, address b, string memory message) internal pure {
        if (a != b) {
            _fail(string.concat(message, ": ", Strings.toHexString(a), " != ", Strings.toHexString(b)));
        }
    }

    function assertEq(bytes32 a, bytes32 b, string memory message) internal pure {
        if (a != b) {
            _fail(
                string.concat(
                    message,
                    ": ",
                    Strings.toHexString(uint256(a), 32),
                    " != ",
                    Strings.toHexString(uint256(b), 32)
                )
            );
        }
    }

    function assertLe(uint256 a, uint256 b, string memory message) internal pure {
        if (a > b) _fail(string.concat(message, ": ", Strings.toString(a), " > ", Strings.toString(b)));
    }

    function assertGe(uint256 a, uint256 b, string memory message) internal pure {
        if (a < b) _fail(string.concat(message, ": ", Strings.toString(a), " < ", Strings.toString(b)));
    }

    function bound(uint256 x, uint256 lo, uint256 hi) internal pure returns (uint256) {
        if (lo > hi) _fail("bound: lo > hi");
        return lo + x % (hi - lo + 1);
    }
}
