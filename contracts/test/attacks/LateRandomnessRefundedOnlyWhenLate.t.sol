// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfAttackFixture} from "./VrfAttackFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";
import {LookaheadRandomness} from "../../src/LookaheadRandomness.sol";

/// @title LateRandomnessRefundedOnlyWhenLate (outside review 4, finding 1)
/// @notice Property: a session whose draw never started is refunded (RandomnessFailed) exactly when its
/// randomness was not in time (`DrawWindow.inTime`): obtainable after the last block its draw snapshot was
/// readable (`IRandomness.obtainableAt` > `snapshotReadableUntil(epoch)`), or too late to leave the draw window
/// every timely value is guaranteed (outside review 12; before, any value obtainable while readable was in
/// time, and a delivery one block before the end left a one-block window a griefer could make the provider
/// miss). When the value was in time, the session is forfeited (SnapshotUnavailable or RandomnessMissed)
/// whoever pokes it, whenever, and in whatever order: the provider cannot turn a seed it saw in time into a
/// refund (a re-roll).
/// Measured on edc6491 (main, before the fix): a VRF delivery at readable + 1 followed by a draw ended the
/// session SnapshotUnavailable with 800 TRUST forfeited (`Review4CanaryWindowFitsSnapshot`), while a poke
/// before the delivery in the same block refunded it: the ending depended on the poke order, not on when the
/// value existed.
contract LateRandomnessRefundedOnlyWhenLate is VrfAttackFixture {
    uint256 internal constant FEE = 100e18;
    uint256 internal constant SEGMENTS = 4;

    function setUp() public {
        _deploy();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    // ------------------------------------------------------------------ helpers

    function _useLookahead(uint256 delay) internal returns (LookaheadRandomness src) {
        src = new LookaheadRandomness(delay);
        vm.prank(owner);
        sessions.setRandomness(IRandomness(address(src)));
    }

    /// @dev Open a session at block `offset` of the next epoch.
    function _openAt(uint256 offset) internal returns (uint256 sid, uint256 readable) {
        vm.roll((block.number / EPOCH_BLOCKS + 1) * EPOCH_BLOCKS + offset % EPOCH_BLOCKS);
        sid = _open(_uniform(SEGMENTS, 1), FEE);
        readable = _sortition().snapshotReadableUntil(sessions.sessionOf(sid).epoch);
    }

    function _request(uint256 sid) internal view returns (uint256) {
        return sessions.sessionOf(sid).drawRequest;
    }

    function _termination(uint256 sid) internal view returns (IAuditSessions.Termination) {
        return sessions.sessionOf(sid).termination;
    }

    function _pool() internal pure returns (uint256) {
        return FEE * 8000 / 10_000;
    }

    /// @dev Tokens held by the provider, the treasury and the core (no session here reaches settlement).
    function _held() internal view returns (uint256) {
        return
            token.balanceOf(provider) + token.balanceOf(address(treasury))
                + token.balanceOf(address(sessions));
    }

    // ------------------------------------------------------------------ sources

    /// @dev Lookahead: target + 1 from the request on, and still after the value is fixed by anyone.
    function test_LookaheadObtainableAtSurvivesFulfil() public {
        LookaheadRandomness src = _useLookahead(5);
        vm.prank(address(sessions));
        uint256 id = src.requestAfter(9);
        uint256 target = block.number + 9;
        assertEq(src.obtainableAt(id), target + 1, "pending: target + 1");
        assertEq(src.obtainableAt(id + 1), type(uint256).max, "unknown: never");
        vm.roll(target + 40);
        bytes32 v = src.fulfil(id);
        assertEq(src.obtainableAt(id), target + 1, "fixed: still target + 1");
        assertEq(uint256(v) >> 255, 1, "fixed bit");
        assertEq(src.valueOf(id), v, "value kept");
    }

    /// @dev VRF: unknown until a delivery counts; an ignored early or late delivery sets nothing.
    function test_VrfObtainableAtIsTheAcceptedDeliveryBlock() public {
        _useVrf();
        vm.prank(address(sessions));
        uint256 id = vrf.requestAfter(10);
        assertEq(vrf.obtainableAt(id), type(uint256).max, "pending: not known");
        vm.roll(block.number + 5);
        coord.deliver(address(vrf), vrf.coordinatorRequestOf(id), _words(1), 60_000);
        assertTrue(vrf.status(id) == IRandomness.RequestStatus.Pending, "early delivery ignored");
        assertEq(vrf.obtainableAt(id), type(uint256).max, "an ignored delivery sets nothing");
        vm.roll(block.number + 20);
        coord.fulfill(vrf.coordinatorRequestOf(id), 7);
        assertEq(vrf.obtainableAt(id), block.number + 1, "the block after the delivery (outside review 8)");
        vm.prank(address(sessions));
        uint256 late = vrf.request();
        vm.roll(vrf.deadlineOf(late) + 1);
        coord.fulfill(vrf.coordinatorRequestOf(late), 7);
        assertTrue(vrf.status(late) == IRandomness.RequestStatus.Failed, "late delivery ignored");
        assertEq(vrf.obtainableAt(late), type(uint256).max, "failed: never obtainable");
    }

    /// @dev The last VRF delivery block whose value is in time: obtainable (delivery + 1) at least `need`
    /// blocks before `readable`, `need` = drawBlocks capped at what a value requested in the epoch's last
    /// block and served at once, plus 4 blocks of oracle latency, leaves (readable - epochEnd -
    /// max(minDelay, canaryCommitBlocks) - 2 - 4).
    function _lastTimelyDelivery(uint256 sid, uint256 readable) internal view returns (uint256) {
        uint256 epochEnd = sessions.sessionOf(sid).epoch * EPOCH_BLOCKS - 1;
        uint256 delay = vrf.minDelay() > CANARY_COMMIT_BLOCKS ? vrf.minDelay() : CANARY_COMMIT_BLOCKS;
        uint256 guaranteed = readable - epochEnd - delay - 2 - 4; // 4: DrawWindow.LATENCY_BLOCKS
        uint256 drawBlocks = _sessionParams().drawBlocks;
        return readable - 1 - (drawBlocks < guaranteed ? drawBlocks : guaranteed);
    }

    function _words(uint256 w) internal pure returns (uint256[] memory words) {
        words = new uint256[](1);
        words[0] = w;
    }

    // ------------------------------------------------------------------ the rule, fuzzed

    /// @dev Any opening block, any delivery block within the VRF timeout, any poke block after the delivery:
    /// the draw starts while readable; after it, refund iff the delivery came too late to leave the guaranteed
    /// draw window. Tokens are conserved either way.
    function testFuzz_VrfDeliveryBlockDecidesTheEnding(uint256 openOffset, uint256 deliverAt, uint256 pokeAt)
        public
    {
        _useVrf();
        (uint256 sid, uint256 readable) = _openAt(openOffset);
        uint256 id = _request(sid);
        uint256 opened = block.number;
        uint256 d = bound(deliverAt, opened + VRF_CONFIRMATIONS, vrf.deadlineOf(id));
        vm.roll(d);
        coord.fulfill(vrf.coordinatorRequestOf(id), deliverAt);
        assertEq(vrf.obtainableAt(id), d + 1, "obtainable from the block after the delivery");
        uint256 p = bound(pokeAt, d + 1, d + 300); // a draw in block d reverts TooEarly (outside review 8)
        vm.roll(p);
        uint256 held = _held();
        uint256 providerBefore = token.balanceOf(provider);
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        sessions.draw(sid, 64);
        assertEq(_held(), held, "conservation");
        if (p <= readable) {
            assertTrue(sessions.statusOf(sid) == IAuditSessions.Status.Drawing, "drawn while readable");
        } else if (d > _lastTimelyDelivery(sid, readable)) {
            assertTrue(_termination(sid) == IAuditSessions.Termination.RandomnessFailed, "late value: refund");
            assertEq(token.balanceOf(provider) - providerBefore, _pool(), "pool refunded");
        } else {
            assertTrue(
                _termination(sid) == IAuditSessions.Termination.SnapshotUnavailable, "timely value: forfeit"
            );
            assertEq(token.balanceOf(provider), providerBefore, "nothing refunded");
            assertEq(token.balanceOf(address(treasury)) - treasuryBefore, _pool(), "pool forfeited");
        }
    }

    /// @dev The attack: the provider sees a seed delivered in time, dislikes it, waits until the snapshot
    /// expired and tries every order of pokes (advance first, then draw; draw alone; advance alone and a
    /// keeper's draw later). It never gets anything back.
    function testFuzz_ProviderCannotBuyARefundForATimelyVrfValue(
        uint256 openOffset,
        uint256 deliverAt,
        uint256 wait,
        uint8 path
    ) public {
        _useVrf();
        (uint256 sid, uint256 readable) = _openAt(openOffset);
        // In time: usable from d + 1, a full guaranteed draw window before readable (outside reviews 8, 12).
        uint256 d = bound(deliverAt, block.number + VRF_CONFIRMATIONS, _lastTimelyDelivery(sid, readable));
        vm.roll(d);
        coord.fulfill(vrf.coordinatorRequestOf(_request(sid)), deliverAt);
        vm.roll(readable + 1 + bound(wait, 0, 2000));
        uint256 providerBefore = token.balanceOf(provider);
        vm.startPrank(provider);
        if (path % 3 != 1) sessions.advance(sid); // ends it (outside review 6): a later draw reverts
        if (path % 3 == 1) sessions.draw(sid, 64); // draw alone ends it too, keeping the ending
        vm.stopPrank();
        if (path % 3 == 2) {
            vm.expectRevert(); // a keeper, later: already ended
            sessions.draw(sid, 64);
        }
        assertEq(token.balanceOf(provider), providerBefore, "no refund for a value obtainable in time");
        assertTrue(_termination(sid) == IAuditSessions.Termination.SnapshotUnavailable, "forfeited");
    }

    /// @dev A late oracle (a delivery that leaves less than the guaranteed window): whether nobody draws or a
    /// draw is started and left short, the provider gets the pool back but R per drawn seat (outside review 12:
    /// before, a delivery one block before the end forfeited the pool when the provider's completing call
    /// missed that block). Conservation either way.
    function testFuzz_ShortWindowIsRefunded(uint256 openOffset, uint256 deliverAt, bool start) public {
        _useVrf();
        (uint256 sid, uint256 readable) = _openAt(openOffset);
        uint256 first = _lastTimelyDelivery(sid, readable) + 1;
        uint256 d = bound(deliverAt, first, readable - 1);
        vm.roll(d);
        coord.fulfill(vrf.coordinatorRequestOf(_request(sid)), deliverAt);
        vm.roll(d + 1);
        uint256 held = _held();
        uint256 providerBefore = token.balanceOf(provider);
        uint256 drawn = 0;
        if (start) drawn = sessions.draw(sid, 1); // a griefer draws one seat and stops
        vm.roll(readable + 1);
        sessions.advance(sid);
        assertEq(_held(), held, "conservation");
        assertTrue(_termination(sid) == IAuditSessions.Termination.RandomnessFailed, "short window: refund");
        assertEq(
            token.balanceOf(provider) - providerBefore,
            _pool() - drawn * _sessionParams().reward,
            "R per seat"
        );
    }

    /// @dev Lookahead with the fixture's delay: target + 1 is always within the snapshot's readability, so a
    /// session nobody drew in time is forfeited, even when the provider fixes the value on the source itself
    /// after the snapshot expired (the source keeps the target), or lets the hash age out (RandomnessMissed).
    function testFuzz_ProviderCannotBuyARefundForATimelyLookaheadValue(
        uint256 openOffset,
        uint256 wait,
        bool fixFirst
    ) public {
        (uint256 sid, uint256 readable) = _openAt(openOffset);
        uint256 id = _request(sid);
        assertLe(randomness.obtainableAt(id), readable, "obtainable in time");
        uint256 p = readable + 1 + bound(wait, 0, 600);
        vm.roll(p);
        uint256 providerBefore = token.balanceOf(provider);
        bool fresh = p - randomness.targetBlockOf(id) <= randomness.HASH_WINDOW();
        vm.startPrank(provider);
        if (fixFirst && fresh) randomness.fulfil(id);
        if (fresh) sessions.draw(sid, 64);
        else sessions.advance(sid);
        vm.stopPrank();
        assertEq(token.balanceOf(provider), providerBefore, "no refund");
        assertTrue(
            _termination(sid)
                == (fresh
                        ? IAuditSessions.Termination.SnapshotUnavailable
                        : IAuditSessions.Termination.RandomnessMissed),
            "forfeited"
        );
    }

    /// @dev A lookahead delay of 128 blocks (over two 50-block epochs) is refused (outside review 5); with the
    /// slowest accepted (one epoch) target + 1 never falls after `readable`, whatever the opening block, so
    /// nobody is refunded whoever pokes it and whenever (pending, ready or expired).
    function testFuzz_LookaheadTargetPastTheSnapshotIsRefunded(uint256 openOffset, uint256 pokeAt) public {
        LookaheadRandomness tooSlow = new LookaheadRandomness(128);
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSignature("RandomnessTooSlow(uint256,uint256)", 128, EPOCH_BLOCKS));
        sessions.setRandomness(IRandomness(address(tooSlow)));
        LookaheadRandomness src = _useLookahead(EPOCH_BLOCKS);
        (uint256 sid, uint256 readable) = _openAt(openOffset);
        uint256 target = src.targetBlockOf(_request(sid));
        bool late = target + 1 > readable;
        assertTrue(!late, "never late with an accepted source");
        uint256 p = bound(pokeAt, readable + 1, target + 400);
        vm.roll(p);
        uint256 providerBefore = token.balanceOf(provider);
        IRandomness.RequestStatus st = src.status(_request(sid));
        if (st == IRandomness.RequestStatus.Ready) sessions.draw(sid, 64);
        else sessions.advance(sid);
        if (late) {
            assertTrue(_termination(sid) == IAuditSessions.Termination.RandomnessFailed, "refund");
            assertEq(token.balanceOf(provider) - providerBefore, _pool(), "pool refunded");
        } else {
            assertTrue(_termination(sid) != IAuditSessions.Termination.RandomnessFailed, "no refund");
            assertEq(token.balanceOf(provider), providerBefore, "nothing refunded");
        }
    }
}
