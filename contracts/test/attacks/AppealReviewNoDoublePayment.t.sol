// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAppealSettlement} from "../../src/interfaces/IAppealSettlement.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {ISettlementModule} from "../../src/interfaces/ISettlementModule.sol";

/// @notice Property: an appealed session's money moves once. Attack: after a full settlement (an
/// overturned appeal: bond back plus reward, the panel paid from the pot and the budget), replay every
/// money entry point - `settleAppeals`, `settleBatch`/`settle` of every round, `advance` - and call the
/// internal hooks (`pullPot`, `takePot`, `payOut`, `onOutcomeFinal`) directly as an outsider.
contract AppealReviewNoDoublePaymentTest is AppealsFixture {
    address internal constant OUTSIDER = address(0xBAD);

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    function _balances() internal view returns (uint256[5] memory b) {
        b[0] = token.balanceOf(appellant);
        b[1] = token.balanceOf(address(treasury));
        b[2] = token.balanceOf(address(escrow));
        b[3] = token.balanceOf(address(sessions));
        b[4] = token.balanceOf(address(stakingContract));
    }

    function test_NoDoublePayment() public {
        uint256 sid = _openReady(2, 1, new bytes32[](0));
        _voteRound0(sid, 0, 0, 0); // PASS, PASS
        _toAppealWindow(sid);
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segs(0));
        _drawRound(sid, round);
        _publishRound(sid, round);
        _voteRound(sid, round, 1, 0, 0); // FAIL: overturned
        _closeAndSettle(sid);
        assertEq(token.balanceOf(appellant), before + 7 * R * 2000 / 10_000, "bond back plus 20% once");
        assertEq(token.balanceOf(address(escrow)), 0, "the escrow paid out everything it held");

        uint256[5] memory b = _balances();
        assertEq(escrow.settleAppeals(sid, 1024), 0, "nothing left to resolve");
        for (uint256 r = 0; r <= round; ++r) {
            address[] memory list = _roundAuditors(sid, r);
            assertEq(settlement.settleBatch(sid, r, list), 0, "every auditor skipped");
            vm.expectRevert(abi.encodeWithSelector(ISettlementModule.AlreadySettled.selector, sid, list[0]));
            settlement.settle(sid, r, list[0]);
        }
        assertTrue(appeals.advance(sid), "still final");

        vm.startPrank(OUTSIDER);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.NotModule.selector, OUTSIDER));
        appeals.pullPot(sid, 1);
        vm.expectRevert(abi.encodeWithSelector(IAuditSessions.NotModule.selector, OUTSIDER));
        sessions.takePot(sid, 1);
        vm.expectRevert(abi.encodeWithSelector(IAuditSessions.NotModule.selector, OUTSIDER));
        sessions.onOutcomeFinal(sid);
        vm.expectRevert(abi.encodeWithSelector(IAppealSettlement.NotModule.selector, OUTSIDER));
        escrow.payOut(sid, round, 1, 1);
        vm.stopPrank();

        uint256[5] memory a = _balances();
        for (uint256 i = 0; i < 5; ++i) {
            assertEq(a[i], b[i], "no token moved on replay");
        }
    }
}
