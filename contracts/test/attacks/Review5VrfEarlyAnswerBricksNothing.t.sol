// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfAppealsAttackFixture} from "./VrfAttackFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";
import {VRFRandomness} from "../../src/VRFRandomness.sol";

/// @title Review5VrfEarlyAnswerBricksNothing (outside review 5 of main edc6491, EarlyFulfilmentIgnored)
/// @notice Properties of VRFRandomness's request word (deadline bits 0-63, earliest delivery bits 64-127)
/// an attacker controlling the coordinator's answers (early, twice, late, at the boundaries) tried to break:
/// - an early answer changes nothing: the request stays Pending and a later on-time answer fixes the value
///   (the early words are never the seed); a second answer after that is refused and the value never
///   changes; a late answer never revives a Failed request;
/// - boundaries: a request made in block b with `requestAfter(m)` is Pending through b + m (no delivery
///   counts before b + max(m + 1, requestConfirmations)) and through its deadline, Failed one block after;
/// - packing: for every legal (requestConfirmations, timeoutBlocks, m) the deadline and earliest block
///   decode to the values asked, and the deadline is always after the earliest block (a window exists);
/// - with the real coordinator an answer is final (it deletes its commitment before the callback), so an
///   early answer means no value ever: the session ends RandomnessFailed with its pool refunded, not
///   forfeited, and no draw ever used a value anyone saw.
/// All hold on main (regression tests). Measured: early answer only -> Expired / RandomnessFailed, 800 of
/// the 1,000 TRUST fee refunded (the 200 TRUST treasury share is kept, as for every RandomnessFailed).
contract Review5VrfEarlyAnswerBricksNothing is VrfAppealsAttackFixture {
    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
        _useVrf(address(this));
    }

    function _answer(uint256 local, bytes32 tag) internal returns (bool) {
        uint256[] memory words = new uint256[](1);
        words[0] = uint256(keccak256(abi.encode(tag)));
        return coord.deliver(address(vrf), vrf.coordinatorRequestOf(local), words, 60_000);
    }

    /// @dev An early answer, then an on-time one: the on-time value is the seed, the draw runs, and a third
    /// answer is refused.
    function test_EarlyAnswerThenOnTimeAnswerDraws() public {
        uint256 sid = _open(_uniform(10, 1), FEE); // owes a canary: window CANARY_COMMIT_BLOCKS
        uint256 opened = block.number;
        uint256 local = sessions.sessionOf(sid).drawRequest;
        vm.roll(opened + 1);
        assertTrue(_answer(local, "early"), "callback returns");
        assertEq(uint256(vrf.status(local)), uint256(IRandomness.RequestStatus.Pending), "still pending");
        vm.roll(opened + CANARY_COMMIT_BLOCKS + 1);
        assertTrue(_answer(local, "on time"), "on-time answer");
        bytes32 value = vrf.valueOf(local);
        // The value keeps the first word's low 191 bits, and the delivery block above them (obtainableAt - 1).
        assertEq(
            uint256(value) & ((1 << 191) - 1),
            uint256(keccak256(abi.encode(bytes32("on time")))) & ((1 << 191) - 1),
            "the on-time words, not the early ones"
        );
        assertEq(
            vrf.obtainableAt(local), opened + CANARY_COMMIT_BLOCKS + 2, "obtainable after the on-time answer"
        );
        assertTrue(!_answer(local, "replay"), "a second answer is refused");
        assertEq(vrf.valueOf(local), value, "value unchanged");
        _drawAll(sid);
        assertEq(uint256(sessions.statusOf(sid)), uint256(IAuditSessions.Status.Drawing), "drawn");
        assertEq(sessions.seedOf(sid), value, "the on-time value is the seed");
    }

    /// @dev The real coordinator answers once: an early answer and nothing after. The request fails at its
    /// deadline (or the snapshot lapses first); the session is refunded, never forfeited.
    function test_EarlyAnswerOnlyIsRefundedNotForfeited() public {
        uint256 before = token.balanceOf(provider);
        uint256 sid = _open(_uniform(10, 1), FEE);
        uint256 local = sessions.sessionOf(sid).drawRequest;
        vm.roll(block.number + 1);
        assertTrue(_answer(local, "early"), "callback returns");
        vm.roll(vrf.deadlineOf(local) + 1);
        sessions.advance(sid);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        emit log_named_uint("status (8 Expired)", uint256(s.status));
        emit log_named_uint("termination (2 RandomnessFailed)", uint256(s.termination));
        emit log_named_decimal_uint("provider's net loss (TRUST)", before - token.balanceOf(provider), 18);
        assertEq(uint256(s.status), uint256(IAuditSessions.Status.Expired), "expired");
        assertEq(
            uint256(s.termination), uint256(IAuditSessions.Termination.RandomnessFailed), "refunded ending"
        );
        assertEq(before - token.balanceOf(provider), FEE / 5, "only the treasury share is kept");
        vm.expectRevert();
        sessions.draw(sid, 16);
    }

    /// @dev A late answer after the deadline never revives the request.
    function test_LateAnswerNeverRevives() public {
        uint256 local = vrf.requestAfter(5);
        vm.roll(vrf.deadlineOf(local) + 1);
        assertTrue(_answer(local, "late"), "callback returns");
        assertEq(uint256(vrf.status(local)), uint256(IRandomness.RequestStatus.Failed), "failed");
        vm.roll(block.number + 1000);
        assertTrue(_answer(local, "later"), "callback returns");
        assertEq(uint256(vrf.status(local)), uint256(IRandomness.RequestStatus.Failed), "still failed");
    }

    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    /// @dev Packing and boundaries over every legal setting: Pending through b + m and through the
    /// deadline; an answer one block before the earliest block is ignored, one at it is accepted; the
    /// deadline is `b + timeout + (confirmations - requestConfirmations)`.
    function testFuzz_WordDecodesAndBoundariesHold(uint256 conf, uint256 timeout, uint256 m, uint256 startAt)
        public
    {
        conf = bound(conf, 1, 200);
        timeout = bound(timeout, conf + 1, 1e6);
        m = bound(m, 0, 199);
        vm.roll(bound(startAt, block.number, type(uint40).max));
        vm.prank(owner);
        vrf.setConfig(_vrfConfig(conf, timeout));
        uint256 b = block.number;
        uint256 local = vrf.requestAfter(m);
        uint256 asked = m == 0 ? conf : (m + 1 > conf ? m + 1 : conf);
        assertEq(coord.recorded(vrf.coordinatorRequestOf(local)).requestConfirmations, asked, "confirmations");
        uint256 deadline = b + timeout + (asked - conf);
        assertEq(vrf.deadlineOf(local), deadline, "deadline");
        uint256 earliest = b + asked;
        assertTrue(deadline > earliest, "a delivery window exists");
        vm.roll(b + m);
        assertEq(
            uint256(vrf.status(local)), uint256(IRandomness.RequestStatus.Pending), "pending through b + m"
        );
        vm.roll(earliest - 1);
        assertTrue(_answer(local, "early"), "callback returns");
        assertEq(uint256(vrf.status(local)), uint256(IRandomness.RequestStatus.Pending), "early ignored");
        assertEq(vrf.deadlineOf(local), deadline, "word untouched");
        vm.roll(deadline);
        assertEq(
            uint256(vrf.status(local)), uint256(IRandomness.RequestStatus.Pending), "pending at the deadline"
        );
        uint256 snap = vm.snapshotState();
        vm.roll(deadline + 1);
        assertEq(uint256(vrf.status(local)), uint256(IRandomness.RequestStatus.Failed), "failed after");
        vm.revertToState(snap);
        vm.roll(earliest);
        assertTrue(_answer(local, "first counted"), "answer at the earliest block");
        assertEq(uint256(vrf.status(local)), uint256(IRandomness.RequestStatus.Fulfilled), "fixed there");
    }
}
