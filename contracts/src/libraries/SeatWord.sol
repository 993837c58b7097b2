// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";

/// @title SeatWord
/// @notice One word per (panel, auditor): the auditor's seats and what was fixed when it was drawn.
/// Bits 0-127: seat bitmap of segments 0-127 (window 0); 128-191: reputation at the draw (WAD);
/// 192-199: seat count; 200-215: the auditor's index in the panel (draw order); bit 216: the auditor
/// also holds seats in segments >= 128, whose bitmaps live in separate 128-bit windows; 217-248: the
/// auditor's Staking ledger entry for the panel (IStaking.lockSeat).
/// @dev An auditor holds at most one seat per segment (sampling without replacement), so the set of its
/// segments is a bitmap, and its seats in seat order are the set bits in ascending segment order:
/// verdict bit j belongs to the j-th lowest segment. A drawn auditor's word is never zero (count >= 1).
library SeatWord {
    uint256 internal constant WINDOW_BITS = 128;
    uint256 internal constant WINDOW_MASK = type(uint128).max;
    uint256 private constant REPUTATION_SHIFT = 128;
    uint256 private constant COUNT_SHIFT = 192;
    uint256 private constant INDEX_SHIFT = 200;
    uint256 private constant HIGH_FLAG = uint256(1) << 216;
    uint256 private constant ENTRY_SHIFT = 217;

    /// @notice A new auditor's word: no seats yet.
    function create(uint256 auditorIndex, uint256 drawReputation, uint256 ledgerEntry)
        internal
        pure
        returns (uint256)
    {
        return (ledgerEntry << ENTRY_SHIFT) | (auditorIndex << INDEX_SHIFT)
            | (drawReputation << REPUTATION_SHIFT);
    }

    /// @notice The auditor's Staking ledger entry for the panel.
    function entry(uint256 word) internal pure returns (uint256) {
        return (word >> ENTRY_SHIFT) & type(uint32).max;
    }

    /// @notice `word` with one more seat, on `segment`; segments >= 128 only set the high flag (the
    /// caller records the bit in the segment's window).
    function addSeat(uint256 word, uint256 segment) internal pure returns (uint256) {
        word += uint256(1) << COUNT_SHIFT;
        if (segment < WINDOW_BITS) return word | (uint256(1) << segment);
        return word | HIGH_FLAG;
    }

    function count(uint256 word) internal pure returns (uint256) {
        return (word >> COUNT_SHIFT) & 0xff;
    }

    function index(uint256 word) internal pure returns (uint256) {
        return (word >> INDEX_SHIFT) & 0xffff;
    }

    function reputation(uint256 word) internal pure returns (uint256) {
        return (word >> REPUTATION_SHIFT) & type(uint64).max;
    }

    /// @notice Seat bitmap of segments 0-127.
    function window0(uint256 word) internal pure returns (uint256) {
        return word & WINDOW_MASK;
    }

    /// @notice Whether the auditor has seats in segments >= 128.
    function hasHighSeats(uint256 word) internal pure returns (bool) {
        return word & HIGH_FLAG != 0;
    }

    /// @notice The window of `segment` (0 for 0-127, 1 for 128-255, ...).
    function windowOf(uint256 segment) internal pure returns (uint256) {
        return segment / WINDOW_BITS;
    }

    /// @notice The bit of `segment` inside its window.
    function bitOf(uint256 segment) internal pure returns (uint256) {
        return uint256(1) << (segment % WINDOW_BITS);
    }

    /// @notice Position of the lowest set bit of a non-zero `bits`.
    function lowest(uint256 bits) internal pure returns (uint256) {
        unchecked {
            return Math.log2(bits & (~bits + 1));
        }
    }
}
