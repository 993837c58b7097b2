// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Vm} from "../utils/TestBase.sol";
import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {ISettlementModule} from "../../src/interfaces/ISettlementModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review5WithholdingNeverRefundsTheProvidersBond (outside review 5 of main edc6491, withheldKeeps)
/// @notice Property: only the provider can withhold a round's keys, so withholding must leave the provider
/// (and every appeal it made, under any address) no better off than letting the round vote.
/// The depth-1 rule of review 3 (`withheldKeeps` = contested == FAIL) closes the depth-1 route. The route
/// one depth deeper stays open: round 0 decides a FAIL (right); the provider appeals it (depth 1, bond
/// 7 R); the 7-seat panel overturns it to PASS (wrongly: friends or error); a third party appeals the PASS
/// (depth 2, bond 15 R). The provider never publishes the depth-2 keys: the contested PASS becomes
/// INCONCLUSIVE, so the provider's depth-1 appeal is VOIDED and its 7 R bond comes back whole, the depth-1
/// PASS voters are not scored (no slash exposure) and round 0's two honest FAIL voters lose their R each
/// (their 3 R reservation becomes the pot that pays the 15 withheld seats 0.2 R each). Had the depth-2
/// panel voted (control), the FAIL is restored, the provider's depth-1 appeal is UPHELD and its bond pays
/// the panel. The trace verdict is the same either way (a non-PASS segment): withholding is a free option.
/// Measured before the fix (`forge test --match-path 'contracts/test/attacks/Review5*' -vv`): provider's net
/// cost of its appeal 0 TRUST when it withholds vs 42 TRUST (7 R) in the control; round-0 rewards 0 vs
/// 12 TRUST; depth-1 votes scored wrong 0 vs 7.
/// Fixed (the lead's rule, `AppealMath.scoringOutcome`): keys withheld over a contested PASS leave the verdict
/// INCONCLUSIVE but score round 0 and every earlier appeal against FAIL (adverse inference: only the provider
/// can withhold); the withheld round's appellant gets its bond back and no reward, its seats share the pot.
/// Measured now (same command): provider's appeal cost 42 vs 42 TRUST (withheld vs voted), round-0 rewards
/// 12 vs 12 TRUST, depth-1 votes scored wrong 7 vs 7; the 15 withheld seats get 3.2 TRUST each from the pot
/// (the forfeited depth-1 bond).
contract Review5WithholdingNeverRefundsTheProvidersBond is AppealsFixture {
    uint8 internal constant PASS = 1;
    uint8 internal constant FAIL = 2;
    uint8 internal constant INCONCLUSIVE = 3;

    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    address internal third = address(0x7E1D);

    /// @dev Settlement figures of one session, from its AuditorSettled events.
    struct Scores {
        uint256 round0Rewards;
        uint256 round0Incorrect;
        uint256 round0Slashes;
        uint256 round1Incorrect;
        uint256 round1Slashes;
    }

    /// @dev What one scenario measured.
    struct Outcome {
        uint256 segment;
        uint256 providerCost;
        uint256 depth2PerSeat;
        Scores scores;
    }

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 40, STAKE);
        _nextEpoch();
        vm.prank(provider);
        token.approve(address(appeals), type(uint256).max);
        token.transfer(third, 10_000e18);
        vm.prank(third);
        token.approve(address(appeals), type(uint256).max);
    }

    function _scores(uint256 sid, Vm.Log[] memory logs) internal pure returns (Scores memory s) {
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics.length < 2 || logs[i].topics[0] != ISettlementModule.AuditorSettled.selector) {
                continue;
            }
            if (uint256(logs[i].topics[1]) != sid) continue;
            (uint256 r,, uint256 incorrect,, uint256 slashes, uint256 reward,,) = abi.decode(
                logs[i].data, (uint256, uint256, uint256, uint256, uint256, uint256, uint256, uint256)
            );
            if (r == 0) {
                s.round0Rewards += reward;
                s.round0Incorrect += incorrect;
                s.round0Slashes += slashes;
            }
            if (r == 1) {
                s.round1Incorrect += incorrect;
                s.round1Slashes += slashes;
            }
        }
    }

    /// @dev Round 0 FAIL (2 to 1), the provider appeals, depth 1 overturns to PASS, a third party appeals
    /// the PASS; then the provider withholds the depth-2 keys (`withhold`) or the panel restores FAIL.
    function _scenario(bool withhold) internal returns (Outcome memory o) {
        uint256 sid = _openReady(1, 1, new bytes32[](0));
        _voteRound0(sid, 1, 1, 0);
        assertEq(_round0Outcome(sid, 0), FAIL, "round 0: FAIL");
        _toAppealWindow(sid);
        uint256 before = token.balanceOf(provider);
        vm.prank(provider);
        uint256 r1 = appeals.appeal(sid, _segs(0), type(uint256).max);
        _drawRound(sid, r1);
        _publishRound(sid, r1);
        _voteRound(sid, r1, 0, 0, 0); // the 7-seat panel votes PASS: overturned
        assertEq(_outcomeOf(sid, 0), PASS, "depth 1 overturned to PASS");
        vm.prank(third);
        uint256 r2 = appeals.appeal(sid, _segs(0), type(uint256).max);
        _drawRound(sid, r2);
        if (withhold) {
            vm.roll(appeals.roundOf(sid, r2).keyDeadline + 1);
            appeals.advance(sid);
            assertEq(
                uint256(appeals.roundOf(sid, r2).status), uint256(IAuditSessions.Status.Expired), "withheld"
            );
        } else {
            _publishRound(sid, r2);
            _voteRound(sid, r2, 1, 0, 0); // the 15-seat panel restores FAIL
        }
        o.segment = _outcomeOf(sid, 0);
        vm.recordLogs();
        _closeAndSettle(sid);
        o.scores = _scores(sid, vm.getRecordedLogs());
        o.providerCost = before - token.balanceOf(provider);
        o.depth2PerSeat = escrow.perVoteOf(sid, r2, 0);
        assertEq(token.balanceOf(address(escrow)), 0, "escrow empty");
    }

    function test_WithholdingNeverRefundsTheProvidersBond() public {
        uint256 snap = vm.snapshotState();
        Outcome memory control = _scenario(false);
        vm.revertToState(snap);
        Outcome memory attack = _scenario(true);
        emit log_named_uint("segment outcome, depth 2 voted (2 FAIL)", control.segment);
        emit log_named_uint("segment outcome, depth 2 withheld (3 INCONCLUSIVE)", attack.segment);
        emit log_named_decimal_uint("provider's appeal cost, depth 2 voted (TRUST)", control.providerCost, 18);
        emit log_named_decimal_uint(
            "provider's appeal cost, depth 2 withheld (TRUST)", attack.providerCost, 18
        );
        emit log_named_decimal_uint("round-0 rewards, voted (TRUST)", control.scores.round0Rewards, 18);
        emit log_named_decimal_uint("round-0 rewards, withheld (TRUST)", attack.scores.round0Rewards, 18);
        emit log_named_uint("depth-1 votes scored wrong, voted", control.scores.round1Incorrect);
        emit log_named_uint("depth-1 votes scored wrong, withheld", attack.scores.round1Incorrect);
        emit log_named_decimal_uint("withheld depth-2 pay per seat (TRUST)", attack.depth2PerSeat, 18);
        assertTrue(control.segment != PASS && attack.segment != PASS, "same trace verdict either way");
        assertTrue(
            attack.providerCost >= control.providerCost,
            "Review5: withholding the depth-2 keys refunded the provider's depth-1 bond"
        );
        assertTrue(
            attack.scores.round0Rewards >= control.scores.round0Rewards,
            "Review5: withholding took round 0's honest FAIL rewards"
        );
    }

    /// @dev Regression (holds): the depth-1 route review 3 closed. The provider appeals round 0's FAIL and
    /// withholds the depth-1 keys: the FAIL stands, its 7 R bond is forfeited, round 0 is paid as without
    /// the appeal.
    function test_WithheldAtDepth1StillCostsTheBond() public {
        uint256 sid = _openReady(1, 1, new bytes32[](0));
        _voteRound0(sid, 1, 1, 0);
        _toAppealWindow(sid);
        uint256 before = token.balanceOf(provider);
        vm.prank(provider);
        uint256 r1 = appeals.appeal(sid, _segs(0), type(uint256).max);
        _drawRound(sid, r1);
        vm.roll(appeals.roundOf(sid, r1).keyDeadline + 1);
        appeals.advance(sid);
        assertEq(_outcomeOf(sid, 0), FAIL, "kept");
        vm.recordLogs();
        _closeAndSettle(sid);
        Scores memory s = _scores(sid, vm.getRecordedLogs());
        assertEq(before - token.balanceOf(provider), 7 * R, "bond forfeited");
        assertEq(s.round0Rewards, 2 * R, "round 0's two FAIL votes paid R each");
        assertEq(token.balanceOf(address(escrow)), 0, "escrow empty");
    }

    /// @dev Round 0 decides a wrong PASS (2 to 1), a third party appeals it at depth 1; the provider withholds
    /// the keys (`withhold`) or the 7-seat panel overturns it to FAIL.
    function _passScenario(bool withhold) internal returns (Outcome memory o, uint256 thirdGain) {
        uint256 sid = _openReady(1, 1, new bytes32[](0));
        _voteRound0(sid, 0, 1, 0);
        assertEq(_round0Outcome(sid, 0), PASS, "round 0: PASS");
        _toAppealWindow(sid);
        uint256 before = token.balanceOf(provider);
        uint256 thirdBefore = token.balanceOf(third);
        vm.prank(third);
        uint256 r1 = appeals.appeal(sid, _segs(0), type(uint256).max);
        _drawRound(sid, r1);
        if (withhold) {
            vm.roll(appeals.roundOf(sid, r1).keyDeadline + 1);
            appeals.advance(sid);
        } else {
            _publishRound(sid, r1);
            _voteRound(sid, r1, 1, 0, 0);
        }
        o.segment = _outcomeOf(sid, 0);
        vm.recordLogs();
        _closeAndSettle(sid);
        o.scores = _scores(sid, vm.getRecordedLogs());
        o.providerCost = before - token.balanceOf(provider);
        thirdGain = token.balanceOf(third) > thirdBefore ? token.balanceOf(third) - thirdBefore : 0;
        assertTrue(token.balanceOf(third) >= thirdBefore, "the appellant loses nothing in either case");
        assertEq(token.balanceOf(address(escrow)), 0, "escrow empty");
    }

    /// @notice Property: withholding the keys of an appeal of round 0's PASS saves no round-0 vote from being
    /// scored wrong. On main the contested PASS becomes INCONCLUSIVE (the documented rule: keeping the PASS
    /// would be a free veto), so the two round-0 auditors who voted the wrong PASS (the provider's friends)
    /// are not scored at all: their slash exposure disappears, and it costs the provider nothing (the trace
    /// verdict is non-PASS either way). Measured (skip removed), control (depth 1 votes FAIL) vs withheld:
    /// round-0 votes scored wrong 2 vs 0, round-0 slashes 1 vs 0 (this seed), round-0 rewards (the honest
    /// FAIL vote) 6 vs 0 TRUST, provider's cost 0 vs 0, the appellant's net gain 8.4 TRUST (20% reward on its
    /// 42 TRUST bond) vs 0 (bond back only) (before the fix).
    /// Fixed: the withheld PASS is scored as FAIL. Measured now, voted vs withheld: round-0 votes scored wrong
    /// 2 vs 2, slashes 1 vs 1, rewards 6 vs 6 TRUST; provider's cost 0 vs 0; the appellant's net gain 8.4 vs 0
    /// TRUST (bond back, no reward: the provider could be that appellant under any address).
    function test_WithholdingNeverUnscoresAWrongPass() public {
        uint256 snap = vm.snapshotState();
        (Outcome memory control, uint256 controlThird) = _passScenario(false);
        vm.revertToState(snap);
        (Outcome memory attack, uint256 attackThird) = _passScenario(true);
        emit log_named_uint("segment outcome, depth 1 voted (2 FAIL)", control.segment);
        emit log_named_uint("segment outcome, depth 1 withheld (3 INCONCLUSIVE)", attack.segment);
        emit log_named_uint("round-0 votes scored wrong, voted", control.scores.round0Incorrect);
        emit log_named_uint("round-0 votes scored wrong, withheld", attack.scores.round0Incorrect);
        emit log_named_uint("round-0 slashes, voted", control.scores.round0Slashes);
        emit log_named_uint("round-0 slashes, withheld", attack.scores.round0Slashes);
        emit log_named_decimal_uint("round-0 rewards, voted (TRUST)", control.scores.round0Rewards, 18);
        emit log_named_decimal_uint("round-0 rewards, withheld (TRUST)", attack.scores.round0Rewards, 18);
        emit log_named_decimal_uint("provider's cost, voted (TRUST)", control.providerCost, 18);
        emit log_named_decimal_uint("provider's cost, withheld (TRUST)", attack.providerCost, 18);
        emit log_named_decimal_uint("appellant's net gain, voted (TRUST)", controlThird, 18);
        emit log_named_decimal_uint("appellant's net gain, withheld (TRUST)", attackThird, 18);
        assertTrue(
            attack.scores.round0Incorrect >= control.scores.round0Incorrect,
            "Review5: withholding unscored the wrong PASS votes of round 0"
        );
    }

    /// @notice The same without any challenger: right after round 0's wrong PASS the provider appeals it
    /// itself (which also blocks every other appeal of the segment: AppealPending) and withholds the keys of
    /// the panel the auditor daemons draw. Measured before the fix: its 42 TRUST bond came back whole, its
    /// net cost 0; the segment ended INCONCLUSIVE and the 2 wrong PASS votes were not scored (0 scored wrong).
    /// Fixed as above; measured now: bond back (net cost 0, the accepted trade-off of
    /// docs/appeals-canaries.md), segment INCONCLUSIVE, the 2 wrong PASS votes scored wrong (2).
    function test_SelfAppealThenWithholdUnscoresNothing() public {
        uint256 sid = _openReady(1, 1, new bytes32[](0));
        _voteRound0(sid, 0, 1, 0);
        _toAppealWindow(sid);
        uint256 before = token.balanceOf(provider);
        vm.prank(provider);
        uint256 r1 = appeals.appeal(sid, _segs(0), type(uint256).max);
        vm.prank(third);
        (bool challenged,) = address(appeals)
            .call(
                abi.encodeWithSignature("appeal(uint256,uint256[],uint256)", sid, _segs(0), type(uint256).max)
            );
        _drawRound(sid, r1);
        vm.roll(appeals.roundOf(sid, r1).keyDeadline + 1);
        appeals.advance(sid);
        uint256 outcome = _outcomeOf(sid, 0);
        vm.recordLogs();
        _closeAndSettle(sid);
        Scores memory sc = _scores(sid, vm.getRecordedLogs());
        uint256 cost = before - token.balanceOf(provider);
        emit log_named_uint("a challenger could appeal meanwhile (1 yes)", challenged ? 1 : 0);
        emit log_named_uint("segment outcome (3 INCONCLUSIVE)", outcome);
        emit log_named_decimal_uint("provider's net cost (TRUST)", cost, 18);
        emit log_named_uint("round-0 votes scored wrong", sc.round0Incorrect);
        assertTrue(!challenged, "the provider's pending appeal blocks others");
        assertTrue(
            sc.round0Incorrect >= 2,
            "Review5: the provider's self-appeal and withholding unscored its wrong PASS"
        );
    }
}
