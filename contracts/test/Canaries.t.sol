// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Vm} from "./utils/TestBase.sol";
import {AppealsFixture} from "./utils/AppealsFixture.sol";
import {ICanaryModule} from "../src/interfaces/ICanaryModule.sol";
import {IAppealModule} from "../src/interfaces/IAppealModule.sol";
import {ISettlementModule} from "../src/interfaces/ISettlementModule.sol";

/// @notice Gold canaries on chain: commitment rules (count, timing, operator), reveal rules (window,
/// salt, verdict, slots), scoring against the committed truth with canaryGamma, exclusion from the
/// verdict, the refund, and a canary never revealed that blocks nothing.
contract CanariesTest is AppealsFixture {
    uint8 internal constant PASS = 1;
    uint8 internal constant FAIL = 2;
    uint256 internal constant N = 10; // one canary at 10%

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    function _one(uint256 sid, uint256 index, uint8 verdict) internal pure returns (bytes32[] memory c) {
        c = new bytes32[](1);
        c[0] = _canaryCommitment(sid, index, verdict);
    }

    function _opened() internal returns (uint256 sid) {
        sid = _open(_uniform(N, 1), FEE);
    }

    function test_commit_rules() public {
        uint256 sid = _opened();
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.NotCanaryOperator.selector, address(this)));
        canaries.commitCanaries(sid, _one(sid, 4, FAIL));
        vm.startPrank(canaryOperator);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.WrongCanaryCount.selector, sid, 0, 1));
        canaries.commitCanaries(sid, new bytes32[](0));
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.ZeroCommitment.selector, sid, 0));
        canaries.commitCanaries(sid, new bytes32[](1));
        canaries.commitCanaries(sid, _one(sid, 4, FAIL));
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CanariesAlreadyCommitted.selector, sid));
        canaries.commitCanaries(sid, _one(sid, 5, FAIL));
        vm.stopPrank();
        assertEq(canaries.canariesOf(sid).committed, 1, "committed");
        assertEq(canaries.commitmentsOf(sid)[0], _canaryCommitment(sid, 4, FAIL), "stored");
    }

    function test_lateCommit_afterRandomnessTarget_refused() public {
        uint256 sid = _opened();
        _rollPastDrawTarget(sid); // the draw's randomness is Ready: seats knowable
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CommitTooLate.selector, sid));
        vm.prank(canaryOperator);
        canaries.commitCanaries(sid, _one(sid, 4, FAIL));
        _drawAll(sid);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CommitTooLate.selector, sid));
        vm.prank(canaryOperator);
        canaries.commitCanaries(sid, _one(sid, 4, FAIL));
    }

    function _ready(uint256 index, uint8 truth) internal returns (uint256 sid) {
        sid = sessions.sessionCount() + 1;
        _openReady(N, 1, _one(sid, index, truth));
    }

    function test_earlyReveal_refused_inEveryPhaseBeforeFinalize() public {
        uint256 sid = _ready(4, FAIL);
        ICanaryModule.CanaryReveal memory it =
            ICanaryModule.CanaryReveal({slot: 0, index: 4, verdict: FAIL, salt: _canarySalt(sid, 4)});
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CanaryRevealNotOpen.selector, sid, 0));
        vm.prank(canaryOperator);
        canaries.revealCanary(sid, it);
        _commitAll(sid, 1 << 4, 0);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CanaryRevealNotOpen.selector, sid, 0));
        vm.prank(canaryOperator);
        canaries.revealCanary(sid, it);
        _revealAll(sid, 1 << 4, 0, 0);
        sessions.finalize(sid);
        // Not in the finalize block either: the window opens after it.
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CanaryRevealNotOpen.selector, sid, block.number));
        vm.prank(canaryOperator);
        canaries.revealCanary(sid, it);
        vm.roll(block.number + CANARY_BLOCKS + 1);
        vm.expectRevert(
            abi.encodeWithSelector(ICanaryModule.CanaryRevealClosed.selector, sid, block.number - 1)
        );
        vm.prank(canaryOperator);
        canaries.revealCanary(sid, it);
    }

    function test_reveal_checks_wrongSalt_wrongVerdict_slots_batchSkips() public {
        uint256 sid = _ready(4, FAIL);
        _voteRound0(sid, 1 << 4, 0, 0);
        vm.roll(block.number + 1);
        ICanaryModule.CanaryReveal memory bad =
            ICanaryModule.CanaryReveal({slot: 0, index: 4, verdict: FAIL, salt: bytes32(uint256(1))});
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CanaryMismatch.selector, sid, 0));
        vm.prank(canaryOperator);
        canaries.revealCanary(sid, bad);
        bad.salt = _canarySalt(sid, 4);
        bad.verdict = PASS;
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CanaryMismatch.selector, sid, 0));
        vm.prank(canaryOperator);
        canaries.revealCanary(sid, bad);
        bad.verdict = 3;
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.InvalidVerdict.selector, sid, 0));
        vm.prank(canaryOperator);
        canaries.revealCanary(sid, bad);
        bad.slot = 1;
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.UnknownCanarySlot.selector, sid, 1));
        vm.prank(canaryOperator);
        canaries.revealCanary(sid, bad);
        ICanaryModule.CanaryReveal[] memory items = new ICanaryModule.CanaryReveal[](2);
        items[0] = ICanaryModule.CanaryReveal({slot: 0, index: 4, verdict: FAIL, salt: _canarySalt(sid, 4)});
        items[1] = items[0];
        uint256 before = token.balanceOf(provider);
        vm.expectEmit(true, false, false, true, address(canaries));
        emit ICanaryModule.ItemSkipped(sid, 0, ICanaryModule.CanaryAlreadyRevealed.selector);
        vm.prank(canaryOperator);
        assertEq(canaries.revealCanaries(sid, items), 1, "one applied, the repeat skipped");
        assertEq(token.balanceOf(provider), before + 3 * R / 4, "refund k R * 25%");
        (uint256[] memory idx, uint8[] memory verdicts) = canaries.revealedOf(sid);
        assertEq(idx[0], 4, "index");
        assertEq(verdicts[0], FAIL, "verdict");
        // A revealed canary is never appealed.
        _toAppealWindow(sid);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.SegmentIsCanary.selector, sid, 4));
        appeals.quote(sid, _segs(4));
    }

    function test_lazyAuditors_scoredAgainstTruth_withCanaryGamma_andCanaryLeavesVerdict() public {
        // The canary at segment 4 is a FAIL; every auditor lazily votes PASS everywhere.
        uint256 sid = _ready(4, FAIL);
        _voteRound0(sid, 0, 0, 0);
        vm.roll(block.number + 1);
        _revealCanary(sid, 0, 4, FAIL);
        vm.recordLogs();
        _closeAndSettle(sid);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        bytes32 topic = ISettlementModule.AuditorSettled.selector;
        uint256 checked = 0;
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics.length == 0 || logs[i].topics[0] != topic) continue;
            address a = address(uint160(uint256(logs[i].topics[2])));
            (, uint256 correct, uint256 incorrect,,, uint256 reward, uint256 repMul,) = abi.decode(
                logs[i].data, (uint256, uint256, uint256, uint256, uint256, uint256, uint256, uint256)
            );
            uint256[] memory segs = _seats(sid, a);
            uint256 mul = WAD;
            bool onCanary = false;
            for (uint256 j = 0; j < segs.length; ++j) {
                uint256 g = segs[j] == 4 ? 0.2e18 : 0.1e18;
                if (segs[j] == 4) onCanary = true;
                mul = mul * (WAD - g) / WAD;
            }
            assertEq(repMul, mul, "canary seats move reputation by canaryGamma");
            assertEq(incorrect, onCanary ? 1 : 0, "the canary vote is wrong against the truth");
            assertEq(correct, segs.length - incorrect, "other seats agree");
            assertEq(reward, correct * R, "no reward for the canary seat");
            ++checked;
        }
        assertEq(checked, sessions.sessionOf(sid).auditorCount, "every auditor settled once");
        IAppealModule.SessionAppeals memory sa = appeals.sessionAppeals(sid);
        assertEq(sa.scoreBps, 10_000, "the canary (PASS by majority) is out of W and T: 9 of 9");
        assertEq(token.balanceOf(address(sessions)), 0, "pool swept");
    }

    function test_neverRevealed_doesNotBlock_andCostsTheLargestWeight() public {
        uint256 sid = _ready(4, FAIL);
        _voteRound0(sid, 0, 0, 0); // everyone PASS
        // Nobody reveals; the session settles after the windows anyway.
        _closeAndSettle(sid);
        IAppealModule.SessionAppeals memory sa = appeals.sessionAppeals(sid);
        assertEq(sa.scoreBps, 9000, "W = 10 - 1 (largest weight), T = 10");
        assertTrue(sa.passed == (9000 >= 7000), "beta 70%");
        assertEq(token.balanceOf(address(sessions)), 0, "settled and swept");
    }

    function test_canaryMasks_emptyUntilReveal() public {
        uint256 sid = _ready(4, FAIL);
        (uint256[] memory bits, uint256[] memory fails, uint256 unrevealed) = canaries.canaryMasks(sid);
        assertEq(bits[0] | fails[0], 0, "nothing known");
        assertEq(unrevealed, 1, "one owed");
        _voteRound0(sid, 1 << 4, 0, 0);
        vm.roll(block.number + 1);
        _revealCanary(sid, 0, 4, FAIL);
        (bits, fails, unrevealed) = canaries.canaryMasks(sid);
        assertEq(bits[0], 1 << 4, "revealed");
        assertEq(fails[0], 1 << 4, "FAIL");
        assertEq(unrevealed, 0, "none owed");
    }
}
