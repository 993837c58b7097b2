// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title SegmentWord
/// @notice Eight segments per storage word, 32 bits each (lane i % 8 of word i / 8):
/// fail votes (bits 0-5), pass votes (6-11), outcome (12-13), tier (14-15), weight (16-31).
/// @dev A batch of reveals adds packed tally deltas (one SSTORE per touched word); finalize reads and
/// writes segmentCount / 8 words. Six bits per counter hold the at most 31 seats of a segment.
library SegmentWord {
    uint256 internal constant LANE_BITS = 32;
    uint256 internal constant LANE_MASK = 0xffffffff;
    /// @notice Segment outcomes (match trustnode.models.enums.SegmentOutcome).
    uint256 internal constant OUTCOME_NONE = 0;
    uint256 internal constant OUTCOME_PASS = 1;
    uint256 internal constant OUTCOME_FAIL = 2;
    uint256 internal constant OUTCOME_INCONCLUSIVE = 3;

    uint256 private constant PASS_SHIFT = 6;
    uint256 private constant OUTCOME_SHIFT = 12;
    uint256 private constant TIER_SHIFT = 14;
    uint256 private constant WEIGHT_SHIFT = 16;

    /// @notice The word holding `segment`.
    function wordOf(uint256 segment) internal pure returns (uint256) {
        return segment >> 3;
    }

    /// @notice Words needed for `segmentCount` segments.
    function wordCount(uint256 segmentCount) internal pure returns (uint256) {
        return (segmentCount + 7) >> 3;
    }

    /// @notice Bit offset of `segment`'s lane inside its word.
    function shiftOf(uint256 segment) internal pure returns (uint256) {
        return (segment & 7) * LANE_BITS;
    }

    /// @notice The 32-bit lane of `segment` in `word`.
    function lane(uint256 word, uint256 segment) internal pure returns (uint256) {
        return (word >> shiftOf(segment)) & LANE_MASK;
    }

    /// @notice A fresh lane: tier and weight, no votes, no outcome.
    function encode(uint256 segmentTier, uint256 segmentWeight) internal pure returns (uint256) {
        return (segmentWeight << WEIGHT_SHIFT) | (segmentTier << TIER_SHIFT);
    }

    function failVotes(uint256 laneValue) internal pure returns (uint256) {
        return laneValue & 63;
    }

    function passVotes(uint256 laneValue) internal pure returns (uint256) {
        return (laneValue >> PASS_SHIFT) & 63;
    }

    function outcome(uint256 laneValue) internal pure returns (uint256) {
        return (laneValue >> OUTCOME_SHIFT) & 3;
    }

    function tier(uint256 laneValue) internal pure returns (uint256) {
        return (laneValue >> TIER_SHIFT) & 3;
    }

    function weight(uint256 laneValue) internal pure returns (uint256) {
        return (laneValue >> WEIGHT_SHIFT) & 0xffff;
    }

    /// @notice `word` with `segment`'s outcome set (its outcome bits must be zero).
    function withOutcome(uint256 word, uint256 segment, uint256 value) internal pure returns (uint256) {
        return word | (value << (shiftOf(segment) + OUTCOME_SHIFT));
    }

    /// @notice `word` with `segment`'s outcome replaced by `value` (issue 15: final outcomes after appeals).
    function setOutcome(uint256 word, uint256 segment, uint256 value) internal pure returns (uint256) {
        uint256 shift = shiftOf(segment) + OUTCOME_SHIFT;
        return (word & ~(uint256(3) << shift)) | (value << shift);
    }

    /// @notice The delta that adds one FAIL vote to `segment` (add it to the segment's word).
    function failVote(uint256 segment) internal pure returns (uint256) {
        return uint256(1) << shiftOf(segment);
    }

    /// @notice The delta that adds one PASS vote to `segment`.
    function passVote(uint256 segment) internal pure returns (uint256) {
        return uint256(1) << (shiftOf(segment) + PASS_SHIFT);
    }
}
