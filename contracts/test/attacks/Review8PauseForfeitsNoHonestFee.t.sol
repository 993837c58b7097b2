// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "../utils/StakingFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @dev The cheatcode TestBase's `Vm` does not declare.
interface VmSkipReview8Pause {
    function skip(bool) external;
}

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
/// Fix proposal: pause openings only (drop `whenNotPaused` from `draw`: a draw executes a seed already
/// fixed on a snapshot already fixed, nothing to protect by pausing it); or, if draws must stay pausable,
/// record the pause (`pausedAt`, `lastUnpausedAt`) and end a Created/Drawing session whose draw window
/// overlapped a pause as `RandomnessFailed`/`DrawFailed` (refund: only the owner's pause, not the provider,
/// can bring it about, so it re-rolls nothing for the provider).
contract Review8PauseForfeitsNoHonestFee is StakingFixture {
    uint256 internal constant FEE = 1000e18;

    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);
    event log_named_uint(string key, uint256 val);

    function setUp() public {
        _deploy();
        _addAuditors(1, 6, STAKE);
        _nextEpoch();
    }

    function _report(uint256 sid, uint256 providerBefore, uint256 treasuryBefore) internal {
        emit log_named_uint(
            "termination (2 RandomnessFailed, 3 SnapshotUnavailable, 5 DrawAbandoned)",
            uint256(sessions.sessionOf(sid).termination)
        );
        emit log_named_decimal_uint(
            "provider refunded (TRUST)", token.balanceOf(provider) - providerBefore, 18
        );
        emit log_named_decimal_uint(
            "treasury gained beyond the 20% fee share (TRUST)",
            token.balanceOf(address(treasury)) - treasuryBefore - FEE / 5,
            18
        );
    }

    /// @dev A session whose value became obtainable in time; the owner pauses before anyone could draw.
    function test_PauseForfeitsAnUndrawnSession_KNOWN() public {
        VmSkipReview8Pause(address(vm)).skip(true);
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        uint256 providerBefore = token.balanceOf(provider) - FEE;
        uint256 sid = _open(_uniform(1, 1), FEE);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        vm.prank(owner);
        sessions.pause(); // emergency pause, before the draw value exists
        _rollPastDrawTarget(sid);
        randomness.fulfil(s.drawRequest); // obtainable (and fixed) while the snapshot is readable
        vm.expectRevert(); // EnforcedPause: the provider cannot draw
        sessions.draw(sid, 16);
        vm.roll(_sortition().snapshotReadableUntil(s.epoch) + 1);
        assertEq(uint256(sessions.advance(sid)), uint256(IAuditSessions.Status.Expired), "ended while paused");
        _report(sid, providerBefore, treasuryBefore);
        assertEq(token.balanceOf(provider) - providerBefore, FEE * 8 / 10, "nobody could draw: pool refunded");
    }

    /// @dev A session part drawn when the owner pauses: the draw deadline passes while `draw` refuses.
    function test_PauseForfeitsADrawingSession_KNOWN() public {
        VmSkipReview8Pause(address(vm)).skip(true);
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        uint256 providerBefore = token.balanceOf(provider) - FEE;
        uint256 sid = _open(_uniform(3, 1), FEE); // 9 seats
        _rollPastDrawTarget(sid);
        sessions.draw(sid, 1); // one segment: 3 seats
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        assertEq(s.drawnSeats, 3, "part drawn");
        vm.prank(owner);
        sessions.pause();
        vm.roll(s.drawDeadline + 1);
        assertEq(uint256(sessions.advance(sid)), uint256(IAuditSessions.Status.Expired), "ended while paused");
        _report(sid, providerBefore, treasuryBefore);
        uint256 reserved = 3 * _sessionParams().reward;
        assertEq(
            token.balanceOf(provider) - providerBefore,
            FEE * 8 / 10 - reserved,
            "nobody could draw: rest refunded"
        );
    }
}
