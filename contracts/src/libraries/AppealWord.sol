// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title AppealWord
/// @notice One word per appealed segment (issue 15): depth (bits 0-7), last round (8-15), current outcome
/// (16-17), a panel running (18), closed (19: the last panel did not decide), money resolved (20), last
/// block of its appeal window (24-63), its appeal round numbers (64-95, 8 bits per depth, depth 1 lowest)
/// and the outcome each appeal contested (96-103, 2 bits per depth).
/// @dev A segment never appealed has no word (0): depth 0, its outcome is the core's round-0 outcome and
/// its window the session's first appeal window.
library AppealWord {
    uint256 private constant LAST_ROUND_SHIFT = 8;
    uint256 private constant OUTCOME_SHIFT = 16;
    uint256 private constant PENDING_BIT = uint256(1) << 18;
    uint256 private constant CLOSED_BIT = uint256(1) << 19;
    uint256 private constant RESOLVED_BIT = uint256(1) << 20;
    uint256 private constant WINDOW_SHIFT = 24;
    uint256 private constant ROUNDS_SHIFT = 64;
    uint256 private constant APPEALED_SHIFT = 96;
    uint256 private constant WINDOW_MASK = type(uint40).max;

    function depth(uint256 word) internal pure returns (uint256) {
        return word & 0xff;
    }

    function lastRound(uint256 word) internal pure returns (uint256) {
        return (word >> LAST_ROUND_SHIFT) & 0xff;
    }

    function outcome(uint256 word) internal pure returns (uint256) {
        return (word >> OUTCOME_SHIFT) & 3;
    }

    function pending(uint256 word) internal pure returns (bool) {
        return word & PENDING_BIT != 0;
    }

    function closed(uint256 word) internal pure returns (bool) {
        return word & CLOSED_BIT != 0;
    }

    function resolved(uint256 word) internal pure returns (bool) {
        return word & RESOLVED_BIT != 0;
    }

    function windowEnd(uint256 word) internal pure returns (uint256) {
        return (word >> WINDOW_SHIFT) & WINDOW_MASK;
    }

    /// @notice The round number of the segment's appeal panel of depth `d` (1-based).
    function roundAt(uint256 word, uint256 d) internal pure returns (uint256) {
        return (word >> (ROUNDS_SHIFT + 8 * (d - 1))) & 0xff;
    }

    /// @notice The rounds field alone (8 bits per depth).
    function rounds(uint256 word) internal pure returns (uint256) {
        return (word >> ROUNDS_SHIFT) & type(uint32).max;
    }

    /// @notice The outcome the appeal of depth `d` contested.
    function appealedAt(uint256 word, uint256 d) internal pure returns (uint256) {
        return (word >> (APPEALED_SHIFT + 2 * (d - 1))) & 3;
    }

    /// @notice `word` with a new appeal panel (round `round`) contesting the current outcome `current`.
    function open(uint256 word, uint256 round, uint256 current) internal pure returns (uint256) {
        uint256 d = depth(word) + 1;
        word = (word & ~(uint256(0xffff) | (uint256(3) << OUTCOME_SHIFT) | (WINDOW_MASK << WINDOW_SHIFT))) | d
            | (round << LAST_ROUND_SHIFT) | (current << OUTCOME_SHIFT) | PENDING_BIT;
        return word | (round << (ROUNDS_SHIFT + 8 * (d - 1))) | (current << (APPEALED_SHIFT + 2 * (d - 1)));
    }

    /// @notice `word` after its running panel ended with `newOutcome`; `isClosed` if it did not decide;
    /// `window` the last block of its next appeal window (0: none).
    function end(uint256 word, uint256 newOutcome, bool isClosed, uint256 window)
        internal
        pure
        returns (uint256)
    {
        word &= ~(PENDING_BIT | (uint256(3) << OUTCOME_SHIFT) | (WINDOW_MASK << WINDOW_SHIFT));
        word |= (newOutcome << OUTCOME_SHIFT) | (window << WINDOW_SHIFT);
        return isClosed ? word | CLOSED_BIT : word;
    }

    function markResolved(uint256 word) internal pure returns (uint256) {
        return word | RESOLVED_BIT;
    }
}
