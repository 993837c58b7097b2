// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "../utils/StakingFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review8PauseForfeitsNoHonestFee (outside review 8 of main b23b820, late randomness; medium)
/// @notice Property (docs/protocol-v2.md, "Late randomness": a session ending without a verdict forfeits
/// only when "the value was available in time and nobody drew"; `AuditSessions` NatSpec: the rest goes to
/// the provider "when nobody could have prevented the end"): an honest provider never loses its fee because
/// the owner paused the core. `draw` is `whenNotPaused`, but nothing else stops while paused: the snapshot
/// keeps lapsing and the draw deadline keeps running, and since outside review 6 `advance` (permissionless,
/// not paused) ends every lapsed session. A pause longer than what is left of a session's draw window
/// (`readable - obtainableAt`: from epochBlocks - 1 to 3 * epochBlocks - 3, here 146 blocks) ends it as
/// `SnapshotUnavailable` (Created) or `DrawAbandoned` (Drawing, part drawn): forfeits to the treasury the
/// owner controls, although nobody could draw. Sessions opened in the epochs before an emergency
/// pause lose 80% of their fee; a session caught mid-draw needs only a pause longer than `drawBlocks` (20).
/// @dev Attack (owner, or just an emergency pause longer than one epoch): pause after sessions open, wait,
/// anyone calls `advance`. Measured (`scripts/forge test --match-path
/// 'contracts/test/attacks/Review8Pause*' -vv`, skip removed), fee 1000 TRUST (pool 800):
/// Created, value fixed in time, paused before any draw: SnapshotUnavailable, provider refunded 0,
/// treasury +800 (on top of its 200 fee share). Drawing (3 of 9 seats drawn when paused): DrawAbandoned,
/// 18 reserved for the 3 drawn seats, provider refunded 0, treasury +782.
/// Holds now: `draw` is no longer pausable (a pause stops openings, registrations and stake moves only), so
/// the honest provider draws through the pause and nothing lapses; the two tests below show it.
/// Fix proposal (taken): pause openings only (drop `whenNotPaused` from `draw`: a draw executes a seed already
/// fixed on a snapshot already fixed, nothing to protect by pausing it); or, if draws must stay pausable,
/// record the pause (`pausedAt`, `lastUnpausedAt`) and end a Created/Drawing session whose draw window
/// overlapped a pause as `RandomnessFailed`/`DrawFailed` (refund: only the owner's pause, not the provider,
/// can bring it about, so it re-rolls nothing for the provider).
contract Review8PauseForfeitsNoHonestFee is StakingFixture {
    uint256 internal constant FEE = 1000e18;

    function setUp() public {
        _deploy();
        _addAuditors(1, 6, STAKE);
        _nextEpoch();
    }

    /// @dev A session whose value became obtainable in time; the owner pauses before anyone could draw.
    function test_PauseLeavesAnUndrawnSessionDrawable() public {
        uint256 sid = _open(_uniform(1, 1), FEE);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        vm.prank(owner);
        sessions.pause(); // emergency pause, before the draw value exists
        vm.startPrank(provider);
        token.approve(address(sessions), FEE);
        vm.expectRevert(); // EnforcedPause: a pause stops openings
        sessions.openSession(keccak256("second"), _uniform(2, 1), FEE);
        vm.stopPrank();
        _rollPastDrawTarget(sid);
        randomness.fulfil(s.drawRequest);
        sessions.draw(sid, 16); // the paid session is drawn as if nothing happened
        s = sessions.sessionOf(sid);
        assertEq(s.drawnSeats, s.totalSeats, "drawn in full while paused");
        assertEq(uint256(s.status), uint256(IAuditSessions.Status.Drawing), "goes on to its keys");
    }

    /// @dev A session part drawn when the owner pauses: the draw deadline passes while `draw` refuses.
    function test_PauseLeavesAHalfDrawnSessionDrawable() public {
        uint256 sid = _open(_uniform(3, 1), FEE); // 9 seats
        _rollPastDrawTarget(sid);
        sessions.draw(sid, 1); // one segment: 3 seats
        assertEq(sessions.sessionOf(sid).drawnSeats, 3, "part drawn");
        vm.prank(owner);
        sessions.pause();
        sessions.draw(sid, 64);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        assertEq(s.drawnSeats, s.totalSeats, "the rest drawn while paused, before the draw deadline");
        assertEq(uint256(s.status), uint256(IAuditSessions.Status.Drawing), "goes on to its keys");
    }
}
