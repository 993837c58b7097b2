// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {AuditSessions} from "../../src/AuditSessions.sol";
import {IAppealSettlement} from "../../src/interfaces/IAppealSettlement.sol";

/// @notice Property: no vote of a session is scored, and no appeal money moves, before its outcome is
/// final (canary window and every appeal window closed, no round running): the slash seed does not even
/// exist before, so nobody can settle the sessions whose coins look good first, and a later panel can
/// still change what every earlier vote is scored against.
contract NoSettlementBeforeOutcomeFinalTest is AppealsFixture {
    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    function _refused(uint256 sid, address[] memory r0) internal {
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.SlashSeedPending.selector, sid));
        settlement.settleBatch(sid, 0, r0);
        vm.expectRevert(abi.encodeWithSelector(IAppealSettlement.OutcomeNotFinal.selector, sid));
        escrow.settleAppeals(sid, 8);
        assertEq(uint256(sessions.sessionOf(sid).slashRequest), 0, "no slash seed requested");
    }

    function test_NoSettlementBeforeOutcomeFinal() public {
        bytes32[] memory c = new bytes32[](1);
        uint256 sid = sessions.sessionCount() + 1;
        c[0] = _canaryCommitment(sid, 9, 2);
        sid = _openReady(10, 1, c);
        _voteRound0(sid, 1 << 9, 0, 0);
        address[] memory r0 = _roundAuditors(sid, 0);
        _refused(sid, r0); // finalized, canary window open
        vm.roll(block.number + 1);
        _revealCanary(sid, 0, 9, 2);
        _refused(sid, r0);
        _toAppealWindow(sid);
        appeals.advance(sid);
        _refused(sid, r0); // appeal window open
        uint256 round = _appeal(sid, _segs(3));
        vm.roll(appeals.sessionAppeals(sid).windowEnd + 1);
        assertTrue(!appeals.advance(sid), "a round runs: not final");
        _refused(sid, r0);
        _drawRound(sid, round);
        _publishRound(sid, round);
        _voteRound(sid, round, 0, 0, 0);
        assertTrue(!appeals.advance(sid), "the round's segment has a new window");
        _refused(sid, r0);
        _closeAndSettle(sid);
        assertTrue(settlement.isSettled(sid, 0, r0[0]), "settles once final");
    }
}
