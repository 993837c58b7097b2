// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Vm} from "../utils/TestBase.sol";
import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {ISettlementModule} from "../../src/interfaces/ISettlementModule.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review3WithholdingNeverErasesADecidedFail (outside review 3 of branch `withheld`)
/// @notice Property: the provider is the only party that can withhold a round's keys
/// (`publishPanelKeys` checks `msg.sender == provider`; an unfinished draw ends Cancelled, never
/// Expired), so withholding must never change a decided FAIL or who is paid for it - at any depth.
/// The branch keeps a decided FAIL at depth > 1 (`AppealMath.withheldKeeps`), and those tests pass here
/// (`test_OnlyTheProviderWithholds`, `test_WithheldAtDepth2KeepsTheFailAndEmptiesTheEscrow`). At depth 1
/// it still turns round 0's FAIL INCONCLUSIVE, for free: the provider appeals the FAIL it knows is right,
/// never publishes the 7-seat panel's keys, gets its bond back whole, and round 0 is scored against
/// INCONCLUSIVE: the honest FAIL voters lose their R, the provider's friend who voted PASS is scored
/// correct instead of wrong (no slash exposure), and the 3 R of round-0 pot goes to the withheld panel.
/// Fix: AppealMath.withheldKeeps(depth, contested) returns `contested == OUTCOME_FAIL` (drop
/// `depth > 1`): a withheld round over any decided FAIL, round 0's included, keeps it and forfeits its
/// bond to the locked seats (R each, from the bond: no Treasury money, so finding 2 stays fixed); the
/// Python mirror `consensus/appeal_resolution.withheld_keeps` the same.
contract Review3WithholdingNeverErasesADecidedFail is AppealsFixture {
    uint8 internal constant PASS = 1;
    uint8 internal constant FAIL = 2;
    uint8 internal constant INCONCLUSIVE = 3;

    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 40, STAKE);
        _nextEpoch();
        vm.prank(provider);
        token.approve(address(appeals), type(uint256).max);
    }

    /// @dev Round 0's settlement of one session: votes scored wrong, rewards paid.
    struct Round0 {
        uint256 incorrect;
        uint256 rewards;
    }

    function _round0(uint256 sid, Vm.Log[] memory logs) internal pure returns (Round0 memory p) {
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics.length < 2 || logs[i].topics[0] != ISettlementModule.AuditorSettled.selector) {
                continue;
            }
            if (uint256(logs[i].topics[1]) != sid) continue;
            (uint256 r,, uint256 incorrect,,, uint256 reward,,) = abi.decode(
                logs[i].data, (uint256, uint256, uint256, uint256, uint256, uint256, uint256, uint256)
            );
            if (r != 0) continue;
            p.incorrect += incorrect;
            p.rewards += reward;
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

    /// @dev One segment; round 0 votes FAIL 2 to 1 (auditor 0, the provider's friend, votes PASS).
    function _failedSegment() internal returns (uint256 sid) {
        sid = _openReady(1, 1, new bytes32[](0));
        _voteRound0(sid, 1, 1, 0);
        assertEq(_round0Outcome(sid, 0), FAIL, "round 0: FAIL");
        _toAppealWindow(sid);
    }

    function _settled(uint256 sid) internal returns (Round0 memory p) {
        vm.recordLogs();
        _closeAndSettle(sid);
        p = _round0(sid, vm.getRecordedLogs());
        assertEq(token.balanceOf(address(escrow)), 0, "escrow empty: in == out");
    }

    function test_WithheldAtDepth1KeepsRound0sFail() public {
        // Control: nobody appeals.
        uint256 c = _failedSegment();
        Round0 memory honest = _settled(c);
        // Attack: the provider appeals the FAIL and withholds the depth-1 keys.
        uint256 sid = _failedSegment();
        uint256 before = token.balanceOf(provider);
        vm.prank(provider);
        uint256 r1 = appeals.appeal(sid, _segs(0), type(uint256).max);
        _drawRound(sid, r1);
        _expire(sid, r1);
        uint256 outcome = _outcomeOf(sid, 0);
        Round0 memory attacked = _settled(sid);
        emit log_named_uint(
            "segment outcome after the withheld depth-1 round (2 FAIL, 3 INCONCLUSIVE)", outcome
        );
        emit log_named_decimal_uint("provider's net cost (TRUST)", before - token.balanceOf(provider), 18);
        emit log_named_decimal_uint("round-0 rewards without the appeal (TRUST)", honest.rewards, 18);
        emit log_named_decimal_uint("round-0 rewards with it (TRUST)", attacked.rewards, 18);
        emit log_named_uint("round-0 votes scored wrong without the appeal", honest.incorrect);
        emit log_named_uint("round-0 votes scored wrong with it", attacked.incorrect);
        emit log_named_decimal_uint("withheld panel's pay per seat (TRUST)", escrow.perVoteOf(sid, r1, 0), 18);
        assertEq(outcome, FAIL, "Review3: withholding the depth-1 keys erased round 0's decided FAIL");
        assertEq(attacked.rewards, honest.rewards, "round 0 paid as without the withheld appeal");
        assertEq(attacked.incorrect, honest.incorrect, "round 0 scored as without the withheld appeal");
    }

    /// @dev Nobody but the provider can publish a round's keys, and a round whose draw is not finished by
    /// its deadline ends Cancelled (UNFILLABLE), not Expired: only the provider can reach KEYS_WITHHELD.
    function test_OnlyTheProviderWithholds() public {
        uint256 sid = _failedSegment();
        uint256 r1 = _appeal(sid, _segs(0));
        _drawRound(sid, r1);
        vm.prank(appellant);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.NotProvider.selector, sid));
        appeals.publishPanelKeys(sid, r1, "bafy-not-mine");
        _publishRound(sid, r1);
        _voteRound(sid, r1, 1, 0, 0); // depth 1 upholds FAIL
        // A third party appeals at depth 2 and nobody draws its panel although its seed was obtainable in time:
        // the round lapses as the appellant's abandonment (Expired drawn short, outside review 6), not as
        // withheld keys: the FAIL stands.
        uint256 r2 = _appeal(sid, _segs(0));
        vm.roll(block.number + 1000);
        appeals.advance(sid);
        assertEq(uint256(appeals.roundOf(sid, r2).status), uint256(IAuditSessions.Status.Expired), "lapsed");
        assertEq(appeals.roundOf(sid, r2).drawnSeats, 0, "abandoned: never drawn");
        assertEq(_outcomeOf(sid, 0), FAIL, "unchanged");
    }

    /// @dev The branch's rule, attacked with a third-party depth-2 appellant over a decided FAIL whose keys
    /// the provider withholds, settled in reverse round order one segment per call: the FAIL stands and
    /// closes, the appellant's 15 R bond pays the 15 locked seats R each, nothing is paid twice, and the
    /// escrow ends empty.
    function test_WithheldAtDepth2KeepsTheFailAndEmptiesTheEscrow() public {
        uint256 sid = _failedSegment();
        uint256 r1 = _appeal(sid, _segs(0));
        _drawRound(sid, r1);
        _publishRound(sid, r1);
        _voteRound(sid, r1, 1, 0, 0); // depth 1 upholds FAIL
        address third = address(0x7E1D);
        token.transfer(third, 1000e18);
        vm.prank(third);
        token.approve(address(appeals), type(uint256).max);
        vm.prank(third);
        uint256 r2 = appeals.appeal(sid, _segs(0), type(uint256).max);
        _drawRound(sid, r2);
        _expire(sid, r2);
        assertEq(_outcomeOf(sid, 0), FAIL, "kept");
        assertTrue(appeals.segmentAppeals(sid, 0).closed, "closed");
        uint256 end = appeals.sessionAppeals(sid).lastWindowEnd;
        if (block.number <= end) vm.roll(end + 1);
        assertTrue(appeals.advance(sid), "outcome final");
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        escrow.settleAppeals(sid, 1);
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        uint256 paid = 0;
        for (uint256 r = 3; r > 0; --r) {
            address[] memory list = _roundAuditors(sid, r - 1);
            uint256[] memory bal = new uint256[](list.length);
            for (uint256 i = 0; i < list.length; ++i) {
                bal[i] = token.balanceOf(list[i]) + staking.poolOf(list[i]).assets;
            }
            settlement.settleBatch(sid, r - 1, list);
            if (r - 1 == r2) {
                for (uint256 i = 0; i < list.length; ++i) {
                    paid += token.balanceOf(list[i]) + staking.poolOf(list[i]).assets - bal[i];
                }
            }
            assertEq(escrow.roundMoney(sid, r - 1).held, 0, "nothing held after its settlement");
        }
        emit log_named_decimal_uint("withheld depth-2 panel paid in all (TRUST)", paid, 18);
        emit log_named_decimal_uint("third party's bond lost (TRUST)", 1000e18 - token.balanceOf(third), 18);
        assertEq(1000e18 - token.balanceOf(third), 15 * R, "the depth-2 bond is forfeited whole");
        assertTrue(paid <= 15 * R, "the forfeited bond is paid at most once");
        assertEq(escrow.perVoteOf(sid, r2, 0), R, "R per locked seat");
        assertEq(escrow.sessionMoney(sid).budgetUsed, 0, "no Treasury money");
        assertEq(token.balanceOf(address(escrow)), 0, "escrow empty: in == out");
        assertTrue(token.balanceOf(address(treasury)) >= treasuryBefore, "the treasury paid nothing");
    }

    /// @dev One withheld depth-2 round over two segments: a decided FAIL (kept, its bond forfeited to its 15
    /// seats) and a decided PASS (INCONCLUSIVE, scored as FAIL: its bond back, its seats paid from the pot only), settled
    /// one segment per call and rounds in reverse order: each segment's money is its own, nothing is paid
    /// twice, the Treasury pays only the depth-1 overturn of the FAIL, the escrow ends empty.
    function test_WithheldMixedRoundKeepsEachSegmentsOwnRule() public {
        uint256 sid = _openReady(2, 1, new bytes32[](0));
        _voteRound0(sid, 1 << 1, 0, 0); // segment 0 PASS, segment 1 FAIL
        _toAppealWindow(sid);
        uint256 r1 = _appeal(sid, _segs(0, 1));
        _drawRound(sid, r1);
        _publishRound(sid, r1);
        _voteRound(sid, r1, 1, 0, 0); // depth 1 overturns both: segment 0 FAIL, segment 1 PASS
        address third = address(0x7E1D);
        token.transfer(third, 1000e18);
        vm.prank(third);
        token.approve(address(appeals), type(uint256).max);
        vm.prank(third);
        uint256 r2 = appeals.appeal(sid, _segs(0, 1), type(uint256).max);
        _drawRound(sid, r2);
        _expire(sid, r2);
        assertEq(_outcomeOf(sid, 0), FAIL, "the decided FAIL is kept");
        assertEq(_outcomeOf(sid, 1), INCONCLUSIVE, "the decided PASS is not");
        uint256 end = appeals.sessionAppeals(sid).lastWindowEnd;
        if (block.number <= end) vm.roll(end + 1);
        assertTrue(appeals.advance(sid), "outcome final");
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        escrow.settleAppeals(sid, 1);
        escrow.settleAppeals(sid, 1);
        for (uint256 r = 3; r > 0; --r) {
            address[] memory list = _roundAuditors(sid, r - 1);
            settlement.settleBatch(sid, r - 1, list);
            assertEq(escrow.roundMoney(sid, r - 1).held, 0, "nothing held after its settlement");
        }
        emit log_named_decimal_uint("third party's net loss (TRUST)", 1000e18 - token.balanceOf(third), 18);
        emit log_named_decimal_uint("budget used (TRUST)", escrow.sessionMoney(sid).budgetUsed, 18);
        assertEq(1000e18 - token.balanceOf(third), 15 * R, "the FAIL segment's bond only");
        assertEq(escrow.perVoteOf(sid, r2, 0), R, "kept FAIL: R per locked seat from the bond");
        // Segment 1 is INCONCLUSIVE for the verdict but scored as FAIL (a withheld PASS, outside review 5): its
        // depth-1 appeal of round 0's FAIL is UPHELD, so its 7 R bond (no seat agreed with FAIL) is the pot
        // the 15 withheld seats share; round 0's three FAIL votes agree (no round-0 pot).
        assertEq(escrow.perVoteOf(sid, r2, 1), 7 * R / 15, "INCONCLUSIVE: the pot shared, no budget");
        assertEq(escrow.perVoteOf(sid, r1, 0), R, "the depth-1 overturn to FAIL is paid");
        assertEq(
            escrow.perVoteOf(sid, r1, 1), R, "the upheld depth-1 appeal pays agreeing seats, none agreed"
        );
        assertEq(token.balanceOf(address(escrow)), 0, "escrow empty: in == out");
    }
}
