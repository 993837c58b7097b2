// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review22CapacityFloorSlack (outside review 22 of 0f4112d, LOW, fixed)
/// @notice Property (docs/appeals-canaries.md "Round size"; `AppealMath.cappedCapacity` NatSpec): with at most
/// floor(E / 2) refusing, the last of S segments still finds E - floor(E / 2) - floor((S - 1) k / seatCap)
/// auditors, "at least k iff S k is within this bound" - so the bound refuses exactly the rounds the cap can
/// fail with half or fewer refusing.
/// Attack (griefing nobody pays for; the "iff" is wrong): the worst case fills iff
/// floor((S - 1) k / c) <= free - k (free = E - floor(E / 2)), i.e. (S - 1) k <= c (free - k) + c - 1, but the
/// bound admits only (S - 1) k <= c (free - k). For c >= 2 it refuses rounds whose worst case still seats k
/// on the last segment. Seat cap 2, k_0 = 3, 36 tier-1 members: a 4-segment depth-1 round (E 33, free 17,
/// 4 x 7 = 28 seats): at most floor(21 / 2) = 10 auditors at the cap before segment 3, so with 16 refusing
/// it still finds 33 - 16 - 10 = 7 = k; admission reverts PanelTooLarge(28, 27).
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review22CapacityFloor*' -vv`): quote
/// and appeal revert PanelTooLarge(sid, 28, 27); control: 3 segments (21 seats) admitted, charged. By
/// arithmetic (tests/consensus/test_review22_capacity_differential.py, review 20's grid: E <= 80, k in the
/// panel sizes of k_0 1..4, c 1..8): 1,288 capped rounds refused whose worst case fills, none with c = 1;
/// smallest E 11 (k 3, c 4, S 6: 18 seats > capacity 15, worst case 11 - 5 - 3 = 3 = k).
/// Severity: LOW (honest appellants split the round; nothing is lost; the doc and NatSpec claim is wrong).
/// Fix proposal (one line, `AppealMath.cappedCapacity` and `appeal_admission.capped_capacity`):
/// `return free < k ? 0 : k + seatCap * (free - k + 1) - 1;` (equal for seatCap 1; safe: S k <= that iff
/// floor((S - 1) k / seatCap) <= free - k). Or keep the bound and drop "iff" from the NatSpec and the doc.
/// Fixed (the exact form, contract and `capped_capacity`; safe since the stake premise rule lets every
/// eligible account take seatCap seats): the 4-segment round is admitted (28 = capacity 7 + 2 x 11 - 1);
/// control: with 35 members (E 32, free 16, worst case 32 - 16 - 10 = 6 < 7) it is refused PanelTooLarge(sid,
/// 28, 26). The grid test asserts the new bound admits no round whose brute-forced worst case fails and
/// refuses none whose worst case fills.
contract Review22CapacityFloorSlack is NoCanaryAppealsFixture {
    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatCap = 2;
    }

    function _segsN(uint256 n) internal pure returns (uint256[] memory s) {
        s = new uint256[](n);
        for (uint256 i = 0; i < n; ++i) {
            s[i] = i;
        }
    }

    function _setUp(uint256 members) internal returns (uint256 sid) {
        sid = _setUpPassedSession(members, 4, FEE);
        uint256 epoch = block.number / EPOCH_BLOCKS + 1;
        assertEq(_sortition().liveCountAtExcept(1, epoch, provider), members, "members: E = members - 3");
    }

    /// @dev The round whose worst case still fills is admitted (failed before the fix: PanelTooLarge(28, 27)).
    function test_SafeCappedRoundAdmitted() public {
        uint256 sid = _setUp(36);
        IAppealModule.Quote memory q = appeals.quote(sid, _segsN(4));
        assertEq(q.totalSeats, 28, "4 x 7 seats: worst case leaves 33 - 16 - 10 = 7 on the last segment");
    }

    /// @dev Control: one member fewer (E 32, free 16) the worst case leaves 32 - 16 - 10 = 6 < 7: refused
    /// PanelTooLarge(28, 26), nothing paid; its 3-segment round is admitted and charged.
    function test_ControlUnsafeRoundRefused() public {
        uint256 sid = _setUp(35);
        bytes memory refusal = abi.encodeWithSelector(IAppealModule.PanelTooLarge.selector, sid, 28, 26);
        vm.expectRevert(refusal);
        appeals.quote(sid, _segsN(4));
        uint256 before = token.balanceOf(appellant);
        vm.expectRevert(refusal);
        vm.prank(appellant);
        appeals.appeal(sid, _segsN(4), type(uint256).max);
        assertEq(token.balanceOf(appellant), before, "nothing paid");
        IAppealModule.Quote memory q = appeals.quote(sid, _segsN(3));
        assertEq(q.totalSeats, 21, "3 x 7 seats admitted (capacity 26)");
        assertTrue(q.refusalsCharged, "charged: E 32 >= 14");
    }
}
