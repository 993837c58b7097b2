// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {ICanaryModule} from "../../src/interfaces/ICanaryModule.sol";

/// @notice Property: nothing on chain tells a canary seat from a real one before the reveal window.
/// Which segment is a canary changes neither the draw (the seats depend on the seed only) nor any
/// stored segment word; the canary module exposes no index before a reveal, and a reveal is refused at
/// every block up to and including the block of `finalize`.
contract CanaryUnknownBeforeRevealsTest is AppealsFixture {
    uint256 internal constant N = 10;

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    function _commitOne(uint256 sid, uint256 index) internal {
        bytes32[] memory c = new bytes32[](1);
        c[0] = _canaryCommitment(sid, index, 2);
        _commitCanaries(sid, c);
    }

    /// @dev Seat bitmaps of every auditor and every segment word after the draw.
    function _fingerprint(uint256 sid) internal view returns (bytes32 h) {
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            h = keccak256(abi.encode(h, _seatWord(sid, auditorAddrs[i])));
        }
        h = keccak256(abi.encode(h, sessions.segmentWord(sid, 0, 0), sessions.segmentWord(sid, 0, 1)));
    }

    /// forge-config: default.fuzz.runs = 16
    function testFuzz_CanaryUnknownBeforeReveals(uint256 a, uint256 b, uint256 probe) public {
        a = bound(a, 0, N - 1);
        b = bound(b, 0, N - 1);
        uint256 snap = vm.snapshotState();
        uint256 sid = _open(_uniform(N, 1), FEE);
        _commitOne(sid, a);
        _drawAll(sid);
        bytes32 withA = _fingerprint(sid);
        vm.revertToState(snap);
        sid = _open(_uniform(N, 1), FEE);
        _commitOne(sid, b);
        _drawAll(sid);
        assertEq(_fingerprint(sid), withA, "the canary's position moves no seat and no stored word");
        (uint256[] memory bits, uint256[] memory fails,) = canaries.canaryMasks(sid);
        assertEq(bits[0] | fails[0], 0, "no canary index before a reveal");
        // Reveals are refused through the whole vote, at a fuzzed block of each phase.
        ICanaryModule.CanaryReveal memory it =
            ICanaryModule.CanaryReveal({slot: 0, index: b, verdict: 2, salt: _canarySalt(sid, b)});
        _publish(sid);
        vm.roll(block.number + bound(probe, 0, 5));
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CanaryRevealNotOpen.selector, sid, 0));
        vm.prank(canaryOperator);
        canaries.revealCanary(sid, it);
        _commitAll(sid, 0, 0);
        _revealAll(sid, 0, 0, 0);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CanaryRevealNotOpen.selector, sid, 0));
        vm.prank(canaryOperator);
        canaries.revealCanary(sid, it);
        sessions.finalize(sid);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CanaryRevealNotOpen.selector, sid, block.number));
        vm.prank(canaryOperator);
        canaries.revealCanary(sid, it);
        vm.roll(block.number + 1);
        vm.prank(canaryOperator);
        canaries.revealCanary(sid, it);
    }
}
