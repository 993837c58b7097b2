// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "./utils/StakingFixture.sol";
import {Staking} from "../src/Staking.sol";
import {AuditSessions} from "../src/AuditSessions.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../src/interfaces/IRandomness.sol";
import {IStaking} from "../src/interfaces/IStaking.sol";
import {ISortition} from "../src/interfaces/ISortition.sol";
import {LookaheadRandomness} from "../src/LookaheadRandomness.sol";
import {VRFRandomness} from "../src/VRFRandomness.sol";
import {IVRFCoordinatorV2Plus} from "../src/interfaces/IVRFCoordinatorV2Plus.sol";
import {MockVRFCoordinator} from "./mocks/MockVRFCoordinator.sol";

/// @title SourceDelayFuzz (outside reviews 5 and 6: every accepted session can be drawn, and ends)
/// @notice Fuzz over source delays, epoch lengths, canary windows and opening blocks: the core accepts a
/// source/window pair iff `max(minDelay, window) <= epochBlocks`; a session that opens has its draw value
/// obtainable while its snapshot is readable, and an honest keeper (drawing at the first obtainable block)
/// draws it; a VRF source whose confirmations were raised after `setRandomness` makes the opening revert
/// with nothing paid; a VRF source that stops taking requests at any step never strands a session.
contract SourceDelayFuzzTest is StakingFixture {
    uint256 internal constant FEE = 100e18;

    function setUp() public {
        _deploy();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    /// @dev The configuration rule over epoch lengths, delays and windows (a bare core: no modules needed to
    /// construct, set sources and parameters, and open), and obtainability in time for every opening block.
    function testFuzz_ConfigurationRuleAndObtainableInTime(
        uint256 epochBlocks,
        uint256 delay,
        uint256 window,
        uint256 openAt
    ) public {
        epochBlocks = bound(epochBlocks, 1, 300);
        delay = bound(delay, 1, 128);
        window = bound(window, 0, 199);
        Staking st = new Staking(token, owner, address(treasury), epochBlocks, _stakingParams());
        LookaheadRandomness src = new LookaheadRandomness(delay);
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.canaryCommitBlocks = uint32(window);
        bool fits = delay <= epochBlocks && window <= epochBlocks;
        if (!fits) {
            vm.expectRevert(); // InvalidParams (window) or RandomnessTooSlow (delay)
            new AuditSessions(token, IStaking(address(st)), src, address(treasury), owner, p);
            return;
        }
        AuditSessions core = new AuditSessions(token, IStaking(address(st)), src, address(treasury), owner, p);
        // A slower source is refused by setRandomness with the same rule.
        LookaheadRandomness slower = new LookaheadRandomness(epochBlocks + 1 > 128 ? 128 : epochBlocks + 1);
        if (epochBlocks + 1 <= 128) {
            vm.prank(owner);
            vm.expectRevert(
                abi.encodeWithSelector(AuditSessions.RandomnessTooSlow.selector, epochBlocks + 1, epochBlocks)
            );
            core.setRandomness(slower);
        } else {
            vm.prank(owner);
            core.setRandomness(slower); // 128 <= epochBlocks: fits
        }
        vm.roll(block.number + bound(openAt, 0, 5 * epochBlocks));
        vm.startPrank(provider);
        token.approve(address(core), FEE);
        uint256 sid = core.openSession(keccak256("root"), _uniform(1, 1), FEE);
        vm.stopPrank();
        IAuditSessions.Session memory s = core.sessionOf(sid);
        uint256 readable = ISortition(st.sortition()).snapshotReadableUntil(s.epoch);
        uint256 obtainable = core.sourceOf(sid).obtainableAt(s.drawRequest);
        assertLe(obtainable, readable, "the draw value is obtainable while the snapshot is readable");
        assertGe(readable - obtainable + 1, epochBlocks, "an epoch (less one block) to draw in, at least");
    }

    /// @dev With the fixture's 50-block epochs: any accepted lookahead delay, any opening block, an honest
    /// keeper drawing at the first obtainable block draws every seat before the snapshot lapses.
    function testFuzz_AcceptedLookaheadSessionIsDrawn(uint256 delay, uint256 openAt) public {
        delay = bound(delay, 1, 128);
        LookaheadRandomness src = new LookaheadRandomness(delay);
        vm.prank(owner);
        if (delay > EPOCH_BLOCKS) {
            vm.expectRevert(
                abi.encodeWithSelector(AuditSessions.RandomnessTooSlow.selector, delay, EPOCH_BLOCKS)
            );
            sessions.setRandomness(src);
            return;
        }
        sessions.setRandomness(src);
        vm.roll(block.number + bound(openAt, 0, 3 * EPOCH_BLOCKS));
        uint256 sid = _open(_uniform(2, 1), FEE);
        uint256 target = src.targetBlockOf(sessions.sessionOf(sid).drawRequest);
        vm.roll(target + 1);
        while (sessions.statusOf(sid) == IAuditSessions.Status.Created || _drawing(sid)) {
            sessions.draw(sid, 16);
        }
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        assertEq(uint256(s.status), uint256(IAuditSessions.Status.Drawing), "drawn");
        assertEq(s.drawnSeats, s.totalSeats, "every seat");
        assertLe(block.number, _sortition().snapshotReadableUntil(s.epoch), "while the snapshot is readable");
    }

    function _vrf(uint16 confirmations) internal returns (MockVRFCoordinator coord, VRFRandomness vrf) {
        coord = new MockVRFCoordinator();
        VRFRandomness.Config memory c;
        c.keyHash = keccak256("lane");
        c.subscriptionId = 1;
        c.requestConfirmations = confirmations;
        c.callbackGasLimit = 60_000;
        c.timeoutBlocks = 400;
        vrf = new VRFRandomness(IVRFCoordinatorV2Plus(address(coord)), owner, c);
        vm.prank(owner);
        vrf.setRequester(address(sessions), true);
        vm.prank(owner);
        sessions.setRandomness(IRandomness(address(vrf)));
    }

    /// @dev VRF confirmations raised after `setRandomness` (any value the adapter accepts), any opening block:
    /// either the opening reverts RandomnessTooSlow with nothing paid, or an oracle delivering at the first
    /// legal block lets an honest keeper draw in time.
    function testFuzz_RaisedVrfConfirmationsNeverStrandAPaidSession(uint256 confirmations, uint256 openAt)
        public
    {
        (MockVRFCoordinator coord, VRFRandomness vrf) = _vrf(3);
        VRFRandomness.Config memory c = vrf.config();
        c.requestConfirmations = uint16(bound(confirmations, 1, 200));
        vm.prank(owner);
        vrf.setConfig(c);
        vm.roll(block.number + bound(openAt, 0, 3 * EPOCH_BLOCKS));
        uint256 readable = _sortition().snapshotReadableUntil(block.number / EPOCH_BLOCKS + 1);
        uint256 before = token.balanceOf(provider);
        bytes memory tw = _uniform(2, 1);
        vm.startPrank(provider);
        token.approve(address(sessions), FEE);
        if (block.number + c.requestConfirmations >= readable) {
            vm.expectRevert(
                abi.encodeWithSelector(
                    AuditSessions.RandomnessTooSlow.selector,
                    uint256(c.requestConfirmations),
                    readable - block.number - 1
                )
            );
            sessions.openSession(keccak256("root"), tw, FEE);
            vm.stopPrank();
            assertEq(token.balanceOf(provider), before, "nothing paid");
            return;
        }
        uint256 sid = sessions.openSession(keccak256("root"), tw, FEE);
        vm.stopPrank();
        vm.roll(block.number + c.requestConfirmations);
        coord.fulfill(vrf.coordinatorRequestOf(sessions.sessionOf(sid).drawRequest), 7);
        vm.roll(block.number + 1); // usable from the block after the delivery (obtainableAt)
        while (sessions.statusOf(sid) == IAuditSessions.Status.Created || _drawing(sid)) {
            sessions.draw(sid, 16);
        }
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        assertEq(uint256(s.status), uint256(IAuditSessions.Status.Drawing), "drawn");
        assertEq(s.drawnSeats, s.totalSeats, "every seat");
    }

    /// @dev The VRF source stops taking requests at step `stopAt` of an honest session's life (0 before the
    /// opening ... 4 after the votes), its draw value delivered `late` blocks after the earliest: the
    /// session opens or not (nothing paid), and an honest keeper's bounded advance/settle calls end it,
    /// settle every auditor and release every lock.
    function testFuzz_RefusingSourceNeverStrandsASession(uint256 stopAt, uint256 late) public {
        (MockVRFCoordinator coord, VRFRandomness vrf) = _vrf(3);
        stopAt = bound(stopAt, 0, 4);
        late = bound(late, 0, 450);
        uint256 before = token.balanceOf(provider);
        if (stopAt == 0) _revoke(vrf);
        vm.startPrank(provider);
        token.approve(address(sessions), FEE);
        try sessions.openSession(keccak256("root"), _uniform(2, 1), FEE) returns (uint256) {
            assertTrue(stopAt != 0, "a refusing source opens nothing");
        } catch {
            assertEq(stopAt, 0, "only a refusing source refuses the opening");
            assertEq(token.balanceOf(provider), before, "nothing paid");
            vm.stopPrank();
            return;
        }
        vm.stopPrank();
        uint256 sid = sessions.sessionCount();
        if (stopAt == 1) _revoke(vrf);
        vm.roll(block.number + 3 + late);
        coord.fulfill(vrf.coordinatorRequestOf(sessions.sessionOf(sid).drawRequest), 7);
        vm.roll(block.number + 1); // usable from the block after the delivery (obtainableAt)
        while (_drawing(sid) || sessions.statusOf(sid) == IAuditSessions.Status.Created) {
            try sessions.draw(sid, 16) {}
            catch {
                break;
            }
        }
        if (stopAt == 2) _revoke(vrf);
        if (_drawnFully(sid)) {
            _publish(sid);
            if (stopAt == 3) _revoke(vrf);
            _commitAll(sid, 0, 1);
            _revealAll(sid, 0, 1, 0);
        }
        if (stopAt == 4) _revoke(vrf);
        for (uint256 k = 0; k < 3; ++k) {
            vm.roll(block.number + 700);
            sessions.advance(sid);
            address[] memory list = _auditors(sid);
            if (list.length != 0 && sessions.sessionOf(sid).settledCount < list.length) {
                try settlement.settleBatch(sid, 0, list) {} catch {}
            }
        }
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        assertTrue(
            s.status == IAuditSessions.Status.Finalized || s.status == IAuditSessions.Status.Cancelled
                || s.status == IAuditSessions.Status.Expired,
            "terminal"
        );
        assertEq(s.settledCount, s.auditorCount, "every auditor settled");
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            staking.drain(auditorAddrs[i], 16);
            assertEq(_locked(auditorAddrs[i]), 0, "every lock released");
        }
    }

    function _revoke(VRFRandomness vrf) internal {
        vm.prank(owner);
        vrf.setRequester(address(sessions), false);
    }

    function _drawnFully(uint256 sid) internal view returns (bool) {
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        return s.status == IAuditSessions.Status.Drawing && s.drawnSeats == s.totalSeats;
    }
}
