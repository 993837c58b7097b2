// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "./utils/AppealsFixture.sol";
import {IAppealModule} from "../src/interfaces/IAppealModule.sol";
import {IAppealSettlement} from "../src/interfaces/IAppealSettlement.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {AppealMath} from "../src/libraries/AppealMath.sol";
import {AuditSessions} from "../src/AuditSessions.sol";

/// @notice The whole flow of issue 15 on the real contracts: open, commit canaries, draw, vote,
/// finalize, reveal canaries, appeal, panel draw, panel keys, panel vote, round finalize, outcome
/// final, appeal money, settle every round; and each appeal path of the money table.
contract AppealsTest is AppealsFixture {
    uint8 internal constant PASS = 1;
    uint8 internal constant FAIL = 2;
    uint256 internal constant N = 10;

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 30, STAKE);
        _nextEpoch();
    }

    function _oneCanary(uint256 sid, uint256 index, uint8 verdict)
        internal
        pure
        returns (bytes32[] memory c)
    {
        c = new bytes32[](1);
        c[0] = _canaryCommitment(sid, index, verdict);
    }

    /// @dev A session of N LLM segments with one FAIL canary at segment 9; round 0 votes `failMask`.
    function _session(uint256 failMask) internal returns (uint256 sid) {
        sid = sessions.sessionCount() + 1;
        sid = _openReady(N, 1, _oneCanary(sid, 9, FAIL));
        _voteRound0(sid, failMask, 0, 0);
    }

    function test_fullFlow_overturnedAndUpheld_inOneRound() public {
        // Round 0 wrongly fails segment 0 (its truth is PASS) and rightly fails the canary (segment 9).
        uint256 sid = _session((1 << 0) | (1 << 9));
        assertEq(_round0Outcome(sid, 0), 2, "round 0 FAIL");
        assertEq(
            appeals.appealableUntil(sid), block.number + CANARY_BLOCKS + APPEAL_BLOCKS, "appealable until"
        );
        // The canary is revealed in its window; the appeal window opens after it.
        vm.roll(block.number + 1);
        _revealCanary(sid, 0, 9, FAIL);
        vm.expectRevert(
            abi.encodeWithSelector(
                IAppealModule.AppealWindowNotOpen.selector, sid, appeals.sessionAppeals(sid).canaryEnd
            )
        );
        appeals.quote(sid, _segs(0, 1));
        _toAppealWindow(sid);
        IAppealModule.Quote memory q = appeals.quote(sid, _segs(0, 1));
        assertEq(q.round, 1, "round");
        assertEq(q.depth, 1, "depth");
        assertEq(q.bond, 2 * 7 * R, "bond = k_1 R per segment");
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segs(0, 1));
        assertEq(token.balanceOf(appellant), before - q.bond, "bond pulled");
        _drawRound(sid, round);
        assertEq(appeals.roundOf(sid, round).drawnSeats, 14, "7 seats per segment");
        _assertExcludesEarlier(sid, round);
        _publishRound(sid, round);
        _voteRound(sid, round, 0, 0, 0); // the panel says PASS on both
        assertEq(_outcomeOf(sid, 0), 1, "overturned to PASS");
        assertEq(_outcomeOf(sid, 1), 1, "upheld PASS");
        assertEq(uint256(sessions.sessionOf(sid).slashRequest), 0, "no slash seed while appealable");
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        _closeAndSettle(sid);
        IAppealModule.SessionAppeals memory sa = appeals.sessionAppeals(sid);
        assertTrue(sa.outcomeFinal && sa.passed, "final verdict PASS (canary excluded)");
        assertEq(sa.scoreBps, 10_000, "9 of 9 real segments PASS");
        // Appellant: segment 0 overturned (bond back + 20%), segment 1 upheld (bond lost).
        uint256 bond = 7 * R;
        assertEq(token.balanceOf(appellant), before - bond + bond * 2000 / 10_000, "appellant");
        // Segment 0: pot 3R (nobody agreed with PASS in round 0) + budget pays 7R panel + reward.
        IAppealSettlement.SessionMoney memory m = escrow.sessionMoney(sid);
        assertEq(m.budgetUsed, 7 * R + bond * 2000 / 10_000 - 3 * R, "budget used");
        assertEq(m.shortfall, 0, "no shortfall");
        assertEq(escrow.perVoteOf(sid, round, 0), R, "overturned panel paid R");
        assertEq(escrow.perVoteOf(sid, round, 1), R, "upheld panel paid R from the bond");
        _assertDrained(sid, round);
        // The canary refund (k R * 50%) and the budget came out of the treasury; slashes went in.
        assertTrue(token.balanceOf(address(treasury)) != treasuryBefore, "treasury moved");
    }

    function _assertExcludesEarlier(uint256 sid, uint256 round) internal view {
        address[] memory r0 = _roundAuditors(sid, 0);
        address[] memory r1 = _roundAuditors(sid, round);
        for (uint256 i = 0; i < r1.length; ++i) {
            uint256[] memory now1 = drawModule.seatsOf(sid, round, r1[i]);
            for (uint256 j = 0; j < r0.length; ++j) {
                if (r0[j] != r1[i]) continue;
                uint256[] memory was = drawModule.seatsOf(sid, 0, r0[j]);
                for (uint256 a = 0; a < now1.length; ++a) {
                    for (uint256 b = 0; b < was.length; ++b) {
                        assertTrue(now1[a] != was[b], "an earlier auditor sits on the appeal panel");
                    }
                }
            }
        }
    }

    /// @dev Nothing is left anywhere once every round is settled.
    function _assertDrained(uint256 sid, uint256 lastRound) internal view {
        assertEq(token.balanceOf(address(escrow)), 0, "escrow empty");
        assertEq(token.balanceOf(address(appeals)), 0, "appeal module holds nothing");
        assertEq(token.balanceOf(address(sessions)), 0, "core pool swept");
        assertEq(token.balanceOf(address(settlement)), 0, "settlement module holds nothing");
        for (uint256 r = 1; r <= lastRound; ++r) {
            assertEq(escrow.roundMoney(sid, r).held, 0, "round rewards all paid");
        }
        assertEq(uint256(sessions.sessionOf(sid).pool), 0, "pool");
    }

    function test_noAppeal_settlesAfterWindows() public {
        uint256 sid = _session(1 << 9);
        vm.roll(block.number + 1);
        _revealCanary(sid, 0, 9, FAIL);
        // Settlement waits for the outcome: no slash seed is even requested yet.
        address[] memory list = _roundAuditors(sid, 0);
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.SlashSeedPending.selector, sid));
        settlement.settleBatch(sid, 0, list);
        vm.expectRevert(abi.encodeWithSelector(IAppealSettlement.OutcomeNotFinal.selector, sid));
        escrow.settleAppeals(sid, 10);
        assertTrue(!appeals.advance(sid), "windows still open");
        _closeAndSettle(sid);
        assertEq(escrow.sessionMoney(sid).resolvedCount, 0, "nothing appealed");
        _assertDrained(sid, 0);
    }

    function test_upheld_bondPaysPanel_restToTreasury() public {
        uint256 sid = _session(0);
        vm.roll(block.number + CANARY_BLOCKS + 1); // canary never revealed
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segs(2));
        _drawRound(sid, round);
        _publishRound(sid, round);
        _voteRound(sid, round, 1 << 3, 0, 0); // unrelated mask: segment 2 stays PASS
        _closeAndSettle(sid);
        assertEq(token.balanceOf(appellant), before - 7 * R, "bond lost");
        assertEq(escrow.perVoteOf(sid, round, 2), R, "bond pays R per agreeing seat");
        _assertDrained(sid, round);
        // Unrevealed canary: the largest weight (1) comes off W: 8 of 9 real... segment 9 counts as real.
        IAppealModule.SessionAppeals memory sa = appeals.sessionAppeals(sid);
        assertEq(sa.scoreBps, 9000, "(10 - 1) / 10");
    }

    function test_multipleRounds_secondPanelDecides() public {
        uint256 sid = _session(1 << 0);
        vm.roll(block.number + CANARY_BLOCKS + 1);
        uint256 r1 = _appeal(sid, _segs(0));
        _drawRound(sid, r1);
        _publishRound(sid, r1);
        _voteRound(sid, r1, 0, 0, 0); // PASS
        assertEq(_outcomeOf(sid, 0), 1, "round 1 PASS");
        // The provider's rival appeals again: depth 2, 15 seats, bond 15 R.
        IAppealModule.Quote memory q = appeals.quote(sid, _segs(0));
        assertEq(q.depth, 2, "depth 2");
        assertEq(q.bond, 15 * R, "k_2 R");
        uint256 r2 = _appeal(sid, _segs(0));
        _drawRound(sid, r2);
        assertEq(appeals.roundOf(sid, r2).drawnSeats, 15, "15 seats");
        _publishRound(sid, r2);
        _voteRound(sid, r2, 0, 0, 0); // PASS again: round 2 upheld, round 1 overturned
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.NoRoundsLeft.selector, sid, 0));
        appeals.quote(sid, _segs(0));
        uint256 before = token.balanceOf(appellant);
        _closeAndSettle(sid);
        // Round 1 (overturned): bond 7R back + 1.4R reward; round 2 (upheld): nothing back.
        assertEq(token.balanceOf(appellant), before + 7 * R + 7 * R * 2000 / 10_000, "appellant payouts");
        _assertDrained(sid, r2);
    }

    function test_refusals() public {
        uint256 sid = _session(0);
        vm.expectRevert(
            abi.encodeWithSelector(
                IAppealModule.AppealWindowNotOpen.selector, sid, block.number + CANARY_BLOCKS
            )
        );
        appeals.quote(sid, _segs(0));
        vm.roll(block.number + CANARY_BLOCKS + 1);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.InvalidSegment.selector, sid, N));
        appeals.quote(sid, _segs(N));
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.SegmentsNotAscending.selector, sid, 1));
        appeals.quote(sid, _segs(1, 1));
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.BondAboveLimit.selector, 7 * R, 7 * R - 1));
        vm.prank(appellant);
        appeals.appeal(sid, _segs(0), 7 * R - 1);
        _appeal(sid, _segs(2));
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.AppealPending.selector, sid, 2));
        appeals.quote(sid, _segs(2));
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.MixedDepths.selector, sid, 2));
        appeals.quote(sid, _segs(1, 2));
        vm.roll(block.number + APPEAL_BLOCKS + 1);
        vm.expectRevert(
            abi.encodeWithSelector(
                IAppealModule.AppealWindowClosed.selector, sid, 1, appeals.sessionAppeals(sid).windowEnd
            )
        );
        appeals.quote(sid, _segs(1));
    }

    function test_notEnoughEligibleAuditors() public {
        // 30 LLM auditors: depth 1 needs 7 beyond round 0's 3, depth 2 needs 15 beyond 3 + 7 = 10 -> 20 <= 30.
        // A session of the human tier (k_0 = 3) with only 8 human auditors: 8 - 3 = 5 < 7.
        _addAuditors(2, 8, STAKE);
        _nextEpoch();
        uint256 sid = _open(_uniform(4, 2), FEE);
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 0, 0, 0);
        vm.roll(block.number + 1);
        vm.expectRevert(
            abi.encodeWithSelector(IAppealModule.NotEnoughEligibleAuditors.selector, sid, 0, 5, 7)
        );
        appeals.quote(sid, _segs(0));
    }

    function test_appealsDisabled() public {
        IAppealModule.AppealParams memory p = _appealParams();
        p.appealBlocks = 0;
        vm.prank(owner);
        escrow.setParams(p);
        uint256 sid = _session(0);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.AppealsDisabled.selector, sid));
        appeals.quote(sid, _segs(0));
    }

    function test_panelSeatsAndBond() public view {
        assertEq(appeals.panelSeats(3, 0), 3, "k0");
        assertEq(appeals.panelSeats(3, 1), 7, "k1");
        assertEq(appeals.panelSeats(3, 2), 15, "k2");
        assertEq(appeals.panelSeats(3, 3), 31, "k3");
        assertEq(appeals.minBond(3, 1, R, 15_000), 7 * R * 15_000 / 10_000, "bond");
        assertEq(AppealMath.cheapestSpoil(7, 6000), 3, "spoil 7 at 60%");
    }
}
