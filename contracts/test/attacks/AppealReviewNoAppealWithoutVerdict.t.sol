// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {ICanaryModule} from "../../src/interfaces/ICanaryModule.sol";

/// @notice Property: only a verdict can be appealed, and only in its window. Attack: appeal (or reveal a
/// canary of) a session that ended without a verdict (keys withheld), one still voting, one in its canary
/// window, and one whose window closed; each is refused by name and takes no bond.
contract AppealReviewNoAppealWithoutVerdictTest is AppealsFixture {
    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    function _refused(uint256 sid, bytes memory err) internal {
        uint256 before = token.balanceOf(appellant);
        vm.expectRevert(err);
        appeals.quote(sid, _segs(0));
        vm.prank(appellant);
        vm.expectRevert(err);
        appeals.appeal(sid, _segs(0), type(uint256).max);
        assertEq(token.balanceOf(appellant), before, "no bond taken");
    }

    function test_NoAppealOfSessionWithoutVerdict() public {
        uint256 sid = _open(_uniform(4, 1), FEE);
        _commitCanaries(sid, new bytes32[](0)); // 4 segments at 10%: none owed, the operator commits none
        _drawAll(sid);
        vm.roll(sessions.sessionOf(sid).keyDeadline + 1);
        assertEq(uint8(sessions.advance(sid)), uint8(IAuditSessions.Status.Expired), "keys withheld");
        _refused(sid, abi.encodeWithSelector(IAppealModule.AppealWindowNotOpen.selector, sid, 0));
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CanaryRevealNotOpen.selector, sid, 0));
        vm.prank(canaryOperator);
        canaries.revealCanary(
            sid, ICanaryModule.CanaryReveal({slot: 0, index: 0, verdict: 1, salt: bytes32(0)})
        );
        assertTrue(!appeals.advance(sid), "never final: there is no outcome");
        _refused(sid + 1, abi.encodeWithSelector(IAppealModule.AppealWindowNotOpen.selector, sid + 1, 0));
    }

    function test_NoAppealOutsideItsWindow() public {
        uint256 sid = _openReady(4, 1, new bytes32[](0));
        _commitAll(sid, 0, 0);
        _refused(sid, abi.encodeWithSelector(IAppealModule.AppealWindowNotOpen.selector, sid, 0));
        _revealAll(sid, 0, 0, 0);
        sessions.finalize(sid);
        // 4 segments at 10%: no canary owed, so no canary window; the appeal window opens next block.
        IAppealModule.SessionAppeals memory sa = appeals.sessionAppeals(sid);
        _refused(sid, abi.encodeWithSelector(IAppealModule.AppealWindowNotOpen.selector, sid, sa.canaryEnd));
        vm.roll(sa.windowEnd + 1);
        _refused(sid, abi.encodeWithSelector(IAppealModule.AppealWindowClosed.selector, sid, 0, sa.windowEnd));
        assertTrue(appeals.advance(sid), "final");
        _refused(sid, abi.encodeWithSelector(IAppealModule.AppealWindowClosed.selector, sid, 0, sa.windowEnd));
    }
}
