// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review20RequireChargedHolds (outside review 20 of da1f8bf: attacks that held)
/// @notice Property: an appellant quoted `refusalsCharged` who passes `requireCharged` is never held to
/// an uncharged round, and nobody can use the flag or the 4-argument overload to harm others.
/// Attacks tried, all held (`scripts/forge test --match-path 'contracts/test/attacks/Review20Require*' -vv`):
/// (1) front-running inside the epoch: an eligible account deregisters (and another requests its
/// withdrawal) in the same epoch as the quote, before the appeal: the count is the snapshot at the start
/// of the epoch, so the quote and the mined round stay charged (eligible 14 = 2 k_1), no revert.
/// (2) a front-runner's own appeal of another segment of the session does not change the victim's terms
/// (one count per tier and depth): the victim's requireCharged appeal is admitted, charged.
/// (3) order of refusals: PanelTooLarge (in `_check`) before BondAboveLimit before RefusalsNotCharged, the
/// memory port's order; each revert leaves no round and no payment (the check runs before any write).
/// (4) requireCharged on a quote that is already uncharged (eligible 13 < 14) reverts
/// RefusalsNotCharged(sid, 13, 14); requireCharged false admits the same round uncharged; true on a charged
/// quote never weakens it. Severity: none (INFO: pins).
contract Review20RequireChargedHolds is NoCanaryAppealsFixture {
    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatCap = 1; // a 2-segment round is capped (for the order of refusals); 1-segment rounds are not
    }

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    function _notOn(uint256 sid, uint256 seg, uint256 skip) internal view returns (address a) {
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            if (_seatedOn(sid, auditorAddrs[i], seg)) continue;
            if (skip == 0) return auditorAddrs[i];
            --skip;
        }
    }

    /// @dev (1): churn inside the quote's epoch does not move the mined round's terms.
    function test_SameEpochChurnCannotFlipCharging() public {
        uint256 sid = _setUpPassedSession(17, 2, FEE);
        // Mid-epoch, with room before the boundary.
        uint256 start = (block.number / EPOCH_BLOCKS) * EPOCH_BLOCKS;
        if (block.number > start + EPOCH_BLOCKS - 5) vm.roll(start + EPOCH_BLOCKS + 1);
        uint256 epoch = block.number / EPOCH_BLOCKS;
        IAppealModule.Quote memory q = appeals.quote(sid, _segs(0));
        assertTrue(q.refusalsCharged, "setup: eligible 17 - 3 = 14 = 2 k_1");
        address leaver = _notOn(sid, 0, 0);
        vm.prank(leaver);
        registry.deregister();
        address withdrawer = _notOn(sid, 0, 1);
        vm.startPrank(withdrawer);
        staking.requestWithdrawal(withdrawer, staking.sharesOf(withdrawer, withdrawer));
        vm.stopPrank();
        vm.roll(block.number + 2);
        assertEq(block.number / EPOCH_BLOCKS, epoch, "same epoch");
        assertTrue(appeals.quote(sid, _segs(0)).refusalsCharged, "re-quote unchanged in the epoch");
        vm.prank(appellant);
        uint256 round = appeals.appeal(sid, _segs(0), q.bond, true);
        assertTrue(appeals.roundOf(sid, round).refusalsCharged, "mined charged as quoted");
    }

    /// @dev (2): another appellant's round first does not change the victim's terms.
    function test_FrontRunningAppealOfAnotherSegmentLeavesTermsAlone() public {
        uint256 sid = _setUpPassedSession(17, 2, FEE);
        IAppealModule.Quote memory q = appeals.quote(sid, _segs(1));
        address other = address(0xF00D);
        token.transfer(other, 1000e18);
        vm.startPrank(other);
        token.approve(address(appeals), type(uint256).max);
        appeals.appeal(sid, _segs(0), type(uint256).max, false);
        vm.stopPrank();
        vm.prank(appellant);
        uint256 round = appeals.appeal(sid, _segs(1), q.bond, true);
        assertEq(round, 2, "the victim opens the next round");
        assertTrue(appeals.roundOf(sid, round).refusalsCharged, "charged as quoted");
        assertEq(appeals.roundOf(sid, round).bond, q.bond, "bond as quoted");
    }

    /// @dev (3) and (4): order of refusals, nothing written or paid on any of them.
    function test_OrderOfRefusalsAndNothingPaid() public {
        uint256 sid = _setUpPassedSession(16, 2, FEE); // eligible 16 - 3 = 13 < 2 k_1 = 14: uncharged
        IAppealModule.Quote memory q = appeals.quote(sid, _segs(0));
        assertTrue(!q.refusalsCharged, "setup: uncharged");
        uint256 before = token.balanceOf(appellant);
        // Capped (2 segments > seatCap 1): 14 seats > capacity 7 + 1 * (13 - 6 - 7) = 7 (outside review 20), whatever the other terms.
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.PanelTooLarge.selector, sid, 14, 7));
        vm.prank(appellant);
        appeals.appeal(sid, _segs(0, 1), 0, true);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.BondAboveLimit.selector, q.bond, q.bond - 1));
        vm.prank(appellant);
        appeals.appeal(sid, _segs(0), q.bond - 1, true);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.RefusalsNotCharged.selector, sid, 13, 14));
        vm.prank(appellant);
        appeals.appeal(sid, _segs(0), q.bond, true);
        assertEq(token.balanceOf(appellant), before, "nothing paid");
        assertEq(appeals.sessionAppeals(sid).roundCount, 0, "no round");
        assertEq(appeals.sessionAppeals(sid).openRounds, 0, "none open");
        // Accepting the uncharged terms is the appellant's own choice (3-argument appeal = false).
        vm.prank(appellant);
        uint256 round = appeals.appeal(sid, _segs(0), q.bond);
        assertTrue(!appeals.roundOf(sid, round).refusalsCharged, "uncharged, as quoted");
        assertEq(before - token.balanceOf(appellant), q.bond, "the quoted bond, no more");
    }
}
