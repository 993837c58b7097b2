// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IRandomness} from "../interfaces/IRandomness.sol";

/// @title DrawWindow
/// @notice One rule for every panel (round 0 and appeal rounds) whose draw did not finish while its
/// snapshot was readable: was the panel's randomness in time, so that whoever should have drawn is to
/// blame (forfeit), or did it leave too short a window (a late oracle: refund, nobody's fault)?
/// @dev "In time" means obtainable at least `need` blocks before the snapshot's last readable block, where
/// `need` is the draw window (`drawBlocks`) capped at the window every timely value is guaranteed: a
/// request made in the last block of the snapshot's epoch and served at once is obtainable
/// `delay + 2` blocks later at the latest (VRF: delivered in the block after its confirmations), and an
/// oracle may take `LATENCY_BLOCKS` more (at most half of what is left), so it leaves
/// `g - min(LATENCY_BLOCKS, g / 2)` with `g = readable - epochEnd - delay - 2`. Without the cap, a `drawBlocks` longer than that
/// made the rule depend on when in the epoch the panel was requested, and on the shipped defaults no
/// window was ever full (outside review 12: walking away for R per seat of one segment instead of the
/// bond). The same predicate ends a draw never started and one left short (outside review 12: an unused
/// window one block short forfeited everything where a one-call start cost R per seat).
library DrawWindow {
    /// @notice Blocks of oracle latency a timely value may take beyond the earliest block it can be
    /// delivered in (outside review 14: with no allowance, one block of ordinary VRF latency after an
    /// opening or appeal in an epoch's last block turned the value "late", a refund after seeing the seed,
    /// while most of the draw window was still open).
    uint256 internal constant LATENCY_BLOCKS = 4;

    /// @param src The panel's randomness source.
    /// @param id Its request.
    /// @param readable The snapshot's last readable block.
    /// @param epochEnd The last block of the snapshot's epoch (requests are made in it or before).
    /// @param drawBlocks The draw window the parameters give.
    /// @param minBlocks The request's own minimum wait (`requestAfter`), 0 for `request()`.
    function inTime(
        IRandomness src,
        uint256 id,
        uint256 readable,
        uint256 epochEnd,
        uint256 drawBlocks,
        uint256 minBlocks
    ) internal view returns (bool) {
        uint256 at = src.obtainableAt(id);
        if (at > readable) return false; // never obtainable (type(uint256).max) or only after the snapshot
        // The delay the request was made with, not today's (outside review 14: VRF's confirmations change
        // with `setConfig`, which moved the ending of a panel whose value was already public).
        uint256 delay = src.delayOf(id);
        if (minBlocks > delay) delay = minBlocks;
        uint256 guaranteed = readable > epochEnd + delay + 2 ? readable - epochEnd - delay - 2 : 0;
        // The latency allowance takes at most half of that window, so short epochs keep one (outside
        // review 15: 2 * epochBlocks - delay <= 6 made `need` 0, and a one-block window forfeited again).
        uint256 latency = guaranteed / 2 < LATENCY_BLOCKS ? guaranteed / 2 : LATENCY_BLOCKS;
        guaranteed -= latency;
        uint256 need = drawBlocks < guaranteed ? drawBlocks : guaranteed;
        return at + need <= readable;
    }
}
