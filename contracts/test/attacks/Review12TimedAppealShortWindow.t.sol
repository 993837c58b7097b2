// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {VmReview12} from "./VrfAttackFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review12TimedAppealShortWindow (outside review 12 of c0fad00, the full-window rule)
/// @notice Property (docs/appeals-canaries.md, ABANDONED; outside review 6: "looking at the seed and walking
/// away is never free"): with a source that delivers on time, an appellant who sees the seed, draws one
/// call and walks away forfeits its whole bond, whenever it appealed.
/// Attack: c0fad00 calls a window "full" only if `obtainableAt + drawBlocks <= snapshotReadableUntil(epoch)`.
/// The round's epoch is the appeal's, so the span from a timely value to the snapshot's end is set by when
/// the appellant appeals: `3 * epochBlocks - delay - 2` blocks for an appeal in an epoch's first block,
/// `2 * epochBlocks - delay - 1` in its last (lookahead: obtainableAt = appeal + delay + 1; readable =
/// (epoch + 2) * epochBlocks - 1). Nothing ties `drawBlocks` to `epochBlocks` (`SessionStore._validParams`
/// bounds it by MAX_PHASE_BLOCKS only), so with `drawBlocks > 2 * epochBlocks - delay - 1` an appellant who
/// appeals late in an epoch gets a "short" window from a perfectly timely source: it reads the seed, starts
/// the draw with `maxSeats = 1` (a call completes whole segments) and lets it lapse: UNFILLABLE, R per seat
/// of one segment instead of the bond. With `drawBlocks > 3 * epochBlocks - delay - 2` no window is ever
/// full and the Drawing branch never abandons: the devnet defaults (`DEVNET_EPOCH_BLOCKS = 12`,
/// `draw_blocks = 40`, lookahead delay 2: the longest window is 32 blocks) are in that case.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review12TimedAppeal*' -vv`; fixture
/// epochs of 50 blocks, lookahead delay 2, drawBlocks raised to 100, appealBlocks 200; 2 PASS segments, bond
/// 84 TRUST, 14 seats): appeal in an epoch's first block (200): 146 blocks from obtainableAt to readable, the
/// lapse is Expired and costs 84 TRUST (`test_AppealAtEpochStartForfeits`, passes); appeal in the epoch's
/// last block (249): 97 < 100, the same lapse is Cancelled and costs 42 TRUST, 42 refunded
/// (`test_AppealAtEpochEndWalksAwayForHalf_KNOWN`, skipped: it asserts the property). The draw deadline there
/// is clipped to `readable`: the appellant had 98 blocks to draw 14 seats (one call does it), so nothing
/// but the parameter made the window "short". With n segments the walk-away costs 1/n of the bond.
/// Introduced by c0fad00: with its `_sync` hunk undone (`full` forced true, i.e. 4a2766c's rule) the same
/// lapse is Expired and costs 84 TRUST (measured: the `_KNOWN` test passes then).
/// Fix proposal: make a timely value always leave a full window: reject params with
/// `drawBlocks + minDelay + 1 > 2 * epochBlocks` (in `AuditSessions._pushParams`/`_checkDelay` and on
/// `setRandomness`, with the same check in `trustnode deploy` and the devnet defaults, e.g. epochs of 24
/// blocks or `draw_blocks = 20`); or, equivalently, measure the window against the shortest one a timely
/// value leaves: `full = obtainableAt + min(drawBlocks, 2 * epochBlocks - minDelay - 1) <= readable`.
/// Tried locally (reverted): the alternative rule in `_sync` (`need = min(drawBlocks, 2 * sortition.epochBlocks()
/// - source.minDelay() - 1)`, `full = obtainableAt + need <= readable`) makes this `_KNOWN` test and
/// Review12DevnetDefaultsNeverAbandon / Review12TimedAppealShortWindow pass, while
/// Review11VrfLateDeliveryOneBlockDraw and Review12FullDrawWindowBoundary still pass.
/// Mutation: forcing `full` false in `_sync` (UNFILLABLE always) fails `test_AppealAtEpochStartForfeits`.
contract Review12TimedAppealShortWindow is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    uint256 internal constant LONG_DRAW = 100;
    uint256 internal sid;

    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.drawBlocks = uint32(LONG_DRAW);
    }

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams(); // no canaries
        p.appealBlocks = 200;
    }

    function setUp() public {
        sid = _setUpPassedSession(12, 2, FEE); // both PASS
    }

    /// @dev Appeal both segments in block `at`, draw one call as soon as the seed is obtainable, let the
    /// round lapse; returns the bond, the appellant's cost and the round's status.
    function _appealAndWalkAway(uint256 at)
        internal
        returns (uint256 bond, uint256 cost, IAuditSessions.Status st)
    {
        vm.roll(at);
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segs(0, 1));
        bond = before - token.balanceOf(appellant);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        uint256 first = randomness.obtainableAt(rd.drawRequest);
        uint256 readable = _sortition().snapshotReadableUntil(rd.epoch);
        emit log_named_uint("appeal block", at);
        emit log_named_uint("blocks from obtainableAt to readable", readable - first);
        vm.roll(first);
        appeals.drawPanel(sid, round, 1); // the seed is public: one call, segment 0's 7 seats
        rd = appeals.roundOf(sid, round);
        emit log_named_uint("blocks the appellant had to draw (start..deadline)", rd.drawDeadline + 1 - first);
        assertEq(rd.drawnSeats, 7, "setup: one segment drawn");
        vm.roll(uint256(rd.drawDeadline) + 1);
        appeals.advance(sid);
        st = appeals.roundOf(sid, round).status;
        _closeAndSettle(sid);
        cost = before - token.balanceOf(appellant);
        emit log_named_decimal_uint("bond (TRUST)", bond, 18);
        emit log_named_uint("round status (7 Cancelled, 8 Expired)", uint256(st));
        emit log_named_decimal_uint("appellant's cost of walking away (TRUST)", cost, 18);
    }

    function test_AppealAtEpochStartForfeits() public {
        uint256 at = (block.number / EPOCH_BLOCKS + 1) * EPOCH_BLOCKS; // the next epoch's first block
        (uint256 bond, uint256 cost, IAuditSessions.Status st) = _appealAndWalkAway(at);
        assertTrue(st == IAuditSessions.Status.Expired, "ABANDONED");
        assertEq(cost, bond, "the whole bond");
    }

    function test_AppealAtEpochEndWalksAwayForHalf() public {
        uint256 at = (block.number / EPOCH_BLOCKS + 2) * EPOCH_BLOCKS - 1; // the next epoch's last block
        (uint256 bond, uint256 cost, IAuditSessions.Status st) = _appealAndWalkAway(at);
        assertTrue(
            st == IAuditSessions.Status.Expired, "a timely seed seen and walked away from is ABANDONED"
        );
        assertEq(
            cost, bond, "walking away after a glimpse costs the whole bond, whenever the appeal was made"
        );
    }
}
