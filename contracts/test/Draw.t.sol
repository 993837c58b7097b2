// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Vm} from "./utils/TestBase.sol";
import {DoubleFixture} from "./utils/DoubleFixture.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {IDrawModule} from "../src/interfaces/IDrawModule.sol";
import {AuditSessions} from "../src/AuditSessions.sol";
import {SeatWord} from "../src/libraries/SeatWord.sol";

/// @notice The draw module: snapshot sampling (property 1, session side), sampling without replacement
/// (property 6), exclusions, stake locks, pagination.
contract DrawTest is DoubleFixture {
    uint256 internal constant FEE = 2000e18;

    function setUp() public {
        _deploy();
        _addAuditors(1, 6, STAKE); // 0-5: LLM
        _addAuditors(2, 4, STAKE); // 6-9: Human
        _addAuditors(0, 2, STAKE); // 10-11: Computer
        _nextEpoch();
    }

    function test_drawIsPaginatedAndRespectsRules() public {
        // The provider is also a registered LLM auditor: it must never be drawn.
        token.transfer(provider, STAKE);
        vm.startPrank(provider);
        registry.register(1, 2, keccak256("provider-key"));
        token.approve(address(staking), STAKE);
        staking.deposit(provider, STAKE);
        vm.stopPrank();
        _nextEpoch();
        uint256 sid = _open(_uniform(8, 1), FEE);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        uint256 calls = 0;
        while (_drawing(sid) || sessions.statusOf(sid) == IAuditSessions.Status.Created) {
            // A budget of 5 seats is rounded up to whole segments: 6 seats per call.
            assertEq(sessions.draw(sid, 5), 6, "whole segments per call");
            ++calls;
        }
        assertEq(calls, 4, "24 seats in pages of 6");
        assertEq(sessions.sessionOf(sid).drawnSeats, 24, "all seats");
        address[] memory list = _auditors(sid);
        assertEq(list.length, sessions.sessionOf(sid).auditorCount, "auditor count");
        uint256 seatSum = 0;
        for (uint256 i = 0; i < list.length; ++i) {
            assertTrue(list[i] != provider, "provider excluded");
            uint256[] memory segs = _seats(sid, list[i]);
            assertLe(segs.length, 8, "seat cap");
            for (uint256 j = 1; j < segs.length; ++j) {
                assertTrue(segs[j] > segs[j - 1], "distinct segments in seat order");
            }
            assertEq(_locked(list[i]), segs.length * 8e18, "P locked per seat");
            // Locks are aggregated: one lockSeats per auditor and draw call that seated it.
            assertGe(staking.lockCalls(_key(sid), list[i]), 1, "locked by the call that seated it");
            assertLe(staking.lockCalls(_key(sid), list[i]), calls, "one lock per auditor and call");
            assertLe(staking.lockCalls(_key(sid), list[i]), segs.length, "no more locks than seats");
            assertEq(staking.seatsLocked(_key(sid), list[i]), 0, "no per-seat lockSeat");
            uint256 word = _seatWord(sid, list[i]);
            assertEq(SeatWord.index(word), i, "index in draw order");
            assertEq(SeatWord.reputation(word), 0.5e18, "reputation fixed at the draw");
            seatSum += segs.length;
        }
        assertEq(seatSum, 24, "seats add up");
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.DrawComplete.selector, sid));
        sessions.draw(sid, 1);
    }

    /// @dev Property 1, session side: the draw reads the snapshot of the opening epoch, so stake
    /// changes after the opening - top-ups, withdrawals, between paginated calls or before the first
    /// one - leave every seat where it was.
    function test_stakeChangesAfterOpeningMoveNoSeat() public {
        uint256 sid = _open(_uniform(8, 1), FEE);
        uint256 snap = vm.snapshotState();
        _drawAll(sid);
        address[][] memory expected = new address[][](8);
        for (uint256 g = 0; g < 8; ++g) {
            expected[g] = _seatedOn(sid, g);
        }
        vm.revertToState(snap);
        // An adaptive staker tops up before the seed exists and between pages; another leaves.
        address attacker = auditorAddrs[2];
        token.approve(address(staking), type(uint256).max);
        staking.deposit(attacker, 50_000e18);
        vm.prank(auditorAddrs[4]);
        staking.withdrawFree(auditorAddrs[4], 500e18, auditorAddrs[4]);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        for (
            uint256 page = 0;
            _drawing(sid) || sessions.statusOf(sid) == IAuditSessions.Status.Created;
            ++page
        ) {
            sessions.draw(sid, 3);
            staking.deposit(attacker, 1e18 + page);
            vm.roll(block.number + 1);
        }
        for (uint256 g = 0; g < 8; ++g) {
            address[] memory seated = _seatedOn(sid, g);
            assertEq(seated.length, expected[g].length, "same seat count");
            for (uint256 j = 0; j < seated.length; ++j) {
                assertEq(seated[j], expected[g][j], "same auditors");
            }
        }
    }

    /// @dev Stake added in the opening epoch (after its snapshot) gives no weight in that session.
    function test_stakeOfTheOpeningEpochDoesNotCount() public {
        _addAuditors(0, 1, 1_000_000e18); // a heavy computer-tier newcomer, same epoch as the opening
        address newcomer = auditorAddrs[auditorAddrs.length - 1];
        uint8[] memory tiers = new uint8[](20);
        uint16[] memory weights = new uint16[](20);
        for (uint256 i = 0; i < 20; ++i) {
            weights[i] = 1;
        }
        uint256 sid = _open(_tiersWeights(tiers, weights), FEE);
        _drawAll(sid);
        assertEq(_seats(sid, newcomer).length, 0, "not in the snapshot");
        _nextEpoch();
        uint256 sid2 = _open(_tiersWeights(tiers, weights), FEE);
        _drawAll(sid2);
        assertTrue(_seats(sid2, newcomer).length > 0, "in the next epoch's snapshot");
    }

    /// @dev Property 6 (DrawWithoutReplacement): a whale with almost all of a tier's weight cannot get
    /// one-segment sessions cancelled - the auditors already on the segment leave the draw, so 4
    /// eligible auditors always fill 3 seats.
    function test_whaleCannotCancelSessions() public {
        address whale = auditorAddrs[6];
        token.approve(address(staking), type(uint256).max);
        staking.deposit(whale, 200_000e18);
        _nextEpoch();
        for (uint256 i = 0; i < 12; ++i) {
            uint256 sid = _open(_uniform(1, 2), FEE);
            _drawAll(sid);
            assertEq(
                uint256(sessions.statusOf(sid)), uint256(IAuditSessions.Status.Drawing), "never cancelled"
            );
            address[] memory seated = _seatedOn(sid, 0);
            assertEq(seated.length, 3, "three distinct auditors");
            assertTrue(_seats(sid, whale).length == 1, "whale drawn once, not more");
            vm.roll(block.number + 1);
        }
    }

    /// @dev An auditor whose stake cannot back a seat now is excluded from each segment it is sampled
    /// for (once per segment at most: the exclusion lasts the segment), is never seated, and the draw
    /// still completes from the others. Panel-wide exclusion would let a refusal re-roll later segments
    /// (DrawRefusal.t.sol).
    function test_lockRefusedExcludesForTheSegment() public {
        address a = auditorAddrs[0];
        staking.setRefuseLocks(a, true);
        uint256 sid = _open(_uniform(8, 1), FEE);
        vm.recordLogs();
        _drawAll(sid);
        assertEq(_seats(sid, a).length, 0, "never seated");
        assertEq(sessions.sessionOf(sid).drawnSeats, 24, "complete");
        Vm.Log[] memory logs = vm.getRecordedLogs();
        uint256 exclusions = 0;
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics[0] == IDrawModule.AuditorExcluded.selector) {
                assertEq(address(uint160(uint256(logs[i].topics[2]))), a, "the refused auditor");
                (, uint256 reason) = abi.decode(logs[i].data, (uint256, uint256));
                assertEq(reason, 3, "lock refused");
                ++exclusions;
            }
        }
        assertTrue(exclusions <= 8, "excluded at most once per segment");
    }

    /// @dev A call stopped by MAX_REJECTIONS_PER_CALL inside a segment resumes exactly where it stopped.
    function test_resumesAfterTooManyRejections() public {
        uint256 heavy = 70;
        _addAuditors(0, heavy, 1_000_000e18);
        for (uint256 i = 12; i < 12 + heavy; ++i) {
            staking.setRefuseLocks(auditorAddrs[i], true);
        }
        _nextEpoch();
        uint256 sid = _open(hex"000001000001", FEE);
        uint256 snap = vm.snapshotState();
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        uint256 calls = 0;
        while (_drawing(sid) || sessions.statusOf(sid) == IAuditSessions.Status.Created) {
            sessions.draw(sid, 2);
            ++calls;
        }
        assertTrue(calls >= 2, "needed more than one call");
        assertEq(sessions.sessionOf(sid).drawnSeats, 2, "both seats");
        address first = _seatedOn(sid, 0)[0];
        address second = _seatedOn(sid, 1)[0];
        assertTrue(first == auditorAddrs[10] || first == auditorAddrs[11], "a lockable computer auditor");
        assertTrue(second == auditorAddrs[10] || second == auditorAddrs[11], "a lockable computer auditor");
        // The same draw with no rejection bound in the way: identical seats (resumption is exact).
        vm.revertToState(snap);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        for (uint256 i = 0; i < 4 && sessions.sessionOf(sid).drawnSeats < 2; ++i) {
            sessions.draw(sid, 1);
        }
        assertEq(_seatedOn(sid, 0)[0], first, "same first seat");
        assertEq(_seatedOn(sid, 1)[0], second, "same second seat");
    }

    /// @dev Seats in segments >= 128 live in separate bitmap windows; seat order stays ascending.
    function test_seatsBeyondSegment127() public {
        _addAuditors(0, 4, STAKE);
        _nextEpoch();
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.seatCap = 64;
        vm.prank(owner);
        sessions.setParams(p);
        uint256 sid = _open(_uniform(200, 0), 2000e18);
        _drawAll(sid);
        uint256 total = 0;
        bool high = false;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            uint256[] memory segs = _seats(sid, auditorAddrs[i]);
            for (uint256 j = 0; j < segs.length; ++j) {
                if (j > 0) assertTrue(segs[j] > segs[j - 1], "ascending");
                if (segs[j] >= 128) high = true;
            }
            total += segs.length;
        }
        assertEq(total, 200, "one seat per segment");
        assertTrue(high, "some seats beyond 127");
    }

    /// @dev The auditors seated on `segment`, read back from the seat bitmaps.
    function _seatedOn(uint256 sid, uint256 segment) internal view returns (address[] memory out) {
        address[] memory tmp = new address[](auditorAddrs.length);
        uint256 n = 0;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            uint256[] memory segs = _seats(sid, auditorAddrs[i]);
            for (uint256 j = 0; j < segs.length; ++j) {
                if (segs[j] == segment) tmp[n++] = auditorAddrs[i];
            }
        }
        out = new address[](n);
        for (uint256 i = 0; i < n; ++i) {
            out[i] = tmp[i];
        }
    }
}
