// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfAppealsAttackFixture} from "./VrfAttackFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {LookaheadRandomness} from "../../src/LookaheadRandomness.sol";

/// @dev The cheatcodes TestBase's `Vm` does not declare.
interface VmReview14Delay {
    function snapshotState() external returns (uint256);
    function revertToState(uint256) external returns (bool);
}

/// @title Review14EndingReadsTodaysDelay (outside review 14 of 89d0887, `DrawWindow.inTime`)
/// @notice Property (AuditSessions._endUndrawn NatSpec): "whether it is in time was fixed before any seed
/// existed ... or by the oracle alone (VRF)": the ending of a session does not depend on anything that
/// changes after its value was delivered.
/// Attack: `DrawWindow.inTime` reads `src.minDelay()` when the session is ENDED (`advance`, any time after the
/// snapshot lapsed), not the delay its request was made with; VRF's is `requestConfirmations`, which the
/// adapter's owner changes with `setConfig` at any time (`IRandomness.minDelay`: "May change over time").
/// With `drawBlocks >= guaranteed` (devnet defaults) a change after the delivery moves the boundary under a
/// value already public: lowering the confirmations turns an undrawn, forfeited session into a refund (a
/// re-roll for a provider who waits for an ops change before poking); raising them turns a refund into a
/// forfeit for every session in flight (an honest provider who got a late value and could not draw loses
/// its pool), and with `requestConfirmations >= 2 * epochBlocks - 2` (allowed by the adapter up to 200; only
/// NEW openings are refused) `guaranteed` is 0: every value obtainable by `readable` is "in time", the
/// one-block window of outside reviews 8/11 forfeits again.
/// Measured (fixture epochs 50, drawBlocks 100, canaryCommitBlocks 8, VRF opened with 10 confirmations,
/// a canary session opened in the epoch's last block b, undrawn, ended past the snapshot; the latency
/// allowance of d1bac2e moved the reported b + 11 example inside the margin, so the tests use the boundary):
/// - delivered in b + 15 (obtainable b + 16, the last in-time block): config unchanged SnapshotUnavailable,
///   0 refunded; owner lowers requestConfirmations to 3 (judged with the canary window 8) before the ending:
///   before the fix RandomnessFailed, 800 TRUST refunded; after: SnapshotUnavailable, 0
///   (`test_DelayLoweredAfterDeliveryRefundsNothing`).
/// - delivered in b + 20 (late): config unchanged RandomnessFailed, 800 TRUST refunded; owner raises them to
///   50: before the fix SnapshotUnavailable, 0 refunded (an honest provider's pool forfeited); after:
///   RandomnessFailed, 800 (`test_DelayRaisedAfterDeliveryForfeitsNothing`).
/// Severity LOW: the owner (or the VRF operator's config) moves it, not the provider, but the provider
/// chooses when to poke.
/// Fixed (where the fact belongs, the source): each request keeps the delay it was made with and
/// `IRandomness.delayOf(id)` returns it (VRF: the `requestConfirmations` configured at the request, in bits
/// 247-254 of the request's own slot, cleared from the value consumers read; lookahead: its constant
/// `delay`). `DrawWindow.inTime` reads `src.delayOf(id)` instead of `src.minDelay()`, so the round-0 ending
/// (`AuditSessions._endUndrawn`) and the appeal rounds' (`AppealModule`) both judge with the request's delay.
/// `testFuzz_ConfigChangeNeverMovesTheEnding`: for any opening block in the epoch, any delivery (or none) up
/// to the snapshot's end, any new `requestConfirmations` (3..200) set before or after the delivery, the
/// ending (termination and refund) equals the one with the config unchanged.
/// Mutation: `DrawWindow.inTime` reading `src.minDelay()` again (main's code before the fix) fails the two
/// named tests (`same termination: 2 != 3`, `3 != 2`) and the fuzz test (first run).
/// Command: scripts/forge test --match-path 'contracts/test/attacks/Review14EndingReadsTodaysDelay*' -vv
contract Review14EndingReadsTodaysDelay is VrfAppealsAttackFixture {
    event log_named_uint(string key, uint256 val);

    uint256 internal constant OPENED_CONFIRMATIONS = 10;

    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.drawBlocks = uint32(2 * EPOCH_BLOCKS);
    }

    function setUp() public {
        _deployAppeals();
        _addAuditors(0, 12, STAKE);
        _nextEpoch();
        _useVrf(_vrfConfig(OPENED_CONFIRMATIONS, VRF_TIMEOUT), address(0));
    }

    /// @dev A canary session (10 tier-0 segments) opened in an epoch's last block b, its value delivered in
    /// b + `latency` and left undrawn, ended past the snapshot with the config unchanged and, from the same
    /// state, after the owner set `confirmations` (after the delivery): the two provider refunds.
    function _endedBothWays(uint256 latency, uint256 confirmations)
        internal
        returns (uint256 unchanged, uint256 changed, uint256 sid)
    {
        uint256 epochEnd = (block.number / EPOCH_BLOCKS + 2) * EPOCH_BLOCKS - 1;
        vm.roll(epochEnd);
        sid = _open(_uniform(10, 0), FEE);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        uint256 readable = _sortition().snapshotReadableUntil(s.epoch);
        vm.roll(epochEnd + latency);
        assertTrue(_deliver(s.drawRequest, 0xBAD5EED), "delivered");
        vm.roll(readable + 1);
        uint256 before = token.balanceOf(provider);
        uint256 snap = VmReview14Delay(address(vm)).snapshotState();
        sessions.advance(sid);
        unchanged = token.balanceOf(provider) - before;
        IAuditSessions.Termination why = sessions.sessionOf(sid).termination;
        VmReview14Delay(address(vm)).revertToState(snap);
        vm.prank(owner);
        vrf.setConfig(_vrfConfig(confirmations, VRF_TIMEOUT));
        sessions.advance(sid);
        changed = token.balanceOf(provider) - before;
        emit log_named_uint("refunded, config unchanged", unchanged);
        emit log_named_uint("refunded, confirmations changed after the delivery", changed);
        assertEq(uint256(sessions.sessionOf(sid).termination), uint256(why), "same termination");
    }

    /// @notice Delivered in b + 15 (obtainable b + 16, the last in-time block with 10 confirmations): forfeited;
    /// lowering the confirmations to 3 after the delivery (judged with the canary window 8) does not refund it.
    function test_DelayLoweredAfterDeliveryRefundsNothing() public {
        (uint256 unchanged, uint256 changed, uint256 sid) = _endedBothWays(15, 3);
        assertEq(unchanged, 0, "forfeited with the config unchanged");
        assertTrue(
            sessions.sessionOf(sid).termination == IAuditSessions.Termination.SnapshotUnavailable, "forfeited"
        );
        assertEq(changed, unchanged, "the ending does not depend on a config change after the delivery");
    }

    /// @notice Delivered in b + 20 (obtainable b + 21, late with 10 confirmations): refunded; raising the
    /// confirmations to 50 after the delivery does not forfeit the honest provider's pool.
    function test_DelayRaisedAfterDeliveryForfeitsNothing() public {
        (uint256 unchanged, uint256 changed, uint256 sid) = _endedBothWays(20, 50);
        assertEq(unchanged, 800e18, "refunded with the config unchanged");
        assertTrue(
            sessions.sessionOf(sid).termination == IAuditSessions.Termination.RandomnessFailed, "refunded"
        );
        assertEq(changed, unchanged, "the ending does not depend on a config change after the delivery");
    }

    /// @dev One ending: session `sid` ended in block `end`, its value delivered in block `delivery` unless 0,
    /// the config's confirmations set to `confirmations` in block `change` unless `confirmations` is 0.
    struct Plan {
        uint256 sid;
        uint256 delivery;
        uint256 end;
        uint256 change;
        uint256 confirmations;
    }

    /// @dev The ending of `p`: its termination and the provider's refund.
    function _ending(Plan memory p) internal returns (IAuditSessions.Termination why, uint256 refunded) {
        uint256 id = sessions.sessionOf(p.sid).drawRequest;
        bool changed = p.confirmations == 0;
        bool delivered = p.delivery == 0;
        // Two events in block order (either may come first), then the ending.
        for (uint256 step = 0; step < 2; ++step) {
            uint256 next = !changed && (delivered || p.change <= p.delivery) ? p.change : p.delivery;
            if (next > block.number) vm.roll(next);
            if (!changed && next == p.change) {
                vm.prank(owner);
                vrf.setConfig(_vrfConfig(p.confirmations, VRF_TIMEOUT));
                changed = true;
            } else if (!delivered) {
                assertTrue(_deliver(id, 0xD1CE), "delivered");
                delivered = true;
            }
        }
        if (p.end > block.number) vm.roll(p.end);
        uint256 before = token.balanceOf(provider);
        sessions.advance(p.sid);
        why = sessions.sessionOf(p.sid).termination;
        refunded = token.balanceOf(provider) - before;
    }

    /// @notice For any opening block in its epoch, any delivery block (or none) up to the snapshot's end, and
    /// any `requestConfirmations` the owner sets at any block between the opening and the ending, the ending
    /// equals the ending with the config unchanged.
    function testFuzz_ConfigChangeNeverMovesTheEnding(
        uint256 early,
        uint256 latency,
        uint256 newConfirmations,
        uint256 changeAt,
        bool undelivered
    ) public {
        uint256 epochEnd = (block.number / EPOCH_BLOCKS + 2) * EPOCH_BLOCKS - 1;
        vm.roll(epochEnd - bound(early, 0, EPOCH_BLOCKS - 1));
        uint256 opened = block.number;
        Plan memory p;
        p.sid = _open(_uniform(10, 0), FEE);
        uint256 readable = _sortition().snapshotReadableUntil(sessions.sessionOf(p.sid).epoch);
        // A canary session: max(10, window 8 + 1) confirmations, from the first block the adapter accepts.
        p.delivery = undelivered ? 0 : bound(latency, opened + OPENED_CONFIRMATIONS, readable + 1);
        p.end = readable + 1 > p.delivery ? readable + 1 : p.delivery;

        uint256 snap = VmReview14Delay(address(vm)).snapshotState();
        (IAuditSessions.Termination whyKept, uint256 refundKept) = _ending(p);
        VmReview14Delay(address(vm)).revertToState(snap);
        p.change = bound(changeAt, opened, p.end);
        p.confirmations = bound(newConfirmations, 3, vrf.MAX_REQUEST_CONFIRMATIONS());
        (IAuditSessions.Termination whyChanged, uint256 refundChanged) = _ending(p);

        assertEq(uint256(whyChanged), uint256(whyKept), "same termination");
        assertEq(refundChanged, refundKept, "same refund");
        assertEq(vrf.minDelay(), p.confirmations, "the config did change");
    }

    /// @notice `delayOf` keeps the confirmations configured at the request, pending and fulfilled, whatever
    /// `setConfig` does later; `minDelay` follows the config; the value consumers read carries no delay bits
    /// (bits 247-254 clear, as before the delay was kept); lookahead returns its constant.
    function test_DelayOfIsFixedAtTheRequest() public {
        uint256 sid = _open(_uniform(1, 0), FEE);
        uint256 id = sessions.sessionOf(sid).drawRequest;
        assertEq(vrf.delayOf(id), OPENED_CONFIRMATIONS, "pending: the request's delay");
        vm.prank(owner);
        vrf.setConfig(_vrfConfig(200, VRF_TIMEOUT));
        assertEq(vrf.minDelay(), 200, "minDelay follows the config");
        assertEq(vrf.delayOf(id), OPENED_CONFIRMATIONS, "pending: unchanged by setConfig");
        vm.roll(block.number + OPENED_CONFIRMATIONS);
        assertTrue(_deliver(id, 0xD1CE), "delivered");
        vm.prank(owner);
        vrf.setConfig(_vrfConfig(3, VRF_TIMEOUT));
        assertEq(vrf.delayOf(id), OPENED_CONFIRMATIONS, "fulfilled: unchanged by setConfig");
        uint256 value = uint256(vrf.valueOf(id));
        assertEq(value >> 247, 1 << 8, "the value's bits 247-254 are clear (top bit: fixed)");
        assertEq(uint256(vrf.fulfil(id)), value, "fulfil returns the same value");
        assertEq(vrf.obtainableAt(id), block.number + 1, "delivery block read past the delay bits");
        assertEq(vrf.delayOf(type(uint56).max), 0, "unknown request: 0");
        LookaheadRandomness look = new LookaheadRandomness(7);
        assertEq(look.delayOf(1), 7, "lookahead: its constant");
    }
}
