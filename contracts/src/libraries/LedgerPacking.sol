// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title LedgerPacking
/// @notice The one-slot words of a pool's ledger ring (Staking), named instead of raw offsets.
/// @dev Entry word, bits [0,8) kind, [8,16) resolved flag, [16,32) commission (bps), [32,96) A,
/// [96,192) locked stake, [192,256) B. An open SESSION entry keeps A = reputation at the draw and
/// B = a 64-bit tag of its key; once its result is stored early (before the entry reaches the head)
/// A = repMul and B = repAdd, the only fields still needed to apply it. A FLOW entry's word holds only
/// its kind: its amounts live in a persistent record because holders convert them lazily.
/// Result word (stored next to an early SESSION result): [0,96) net reward, [96,192) slash.
library LedgerPacking {
    uint256 internal constant KIND_SESSION = 1;
    uint256 internal constant KIND_FLOW = 2;
    uint256 private constant M16 = type(uint16).max;
    uint256 private constant M64 = type(uint64).max;
    uint256 private constant M96 = type(uint96).max;

    /// @notice The entry's kind (0 for an unused ring slot).
    function kind(uint256 word) internal pure returns (uint256) {
        return word & 0xff;
    }

    /// @notice Whether a SESSION entry's result has been stored.
    function isResolved(uint256 word) internal pure returns (bool) {
        return (word >> 8) & 0xff != 0;
    }

    /// @notice A 64-bit tag of a ledger key, folding all of its bits (session id and round).
    function keyTag(uint256 key) internal pure returns (uint256) {
        return (key ^ (key >> 64) ^ (key >> 128) ^ (key >> 192)) & M64;
    }

    /// @notice An open SESSION entry.
    function packOpen(uint256 commissionBps, uint256 reputation, uint256 locked, uint256 tag)
        internal
        pure
        returns (uint256)
    {
        return KIND_SESSION | (commissionBps << 16) | (reputation << 32) | (locked << 96) | (tag << 192);
    }

    /// @notice The fields of an open SESSION entry.
    function openFields(uint256 word)
        internal
        pure
        returns (uint256 commissionBps, uint256 reputation, uint256 locked, uint256 tag)
    {
        commissionBps = (word >> 16) & M16;
        reputation = (word >> 32) & M64;
        locked = (word >> 96) & M96;
        tag = word >> 192;
    }

    /// @notice The same entry with its locked stake replaced.
    function withLocked(uint256 word, uint256 locked) internal pure returns (uint256) {
        return (word & ~(M96 << 96)) | (locked << 96);
    }

    /// @notice A SESSION entry whose result arrived early.
    function packResolved(uint256 commissionBps, uint256 locked, uint256 repMul, uint256 repAdd)
        internal
        pure
        returns (uint256)
    {
        return KIND_SESSION | (1 << 8) | (commissionBps << 16) | (repMul << 32) | (locked << 96)
            | (repAdd << 192);
    }

    /// @notice The fields of a resolved SESSION entry.
    function resolvedFields(uint256 word)
        internal
        pure
        returns (uint256 locked, uint256 repMul, uint256 repAdd)
    {
        repMul = (word >> 32) & M64;
        locked = (word >> 96) & M96;
        repAdd = word >> 192;
    }

    /// @notice An early result's token effects.
    function packResult(uint256 netReward, uint256 slash) internal pure returns (uint256) {
        return netReward | (slash << 96);
    }

    /// @notice The token effects of an early result.
    function resultFields(uint256 word) internal pure returns (uint256 netReward, uint256 slash) {
        netReward = word & M96;
        slash = (word >> 96) & M96;
    }
}
