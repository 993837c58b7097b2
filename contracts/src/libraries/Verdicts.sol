// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title Verdicts
/// @notice An auditor's opened vote over its seats, in seat order: bit j (0-63) = seat j votes FAIL,
/// bit 128 + j = seat j abstains. A seat with neither bit votes PASS. Nothing becomes PASS by default
/// for an auditor that cannot decide: it abstains, counts in no tally, earns nothing and is never
/// slashed, and its reputation moves as for an incorrect vote.
library Verdicts {
    uint256 internal constant FAIL_MASK = type(uint64).max;
    uint256 internal constant ABSTAIN_SHIFT = 128;
    uint256 private constant ABSTAIN_MASK = uint256(type(uint64).max) << ABSTAIN_SHIFT;

    /// @notice Whether `verdicts` is well formed for `seatCount` seats: no bit outside the two bitmaps,
    /// none beyond the last seat, and no seat both FAIL and abstaining.
    function isValid(uint256 verdicts, uint256 seatCount) internal pure returns (bool) {
        if (verdicts & ~(FAIL_MASK | ABSTAIN_MASK) != 0) return false;
        uint256 failBits = verdicts & FAIL_MASK;
        uint256 abstainBits = verdicts >> ABSTAIN_SHIFT;
        return failBits >> seatCount == 0 && abstainBits >> seatCount == 0 && failBits & abstainBits == 0;
    }

    /// @notice Whether seat `j` votes FAIL.
    function fails(uint256 verdicts, uint256 j) internal pure returns (bool) {
        return (verdicts >> j) & 1 == 1;
    }

    /// @notice Whether seat `j` abstains.
    function abstains(uint256 verdicts, uint256 j) internal pure returns (bool) {
        return (verdicts >> (ABSTAIN_SHIFT + j)) & 1 == 1;
    }

    /// @notice The verdicts word from the two bitmaps.
    function pack(uint256 failBits, uint256 abstainBits) internal pure returns (uint256) {
        return (failBits & FAIL_MASK) | ((abstainBits & FAIL_MASK) << ABSTAIN_SHIFT);
    }
}
