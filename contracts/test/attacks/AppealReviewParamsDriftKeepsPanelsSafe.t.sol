// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @notice Property: whatever the core's parameters became after the appeal parameters were set, no appeal
/// panel is admitted over 63 seats (the 6-bit tallies) and no appeal is admitted at a depth where spoiling
/// the previous panel and appealing it pays. Attack: `AppealSettlement.setParams` checks both against the
/// core parameters of its day, but a session opened after a later `AuditSessions.setParams` (more seats, a
/// higher quorum) runs the old appeal version with the new core version, a pair nobody checked. Defence:
/// `paramsOf(session).maxRounds` is the most rounds the session's own core parameters keep safe.
contract AppealReviewParamsDriftKeepsPanelsSafeTest is AppealsFixture {
    function setUp() public {
        _deployAppeals();
    }

    function _coreParams(uint8 seatsTier1, uint16 tauBps) internal {
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.seatsPerTier[1] = seatsTier1;
        p.tauBps = tauBps;
        vm.prank(owner);
        sessions.setParams(p);
    }

    /// @dev tau 90%: one wrong vote spoils a 3-seat panel, and 2000 bps of the 7-seat bond pays more than
    /// that vote risks (R + pMin P): farming pays at depth 1.
    function test_FarmingStillLosesAfterCoreParamsChange() public {
        _coreParams(3, 9000);
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
        uint256 sid = _openReady(1, 1, new bytes32[](0));
        assertTrue(!escrow.validParams(_appealParams()), "the version in force fails against the new core");
        _voteRound0(sid, 0, 0, 0);
        assertEq(appeals.appealableUntil(sid), 0, "no appeal window");
        _toAppealWindow(sid);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.AppealsDisabled.selector, sid));
        appeals.quote(sid, _segs(0));
        vm.prank(appellant);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.AppealsDisabled.selector, sid));
        appeals.appeal(sid, _segs(0), type(uint256).max);
        assertTrue(appeals.advance(sid), "final once the canary window closed");
        assertEq(escrow.paramsOf(sid).maxRounds, 0, "no safe round: appeals disabled for the session");
    }

    /// @dev k_0 = 16: the depth-1 panel has 33 seats, the depth-2 one would have 67 > 63 (two segments, so
    /// that the session-wide round limit is not what refuses it).
    function test_NoPanelOver63SeatsAfterCoreParamsChange() public {
        _coreParams(16, 6000);
        _addAuditors(1, 120, STAKE);
        _nextEpoch();
        uint256 sid = _openReady(2, 1, new bytes32[](0));
        _voteRound0(sid, 0, 0, 0);
        _toAppealWindow(sid);
        assertEq(appeals.quote(sid, _segs(0)).totalSeats, 33, "k_1 = 33 is within the tallies");
        uint256 r1 = _appeal(sid, _segs(0));
        _drawRound(sid, r1);
        _publishRound(sid, r1);
        _voteRound(sid, r1, 1, 0, 0); // FAIL overturns PASS
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.NoRoundsLeft.selector, sid, 0));
        appeals.quote(sid, _segs(0));
        vm.prank(appellant);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.NoRoundsLeft.selector, sid, 0));
        appeals.appeal(sid, _segs(0), type(uint256).max);
        _closeAndSettle(sid);
        assertEq(escrow.paramsOf(sid).maxRounds, 1, "one safe round of the two");
    }
}
