// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfAppealsAttackFixture} from "./VrfAttackFixture.sol";
import {ICanaryModule} from "../../src/interfaces/ICanaryModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";
import {LookaheadRandomness} from "../../src/LookaheadRandomness.sol";
import {VRFRandomness} from "../../src/VRFRandomness.sol";

/// @title Review4CanaryWindowBoundary (outside review 4 of canarywin 1588bdc, canaryCommitBlocks)
/// @notice Properties an attacker (provider, operator, outsider) tried to break and could not:
/// - the draw's randomness is unknown in every block a canary commit is accepted, at the exact boundary
///   (target block: commit yes, draw no; target + 1: draw yes, commit no, in either order), also when a
///   session without canaries shares the target block (its draw cannot start earlier either);
/// - the window belongs to the session: switching the randomness source or the parameters while it is
///   open moves neither its target nor its operator's last block;
/// - a session owing no canaries keeps the plain randomness delay, and the provider's choice of whether it
///   owes canaries (its segment count) is made before either possible target block exists;
/// - the bounds: 0..199 accepted, 200 and beyond InvalidParams; a VRF source asks 200 confirmations for
///   the largest window (the v2.5 cap), never more.
contract Review4CanaryWindowBoundary is VrfAppealsAttackFixture {
    uint8 internal constant FAIL = 2;

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    function _one(uint256 sid) internal pure returns (bytes32[] memory c) {
        c = new bytes32[](1);
        c[0] = _canaryCommitment(sid, 3, FAIL);
    }

    function _setCommitBlocks(uint256 commitBlocks) internal {
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.canaryCommitBlocks = uint32(commitBlocks);
        vm.prank(owner);
        sessions.setParams(p);
    }

    /// @dev Whether the operator's commit of one canary succeeds now (state restored).
    function _commitWorks(uint256 sid) internal returns (bool ok) {
        uint256 snap = vm.snapshotState();
        vm.prank(canaryOperator);
        (ok,) = address(canaries).call(abi.encodeCall(ICanaryModule.commitCanaries, (sid, _one(sid))));
        vm.revertToState(snap);
    }

    /// @dev Whether anyone can start the draw now (state restored).
    function _drawWorks(uint256 sid) internal returns (bool ok) {
        uint256 snap = vm.snapshotState();
        (ok,) = address(sessions).call(abi.encodeCall(sessions.draw, (sid, 16)));
        ok = ok && sessions.statusOf(sid) == IAuditSessions.Status.Drawing;
        vm.revertToState(snap);
    }

    /// @dev Exact boundary with the lookahead source: in the target block the commit is accepted and the
    /// draw reverts TooEarly; one block later the commit is refused whether or not the draw already ran.
    function test_CommitInLastWindowBlockOnlyAndNeverWithTheDraw() public {
        uint256 sid = _open(_uniform(10, 1), FEE); // 1 canary owed
        uint256 target = block.number + CANARY_COMMIT_BLOCKS;
        assertEq(_drawTarget(sid), target, "target = open + canaryCommitBlocks");
        for (uint256 b = block.number; b <= target; ++b) {
            vm.roll(b);
            assertTrue(_commitWorks(sid), "commit refused inside the window");
            assertTrue(!_drawWorks(sid), "draw possible while commits are accepted");
        }
        uint256 requestId = sessions.sessionOf(sid).drawRequest;
        vm.expectRevert(abi.encodeWithSelector(LookaheadRandomness.TooEarly.selector, requestId, target));
        sessions.draw(sid, 16);
        vm.roll(target + 1);
        assertTrue(!_commitWorks(sid), "commit accepted once the randomness is Ready (before the draw)");
        sessions.draw(sid, 16);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CommitTooLate.selector, sid));
        _commitCanaries(sid, _one(sid));
    }

    /// @dev A session owing no canaries opened later with the same target block: its draw cannot start
    /// before that block is sealed either, so no shared block hash is known while the canary session still
    /// accepts commits.
    function test_SharedTargetBlockRevealsNothingEarly() public {
        uint256 opened = block.number;
        uint256 sid = _open(_uniform(10, 1), FEE);
        vm.roll(opened + CANARY_COMMIT_BLOCKS - RANDOMNESS_DELAY);
        uint256 plain = _open(_uniform(9, 1), FEE); // owes none: target = now + delay
        assertEq(_drawTarget(plain), _drawTarget(sid), "same target block");
        vm.roll(opened + CANARY_COMMIT_BLOCKS);
        assertTrue(!_drawWorks(plain), "the other session reads the shared hash early");
        _commitCanaries(sid, _one(sid));
        vm.roll(opened + CANARY_COMMIT_BLOCKS + 1);
        assertTrue(_drawWorks(plain) && _drawWorks(sid), "both draw after the target");
    }

    /// @dev The owner switches to a slower and then a faster source while a session is open: the session
    /// keeps its source and window; new sessions get max(new delay, window).
    function test_SourceSwitchedMidSessionKeepsTheWindow() public {
        uint256 opened = block.number;
        uint256 sid = _open(_uniform(10, 1), FEE);
        IRandomness first = sessions.sourceOf(sid);
        LookaheadRandomness slow = new LookaheadRandomness(20);
        vm.prank(owner);
        sessions.setRandomness(IRandomness(address(slow)));
        uint256 slowSid = _open(_uniform(10, 1), FEE);
        assertEq(slow.targetBlockOf(sessions.sessionOf(slowSid).drawRequest), block.number + 20, "max(20, 8)");
        LookaheadRandomness fast = new LookaheadRandomness(1);
        vm.prank(owner);
        sessions.setRandomness(IRandomness(address(fast)));
        uint256 fastSid = _open(_uniform(10, 1), FEE);
        assertEq(
            fast.targetBlockOf(sessions.sessionOf(fastSid).drawRequest),
            block.number + CANARY_COMMIT_BLOCKS,
            "max(1, 8)"
        );
        assertEq(address(sessions.sourceOf(sid)), address(first), "the session keeps its source");
        vm.roll(opened + CANARY_COMMIT_BLOCKS);
        assertTrue(_commitWorks(sid) && !_drawWorks(sid), "window intact on the old source");
        vm.roll(opened + CANARY_COMMIT_BLOCKS + 1);
        assertTrue(!_commitWorks(sid) && _drawWorks(sid), "closed on the old source");
    }

    /// @dev setParams within the same block as an opening, in either direction, after it: the session's
    /// target stays open + 8; a session opened after the change gets the new window.
    function test_ParamsChangeAfterOpeningInSameBlockKeepsWindow() public {
        uint256 sid = _open(_uniform(10, 1), FEE);
        _setCommitBlocks(EPOCH_BLOCKS);
        assertEq(_drawTarget(sid), block.number + CANARY_COMMIT_BLOCKS, "not lengthened");
        _setCommitBlocks(0);
        assertEq(_drawTarget(sid), block.number + CANARY_COMMIT_BLOCKS, "not shortened");
        uint256 next = _open(_uniform(10, 1), FEE);
        assertEq(_drawTarget(next), block.number + RANDOMNESS_DELAY, "window 0: the delay");
        vm.roll(block.number + CANARY_COMMIT_BLOCKS);
        assertTrue(_commitWorks(sid), "old session: last block of its own window");
    }

    /// @dev Sessions owing no canaries (too few segments for the rate, or a rate of 0) wait only the
    /// randomness delay; the provider's choice of segment count picks between two targets that are both
    /// still in the future in its opening block.
    function test_NoCanaryOwedTimingUnchanged() public {
        uint256 plain = _open(_uniform(9, 1), FEE); // 9 * 10% = 0
        uint256 owing = _open(_uniform(10, 1), FEE);
        assertEq(_drawTarget(plain), block.number + RANDOMNESS_DELAY, "no canary: delay only");
        assertEq(_drawTarget(owing), block.number + CANARY_COMMIT_BLOCKS, "canary: window");
        IRandomness src = sessions.sourceOf(plain);
        assertTrue(
            src.status(sessions.sessionOf(plain).drawRequest) == IRandomness.RequestStatus.Pending
                && src.status(sessions.sessionOf(owing).drawRequest) == IRandomness.RequestStatus.Pending,
            "both targets unknown when the provider chooses"
        );
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        assertTrue(_drawWorks(plain), "plain session draws after the delay");
        assertTrue(!_drawWorks(owing), "canary session waits for its window");
    }

    /// @dev Bounds: every window in 0..min(199, epochBlocks) is accepted, every larger one (up to uint32) is
    /// InvalidParams.
    function testFuzz_WindowBoundsEnforced(uint256 commitBlocks) public {
        commitBlocks = bound(commitBlocks, 0, type(uint32).max);
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.canaryCommitBlocks = uint32(commitBlocks);
        vm.prank(owner);
        if (commitBlocks > EPOCH_BLOCKS) vm.expectRevert(bytes4(keccak256("InvalidParams()")));
        sessions.setParams(p);
    }

    /// @dev The largest window (one epoch here) with the slowest VRF source the core accepts (one epoch of
    /// confirmations; 200 is refused, outside review 5): the coordinator is asked window + 1 confirmations,
    /// the session opens, and the deadline keeps its slack.
    function test_LargestWindowOnVrfStaysWithinTheCap() public {
        VRFRandomness.Config memory c = _vrfConfig(200, 400);
        _deployVrf(c, address(0));
        vm.startPrank(owner);
        vm.expectRevert(abi.encodeWithSignature("RandomnessTooSlow(uint256,uint256)", 200, EPOCH_BLOCKS));
        sessions.setRandomness(IRandomness(address(vrf)));
        c.requestConfirmations = uint16(EPOCH_BLOCKS);
        vrf.setConfig(c);
        sessions.setRandomness(IRandomness(address(vrf)));
        vm.stopPrank();
        _setCommitBlocks(EPOCH_BLOCKS);
        uint256 sid = _open(_uniform(10, 1), FEE);
        uint256 local = sessions.sessionOf(sid).drawRequest;
        assertEq(
            coord.recorded(vrf.coordinatorRequestOf(local)).requestConfirmations,
            EPOCH_BLOCKS + 1,
            "window + 1 confirmations"
        );
        assertEq(vrf.deadlineOf(local), block.number + 400 + 1, "deadline");
        vm.roll(block.number + EPOCH_BLOCKS);
        assertTrue(_commitWorks(sid), "commit in the window's last block");
    }
}
