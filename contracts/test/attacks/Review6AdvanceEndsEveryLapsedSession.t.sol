// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "../utils/StakingFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review6AdvanceEndsEveryLapsedSession (outside review 6 of main c7e9e27, late randomness; low)
/// @notice Property (sessions always terminate through the permissionless `advance`, which the auditors'
/// `seat_release` daemons call): a session past its snapshot's last readable block whose draw never started
/// ends at `advance`. `AuditSessions._sync` ends a Created session only when its request is Expired/Failed or
/// still Pending past `readable`; a value FIXED in time (VRF delivered, or a lookahead `fulfil`, which anyone
/// may call) but never drawn on is neither, so `advance` leaves the session Created forever. Only `draw`
/// ends it (through `_startDraw` -> `_endUndrawn`), and `draw` is `whenNotPaused`: while the core is paused
/// nothing can end it. The appeal module's `_sync` has the unconditional `block.number > readable` clause
/// ("so `advance` alone ends every lapsed round"); the core lost the equivalent when `_endUndrawn` came in.
/// @dev Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review6Advance*' -vv`, skip
/// removed): after `fulfil` at target + 1 and a roll past `readable`, `advance` returns Created (1).
/// No stake is locked (no seat was drawn), so the cost is a stuck pool and a session the node lists as
/// open. Fixed: `_sync` ends a Created session past `_readableUntil(s.epoch)` whatever its request says,
/// through `_endUndrawn(sessionId, s, r == Expired ? RandomnessMissed : SnapshotUnavailable)` (the
/// refund/forfeit decision stays `obtainableAt`'s): `advance` returns Expired (8), paused or not.
contract Review6AdvanceEndsEveryLapsedSession is StakingFixture {
    event log_named_uint(string key, uint256 val);

    function setUp() public {
        _deploy();
        _addAuditors(1, 6, STAKE);
        _nextEpoch();
    }

    function test_AdvanceEndsAFixedButUndrawnSession() public {
        uint256 sid = _open(_uniform(1, 1), 1000e18);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        _rollPastDrawTarget(sid);
        randomness.fulfil(s.drawRequest); // anyone fixes the value in time
        vm.roll(_sortition().snapshotReadableUntil(s.epoch) + 1); // ... and nobody draws
        IAuditSessions.Status st = sessions.advance(sid);
        emit log_named_uint("status after advance (1 Created, 8 Expired)", uint256(st));
        assertEq(uint256(st), uint256(IAuditSessions.Status.Expired), "advance ends a lapsed session");
        assertEq(
            uint256(sessions.sessionOf(sid).termination),
            uint256(IAuditSessions.Termination.SnapshotUnavailable),
            "a value obtainable in time and not drawn on is forfeited, as by draw"
        );
    }

    /// @notice While the core is paused (`draw` refuses), `advance` still ends the lapsed session.
    function test_AdvanceEndsItWhilePaused() public {
        uint256 sid = _open(_uniform(1, 1), 1000e18);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        _rollPastDrawTarget(sid);
        randomness.fulfil(s.drawRequest);
        vm.prank(owner);
        sessions.pause();
        vm.roll(_sortition().snapshotReadableUntil(s.epoch) + 1);
        assertEq(uint256(sessions.advance(sid)), uint256(IAuditSessions.Status.Expired), "ended while paused");
    }

    /// @notice One block earlier (the snapshot still readable) `advance` leaves it Created: the draw may start.
    function test_AdvanceLeavesAReadableSessionCreated() public {
        uint256 sid = _open(_uniform(1, 1), 1000e18);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        _rollPastDrawTarget(sid);
        randomness.fulfil(s.drawRequest);
        vm.roll(_sortition().snapshotReadableUntil(s.epoch));
        assertEq(uint256(sessions.advance(sid)), uint256(IAuditSessions.Status.Created), "still drawable");
        sessions.draw(sid, 1);
        assertEq(
            uint256(sessions.statusOf(sid)), uint256(IAuditSessions.Status.Drawing), "drawn in the last block"
        );
    }

    /// @notice Control: `draw` (while not paused) ends the same session as SnapshotUnavailable (a forfeit).
    function test_DrawEndsAFixedButUndrawnSession() public {
        uint256 sid = _open(_uniform(1, 1), 1000e18);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        _rollPastDrawTarget(sid);
        randomness.fulfil(s.drawRequest);
        vm.roll(_sortition().snapshotReadableUntil(s.epoch) + 1);
        sessions.draw(sid, 1);
        assertEq(uint256(sessions.statusOf(sid)), uint256(IAuditSessions.Status.Expired), "ended by draw");
    }
}
