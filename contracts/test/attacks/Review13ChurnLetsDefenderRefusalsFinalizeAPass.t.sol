// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @dev The cheatcodes TestBase's `Vm` does not declare.
interface VmReview13Churn {
    function skip(bool) external;
}

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
/// only, as before 47db2d1 for this round) the same draw ends REFUSED. Committed skipped (`_KNOWN`): the
/// REFUSED assertion fails on 47db2d1.
/// Fix proposal: decide admission on the same live count the draw uses, so an admitted round is never
/// re-judged: keep in SortitionTrees a per-tier count of leaves with non-zero weight, snapshotted with
/// the total weight (`liveCountAt(tier, epoch)`, updated in `setWeight` when a weight crosses 0), and let
/// `_members`/`_eligible` read it at the round's snapshot epoch (the start of the appeal's epoch, already
/// final at admission). Then `_decisiveRefusals` needs no capacity redo (and the honest appellant learns
/// PanelTooLarge up front and splits the round). Short of that: keep UNFILLABLE unconditional for a round
/// beyond the live members' FULL capacity (`totalSeats > members * seatCap`), and apply the half-capacity
/// rule only when the failing segment lost seats to the cap (a capped, non-earlier, non-provider member
/// among its exclusions). Local experiment on 47db2d1 (reverted): gating the whole capacity rule on a
/// capped member makes this test REFUSED and keeps Review11ChurnedLeaves UNFILLABLE, but fails the
/// Review11LiveCount fuzz (4 live, 8 dead, 4 segments of 3 seats, cap 2: 12 > 8 seats the live tier can
/// ever seat, failed on an early refusal, REFUSED): hence the unconditional full-capacity check.
contract Review13ChurnLetsDefenderRefusalsFinalizeAPass_KNOWN is NoCanaryAppealsFixture {
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
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.PanelTooLarge.selector, sid, 63, 48));
        appeals.quote(sid, _range(SEGMENTS));
    }

    function test_NobodyRefusingTheLiveTierSeatsTheRound() public {
        _world(CHURNED);
        uint256 round = _appeal(sid, _range(SEGMENTS));
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        emit log_named_uint("seats drawn (of 63)", rd.drawnSeats);
        assertEq(rd.drawnSeats, 63, "the 12 live auditors seat the whole round");
    }

    function test_AMinorityOfRefusalsMakesThePassesFinal_KNOWN() public {
        VmReview13Churn(address(vm)).skip(true);
        _world(CHURNED);
        _busy(3);
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _range(SEGMENTS));
        emit log_named_uint("bond paid", before - token.balanceOf(appellant));
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        emit log_named_uint("seats drawn (of 63)", rd.drawnSeats);
        emit log_named_uint("refused (1 = REFUSED)", rd.refused ? 1 : 0);
        assertTrue(rd.status == IAuditSessions.Status.Cancelled, "the draw failed");
        vm.prank(appellant);
        try appeals.appeal(sid, _segs(0), type(uint256).max) {
            emit log_named_uint("segment 0 appealable again (1 = yes)", 1);
        } catch (bytes memory err) {
            emit log_named_uint("segment 0 appealable again (1 = yes)", 0);
            assertEq(bytes4(err), IAppealModule.SegmentFinal.selector, "SegmentFinal");
        }
        _closeAndSettle(sid);
        emit log_named_uint("appellant net loss", before - token.balanceOf(appellant));
        emit log_named_uint("segment 0 outcome", _outcomeOf(sid, 0));
        assertTrue(rd.refused, "a minority's refusals are not charged to the appellant");
    }
}
