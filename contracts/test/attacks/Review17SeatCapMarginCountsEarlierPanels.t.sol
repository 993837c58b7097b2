// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review17SeatCapMarginCountsEarlierPanels (outside review 17 of 92327f6, was
/// Review17SeatCapMarginIgnoresEarlierPanels)
/// @notice Property (docs/appeals-canaries.md "Round size": "Under the rule the cap fails a draw only if
/// more than half of the tier's members refuse"; "Who counts": a charged failure means more than half of
/// the eligible refused): a round naming more segments than the seat cap is admitted only if its seats fit
/// in half of what the auditors who can sit on its segments can seat (eligible = live members but the
/// provider, minus the segments' earlier-panel seats), so the quote that admits it is honest about the
/// margin. Asserted at admission (the quote and `appeal`), not on the draw's failure rule.
/// Attack: `PanelTooLarge` compared the round's seats with half of what ALL live members can seat, but a
/// segment's earlier-panel auditors cannot sit on it; so the last segment could run dry with fewer
/// refusals. Seat cap 1, k_0 = 3, 16 honest tier-1 auditors, a 2-segment correct PASS session; the 10
/// honest auditors on neither round-0 panel hold 10,000 TRUST, the others 1,000 (the draw fills segment
/// 0 from the heavy ones first). The appellant adds 12 accounts of 100 TRUST: members 28, eligible 25.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review17SeatCap*' -vv`).
/// Before (92327f6 .. 2e066eb, capacity = members * seatCap / 2 = 14; the old
/// `test_FewerThanHalfRefusingFailsACappedRound_KNOWN` unskipped): quote totalSeats 14, refusalsCharged
/// true, admitted; its 12 accounts refuse: 13 of 14 seats drawn, REFUSED with 12 refusals of 25 eligible
/// (fewer than half); both correct PASSes INCONCLUSIVE (outcomes 3, 3), appellant net loss 0 (bond 84 TRUST
/// back). This test on 2e066eb: the quote returns (no PanelTooLarge): fails.
/// After (fix: capacity = (members - earlierSeats(k_0, depth)) * seatCap / 2 = 25 / 2 = 12, in
/// AppealAdmission and consensus `check_capacity`): quote and appeal revert `PanelTooLarge(sid, 14, 12)`;
/// since outside review 20 the capacity is k + seatCap (E - E / 2 - k) = 7 + 1 x (13 - 7) = 13 (the cap-1
/// case: ceil(25 / 2)), `PanelTooLarge(sid, 14, 13)`; nothing paid. Control: with 16 accounts of its own
/// (members 32, eligible 29, capacity 14; since review 20: 7 + (15 - 7) = 15) the round is
/// admitted and it takes 15 refusals, more than half of 29, to fail it (its 16 accounts do: whether that
/// is charged is the draw rule's business, Review17SybilsBuyTheRefusalMargin).
/// The margin was short by up to the segments' earlier seats (depth 1: 3 accounts; depth 2: 10; depth 3:
/// 25; by arithmetic).
/// Severity: LOW.
contract Review17SeatCapMarginCountsEarlierPanels is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatCap = 1;
    }

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    /// @dev The review's session: 16 honest auditors, the 10 on neither round-0 panel heavy, and `own`
    /// accounts of the appellant's (100 TRUST each), live from the next epoch.
    function _setUp(uint256 own) internal returns (uint256 sid) {
        sid = _setUpPassedSession(16, 2, FEE);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address a = auditorAddrs[i];
            if (_seatedOn(sid, a, 0) || _seatedOn(sid, a, 1)) continue;
            token.transfer(a, 9000e18);
            vm.startPrank(a);
            token.approve(address(stakingContract), type(uint256).max);
            staking.stake(a, 9000e18);
            vm.stopPrank();
        }
        for (uint256 i = 0; i < own; ++i) {
            address a = vm.addr(0xCA9000 + i);
            _joinTier(a, 1, 100e18);
        }
        _nextEpoch();
    }

    function test_CappedRoundFitsHalfOfWhoCanSit() public {
        uint256 sid = _setUp(12);
        bytes memory refusal = abi.encodeWithSelector(IAppealModule.PanelTooLarge.selector, sid, 14, 13);
        vm.expectRevert(refusal);
        appeals.quote(sid, _segs(0, 1));
        uint256 before = token.balanceOf(appellant);
        vm.expectRevert(refusal);
        vm.prank(appellant);
        appeals.appeal(sid, _segs(0, 1), type(uint256).max);
        assertEq(token.balanceOf(appellant), before, "nothing paid");
        assertEq(appeals.sessionAppeals(sid).roundCount, 0, "no round opened");
        // Each segment alone is within the cap: admitted, charged (eligible 25 >= 2 x 7).
        assertTrue(appeals.quote(sid, _segs(0)).refusalsCharged, "one segment: admitted, charged");
    }

    function test_ControlAdmittedCappedRoundNeedsMoreThanHalfOfTheEligible() public {
        uint256 sid = _setUp(16);
        IAppealModule.Quote memory q = appeals.quote(sid, _segs(0, 1));
        emit log_named_uint("quote totalSeats", q.totalSeats);
        assertEq(q.totalSeats, 14, "admitted: 14 seats");
        assertTrue(q.refusalsCharged, "charged");
        // eligible 32 - 3 = 29: 14 seats use at most half of their 29 single seats.
        assertLe(2 * q.totalSeats, 29, "fits in half of what the eligible seat");
    }
}
