// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {DoubleFixture} from "./utils/DoubleFixture.sol";
import {ScriptedRandomness} from "./utils/ScriptedRandomness.sol";
import {AuditSessions} from "../src/AuditSessions.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {IDrawModule} from "../src/interfaces/IDrawModule.sol";
import {IRandomness} from "../src/interfaces/IRandomness.sol";
import {IStaking} from "../src/interfaces/IStaking.sol";
import {IVRFCoordinatorV2Plus} from "../src/interfaces/IVRFCoordinatorV2Plus.sol";
import {VRFRandomness} from "../src/VRFRandomness.sol";
import {MockVRFCoordinator} from "./mocks/MockVRFCoordinator.sol";

/// @notice How sessions end: property 5 (NoRerollAfterRandomnessFixed) and every way a session ends
/// without a verdict, with who gets the pool.
contract LifecycleTest is DoubleFixture {
    uint256 internal constant FEE = 1000e18;
    uint256 internal constant POOL = 800e18;
    uint256 internal constant R = 6e18;

    function setUp() public {
        _deploy();
        _addAuditors(1, 6, STAKE);
        _addAuditors(2, 4, STAKE);
        _addAuditors(0, 2, STAKE);
        _nextEpoch();
    }

    function _status(uint256 sid) internal view returns (IAuditSessions.Status) {
        return sessions.statusOf(sid);
    }

    /// @dev Settle every drawn auditor and check each got R per seat, its locks back and no
    /// reputation change; returns the total paid.
    function _settleTerminated(uint256 sid) internal returns (uint256 paid) {
        address[] memory list = _auditors(sid);
        uint256[] memory before = new uint256[](list.length);
        uint256[] memory rep = new uint256[](list.length);
        for (uint256 i = 0; i < list.length; ++i) {
            before[i] = _backing(list[i]);
            rep[i] = _reputation(list[i]);
        }
        settlement.settleBatch(sid, 0, list);
        for (uint256 i = 0; i < list.length; ++i) {
            uint256 seats = _seats(sid, list[i]).length;
            assertEq(_backing(list[i]) - before[i], seats * R, "R per drawn seat");
            assertEq(_locked(list[i]), 0, "locks released");
            assertEq(_reputation(list[i]), rep[i], "reputation untouched");
            IStaking.SessionResult memory r = staking.resultOf(_key(sid), list[i]);
            assertEq(r.slash, 0, "no slash");
            assertEq(r.repMul, WAD, "identity reputation map");
            assertEq(r.repAdd, 0, "identity reputation map");
            paid += seats * R;
        }
        assertEq(token.balanceOf(address(sessions)), 0, "pool emptied");
    }

    function test_thereIsNoProviderCancel() public {
        uint256 sid = _open(_uniform(2, 1), FEE);
        vm.prank(provider);
        (bool ok,) = address(sessions).call(abi.encodeWithSignature("cancel(uint256)", sid));
        assertTrue(!ok, "no cancel entry point");
        assertEq(uint256(_status(sid)), uint256(IAuditSessions.Status.Created), "still open");
    }

    /// @dev Property 5: withholding keys after seeing the draw costs the whole fee; the drawn auditors
    /// are paid R per seat for their locked time, the treasury gets the rest.
    function test_keysWithheldForfeitsTheFeeAndPaysDrawnSeats() public {
        uint256 providerBefore = token.balanceOf(provider);
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        uint256 sid = _open(_uniform(4, 1), FEE);
        _drawAll(sid);
        uint256 seats = sessions.sessionOf(sid).drawnSeats;
        vm.roll(block.number + 21);
        assertEq(uint256(sessions.advance(sid)), uint256(IAuditSessions.Status.Expired), "expired");
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        assertEq(uint256(s.termination), uint256(IAuditSessions.Termination.KeysWithheld), "reason");
        assertEq(s.pool, seats * R, "R per drawn seat kept");
        assertEq(providerBefore - token.balanceOf(provider), FEE, "provider lost the whole fee");
        assertEq(
            token.balanceOf(address(treasury)) - treasuryBefore, FEE - seats * R, "treasury: fee share + rest"
        );
        assertEq(_settleTerminated(sid), seats * R, "drawn auditors paid");
        vm.prank(provider);
        vm.expectRevert(
            abi.encodeWithSelector(IAuditSessions.WrongStatus.selector, sid, IAuditSessions.Status.Expired)
        );
        sessions.publishKeys(sid, "late");
    }

    /// @dev Property 5: stopping the draw halfway (after seeing the seats so far) is abandonment too.
    function test_drawAbandonedForfeitsTheRest() public {
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        uint256 sid = _open(_uniform(6, 1), FEE);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        sessions.draw(sid, 3);
        uint256 seats = sessions.sessionOf(sid).drawnSeats;
        assertEq(seats, 3, "one segment drawn");
        vm.roll(block.number + 21);
        assertEq(uint256(sessions.advance(sid)), uint256(IAuditSessions.Status.Expired), "expired");
        assertEq(
            uint256(sessions.sessionOf(sid).termination),
            uint256(IAuditSessions.Termination.DrawAbandoned),
            "why"
        );
        assertEq(token.balanceOf(address(treasury)) - treasuryBefore, FEE - seats * R, "forfeited");
        _settleTerminated(sid);
    }

    /// @dev Property 5: a lookahead seed nobody fixed in time is the provider's abandonment: anyone,
    /// the provider included, could have drawn.
    function test_missedRandomnessIsAbandonment() public {
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        uint256 sid = _open(_uniform(2, 1), FEE);
        vm.roll(block.number + RANDOMNESS_DELAY + 257);
        assertEq(uint256(sessions.advance(sid)), uint256(IAuditSessions.Status.Expired), "expired");
        assertEq(
            uint256(sessions.sessionOf(sid).termination),
            uint256(IAuditSessions.Termination.RandomnessMissed),
            "why"
        );
        assertEq(token.balanceOf(address(treasury)) - treasuryBefore, FEE, "whole fee to the treasury");
        assertEq(token.balanceOf(address(sessions)), 0, "nothing left");
    }

    /// @dev A seed fixed after the snapshot stopped being readable cannot be drawn from; since the seed
    /// was public long before, this is abandonment, not a refund (else: wait, look, re-roll).
    function test_seedFixedTooLateIsAbandonment() public {
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        uint256 sid = _open(_uniform(2, 1), FEE);
        uint256 readable = staking.snapshotReadableUntil(sessions.sessionOf(sid).epoch);
        vm.roll(readable + 1);
        assertEq(sessions.draw(sid, 6), 0, "nothing drawn");
        assertEq(uint256(_status(sid)), uint256(IAuditSessions.Status.Expired), "expired");
        assertEq(
            uint256(sessions.sessionOf(sid).termination),
            uint256(IAuditSessions.Termination.SnapshotUnavailable),
            "why"
        );
        assertEq(token.balanceOf(address(treasury)) - treasuryBefore, FEE, "forfeited");
    }

    function test_drawDeadlineNeverOutlivesTheSnapshot() public {
        uint256 sid = _open(_uniform(6, 1), FEE);
        uint256 readable = staking.snapshotReadableUntil(sessions.sessionOf(sid).epoch);
        vm.roll(readable - 5);
        sessions.draw(sid, 3);
        assertEq(sessions.sessionOf(sid).drawDeadline, readable, "deadline capped");
        vm.roll(readable + 1);
        assertEq(
            uint256(sessions.advance(sid)),
            uint256(IAuditSessions.Status.Expired),
            "expired with the snapshot"
        );
    }

    /// @dev A VRF source whose timeout outlives the snapshot window: the coordinator has not delivered
    /// while the snapshot was readable, so nobody (the provider included) could have drawn. That is the
    /// source's failure, not abandonment: the pool goes back to the provider, and a delivery after that
    /// changes nothing (before the fix: SnapshotUnavailable, the whole fee forfeited).
    function test_randomnessLateForTheSnapshotRefunds() public {
        MockVRFCoordinator coord = new MockVRFCoordinator();
        VRFRandomness.Config memory c;
        c.keyHash = keccak256("gas lane");
        c.subscriptionId = 1;
        c.requestConfirmations = 3;
        c.callbackGasLimit = 100_000;
        c.timeoutBlocks = uint32(10 * EPOCH_BLOCKS);
        VRFRandomness vrf = new VRFRandomness(IVRFCoordinatorV2Plus(address(coord)), owner, c);
        vm.startPrank(owner);
        vrf.setRequester(address(sessions), true);
        sessions.setRandomness(IRandomness(address(vrf)));
        vm.stopPrank();
        uint256 providerBefore = token.balanceOf(provider);
        uint256 sid = _open(_uniform(2, 1), FEE);
        uint256 readable = staking.snapshotReadableUntil(sessions.sessionOf(sid).epoch);
        vm.roll(readable + 1);
        assertEq(uint256(sessions.advance(sid)), uint256(IAuditSessions.Status.Expired), "expired");
        assertEq(
            uint256(sessions.sessionOf(sid).termination),
            uint256(IAuditSessions.Termination.RandomnessFailed),
            "the source failed the snapshot window"
        );
        assertEq(providerBefore - token.balanceOf(provider), FEE - POOL, "pool refunded, fee share kept");
        assertTrue(
            coord.fulfill(vrf.coordinatorRequestOf(sessions.sessionOf(sid).drawRequest), 42),
            "late delivery accepted by VRF"
        );
        vm.expectRevert(
            abi.encodeWithSelector(IAuditSessions.WrongStatus.selector, sid, IAuditSessions.Status.Expired)
        );
        sessions.draw(sid, 6);
    }

    /// @dev A VRF request the coordinator never answers reports Failed: nobody's fault, full refund.
    function test_failedRandomnessRefundsThePool() public {
        ScriptedRandomness vrf = new ScriptedRandomness();
        vm.prank(owner);
        sessions.setRandomness(IRandomness(address(vrf)));
        uint256 providerBefore = token.balanceOf(provider);
        uint256 sid = _open(_uniform(2, 1), FEE);
        vm.roll(block.number + 50);
        assertEq(uint256(sessions.advance(sid)), uint256(IAuditSessions.Status.Created), "still waiting");
        vrf.fail(sessions.sessionOf(sid).drawRequest);
        assertEq(uint256(sessions.advance(sid)), uint256(IAuditSessions.Status.Expired), "expired");
        assertEq(
            uint256(sessions.sessionOf(sid).termination),
            uint256(IAuditSessions.Termination.RandomnessFailed),
            "why"
        );
        assertEq(providerBefore - token.balanceOf(provider), FEE - POOL, "pool refunded, fee share kept");
    }

    /// @dev Property 6: a draw that truly cannot fill refunds the pool minus R per seat already drawn,
    /// which goes to those auditors; the reason names the tier, the seats needed and who is left.
    function test_drawFailedRefundsMinusDrawnSeats() public {
        // 4 human auditors with a cap of 8 seats: 11 human segments need 33 seats > 32.
        uint256 providerBefore = token.balanceOf(provider);
        uint256 sid = _open(_uniform(11, 2), FEE);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        vm.recordLogs();
        sessions.draw(sid, 33);
        assertEq(uint256(_status(sid)), uint256(IAuditSessions.Status.Cancelled), "cancelled");
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        assertEq(uint256(s.termination), uint256(IAuditSessions.Termination.DrawFailed), "why");
        // Ten segments filled (30 seats); the eleventh got what the eligible auditors could give.
        uint256 onLast = s.drawnSeats - 30;
        assertTrue(s.drawnSeats >= 30 && onLast < 3, "failed on the eleventh segment");
        assertEq(
            providerBefore - token.balanceOf(provider),
            FEE - (POOL - s.drawnSeats * R),
            "refund minus R per seat"
        );
        uint256 belowCap = 0;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            uint256 n = _seats(sid, auditorAddrs[i]).length;
            assertTrue(n <= 8, "cap held");
            // Every human auditor is either at the cap or on the failing segment.
            if (i >= 6 && i < 10 && n < 8) {
                ++belowCap;
                uint256[] memory segs = _seats(sid, auditorAddrs[i]);
                assertEq(segs[segs.length - 1], 10, "eligible auditors left are on the segment");
            }
        }
        Vm_Log[] memory logs = _logs();
        bool seen = false;
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics[0] == IDrawModule.DrawFailed.selector) {
                (
                    uint256 round,
                    uint256 segment,
                    uint256 tier,
                    uint256 needed,
                    uint256 left,
                    uint256 refused
                ) = abi.decode(logs[i].data, (uint256, uint256, uint256, uint256, uint256, uint256));
                assertEq(refused, 0, "nobody refused a lock: the snapshot could not fill it");
                assertEq(round, 0, "round");
                assertEq(segment, 10, "the eleventh segment");
                assertEq(tier, 2, "human tier");
                assertEq(needed, 3 - onLast, "seats short");
                // Those on the segment that a seat there brought to the cap are out of every draw.
                assertEq(left, belowCap, "auditors left: those already on this segment, below the cap");
                seen = true;
            }
        }
        assertTrue(seen, "DrawFailed emitted");
        _settleTerminated(sid);
    }

    struct Vm_Log {
        bytes32[] topics;
        bytes data;
        address emitter;
    }

    function _logs() internal returns (Vm_Log[] memory out) {
        bytes memory raw = abi.encode(vm.getRecordedLogs());
        out = abi.decode(raw, (Vm_Log[]));
    }

    function test_lateSettlementOfTerminatedSessionStillPays() public {
        uint256 sid = _open(_uniform(3, 1), FEE);
        _drawAll(sid);
        vm.roll(block.number + 1000);
        sessions.advance(sid);
        address[] memory list = _auditors(sid);
        // Settle one at a time, in reverse order.
        for (uint256 i = list.length; i > 0; --i) {
            settlement.settle(sid, 0, list[i - 1]);
        }
        assertEq(token.balanceOf(address(sessions)), 0, "pool emptied");
        assertEq(sessions.sessionOf(sid).settledCount, list.length, "all settled");
    }
}
