// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfAppealsAttackFixture} from "./VrfAttackFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";
import {LookaheadRandomness} from "../../src/LookaheadRandomness.sol";
import {VRFRandomness} from "../../src/VRFRandomness.sol";
import {AuditSessions} from "../../src/AuditSessions.sol";

/// @title Review5SourceDelayFitsSnapshot (outside review 5 of main edc6491, canary window bounded by the epoch)
/// @notice Property: every session AuditSessions accepts to open can be drawn: its draw randomness becomes
/// obtainable while the opening epoch's snapshot is still readable. Review 4's fix bounds the canary window
/// (`canaryCommitBlocks <= epochBlocks`, `_pushParams`), but the delay a session really waits is
/// `max(window, source delay)`: LookaheadRandomness's `delay` (1..128) or VRF's `requestConfirmations`
/// (up to 200, changeable later by the adapter's owner with `setConfig`). `setRandomness` and `_requestDraw`
/// check neither against the epoch, so with a legal source slower than the shortest readability
/// (`2 * epochBlocks` after an opening in an epoch's last block; 100 blocks here, 24 on the 12-block devnet)
/// sessions are opened, paid for, and can never be drawn.
/// @dev Measured (`forge test --match-path 'contracts/test/attacks/Review5*' -vv`, skips removed), 50-block
/// epochs, FEE 1,000 TRUST:
/// - lookahead delay 120 (legal), opened in an epoch's last block: target = open + 120 > readable = open +
///   100; the keeper's draw at target + 1 ends the session SnapshotUnavailable, the provider loses its
///   1,000 TRUST (the known accounting flaw being fixed elsewhere turns this into RandomnessFailed: 800
///   refunded, 200 kept, still no audit);
/// - VRF `requestConfirmations` 200 (legal): every session, opened at any block, is undrawable (earliest
///   delivery open + 200 > readable <= open + 149); the same 1,000 TRUST lost (800 after that fix).
/// Fixed: refuse the configuration, not the session. `IRandomness` gains `minDelay()` (lookahead: `delay`;
/// VRF: `requestConfirmations`), `AuditSessions.setRandomness` refuses a source with
/// `max(minDelay, canaryCommitBlocks + 1) > epochBlocks`, `_pushParams` checks the window against the current
/// source the same way, and `_requestDraw` (VRF config can change after `setRandomness`) reverts the opening
/// (nothing paid) when the source's earliest block is past `snapshotReadableUntil(epoch)`.
contract Review5SourceDelayFitsSnapshot is VrfAppealsAttackFixture {
    event log_named_uint(string key, uint256 val);

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    function _lastBlockOfEpoch() internal view returns (uint256) {
        return (block.number / EPOCH_BLOCKS + 1) * EPOCH_BLOCKS - 1;
    }

    function _readable(uint256 sid) internal view returns (uint256) {
        return _sortition().snapshotReadableUntil(sessions.sessionOf(sid).epoch);
    }

    /// @dev The 120-block lookahead source of the attack is refused (on 5c12e50 it was accepted: a session
    /// opened in an epoch's last block ended RandomnessFailed undrawn, 200 of the provider's 1,000 TRUST kept,
    /// no audit); the largest fitting delay (one epoch) is accepted and such a session is drawn.
    function test_SlowLookaheadSourceStrandsNoSession() public {
        LookaheadRandomness slow = new LookaheadRandomness(120);
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.RandomnessTooSlow.selector, 120, EPOCH_BLOCKS));
        sessions.setRandomness(IRandomness(address(slow)));
        LookaheadRandomness fits = new LookaheadRandomness(EPOCH_BLOCKS);
        vm.prank(owner);
        sessions.setRandomness(IRandomness(address(fits)));
        vm.roll(_lastBlockOfEpoch());
        uint256 before = token.balanceOf(provider);
        uint256 sid = _open(_uniform(4, 1), FEE);
        uint256 target = fits.targetBlockOf(sessions.sessionOf(sid).drawRequest);
        emit log_named_uint(
            "blocks from opening to the snapshot's last readable block", _readable(sid) - block.number
        );
        emit log_named_uint("blocks from opening to the target block", target - block.number);
        vm.roll(target + 1);
        sessions.draw(sid, 64);
        emit log_named_uint(
            "fee paid, funding a session being drawn (wei)", before - token.balanceOf(provider)
        );
        assertEq(
            uint256(sessions.statusOf(sid)),
            uint256(IAuditSessions.Status.Drawing),
            "an accepted session draws"
        );
    }

    /// @dev VRF with 200 confirmations (legal at the adapter) is refused by the core.
    function test_SlowVrfSourceStrandsNoSession() public {
        _deployVrf(_vrfConfig(200, 400), address(0));
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.RandomnessTooSlow.selector, 200, EPOCH_BLOCKS));
        sessions.setRandomness(IRandomness(address(vrf)));
    }

    /// @dev The adapter's owner raises the confirmations after `setRandomness`: an opening whose value could
    /// only arrive after its snapshot reverts (nothing paid, no session); one that still fits opens and draws.
    function test_VrfConfirmationsRaisedLaterRefuseTheOpeningNotThePayment() public {
        _deployVrf(_vrfConfig(3, 400), address(0));
        vm.prank(owner);
        sessions.setRandomness(IRandomness(address(vrf)));
        VRFRandomness.Config memory c = vrf.config();
        c.requestConfirmations = 200;
        vm.prank(owner);
        vrf.setConfig(c);
        uint256 before = token.balanceOf(provider);
        uint256 count = sessions.sessionCount();
        bytes memory tw = _uniform(4, 1);
        vm.prank(provider);
        vm.expectRevert(); // RandomnessTooSlow(200, readable - block - 1)
        sessions.openSession(keccak256("root"), tw, FEE);
        assertEq(token.balanceOf(provider), before, "nothing paid");
        assertEq(sessions.sessionCount(), count, "no session");
        c.requestConfirmations = 120; // fits an opening in an epoch's first block (149 blocks of readability)
        vm.prank(owner);
        vrf.setConfig(c);
        vm.roll((block.number / EPOCH_BLOCKS + 1) * EPOCH_BLOCKS);
        uint256 sid = _open(tw, FEE);
        vm.roll(block.number + 120);
        coord.fulfill(vrf.coordinatorRequestOf(sessions.sessionOf(sid).drawRequest), 7);
        vm.roll(block.number + 1); // usable from the block after the delivery (obtainableAt)
        sessions.draw(sid, 64);
        assertEq(uint256(sessions.statusOf(sid)), uint256(IAuditSessions.Status.Drawing), "drawn");
        vm.roll(_lastBlockOfEpoch()); // 100 blocks of readability: 120 does not fit
        vm.prank(provider);
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.RandomnessTooSlow.selector, 120, 99));
        sessions.openSession(keccak256("root"), tw, FEE);
    }

    /// @dev Regression (holds): at the boundary the window allows (canaryCommitBlocks == epochBlocks) with a
    /// fast source, a session owing a canary opened in an epoch's last block is drawn.
    function test_WindowOfOneEpochOpenedLastBlockDraws() public {
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.canaryCommitBlocks = uint32(EPOCH_BLOCKS);
        vm.prank(owner);
        sessions.setParams(p);
        vm.roll(_lastBlockOfEpoch());
        uint256 sid = _open(_uniform(10, 1), FEE); // one canary owed
        uint256 target = randomness.targetBlockOf(sessions.sessionOf(sid).drawRequest);
        assertEq(target, block.number + EPOCH_BLOCKS, "the window is the delay");
        vm.roll(target + 1);
        sessions.draw(sid, 64);
        assertEq(uint256(sessions.statusOf(sid)), uint256(IAuditSessions.Status.Drawing), "drawn");
        p.canaryCommitBlocks = uint32(EPOCH_BLOCKS + 1);
        vm.prank(owner);
        vm.expectRevert();
        sessions.setParams(p);
    }
}
