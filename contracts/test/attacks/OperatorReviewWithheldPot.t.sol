// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Vm} from "../utils/TestBase.sol";
import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {ISettlementModule} from "../../src/interfaces/ISettlementModule.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @notice Outside review of "KEYS_WITHHELD panels are paid from the pot only" (AppealSettlement._fund).
/// Attacks: make a withheld round still draw on the Treasury's appeal budget by mixing it in one session
/// with an OVERTURNED round (withheld segment before and after the overturned one in settlement order), by a
/// withheld round over several segments, by settling one segment per call, and by withholding at depth 2
/// over a segment a depth-1 panel overturned. Every run checks the budget used to the wei and that the
/// escrow ends empty (token conservation: what came in went out).
contract OperatorReviewWithheldPotTest is AppealsFixture {
    uint8 internal constant PASS = 1;
    uint8 internal constant FAIL = 2;
    uint8 internal constant INCONCLUSIVE = 3;
    /// The overturned segment alone: its 7 agreeing seats at R (3 R from the pot, 4 R from the budget) and
    /// the appellant's 20% of its 7 R bond (1.4 R, budget).
    uint256 internal constant OVERTURN_BUDGET = 4 * R + 7 * R * 2000 / 10_000;
    /// A withheld segment's pot: round 0's three seats, none agreeing with INCONCLUSIVE.
    uint256 internal constant POT = 3 * R;

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 40, STAKE);
        _nextEpoch();
        vm.prank(provider);
        token.approve(address(appeals), type(uint256).max);
    }

    /// @dev Draw two rounds after one shared randomness delay (so neither's key deadline lapses first).
    function _drawBoth(uint256 sid, uint256 a, uint256 b) internal {
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        uint256[2] memory rounds = [a, b];
        for (uint256 k = 0; k < 2; ++k) {
            for (uint256 i = 0; i < 64; ++i) {
                IAppealModule.Round memory rd = appeals.roundOf(sid, rounds[k]);
                bool open = rd.status == IAuditSessions.Status.Created
                    || (rd.status == IAuditSessions.Status.Drawing && rd.drawnSeats < rd.totalSeats);
                if (!open) break;
                appeals.drawPanel(sid, rounds[k], 16);
            }
        }
    }

    function _expire(uint256 sid, uint256 round) internal {
        uint256 deadline = appeals.roundOf(sid, round).keyDeadline;
        if (block.number <= deadline) vm.roll(deadline + 1);
        appeals.advance(sid);
        assertEq(
            uint256(appeals.roundOf(sid, round).status), uint256(IAuditSessions.Status.Expired), "withheld"
        );
    }

    /// @dev Round 0 says PASS on all 3 segments; the appellant appeals `overturned` (its panel says FAIL), the
    /// provider appeals the `withheld` segments in one round and withholds its keys. Settled `chunk`
    /// segments per `settleAppeals` call.
    function _mixed(uint256 overturned, uint256[] memory withheld, uint256 chunk)
        internal
        returns (uint256 sid)
    {
        sid = _openReady(3, 1, new bytes32[](0));
        _voteRound0(sid, 0, 0, 0);
        _toAppealWindow(sid);
        uint256 a = _appeal(sid, _segs(overturned));
        vm.prank(provider);
        uint256 b = appeals.appeal(sid, withheld, type(uint256).max);
        _drawBoth(sid, a, b);
        _publishRound(sid, a);
        _voteRound(sid, a, 1 << overturned, 0, 0);
        _expire(sid, b);
        uint256 end = appeals.sessionAppeals(sid).lastWindowEnd;
        if (block.number <= end) vm.roll(end + 1);
        assertTrue(appeals.advance(sid), "outcome final");
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        uint256 calls = 0;
        while (escrow.sessionMoney(sid).resolvedCount < appeals.sessionAppeals(sid).appealedCount) {
            escrow.settleAppeals(sid, chunk);
            ++calls;
            assertTrue(calls <= 8, "bounded");
        }
        for (uint256 r = 0; r <= appeals.sessionAppeals(sid).roundCount; ++r) {
            address[] memory list = _roundAuditors(sid, r);
            if (list.length != 0) settlement.settleBatch(sid, r, list);
        }
        assertEq(_outcomeOf(sid, overturned), FAIL, "overturned");
        for (uint256 i = 0; i < withheld.length; ++i) {
            assertEq(_outcomeOf(sid, withheld[i]), INCONCLUSIVE, "withheld");
            assertEq(escrow.perVoteOf(sid, b, withheld[i]), POT / 7, "withheld seat: pot / 7, no budget");
        }
        assertEq(
            escrow.perVoteOf(sid, a, overturned), R, "the overturned panel is paid R from pot and budget"
        );
        assertEq(escrow.sessionMoney(sid).budgetUsed, OVERTURN_BUDGET, "budget: the overturned segment only");
        assertEq(
            escrow.sessionMoney(sid).shortfall,
            withheld.length * (7 * R - 7 * (POT / 7)),
            "withheld: shortfall"
        );
        assertEq(token.balanceOf(address(escrow)), 0, "escrow empty: in == out");
        assertEq(escrow.roundMoney(sid, b).held, 0, "nothing stuck in the withheld round");
    }

    /// @dev Withheld segment AFTER the overturned one in settlement order (the overturned one drains the
    /// budget first; the withheld one must not take what is left).
    function test_WithheldAfterOverturnedUsesNoBudget() public {
        _mixed(0, _segs(2), 1024);
    }

    /// @dev Withheld segment BEFORE the overturned one: its pot-only pay must not shift the overturned
    /// segment onto more budget (each segment's pot is its own).
    function test_WithheldBeforeOverturnedUsesNoBudget() public {
        _mixed(2, _segs(0), 1024);
    }

    /// @dev A withheld round over two segments around the overturned one, settled one segment per call.
    function test_WithheldTwoSegmentsSettledOneByOneUsesNoBudget() public {
        _mixed(1, _segs(0, 2), 1);
    }

    /// @dev Depth 1 overturns segment 0 (PASS -> FAIL); then a depth-2 appeal of it has its keys withheld.
    /// The decided FAIL stands (AppealMath.withheldKeeps): the withheld panel's 15 seats are paid R each from
    /// the forfeited bond, never the budget; the budget pays the overturn alone, as without the depth-2 appeal.
    function test_WithheldOverAnOverturnPaysItsSeatsFromTheBond() public {
        uint256 sid = _openReady(1, 1, new bytes32[](0));
        _voteRound0(sid, 0, 0, 0);
        _toAppealWindow(sid);
        uint256 r1 = _appeal(sid, _segs(0));
        _drawRound(sid, r1);
        _publishRound(sid, r1);
        _voteRound(sid, r1, 1, 0, 0); // overturned to FAIL
        uint256 providerBefore = token.balanceOf(provider);
        vm.prank(provider);
        uint256 r2 = appeals.appeal(sid, _segs(0), type(uint256).max);
        _drawRound(sid, r2);
        _expire(sid, r2);
        assertEq(_outcomeOf(sid, 0), FAIL, "the decided FAIL stands");
        assertTrue(appeals.segmentAppeals(sid, 0).closed, "and is final");
        uint256 appellantBefore = token.balanceOf(appellant);
        _closeAndSettle(sid);
        assertEq(escrow.sessionMoney(sid).budgetUsed, OVERTURN_BUDGET, "budget: the overturn only");
        assertEq(escrow.sessionMoney(sid).shortfall, 0, "no shortfall");
        assertEq(escrow.perVoteOf(sid, r2, 0), R, "the 15 withheld seats: R each from the bond");
        assertEq(escrow.perVoteOf(sid, r1, 0), R, "the overturning panel is paid");
        assertEq(token.balanceOf(appellant) - appellantBefore, 7 * R + 7 * R * 2000 / 10_000, "bond + reward");
        assertEq(providerBefore - token.balanceOf(provider), 15 * R, "the withheld bond is forfeited");
        assertEq(token.balanceOf(address(escrow)), 0, "escrow empty: in == out");
    }

    /// @dev The other way round: round 0 FAILs the segment, depth 1 passes it, an honest party appeals the
    /// PASS at depth 2 and the provider withholds the keys. Keeping the decided PASS would hand the
    /// provider a free veto on every appeal of a PASS (and the honest bond to the seats): the segment
    /// becomes INCONCLUSIVE as before, the honest bond comes back whole and the seats share the pot only.
    function test_WithheldAgainstAPassDoesNotKeepIt() public {
        address honest = address(0xB0B);
        token.transfer(honest, 1000e18);
        vm.prank(honest);
        token.approve(address(appeals), type(uint256).max);
        uint256 sid = _openReady(1, 1, new bytes32[](0));
        _voteRound0(sid, 1, 0, 0); // FAIL
        _toAppealWindow(sid);
        uint256 r1 = _appeal(sid, _segs(0));
        _drawRound(sid, r1);
        _publishRound(sid, r1);
        _voteRound(sid, r1, 0, 0, 0); // passed at depth 1
        vm.prank(honest);
        uint256 r2 = appeals.appeal(sid, _segs(0), type(uint256).max);
        _drawRound(sid, r2);
        _expire(sid, r2);
        assertEq(_outcomeOf(sid, 0), INCONCLUSIVE, "withholding never keeps a PASS");
        (bool passed,,,,) = escrow.verdictOf(sid);
        assertTrue(!passed, "the trace does not pass");
        uint256 appellantBefore = token.balanceOf(appellant);
        _closeAndSettle(sid);
        assertEq(token.balanceOf(honest), 1000e18, "the honest depth-2 bond came back whole");
        // Scored as FAIL (a withheld PASS, outside review 5): the depth-1 appeal of round 0's FAIL is UPHELD,
        // its 7 R bond (no seat agreed with FAIL) joins the pot that the 15 withheld seats share.
        assertEq(token.balanceOf(appellant) - appellantBefore, 0, "depth 1 UPHELD against FAIL: bond lost");
        assertEq(escrow.sessionMoney(sid).budgetUsed, 0, "no budget");
        assertEq(escrow.perVoteOf(sid, r2, 0), 7 * R / 15, "the withheld seats share the pot only");
        assertEq(token.balanceOf(address(escrow)), 0, "escrow empty: in == out");
    }

    /// @dev What one round's settlement paid: scored-wrong votes, slashes and rewards over its auditors.
    struct Paid {
        uint256 incorrect;
        uint256 slashes;
        uint256 rewards;
    }

    function _paid(uint256 sid, uint256 round, Vm.Log[] memory logs) internal pure returns (Paid memory p) {
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics.length < 2 || logs[i].topics[0] != ISettlementModule.AuditorSettled.selector) {
                continue;
            }
            if (uint256(logs[i].topics[1]) != sid) continue;
            (uint256 r,, uint256 incorrect,, uint256 s, uint256 reward,,) = abi.decode(
                logs[i].data, (uint256, uint256, uint256, uint256, uint256, uint256, uint256, uint256)
            );
            if (r != round) continue;
            p.incorrect += incorrect;
            p.slashes += s;
            p.rewards += reward;
        }
    }

    /// @dev One run of the scenario below.
    struct Run {
        uint256 sid;
        uint256 r1;
        uint256 r2;
        Paid p0;
        Paid p1;
        uint256 appellantGain;
        int256 providerNet;
    }

    /// @dev One segment, round 0 (3 lazy seats) says PASS, an honest appellant's depth-1 panel overturns it
    /// to FAIL; then, if `withhold`, the provider appeals at depth 2 and never publishes the keys.
    function _overturnThenMaybeWithhold(bool withhold) internal returns (Run memory x) {
        x.sid = _openReady(1, 1, new bytes32[](0));
        _voteRound0(x.sid, 0, 0, 0);
        _toAppealWindow(x.sid);
        uint256 appellantBefore = token.balanceOf(appellant);
        x.r1 = _appeal(x.sid, _segs(0));
        _drawRound(x.sid, x.r1);
        _publishRound(x.sid, x.r1);
        _voteRound(x.sid, x.r1, 1, 0, 0);
        uint256 providerBefore = token.balanceOf(provider);
        if (withhold) {
            vm.prank(provider);
            x.r2 = appeals.appeal(x.sid, _segs(0), type(uint256).max);
            _drawRound(x.sid, x.r2);
            _expire(x.sid, x.r2);
        }
        vm.recordLogs();
        _closeAndSettle(x.sid);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        x.p0 = _paid(x.sid, 0, logs);
        x.p1 = _paid(x.sid, x.r1, logs);
        x.appellantGain = token.balanceOf(appellant) - appellantBefore; // bond taken and returned
        x.providerNet = int256(token.balanceOf(provider)) - int256(providerBefore);
    }

    function _m(uint256 v) internal pure returns (string memory) {
        return Strings.toString(v / 1e15);
    }

    function _report(Run memory a, Run memory c) internal pure returns (string memory) {
        string memory head = string.concat(
            "withholding the depth-2 keys changed the settlement: depth-1 panel paid ",
            _m(a.p1.rewards),
            " mTRUST (without: ",
            _m(c.p1.rewards),
            "), appellant reward ",
            _m(a.appellantGain),
            " mTRUST (without: ",
            _m(c.appellantGain),
            "); "
        );
        return string.concat(
            head,
            "round-0 votes scored wrong/slashed ",
            Strings.toString(a.p0.incorrect),
            "/",
            Strings.toString(a.p0.slashes),
            " (without: ",
            Strings.toString(c.p0.incorrect),
            "/",
            Strings.toString(c.p0.slashes),
            "), withholder's token change ",
            a.providerNet < 0 ? "-" : "",
            _m(uint256(a.providerNet < 0 ? -a.providerNet : a.providerNet)),
            " mTRUST"
        );
    }

    /// @dev Second review, fixed: withholding the keys of a NEXT-depth appeal no longer erases a decided
    /// overturn. Sequence: round 0's three seats (lazy, or the provider's friends) pass a wrong segment; an
    /// honest appellant bonds 7 R and its depth-1 panel overturns it to FAIL; the provider then appeals the
    /// segment at depth 2 (bond 15 R) and never publishes the panel's keys. Before the fix the segment ended
    /// INCONCLUSIVE, the depth-1 appeal VOIDED: depth-1 panel paid 0 (42 TRUST without the withholding),
    /// appellant reward 0 (8.4 TRUST), round-0 votes scored wrong/slashed 0/0 (3/1), provider's token change
    /// 0. Now the decided FAIL stands and the segment closes, so everything earlier settles exactly as if the
    /// depth-2 appeal had never been made, and its 15 R bond pays the 15 locked seats instead of coming back.
    function test_WithheldNextDepthKeepsTheDecidedOverturn() public {
        Run memory c = _overturnThenMaybeWithhold(false);
        Run memory a = _overturnThenMaybeWithhold(true);
        if (
            a.p1.rewards != c.p1.rewards || a.appellantGain != c.appellantGain
                || a.p0.incorrect != c.p0.incorrect || a.providerNet != -int256(15 * R)
        ) {
            _fail(_report(a, c));
        }
        assertEq(_outcomeOf(a.sid, 0), FAIL, "the decided overturn stands");
        assertEq(a.p1.rewards, 7 * R, "the depth-1 panel is paid R per seat");
        assertEq(escrow.perVoteOf(a.sid, a.r1, 0), R, "the overturning panel is paid");
        assertEq(a.appellantGain, 7 * R * 2000 / 10_000, "the depth-1 appellant's 20% reward");
        assertEq(a.p0.incorrect, 3, "the round-0 PASS votes are scored wrong");
        assertTrue(a.p0.slashes <= a.p0.incorrect, "slashed by their coins (each session has its own seed)");
        assertTrue(a.providerNet == -int256(15 * R), "the withheld bond is not refunded");
        assertEq(escrow.perVoteOf(a.sid, a.r2, 0), R, "it pays the 15 locked seats R each");
        assertEq(token.balanceOf(address(escrow)), 0, "escrow empty: in == out");
    }
}
