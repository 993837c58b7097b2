// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review13ChurnLetsDefenderRefusalsFinalizeAPass (outside review 13 of 47db2d1, defender side)
/// @notice Property (docs/appeals-canaries.md, money table, REFUSED): "the defender cannot veto an appeal
/// of a PASS": a round the chain admitted, which the tier's live members seat whole when nobody refuses,
/// must not end UNFILLABLE (contested PASSes final, R per drawn seat from the bond) because a minority of
/// the tier refused its locks.
/// Attack (the defender, e.g. the provider whose PASSes are wrong, holding a few accounts of the tier):
/// 47db2d1 redoes PanelTooLarge at the draw with the LIVE member count (`2 * totalSeats > members * seatCap`
/// -> UNFILLABLE) while admission still counts leaves. In a tier with churn (ex-members' leaves: honest
/// departures, or 100 TRUST each parked by the defender and returned after the cooldown) the appellant's
/// node is told the round fits (`quote` succeeds), yet at the draw any refusal that fails it - here
/// per-segment refusals that have nothing to do with the seat cap - is now charged to the appellant:
/// UNFILLABLE, the contested PASSes stand and are final (`SegmentFinal`: no other round can fix them).
/// Before 47db2d1 the same refusals ended it REFUSED (PASS -> INCONCLUSIVE, bond back).
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review13Churn*' -vv`): 12 tier-1
/// auditors of 1,000 TRUST, seat cap 8, k_0 = 3 (k_1 = 7), 9 PASS segments appealed in one round (63
/// seats, bond 378 TRUST), 4 churned leaves (16 leaves: capacity 64 >= 63, admitted; without them
/// PanelTooLarge 63 > 48). Nobody refusing, or 1 or 2 of the 12 busy: the draw seats 63 of 63 (the live
/// tier can seat the round). With 3 of the 12 (25 %, far from the majority PanelTooLarge's argument
/// allows) busy: the draw fails on segment 0 after 6 of 63 seats (its 9 eligible auditors include the 3:
/// 6 < 7; rule 1 alone says REFUSED, 12 >= 3 + 7), but 2 x 63 > 12 x 8, so UNFILLABLE: every PASS stands,
/// segment 0 reverts `SegmentFinal` when appealed again, and the appellant loses 36 TRUST (6 drawn seats x
/// R) of its 378 TRUST bond. With the capacity line of `_decisiveRefusals` removed (local mutation, rule 1
/// only, as before 47db2d1 for this round) the same draw ends REFUSED.
/// Fix (built, the proposal below): admission reads the live count at the round's snapshot
/// (`ISortition.liveCountAt`), so an admitted round is never re-judged at the draw. After (this file): with
/// the 4 churned leaves the 9-segment round is refused up front, PanelTooLarge(63 > 48; 63 > 36 = (12 - 3) x 8 / 2
/// since outside review 17 counts the eligible only; 63 > 0 since outside review 20: k + seatCap (E - E / 2 -
/// k) with 9 - 4 = 5 < k = 7), exactly as without them; the appellant splits it. A round of at most the seat cap (8 segments, 56 seats) is admitted and the
/// 12 live auditors seat it whole when nobody refuses. Its chargeability is fixed at admission
/// (`Round.refusalsCharged` iff eligible >= 2 k): eligible = 12 - 3 = 9 < 14, so the quote says refusals
/// would not be charged, and with the defender's 3 accounts busy a one-segment round ends UNFILLABLE (6 of 7
/// seats drawn, the PASS stands, the appellant pays 36 TRUST = 6 x R). That is the accepted trade-off, not a
/// re-judging: in a tier with k <= eligible < 2k a refusing minority ends the round UNFILLABLE, and the
/// appellant is told before it pays (a tier with eligible >= 2 k charges the same refusals: REFUSED).
/// Old proposals kept for the record: decide admission on the same live count the draw uses, so an admitted
/// round is never re-judged: keep in SortitionTrees a per-tier count of leaves with non-zero weight,
/// snapshotted with the total weight (`liveCountAt(tier, epoch)`, updated in `setWeight` when a weight
/// crosses 0), and let `_members`/`_eligible` read it at the round's snapshot epoch. Short of that: keep
/// UNFILLABLE unconditional for a round beyond the live members' FULL capacity, and apply the half-capacity
/// rule only when the failing segment lost seats to the cap.
contract Review13ChurnLetsDefenderRefusalsFinalizeAPass is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    uint256 internal constant SEGMENTS = 9;
    uint256 internal constant CHURNED = 4;
    uint256 internal sid;

    function _world(uint256 churned) internal {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        for (uint256 i = 0; i < churned; ++i) {
            address a = vm.addr(0x5C00 + i);
            _deadLeaf(a);
        }
        _nextEpoch();
        sid = _passedSession(SEGMENTS, FEE); // every segment PASS (the contested outcome)
    }

    /// @dev The defender's `n` accounts are busy elsewhere (all but 7 TRUST of their free stake locked):
    /// they refuse every seat.
    function _busy(uint256 n) internal {
        for (uint256 i = 0; i < n; ++i) {
            address a = auditorAddrs[11 - i];
            uint256 free = staking.seatQuote(a).free;
            vm.prank(address(drawModule));
            (bool ok,,) = staking.lockSeat(a, 1, uint256(keccak256(abi.encode("busy", a))), free - 7e18, 0);
            assertTrue(ok, "setup: busy");
        }
    }

    function _range(uint256 count) internal pure returns (uint256[] memory s) {
        s = new uint256[](count);
        for (uint256 i = 0; i < count; ++i) {
            s[i] = i;
        }
    }

    function test_WithoutChurnTheRoundIsTooLarge() public {
        _world(0);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.PanelTooLarge.selector, sid, 63, 0));
        appeals.quote(sid, _range(SEGMENTS));
    }

    function test_ChurnedLeavesDoNotMakeTheRoundFit() public {
        _world(CHURNED);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.PanelTooLarge.selector, sid, 63, 0));
        appeals.quote(sid, _range(SEGMENTS));
        vm.prank(appellant);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.PanelTooLarge.selector, sid, 63, 0));
        appeals.appeal(sid, _range(SEGMENTS), type(uint256).max);
    }

    function test_NobodyRefusingTheLiveTierSeatsTheRound() public {
        _world(CHURNED);
        uint256 round = _appeal(sid, _range(8)); // 8 = the seat cap: no PanelTooLarge
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        emit log_named_uint("seats drawn (of 56)", rd.drawnSeats);
        assertEq(rd.drawnSeats, 56, "the 12 live auditors seat the whole round");
    }

    function test_AMinorityOfRefusalsIsUnchargedOnlyWhenTheQuoteSaidSo() public {
        _world(CHURNED);
        _busy(3);
        IAppealModule.Quote memory q = appeals.quote(sid, _segs(0));
        assertTrue(!q.refusalsCharged, "quote: eligible 9 < 2 x 7, refusals would not be charged");
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segs(0));
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        emit log_named_uint("seats drawn (of 7)", rd.drawnSeats);
        emit log_named_uint("refused (1 = REFUSED)", rd.refused ? 1 : 0);
        assertTrue(rd.status == IAuditSessions.Status.Cancelled, "the draw failed");
        assertTrue(!rd.refused && !rd.refusalsCharged, "UNFILLABLE, as admission fixed");
        _closeAndSettle(sid);
        emit log_named_uint("appellant net loss", before - token.balanceOf(appellant));
        assertEq(before - token.balanceOf(appellant), uint256(rd.drawnSeats) * R, "R per drawn seat");
        assertEq(_outcomeOf(sid, 0), 1, "the PASS stands (the trade-off the quote announced)");
    }
}
