// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfAppealsAttackFixture} from "./VrfAttackFixture.sol";
import {ICanaryModule} from "../../src/interfaces/ICanaryModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";
import {LookaheadRandomness} from "../../src/LookaheadRandomness.sol";
import {VRFRandomness} from "../../src/VRFRandomness.sol";
import {MockVRFCoordinator} from "../mocks/MockVRFCoordinator.sol";

/// @notice The canary commit window (second review: it used to be only the randomness delay). A session
/// owing canaries requests its draw randomness so that nobody knows it before `open + max(delay,
/// canaryCommitBlocks)`: the operator can commit in every block of that window, never after it, and never
/// once the draw's randomness is known - over any window within bounds, any lookahead delay, and VRF.
contract CanaryCommitWindowTest is VrfAppealsAttackFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    uint8 internal constant FAIL = 2;
    /// @dev The longest window the core accepts with these 50-block epochs (at most an epoch).
    uint256 internal constant MAX_WINDOW = EPOCH_BLOCKS;

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    function _setCommitBlocks(uint256 commitBlocks) internal {
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.canaryCommitBlocks = uint32(commitBlocks);
        vm.prank(owner);
        sessions.setParams(p);
    }

    function _one(uint256 sid) internal pure returns (bytes32[] memory c) {
        c = new bytes32[](1);
        c[0] = _canaryCommitment(sid, 7, FAIL);
    }

    /// @dev Whether the operator's commit would succeed now (state restored).
    function _commitWorks(uint256 sid, uint256 owed) internal returns (bool ok) {
        uint256 snap = vm.snapshotState();
        bytes32[] memory c = new bytes32[](owed);
        for (uint256 i = 0; i < owed; ++i) {
            c[i] = _canaryCommitment(sid, i, FAIL);
        }
        vm.prank(canaryOperator);
        (ok,) = address(canaries).call(abi.encodeCall(ICanaryModule.commitCanaries, (sid, c)));
        vm.revertToState(snap);
    }

    /// @dev Whether anyone could know the draw's randomness now: fixing it succeeds (state restored).
    function _randomnessKnown(uint256 sid) internal returns (bool known) {
        uint256 snap = vm.snapshotState();
        IRandomness src = sessions.sourceOf(sid);
        (known,) =
            address(src).call(abi.encodeCall(IRandomness.fulfil, (sessions.sessionOf(sid).drawRequest)));
        vm.revertToState(snap);
    }

    /// @dev Any window within bounds: the commit succeeds at every block from the opening to
    /// `open + max(delay, canaryCommitBlocks)` and reverts CommitTooLate one block after.
    function testFuzz_CommitsInEveryBlockOfTheWindow(uint256 commitBlocks) public {
        commitBlocks = bound(commitBlocks, 0, MAX_WINDOW);
        _setCommitBlocks(commitBlocks);
        uint256 sid = _open(_uniform(10, 1), FEE); // 1 canary owed
        uint256 opened = block.number;
        uint256 end = opened + (commitBlocks > RANDOMNESS_DELAY ? commitBlocks : RANDOMNESS_DELAY);
        assertEq(randomness.targetBlockOf(sessions.sessionOf(sid).drawRequest), end, "target block");
        for (uint256 b = opened; b <= end; ++b) {
            vm.roll(b);
            assertTrue(_commitWorks(sid, 1), "a commit inside the window was refused");
        }
        vm.roll(end + 1);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CommitTooLate.selector, sid));
        _commitCanaries(sid, _one(sid));
    }

    /// @dev Any lookahead delay, any window, sessions owing canaries or none: in no block is a commit
    /// accepted while the draw's randomness can be fixed; a session owing canaries accepts commits through
    /// `open + canaryCommitBlocks`; none is accepted after the target block.
    function testFuzz_RandomnessNeverKnownWhileCommitsAllowed(uint256 delay, uint256 commitBlocks, uint256 n)
        public
    {
        delay = bound(delay, 1, EPOCH_BLOCKS); // slower sources are refused (RandomnessTooSlow)
        commitBlocks = bound(commitBlocks, 0, MAX_WINDOW);
        n = bound(n, 1, 20); // 10% canaries: n < 10 owes none
        LookaheadRandomness src = new LookaheadRandomness(delay);
        vm.prank(owner);
        sessions.setRandomness(IRandomness(address(src)));
        _setCommitBlocks(commitBlocks);
        uint256 sid = _open(_uniform(n, 1), FEE);
        uint256 opened = block.number;
        uint256 owed = canaries.canariesOwed(sid, n);
        uint256 window = owed != 0 && commitBlocks > delay ? commitBlocks : delay;
        assertEq(src.targetBlockOf(sessions.sessionOf(sid).drawRequest), opened + window, "target block");
        for (uint256 b = opened; b <= opened + window + 2; ++b) {
            vm.roll(b);
            bool ok = _commitWorks(sid, owed);
            if (ok) {
                assertTrue(!_randomnessKnown(sid), "a commit accepted while the draw randomness is known");
            }
            if (owed != 0 && b <= opened + commitBlocks) {
                assertTrue(ok, "a commit inside the window refused");
            }
            if (b > opened + window) assertTrue(!ok, "a commit accepted after the target block");
        }
    }

    /// @dev VRF: the coordinator is asked for more confirmations than the window, so it cannot deliver
    /// before `open + canaryCommitBlocks + 1`; the operator commits in block `open + canaryCommitBlocks`, and
    /// once the value is delivered commits are refused. Confirmations the VRF config asks for stay a floor.
    function testFuzz_VrfDeliversOnlyAfterTheWindow(uint256 configured, uint256 commitBlocks) public {
        configured = bound(configured, 1, EPOCH_BLOCKS); // slower sources are refused (RandomnessTooSlow)
        commitBlocks = bound(commitBlocks, 1, MAX_WINDOW);
        _useVrf(_vrfConfig(configured, 400), address(0));
        _setCommitBlocks(commitBlocks);
        uint256 sid = _open(_uniform(10, 1), FEE);
        uint256 opened = block.number;
        uint256 local = sessions.sessionOf(sid).drawRequest;
        uint256 cid = vrf.coordinatorRequestOf(local);
        uint256 confirmations = commitBlocks + 1 > configured ? commitBlocks + 1 : configured;
        assertEq(coord.recorded(cid).requestConfirmations, confirmations, "confirmations asked");
        assertEq(vrf.deadlineOf(local), opened + 400 + confirmations - configured, "deadline keeps its slack");
        vm.roll(opened + confirmations - 1);
        vm.expectRevert(abi.encodeWithSelector(MockVRFCoordinator.TooFewConfirmations.selector, cid));
        coord.fulfill(cid, 42);
        vm.roll(opened + commitBlocks);
        assertTrue(_commitWorks(sid, 1), "commit in the window's last block");
        vm.roll(opened + confirmations);
        coord.fulfill(cid, 42);
        assertTrue(vrf.status(local) == IRandomness.RequestStatus.Fulfilled, "delivered");
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CommitTooLate.selector, sid));
        _commitCanaries(sid, _one(sid));
    }

    /// @dev VRF v2.5 waits at most 200 confirmations: a window it cannot honour is refused, by the source and
    /// by the core's parameter bounds (199).
    function test_WindowBeyondTheVrfCapIsRefused() public {
        VRFRandomness.Config memory c = _vrfConfig(3, 400);
        _deployVrf(c, address(this));
        vm.expectRevert(abi.encodeWithSelector(VRFRandomness.TooManyConfirmations.selector, 200));
        vrf.requestAfter(200);
        vrf.requestAfter(199);
        c.requestConfirmations = 201;
        vm.prank(owner);
        vm.expectRevert(VRFRandomness.InvalidConfig.selector);
        vrf.setConfig(c);
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.canaryCommitBlocks = 200;
        vm.prank(owner);
        vm.expectRevert(bytes4(keccak256("InvalidParams()")));
        sessions.setParams(p);
    }

    /// @dev The window is fixed at opening: a later setParams (shorter or longer) moves neither the target
    /// block nor the operator's last block; the next session gets the new window.
    function test_LaterSetParamsDoesNotMoveAnOpenWindow() public {
        uint256 sid = _open(_uniform(10, 1), FEE);
        uint256 opened = block.number;
        _setCommitBlocks(0);
        vm.roll(opened + CANARY_COMMIT_BLOCKS);
        assertTrue(_commitWorks(sid, 1), "the opened session keeps its window");
        _setCommitBlocks(MAX_WINDOW);
        vm.roll(opened + CANARY_COMMIT_BLOCKS + 1);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CommitTooLate.selector, sid));
        _commitCanaries(sid, _one(sid));
        uint256 next = _open(_uniform(10, 1), FEE);
        assertEq(
            randomness.targetBlockOf(sessions.sessionOf(next).drawRequest),
            block.number + MAX_WINDOW,
            "the next session gets the new window"
        );
    }

    /// @dev A session owing no canaries is not slowed down: its draw waits only the randomness delay.
    function test_NoCanaryOwedDrawsAfterTheDelay() public {
        uint256 sid = _open(_uniform(9, 1), FEE); // 9 * 10% = 0 canaries
        assertEq(
            randomness.targetBlockOf(sessions.sessionOf(sid).drawRequest),
            block.number + RANDOMNESS_DELAY,
            "delay only"
        );
    }
}
