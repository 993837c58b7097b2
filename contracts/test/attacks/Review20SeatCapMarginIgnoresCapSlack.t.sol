// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review20SeatCapMarginIgnoresCapSlack (outside review 20 of da1f8bf, fixed)
/// @notice Property (docs/appeals-canaries.md "Round size": "Under the rule the cap fails a draw only if
/// more than half of the auditors who can sit refuse"): a round naming more segments than the seat cap is
/// admitted only if it is drawn in full unless more than half of its eligible auditors refuse.
/// Attack: the capacity `eligible * seatCap / 2` was right for seatCap 1 only. The draw fills segments in
/// order and an auditor at the cap is excluded for the rest of the round, so before the last segment up to
/// (T - k) / seatCap auditors may be at the cap; the last segment then runs dry once
/// R > E - k - (T - k) / seatCap refuse, which is below E / 2 by up to k (1 - 1 / seatCap). Seat cap 2,
/// k_0 = 3 (tier 1), 16 honest auditors, a 3-segment correct PASS session; 7 honest auditors on no round-0
/// panel hold 100,000 TRUST (the draw seats them first), the other 9 1,000. The appellant adds 8 accounts
/// of 100 TRUST: members 24, eligible 24 - 3 = 21.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review20SeatCap*' -vv`).
/// Before (da1f8bf .. 1583240, capacity 21 * 2 / 2 = 21 = 3 x 7 seats; the old
/// `test_FewerThanHalfRefusingFailsACappedRound_KNOWN` unskipped): quote totalSeats 21, refusalsCharged 1,
/// admitted; the 7 heavy auditors fill segments 0 and 1 and reach the cap; segment 2 has 9 - 3 = 6 light
/// honest auditors for 7 seats, so the appellant's 8 accounts refusing (8 of 21 eligible, 38%) fail the
/// round: 20 of 21 seats drawn, status 7 (Cancelled), refused 1; the 3 correct PASSes all INCONCLUSIVE
/// (3, 3, 3); appellant net loss 0 (bond 126 TRUST back). By arithmetic
/// (tests/consensus/test_review20_capacity_slack.py): 8,542 admitted rounds with E <= 80, c <= 8 could
/// fail with at most half refusing; worst E 70, k 31, c 8, S 9: 9 of 70 (12.9%).
/// After (fix: a capped round is admitted only if `totalSeats <= k + seatCap * (eligible - eligible / 2 -
/// k)`, 0 if eligible - eligible / 2 < k, `AppealMath.cappedCapacity`, in AppealAdmission and consensus
/// `check_capacity`): with at most floor(E / 2) refusing the last segment still finds
/// E - floor(E / 2) - floor((S - 1) k / seatCap) >= k auditors. Here 7 + 2 x (11 - 7) = 15 < 21: quote and
/// appeal revert `PanelTooLarge(sid, 21, 15)` (16 since review 22's exact bound), nothing paid (this test with 1583240's AppealAdmission:
/// "next call did not revert as expected", fails). Control: the round the cap does not bind
/// (2 segments = the seat cap, 14 seats) is admitted, charged, and drawn in full with the 8 accounts
/// refusing.
/// Severity: MEDIUM (voided correct PASSes for free with a 38% minority of accounts).
contract Review20SeatCapMarginIgnoresCapSlack is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatCap = 2;
    }

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    /// @dev 16 honest auditors, 7 of those on no round-0 panel made heavy, and 8 accounts of the appellant's
    /// (100 TRUST each), live from the next epoch.
    function _setUp() internal returns (uint256 sid, address[] memory mine) {
        sid = _setUpPassedSession(16, 3, FEE);
        uint256 heavy = 0;
        for (uint256 i = 0; i < auditorAddrs.length && heavy < 7; ++i) {
            address a = auditorAddrs[i];
            if (_seatedOn(sid, a, 0) || _seatedOn(sid, a, 1) || _seatedOn(sid, a, 2)) continue;
            token.transfer(a, 99_000e18);
            vm.startPrank(a);
            token.approve(address(stakingContract), type(uint256).max);
            staking.stake(a, 99_000e18);
            vm.stopPrank();
            ++heavy;
        }
        assertEq(heavy, 7, "setup: 7 heavy auditors");
        mine = new address[](8);
        for (uint256 i = 0; i < 8; ++i) {
            address a = vm.addr(0xCA2000 + i);
            mine[i] = a;
            _joinTier(a, 1, 100e18);
        }
        _nextEpoch();
    }

    function _segs3() internal pure returns (uint256[] memory s) {
        s = new uint256[](3);
        s[0] = 0;
        s[1] = 1;
        s[2] = 2;
    }

    function _segs2() internal pure returns (uint256[] memory s) {
        s = new uint256[](2);
        s[0] = 0;
        s[1] = 1;
    }

    function test_CappedRoundAFewerThanHalfMinorityCouldFailIsRefused() public {
        (uint256 sid,) = _setUp();
        uint256 epoch = block.number / EPOCH_BLOCKS + 1;
        assertEq(_sortition().liveCountAtExcept(1, epoch, provider), 24, "members 24: eligible 24 - 3 = 21");
        uint256 before = token.balanceOf(appellant);
        bytes memory refusal = abi.encodeWithSelector(IAppealModule.PanelTooLarge.selector, sid, 21, 16);
        vm.expectRevert(refusal);
        appeals.quote(sid, _segs3());
        vm.expectRevert(refusal);
        vm.prank(appellant);
        appeals.appeal(sid, _segs3(), type(uint256).max);
        assertEq(token.balanceOf(appellant), before, "nothing paid");
        assertEq(appeals.sessionAppeals(sid).roundCount, 0, "no round opened");
    }

    /// @dev Control: 2 segments (= the seat cap: the capacity does not bind) are admitted, charged, and drawn
    /// in full with the appellant's 8 accounts refusing.
    function test_ControlUncappedRoundIsDrawnDespiteTheRefusals() public {
        (uint256 sid, address[] memory mine) = _setUp();
        IAppealModule.Quote memory q = appeals.quote(sid, _segs2());
        assertEq(q.totalSeats, 14, "admitted: 2 x 7 seats");
        assertTrue(q.refusalsCharged, "charged: eligible 21 >= 14");
        uint256 round = _appeal(sid, _segs2());
        for (uint256 i = 0; i < mine.length; ++i) {
            _busyElsewhere(mine[i], 0);
        }
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        emit log_named_uint("seats drawn (of 14)", rd.drawnSeats);
        assertEq(rd.drawnSeats, 14, "drawn in full");
        assertEq(uint256(rd.status), uint256(IAuditSessions.Status.Drawing), "drawing, keys next");
    }
}
