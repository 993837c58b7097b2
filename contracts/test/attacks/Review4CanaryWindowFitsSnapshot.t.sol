// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfAppealsAttackFixture} from "./VrfAttackFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";

/// @title Review4CanaryWindowFitsSnapshot (outside review 4 of canarywin 1588bdc, canaryCommitBlocks)
/// @notice Property: a canary commit window never strands a session's draw. The draw of a session owing
/// canaries can start only after its target block `open + max(delay, canaryCommitBlocks)`, and only while
/// the snapshot of its opening epoch is readable (`snapshotReadableUntil(epoch)`, which is only
/// `(RING - 1) * epochBlocks` = 2 epochs after a session opened in the last block of an epoch). setParams
/// accepts any `canaryCommitBlocks` in 0..199 whatever the epoch length, so:
/// - target == readable: no block exists where anyone can start the draw, yet the first call after the
///   target ends the session `SnapshotUnavailable` (the provider's "abandonment": the pool is forfeited);
/// - target > readable: the session is refunded (`RandomnessFailed`) only if someone pokes it in a block
///   of (readable, target]; a keeper that draws as soon as the randomness is Ready (target + 1) gets the
///   forfeit instead;
/// - `canaryCommitBlocks >= 3 * epochBlocks - 1` (>= 149 with 50-block epochs, >= 35 on the 12-block
///   devnet): no session owing canaries can ever be drawn.
/// Fix: (1) `AuditSessions._pushParams` refuses (InvalidParams) `canaryCommitBlocks > sortition.epochBlocks()`:
/// the shortest readability after an opening is `(RING - 1) * epochBlocks` (100 here, 24 on the 12-block
/// devnet), so at least one epoch is left to draw for any opening block (testFuzz_WindowWithinAnEpochAlways
/// Drawable); the Python side (`SessionParams` / devnet and deploy options) refuses the same. (2) Accounting
/// (fixed): a session whose randomness became obtainable only after its snapshot's last readable block ends
/// RandomnessFailed (refund), never SnapshotUnavailable (test_LateVrfDeliveryAfterSnapshotIsRefunded; the
/// rule fuzzed in LateRandomnessRefundedOnlyWhenLate and LateRandomnessInvariants).
contract Review4CanaryWindowFitsSnapshot is VrfAppealsAttackFixture {
    event log_named_uint(string key, uint256 val);

    uint256 internal constant SEGMENTS = 10; // 10% canary rate: one canary owed

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    function _setCommitBlocks(uint256 commitBlocks) internal {
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.canaryCommitBlocks = uint32(commitBlocks);
        vm.prank(owner);
        sessions.setParams(p);
    }

    function _readable(uint256 sid) internal view returns (uint256) {
        return _sortition().snapshotReadableUntil(sessions.sessionOf(sid).epoch);
    }

    /// @dev The last block of the current epoch.
    function _lastBlockOfEpoch() internal view returns (uint256) {
        return (block.number / EPOCH_BLOCKS + 1) * EPOCH_BLOCKS - 1;
    }

    /// @dev Shortest time a session has between its opening and the end of its snapshot's readability.
    function _minSlack() internal view returns (uint256) {
        return _sortition().snapshotReadableUntil(1) + 1 - EPOCH_BLOCKS;
    }

    /// @dev Control: the devnet-like window (8 blocks) leaves a session opened in the last block of an epoch
    /// `minSlack - 8` blocks to start its draw, and it is drawn.
    function test_ShortWindowLeavesTheDrawTime() public {
        vm.roll(_lastBlockOfEpoch());
        uint256 sid = _open(_uniform(SEGMENTS, 1), FEE);
        assertEq(_readable(sid) - block.number, _minSlack(), "min slack (2 epochs)");
        assertEq(_drawTarget(sid), block.number + CANARY_COMMIT_BLOCKS, "target");
        _drawAll(sid);
        assertTrue(sessions.statusOf(sid) == IAuditSessions.Status.Drawing, "drawn");
        assertEq(sessions.sessionOf(sid).drawnSeats, sessions.sessionOf(sid).totalSeats, "every seat");
    }

    /// @dev The bound the fix proposes (canaryCommitBlocks <= epochBlocks) is enough: for any such window and
    /// any opening block of an epoch, a keeper drawing at target + 1 starts the draw with at least
    /// `minSlack - window` >= epochBlocks blocks before the snapshot expires, and draws every seat.
    function testFuzz_WindowWithinAnEpochAlwaysDrawable(uint256 commitBlocks, uint256 offset) public {
        commitBlocks = bound(commitBlocks, 0, EPOCH_BLOCKS);
        offset = bound(offset, 0, EPOCH_BLOCKS - 1);
        _setCommitBlocks(commitBlocks);
        vm.roll((block.number / EPOCH_BLOCKS + 1) * EPOCH_BLOCKS + offset);
        uint256 sid = _open(_uniform(SEGMENTS, 1), FEE);
        uint256 target = _drawTarget(sid);
        assertGe(_readable(sid) - target, EPOCH_BLOCKS, "a full epoch left to draw");
        vm.roll(target + 1);
        sessions.draw(sid, 64);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        assertTrue(s.status == IAuditSessions.Status.Drawing, "draw started");
        assertEq(s.drawnSeats, s.totalSeats, "every seat drawn");
    }

    /// @dev Fixed (part 1): setParams refuses every window longer than an epoch. Measured before the fix
    /// (canaryCommitBlocks 100 = minSlack, FEE 1000 TRUST): a session opened in an epoch's last block had
    /// its target on its snapshot's last readable block, nobody could start its draw, and it ended
    /// SnapshotUnavailable: 0 refunded, 800 TRUST forfeited. Sweeping one session per opening block
    /// (drawn / target == readable / target > readable): window 99: 50/0/0, 100: 49/1/0, 120: 29/1/20,
    /// 149: 0/1/49, 150: 0/0/50, 199: 0/0/50; 172 of 300 sessions stranded.
    function testFuzz_WindowLongerThanAnEpochIsRefused(uint256 commitBlocks) public {
        commitBlocks = bound(commitBlocks, EPOCH_BLOCKS + 1, 199);
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.canaryCommitBlocks = uint32(commitBlocks);
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSignature("InvalidParams()"));
        sessions.setParams(p);
    }

    /// @dev Every window the owner can still set draws every session, whatever its opening block.
    function test_NoAllowedWindowStrandsADraw() public {
        uint256[3] memory windows = [uint256(0), EPOCH_BLOCKS / 2, EPOCH_BLOCKS];
        for (uint256 w = 0; w < windows.length; ++w) {
            (uint256 drawn,,) = _sweep(windows[w]);
            assertEq(drawn, EPOCH_BLOCKS, "every session drawn at target + 1");
        }
    }

    /// @dev Open one session at each block of an epoch with window `commitBlocks`; a keeper draws at the
    /// target + 1.
    function _sweep(uint256 commitBlocks)
        internal
        returns (uint256 drawn, uint256 forfeited, uint256 refundable)
    {
        uint256 snap = vm.snapshotState();
        _setCommitBlocks(commitBlocks);
        uint256 start = (block.number / EPOCH_BLOCKS + 1) * EPOCH_BLOCKS;
        for (uint256 off = 0; off < EPOCH_BLOCKS; ++off) {
            uint256 inner = vm.snapshotState();
            vm.roll(start + off);
            uint256 sid = _open(_uniform(SEGMENTS, 1), FEE);
            uint256 target = _drawTarget(sid);
            uint256 readable = _readable(sid);
            if (target > readable) ++refundable;
            vm.roll(target + 1);
            sessions.draw(sid, 16);
            IAuditSessions.Session memory s = sessions.sessionOf(sid);
            if (s.status == IAuditSessions.Status.Drawing) {
                ++drawn;
            } else if (target <= readable && s.termination == IAuditSessions.Termination.SnapshotUnavailable)
            {
                ++forfeited;
            }
            vm.revertToState(inner);
        }
        vm.revertToState(snap);
    }

    /// @dev Same accounting flaw on VRF (a window of W asks W + 1 confirmations, so deliveries come later
    /// than before): an oracle that delivers within its timeout but after the snapshot's last readable block
    /// makes the next draw call end the session SnapshotUnavailable (forfeit), although the value did not
    /// exist while the draw could start. Poked before the delivery in the same block, the same session is
    /// refunded (RandomnessFailed). Measured on edc6491 (before the fix): delivery at readable + 1, provider
    /// refunded 0, treasury +800 TRUST, termination 3 (SnapshotUnavailable). Fixed (covers both sources):
    /// `IRandomness.obtainableAt` reports the first block its value was obtainable (lookahead: target + 1;
    /// VRF: the delivery block, stored with the value), and `AuditSessions._endUndrawn` (from `_startDraw` and
    /// `_sync`) ends a session past `readable` as RandomnessFailed (refund) when that block is after
    /// `readable`, SnapshotUnavailable / RandomnessMissed only when the value was obtainable while the
    /// snapshot was readable. After the fix: 800 TRUST refunded, 0 forfeited, termination 2.
    function test_LateVrfDeliveryAfterSnapshotIsRefunded() public {
        _useVrf();
        vm.roll(_lastBlockOfEpoch());
        uint256 sid = _open(_uniform(SEGMENTS, 1), FEE);
        uint256 local = sessions.sessionOf(sid).drawRequest;
        uint256 readable = _readable(sid);
        assertTrue(vrf.deadlineOf(local) > readable + 1, "delivery at readable + 1 is within the timeout");
        vm.roll(readable + 1);
        coord.fulfill(vrf.coordinatorRequestOf(local), 7);
        assertTrue(vrf.status(local) == IRandomness.RequestStatus.Fulfilled, "delivered, on time for VRF");
        uint256 providerBefore = token.balanceOf(provider);
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        sessions.draw(sid, 16);
        emit log_named_uint("refunded to provider", token.balanceOf(provider) - providerBefore);
        emit log_named_uint("forfeited to treasury", token.balanceOf(address(treasury)) - treasuryBefore);
        emit log_named_uint("termination", uint256(sessions.sessionOf(sid).termination));
        assertTrue(
            sessions.sessionOf(sid).termination == IAuditSessions.Termination.RandomnessFailed,
            "the value arrived after the snapshot: nobody could have drawn, refund"
        );
    }
}
