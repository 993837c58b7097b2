// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title DrawScratch
/// @notice Memory helpers of one DrawModule call: the word a seat is sampled with, and the list of the
/// auditors it seats (emitted with `SeatsDrawn`), grown in place without bounds checks.
library DrawScratch {
    /// @notice keccak256(abi.encode(seed, segment, seat, rejections)), hashed in scratch memory.
    function seatWord(bytes32 seed, uint256 segment, uint256 seat, uint256 rejections)
        internal
        pure
        returns (uint256 h)
    {
        assembly ("memory-safe") {
            let p := mload(0x40)
            mstore(p, seed)
            mstore(add(p, 0x20), segment)
            mstore(add(p, 0x40), seat)
            mstore(add(p, 0x60), rejections)
            h := keccak256(p, 0x80)
        }
    }

    /// @notice An empty address list with room for `capacity` entries (`push` writes past its length).
    function emptyList(uint256 capacity) internal pure returns (address[] memory list) {
        list = new address[](capacity);
        assembly ("memory-safe") {
            mstore(list, 0)
        }
    }

    /// @notice Append `auditor` to a list made by `emptyList` (the caller stays within its capacity).
    function push(address[] memory list, address auditor) internal pure {
        assembly ("memory-safe") {
            let n := mload(list)
            mstore(add(list, mul(add(n, 1), 0x20)), auditor)
            mstore(list, add(n, 1))
        }
    }
}
