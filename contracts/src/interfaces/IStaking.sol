// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {ISortition} from "./ISortition.sol";

/// @title IStaking (protocol v2)
/// @notice The seam between the session modules (draw, settlement), the registry and the staking pools:
/// seat locks that open per-auditor ledger entries, and session results applied to the pools strictly
/// in ledger order (docs/protocol-v2.md, sections 3-6). The epoch snapshots the draw samples from are
/// read from `sortition()` (ISortition, section 1).
interface IStaking {
    /// @notice One auditor's result in one session (or appeal round), sent by the settlement module.
    /// @dev `entry` is the ledger entry `lockSeat` returned for (auditor, key). Staking pulls the sum of
    /// `reward` from the caller (`transferFrom`, so the caller approves Staking). The commission recorded
    /// in the entry at the draw is paid to the auditor at once; the rest, the slash (capped by the pool's
    /// assets when applied), the unlock of the entry's locked stake and the reputation change
    /// r -> min(1e18, r * repMul / 1e18 + repAdd) are applied when the entry reaches the head of the
    /// auditor's ledger, so results compose in draw order whatever order they arrive in.
    struct SessionResult {
        address auditor;
        uint32 entry;
        uint96 reward;
        uint96 slash;
        uint64 repMul;
        uint64 repAdd;
    }

    /// @notice What a draw call needs to decide `lockSeat`'s outcome for any number of seats itself.
    /// @dev Within one transaction that changes nothing else of the auditor's pool, `lockSeat(auditor,
    /// tier, key, amount, entry)` succeeds exactly when `eligible`, `tier` is the quoted tier, the
    /// amounts locked so far plus `amount` are at most `free` - less `queuedAfter(auditor, entry)` when
    /// `entry` is neither 0 nor `lastEntry` - and (for `entry` 0) `nextEntry` != 0; a first lock opens entry
    /// `nextEntry` recording `reputation`. Queued deposits become shares only when their FLOW entry
    /// applies, after every entry pushed before it: they back a new entry and the entries after their FLOW,
    /// never more seats of an older one, whose slash could not reach them (LockAggregationReview.t.sol,
    /// SlashableStakeBacksEverySeat).
    struct SeatQuote {
        uint8 tier;
        bool eligible;
        uint256 free;
        uint64 reputation;
        uint256 nextEntry;
        uint256 lastEntry;
        /// What `free` is measured against (free = limit - every lock of the pool; 0 unless `eligible`):
        /// the draw tells a shortfall the session's own appeal rounds explain from any other.
        uint256 limit;
    }

    // ----------------------------------------------------------------- registry

    /// @notice The registry reports a (re-)registration with `tier`.
    function onRegister(address auditor, uint8 tier) external;

    /// @notice The registry reports a deregistration (weight 0 from now; pending entries still apply).
    function onDeregister(address auditor) external;

    // -------------------------------------------------------- snapshots (sec. 1)

    /// @notice The sortition trees this contract writes and the draw reads snapshots from.
    function sortition() external view returns (ISortition);

    // ------------------------------------------------------ draw time (sec. 6)

    /// @notice Lock `amount` for one more seat of `auditor` under ledger key `key` (session id, with the
    /// round in the high bits for appeal panels); only the draw module.
    /// @dev With `entry` = 0 (the auditor's first seat under `key`) a SESSION ledger entry is pushed,
    /// recording the commission and the reputation in force; pass its index back for later seats.
    /// ok = false and nothing changes if the auditor is not registered in `tier`, is below the tier's
    /// minimum stake, cannot back `amount` more now, or has a full ledger. Deposits still queued do not
    /// back more seats under an entry that a later ledger entry follows (see SeatQuote).
    /// @return ok Whether the seat is locked.
    /// @return reputation The reputation recorded in the entry (fixed at the first seat).
    /// @return entryIndex The entry's index in the auditor's ledger (pass it to later seats and resolve).
    function lockSeat(address auditor, uint8 tier, uint256 key, uint256 amount, uint256 entry)
        external
        returns (bool ok, uint64 reputation, uint256 entryIndex);

    /// @notice `lockSeat` for `amount` = the stake of every seat one draw call gave `auditor`, in one
    /// write; reverts (`LockRefused`) where `lockSeat` would refuse. Only the draw module.
    function lockSeats(address auditor, uint8 tier, uint256 key, uint256 amount, uint256 entry)
        external
        returns (uint64 reputation, uint256 entryIndex);

    /// @notice The state `lockSeat` decides on, read once per auditor by a draw call (see SeatQuote).
    function seatQuote(address auditor) external view returns (SeatQuote memory);

    /// @notice Deposits queued in `auditor`'s FLOW entries after ledger entry `entry`: they cannot back
    /// more seats of `entry` (see SeatQuote). Exact for every entry, however many entries follow it, in
    /// O(1): for an applied entry every queued deposit of the pool, for the last entry (or past the tail) 0.
    function queuedAfter(address auditor, uint256 entry) external view returns (uint256);

    // ---------------------------------------------------- settlement (sec. 3, 4)

    /// @notice Deliver the results of `key` for some of its auditors; only the settlement module.
    /// @dev Reverts if an entry is not a pending, unresolved SESSION entry of `key` for that auditor.
    function resolve(uint256 key, SessionResult[] calldata results) external;

    /// @notice Apply up to `maxEntries` ready entries from the head of `auditor`'s ledger (anyone).
    function drain(address auditor, uint256 maxEntries) external returns (uint256 applied);
}
