// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfAppealsAttackFixture} from "./VrfAttackFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";
import {IVRFCoordinatorV2Plus} from "../../src/interfaces/IVRFCoordinatorV2Plus.sol";
import {VRFRandomness} from "../../src/VRFRandomness.sol";

/// @title Review16SourceSwapNeverMovesTheEnding (outside review 16 of 8c2c336, f635524 `DrawWindow.inTime`)
/// @notice Property (IRandomness.delayOf, outside review 14): the ending of a session whose value was already
/// requested depends on nothing the owner changes afterwards: neither the source's config (Review14's fuzz)
/// nor the core's current source (`setRandomness`, run in SessionOps since 57f103a).
/// Attack tried: open a canary session on VRF adapter A (10 confirmations) in the epoch's last block, deliver
/// at any block up to the snapshot's end (or never), and have the owner swap the core's source to adapter B
/// (50 confirmations, the most `_checkDelay` accepts at epochBlocks 50) before or after the delivery; the
/// ending (`advance` past the snapshot) must equal the one without the swap. It holds: the session pins its
/// source index at opening, `_endUndrawn` reads `_sources[s.source]` (A), and `delayOf` is A's own per-request
/// delay, so B's delay is never read. (Had the ending read `randomness()`, B's `delayOf` of A's id would be 0
/// for an unknown id, and B's `obtainableAt` type(uint256).max: a refund of every undrawn session.)
/// Measured: 256 fuzz runs, same termination and refund in each; e.g. delivered in b + 15: SnapshotUnavailable,
/// 0 refunded with or without the swap; in b + 20: RandomnessFailed, 800 TRUST refunded with or without it.
/// Severity: none (regression test).
/// How it can fail (tried, reverted): `_endUndrawn` (SessionLifecycle) reading `_sources[_sources.length - 1]`
/// instead of `_sources[s.source]` fails both tests (fuzz: `same termination: 2 != 3` on its 2nd run; b + 15
/// turns into a refund). Likewise `setRandomness` rewriting open sessions' `source`.
/// Command: scripts/forge test --match-path 'contracts/test/attacks/Review16SourceSwap*' -vv
contract Review16SourceSwapNeverMovesTheEnding is VrfAppealsAttackFixture {
    uint256 internal constant OPENED_CONFIRMATIONS = 10;

    VRFRandomness internal other;

    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.drawBlocks = uint32(2 * EPOCH_BLOCKS);
    }

    function setUp() public {
        _deployAppeals();
        _addAuditors(0, 12, STAKE);
        _nextEpoch();
        _useVrf(_vrfConfig(OPENED_CONFIRMATIONS, VRF_TIMEOUT), address(0));
        other =
            _newVrf(IVRFCoordinatorV2Plus(address(coord)), _vrfConfig(EPOCH_BLOCKS, VRF_TIMEOUT), address(0));
    }

    /// @dev Deliver (unless `delivery` is 0) and swap (if `swapAt` is not 0) in block order, then end at `end`.
    function _ending(uint256 sid, uint256 delivery, uint256 swapAt, uint256 end)
        internal
        returns (IAuditSessions.Termination why, uint256 refunded)
    {
        uint256 id = sessions.sessionOf(sid).drawRequest;
        bool swapped = swapAt == 0;
        bool delivered = delivery == 0;
        for (uint256 step = 0; step < 2; ++step) {
            uint256 next = !swapped && (delivered || swapAt <= delivery) ? swapAt : delivery;
            if (next > block.number) vm.roll(next);
            if (!swapped && next == swapAt) {
                vm.prank(owner);
                sessions.setRandomness(IRandomness(address(other)));
                swapped = true;
            } else if (!delivered) {
                assertTrue(_deliver(id, 0xD1CE), "delivered");
                delivered = true;
            }
        }
        if (end > block.number) vm.roll(end);
        uint256 before = token.balanceOf(provider);
        sessions.advance(sid);
        why = sessions.sessionOf(sid).termination;
        refunded = token.balanceOf(provider) - before;
    }

    /// @notice Any delivery (or none) up to the snapshot's end, any swap block between opening and ending.
    function testFuzz_SwapNeverMovesTheEnding(uint256 latency, uint256 swapAt, bool undelivered) public {
        uint256 epochEnd = (block.number / EPOCH_BLOCKS + 2) * EPOCH_BLOCKS - 1;
        vm.roll(epochEnd);
        uint256 sid = _open(_uniform(10, 0), FEE);
        uint256 readable = _sortition().snapshotReadableUntil(sessions.sessionOf(sid).epoch);
        uint256 delivery = undelivered ? 0 : bound(latency, epochEnd + OPENED_CONFIRMATIONS, readable + 1);
        uint256 end = readable + 1 > delivery ? readable + 1 : delivery;

        uint256 snap = vm.snapshotState();
        (IAuditSessions.Termination whyKept, uint256 refundKept) = _ending(sid, delivery, 0, end);
        vm.revertToState(snap);
        (IAuditSessions.Termination whySwapped, uint256 refundSwapped) =
            _ending(sid, delivery, bound(swapAt, epochEnd, end), end);

        assertEq(uint256(whySwapped), uint256(whyKept), "same termination");
        assertEq(refundSwapped, refundKept, "same refund");
        assertEq(address(sessions.randomness()), address(other), "the swap happened");
        assertEq(address(sessions.sourceOf(sid)), address(vrf), "the session kept its source");
    }

    /// @notice The two figures of the NatSpec (b + 15: forfeited; b + 20: refunded), swap after the delivery.
    function test_SwapAfterDeliveryKeepsBothEndings() public {
        uint256 epochEnd = (block.number / EPOCH_BLOCKS + 2) * EPOCH_BLOCKS - 1;
        vm.roll(epochEnd);
        uint256 sid = _open(_uniform(10, 0), FEE);
        uint256 readable = _sortition().snapshotReadableUntil(sessions.sessionOf(sid).epoch);
        uint256 snap = vm.snapshotState();
        (IAuditSessions.Termination why, uint256 refunded) =
            _ending(sid, epochEnd + 15, epochEnd + 16, readable + 1);
        assertTrue(why == IAuditSessions.Termination.SnapshotUnavailable, "b + 15: forfeited");
        assertEq(refunded, 0, "b + 15: nothing refunded");
        vm.revertToState(snap);
        (why, refunded) = _ending(sid, epochEnd + 20, epochEnd + 21, readable + 1);
        assertTrue(why == IAuditSessions.Termination.RandomnessFailed, "b + 20: refunded");
        assertEq(refunded, 800e18, "b + 20: the pool refunded");
    }
}
