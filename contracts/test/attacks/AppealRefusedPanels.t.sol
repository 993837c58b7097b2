// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";

/// @dev The cheatcode TestBase's `Vm` does not declare.
interface VmMockRefusal {
    function mockCall(address callee, bytes calldata data, bytes calldata returnData) external;
}

/// @title AppealRefusedPanels (the REFUSED round, docs/protocol-v2.md "Refused appeal panels")
/// @notice A panel draw that fails after sampled auditors refused their stake locks ends REFUSED: every
/// named segment ends as if the round's keys were withheld (a contested PASS becomes INCONCLUSIVE, a
/// contested FAIL or INCONCLUSIVE stands), the segment is final, the bond is refunded whole and the drawn
/// seats are owed by the segment's pot only. Both sides may hold the refusing accounts, so the rule is
/// tested from both: the defender of a PASS (Review3AppealPanelRefusalsVetoNothing), an appellant refusing
/// to void a correct outcome or to re-roll the panel, and a provider refusing on its own appeal of a FAIL.
/// @dev Three ways to refuse: deregistration, a withdrawal of the whole stake (both after the appeal is
/// posted, while the account is in the round's snapshot), and stake exhausted by locks in other sessions
/// (Staking's quote mocked to no free stake: the refusal that stays once snapshot stake can no longer
/// leave).
contract AppealRefusedPanels is AppealsFixture {
    uint256 internal constant N = 4;
    uint256 internal constant PASS = 1;
    uint256 internal constant FAIL = 2;
    uint256 internal constant INCONCLUSIVE = 3;
    /// @dev The appellant's balance just before its appeal.
    uint256 internal beforeAppeal;

    function setUp() public {
        _deployAppeals();
        // 17 auditors: eligible 17 - 3 = 14 = 2 k_1, so admission charges refusals (`refusalsCharged`;
        // review 13: with 12, eligible 9 < 14, the same draws end UNFILLABLE, the rule's trade-off).
        _addAuditors(1, 17, STAKE);
        _nextEpoch();
        token.transfer(provider, 10_000e18);
        vm.prank(provider);
        token.approve(address(appeals), type(uint256).max);
    }

    /// @dev The auditors of the tier who did not sit on `seg` in round 0 (the panel's eligible ones).
    function _notOnSegment(uint256 sid, uint256 seg) internal view returns (address[] memory out, uint256 n) {
        out = new address[](auditorAddrs.length);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            uint256[] memory segs = drawModule.seatsOf(sid, 0, auditorAddrs[i]);
            bool on = false;
            for (uint256 j = 0; j < segs.length; ++j) {
                if (segs[j] == seg) on = true;
            }
            if (!on) out[n++] = auditorAddrs[i];
        }
    }

    /// @dev `a` tries to refuse its next lock: 0 deregisters, 1 asks to withdraw its whole stake, 2 has its
    /// stake locked elsewhere. Since snapshot stake cannot refuse (protocol-v2 5.1) only 2 still refuses;
    /// the fuzz keeps 0 and 1 to show they no longer do.
    function _refuse(address a, uint256 how) internal {
        how %= 3;
        if (how == 0) {
            vm.prank(a);
            registry.deregister();
        } else if (how == 1) {
            uint256 shares = staking.sharesOf(a, a);
            vm.prank(a);
            staking.requestWithdrawal(a, shares);
        } else {
            IStaking.SeatQuote memory q = staking.seatQuote(a);
            q.free = 0;
            VmMockRefusal(address(vm))
                .mockCall(address(staking), abi.encodeCall(IStaking.seatQuote, (a)), abi.encode(q));
        }
    }

    /// @dev Segment 0 decided `contested` in round 0 (unanimously), appealed by `who`; then just enough of
    /// the eligible accounts refuse (`how`) to leave the panel one seat short, and the panel is drawn.
    function _refusedAppeal(uint256 contested, address who, uint256 how)
        internal
        returns (uint256 sid, uint256 round)
    {
        sid = _openReady(N, 1, new bytes32[](0));
        _voteRound0(sid, contested == FAIL ? 1 : 0, 0, 0);
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
        beforeAppeal = token.balanceOf(who);
        vm.prank(who);
        round = appeals.appeal(sid, _segs(0), type(uint256).max);
        (address[] memory eligible, uint256 n) = _notOnSegment(sid, 0);
        uint256 k = appeals.roundOf(sid, round).totalSeats;
        for (uint256 i = 0; i < n - k + 1; ++i) {
            _refuse(eligible[i], how);
        }
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        assertEq(uint256(rd.status), uint256(IAuditSessions.Status.Cancelled), "the draw failed");
        assertTrue(rd.refused, "REFUSED");
    }

    /// @notice Stake locked elsewhere (the refusal left once snapshot stake cannot leave): the contested PASS
    /// ends INCONCLUSIVE, the appellant pays nothing, the drawn seats are paid from the pot, never above R.
    function test_LockedElsewhereRefusalsEndAContestedPassInconclusive() public {
        uint256 before = token.balanceOf(appellant);
        (uint256 sid, uint256 round) = _refusedAppeal(PASS, appellant, 2);
        assertTrue(appeals.segmentAppeals(sid, 0).closed, "final: no re-roll");
        assertEq(_outcomeOf(sid, 0), INCONCLUSIVE, "a contested PASS never survives refusals");
        _closeAndSettle(sid);
        assertEq(token.balanceOf(appellant), before, "bond refunded whole");
        uint256 pv = escrow.perVoteOf(sid, round, 0);
        assertLe(pv, R, "a drawn seat earns at most R");
        // Scored against the contested PASS (the verdict alone reads INCONCLUSIVE, outside review 6): round 0's
        // PASS votes are paid, so no round-0 reward is left for the drawn seats (a reported shortfall).
        assertEq(pv, 0, "round 0's rewards stay with round 0");
        assertEq(token.balanceOf(address(escrow)), 0, "nothing stays in the escrow");
    }

    /// @notice Appellant side: an appellant whose own accounts refuse on its appeal of a correct FAIL gets
    /// nothing: the FAIL stands, the segment is final (no second panel, no re-roll), the bond comes back.
    function test_AppellantRefusingOnACorrectFailGetsNoReRoll() public {
        uint256 before = token.balanceOf(appellant);
        (uint256 sid,) = _refusedAppeal(FAIL, appellant, 2);
        assertEq(_outcomeOf(sid, 0), FAIL, "the contested FAIL stands");
        assertTrue(appeals.segmentAppeals(sid, 0).closed, "final");
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.SegmentFinal.selector, sid, 0));
        _appeal(sid, _segs(0));
        _closeAndSettle(sid);
        assertEq(token.balanceOf(appellant), before, "bond back, nothing more");
    }

    /// @notice Appellant side, contested PASS: refusing gives no second panel either; the residual (the
    /// PASS becomes INCONCLUSIVE, as when the provider withholds the keys) is documented in the protocol.
    function test_AppellantRefusingOnAPassGetsNoSecondPanel() public {
        (uint256 sid,) = _refusedAppeal(PASS, appellant, 2);
        assertEq(_outcomeOf(sid, 0), INCONCLUSIVE, "INCONCLUSIVE");
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.SegmentFinal.selector, sid, 0));
        _appeal(sid, _segs(0));
    }

    /// @notice Contested FAIL: the provider appeals its FAIL and its own accounts refuse. The FAIL stands (a
    /// FAIL turned INCONCLUSIVE would unscore its round-0 accounts' wrong PASS votes), so the provider gains
    /// nothing; its bond comes back (it cannot be told from an honest appellant whose panel a FAIL's
    /// defender refused).
    function test_ProviderRefusingOnItsOwnAppealOfAFailGainsNothing() public {
        (uint256 sid,) = _refusedAppeal(FAIL, provider, 2);
        assertEq(_outcomeOf(sid, 0), FAIL, "the FAIL stands");
        assertTrue(appeals.segmentAppeals(sid, 0).closed, "final");
        _closeAndSettle(sid);
        assertEq(appeals.sessionAppeals(sid).scoreBps, 7500, "the score did not improve: 3 of 4 PASS");
        assertEq(token.balanceOf(provider), beforeAppeal, "bond back, nothing more");
    }

    /// @notice Whichever eligible accounts refuse, however (any subset, any mix of the three ways), over a
    /// contested PASS or FAIL: a panel that fills waits for keys; a draw that failed after refusals is
    /// REFUSED, leaves no contested PASS standing, keeps a contested FAIL, closes the segment and costs the
    /// appellant nothing; the escrow ends empty.
    function testFuzz_WhicheverAccountsRefuseNoContestedPassSurvives(
        uint256 mask,
        uint256 how,
        bool contestFail
    ) public {
        uint256 contested = contestFail ? FAIL : PASS;
        uint256 sid = _openReady(N, 1, new bytes32[](0));
        _voteRound0(sid, contestFail ? 1 : 0, 0, 0);
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segs(0));
        (address[] memory eligible, uint256 n) = _notOnSegment(sid, 0);
        uint256 refusers = 0;
        for (uint256 i = 0; i < n; ++i) {
            if ((mask >> i) & 1 == 0) continue;
            _refuse(eligible[i], how >> (2 * i));
            ++refusers;
        }
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        if (rd.status != IAuditSessions.Status.Cancelled) {
            assertEq(rd.drawnSeats, rd.totalSeats, "not failed: filled");
            assertTrue(!rd.refused, "not refused");
            return;
        }
        assertTrue(rd.refused, "every failure here follows refusals");
        assertTrue(refusers > n - rd.totalSeats, "only enough refusals fail the draw");
        uint256 outcome = _outcomeOf(sid, 0);
        assertTrue(outcome != PASS, "no contested PASS survives refusals");
        assertEq(outcome, contested == PASS ? INCONCLUSIVE : FAIL, "as if withheld");
        assertTrue(appeals.segmentAppeals(sid, 0).closed, "final");
        _closeAndSettle(sid);
        assertEq(token.balanceOf(appellant), before, "the appellant pays nothing");
        assertEq(token.balanceOf(address(escrow)), 0, "nothing stays in the escrow");
    }

    /// @notice A round naming two segments: refusals fail the first one's draw, so the second is never
    /// drawn. Both contested PASSes end INCONCLUSIVE (every named segment, whichever one failed: a defender
    /// could otherwise refuse on a later segment to keep an earlier one), both bonds come back whole, and
    /// the undrawn segment owes no seat.
    function test_ARefusedRoundEndsEveryNamedSegment() public {
        uint256 sid = _openReady(N, 1, new bytes32[](0));
        _voteRound0(sid, 0, 0, 0);
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segs(0, 1));
        (address[] memory eligible, uint256 n) = _notOnSegment(sid, 0);
        for (uint256 i = 0; i < n - 7 + 1; ++i) {
            _refuse(eligible[i], 2);
        }
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        assertTrue(rd.refused, "REFUSED");
        assertTrue(rd.drawnSeats < 7, "failed inside the first segment");
        assertEq(_outcomeOf(sid, 0), INCONCLUSIVE, "segment 0");
        assertEq(_outcomeOf(sid, 1), INCONCLUSIVE, "segment 1, never drawn");
        _closeAndSettle(sid);
        assertEq(token.balanceOf(appellant), before, "both bonds back whole");
        assertEq(escrow.perVoteOf(sid, round, 1), 0, "no seat drawn on segment 1");
        assertEq(token.balanceOf(address(escrow)), 0, "nothing stays in the escrow");
    }
}
