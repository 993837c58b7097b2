// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title PanelKey
/// @notice One number for a (session, round) pair: the storage and ledger key of a panel.
/// @dev Round 0 is a session's first panel; issue 15's appeal panels will use rounds 1, 2, ...
/// The session id takes the low 64 bits and the round the bits above, so the key of round 0 is the
/// session id itself, and every key fits the 192-bit key of OpenZeppelin's NoncesKeyed.
library PanelKey {
    /// @notice Highest round a key can carry.
    uint256 internal constant MAX_ROUND = type(uint8).max;

    /// @notice The session id or the round does not fit its field.
    error PanelOutOfRange(uint256 sessionId, uint256 round);

    /// @notice The key of `round` of `sessionId`.
    function keyOf(uint256 sessionId, uint256 round) internal pure returns (uint256) {
        if (sessionId > type(uint64).max || round > MAX_ROUND) revert PanelOutOfRange(sessionId, round);
        return (round << 64) | sessionId;
    }

    /// @notice The session a key belongs to.
    function sessionOf(uint256 key) internal pure returns (uint256) {
        return key & type(uint64).max;
    }

    /// @notice The round a key names.
    function roundOf(uint256 key) internal pure returns (uint256) {
        return key >> 64;
    }
}
