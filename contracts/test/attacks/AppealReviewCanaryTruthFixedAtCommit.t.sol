// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {ICanaryModule} from "../../src/interfaces/ICanaryModule.sol";

/// @notice Property: a canary's truth and position are fixed at commit time. Attack (the canary operator,
/// after seeing the votes): reveal the other verdict, another segment, another salt, or the same slot twice; or hedge by
/// committing both verdicts of one segment in two slots and revealing the one that suits. Every variant is
/// refused by name, and the hedge leaves the second slot unrevealed, which costs the largest segment weight
/// off the trace's passed weight.
contract AppealReviewCanaryTruthFixedAtCommitTest is AppealsFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    function _reveal(uint256 sid, uint256 slot, uint256 index, uint8 verdict, bytes32 salt) internal {
        vm.prank(canaryOperator);
        canaries.revealCanary(
            sid, ICanaryModule.CanaryReveal({slot: slot, index: index, verdict: verdict, salt: salt})
        );
    }

    function test_CanaryTruthFixedAtCommit() public {
        uint256 sid = sessions.sessionCount() + 1;
        bytes32[] memory c = new bytes32[](2); // 20 segments at 10%: the hedge, PASS and FAIL on segment 4
        c[0] = _canaryCommitment(sid, 4, 1);
        c[1] = _canaryCommitment(sid, 4, 2);
        _openReady(20, 1, c);
        _voteRound0(sid, 0, 0, 0); // the panel says PASS everywhere
        vm.roll(block.number + 1);
        bytes32 salt = _canarySalt(sid, 4);
        bytes memory mismatch = abi.encodeWithSelector(ICanaryModule.CanaryMismatch.selector, sid, 0);
        vm.expectRevert(mismatch);
        _reveal(sid, 0, 4, 2, salt); // slot 0 holds PASS
        vm.expectRevert(mismatch);
        _reveal(sid, 0, 5, 1, salt); // another segment
        vm.expectRevert(mismatch);
        _reveal(sid, 0, 4, 1, bytes32(uint256(salt) ^ 1)); // another salt
        _reveal(sid, 1, 4, 2, salt); // the hedge: FAIL, against the panel
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CanaryAlreadyRevealed.selector, sid, 1));
        _reveal(sid, 1, 4, 2, salt);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.SegmentAlreadyCanary.selector, sid, 0));
        _reveal(sid, 0, 4, 1, salt);
        (,, uint256 unrevealed) = canaries.canaryMasks(sid);
        assertEq(unrevealed, 1, "the other slot stays unrevealed");
        (bool passed, uint256 score, uint256 passW, uint256 totalW,) = escrow.verdictOf(sid);
        assertEq(totalW, 19, "the revealed canary leaves T");
        assertEq(passW, 18, "the unrevealed slot costs the largest weight");
        assertTrue(passed, "passed");
        assertEq(score, uint256(18) * 10_000 / 19, "score");
    }
}
