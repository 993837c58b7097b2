// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfAppealsAttackFixture} from "./VrfAttackFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @dev The cheatcodes TestBase's `Vm` does not declare.
interface VmReview14Delay {
    function skip(bool) external;
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
/// a canary session opened in the epoch's last block b, delivered at b + 11, undrawn): ended with the config
/// unchanged: SnapshotUnavailable, 800 TRUST forfeited; the owner lowers requestConfirmations to 3 before the
/// ending: RandomnessFailed, 800 TRUST refunded (`test_DelayChangedAfterDeliveryFlipsTheEnding_KNOWN`,
/// asserts the property, skipped). Severity LOW: the owner (or the VRF operator's config) moves it, not the
/// provider, but the provider chooses when to poke.
/// Fix proposal: fix the delay with the request: store `max(minDelay, minBlocks)` (or `need` itself) in the
/// session / round at opening (a uint8/uint16 fits: both are <= epochBlocks, <= 200) and pass it to
/// `DrawWindow.inTime` instead of reading `src.minDelay()` at the ending.
/// Mutation: none needed (the `_KNOWN` test asserts the property; the unchanged-config ending is covered by
/// Review14LastBlockOpeningBuysAReRoll.test_SameLatencyOneBlockEarlierIsForfeited).
/// Command: scripts/forge test --match-path 'contracts/test/attacks/Review14EndingReadsTodaysDelay*' -vv
contract Review14EndingReadsTodaysDelay is VrfAppealsAttackFixture {
    event log_named_uint(string key, uint256 val);

    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.drawBlocks = uint32(2 * EPOCH_BLOCKS);
    }

    function setUp() public {
        _deployAppeals();
        _addAuditors(0, 12, STAKE);
        _nextEpoch();
        _useVrf(_vrfConfig(10, VRF_TIMEOUT), address(0));
    }

    function test_DelayChangedAfterDeliveryFlipsTheEnding_KNOWN() public {
        VmReview14Delay(address(vm)).skip(true);
        uint256 epochEnd = (block.number / EPOCH_BLOCKS + 2) * EPOCH_BLOCKS - 1;
        vm.roll(epochEnd);
        uint256 sid = _open(_uniform(10, 0), FEE);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        uint256 readable = _sortition().snapshotReadableUntil(s.epoch);
        vm.roll(epochEnd + 11);
        assertTrue(_deliver(s.drawRequest, 0xBAD5EED), "delivered");
        vm.roll(readable + 1);
        uint256 before = token.balanceOf(provider);
        uint256 snap = VmReview14Delay(address(vm)).snapshotState();
        sessions.advance(sid);
        assertTrue(
            sessions.sessionOf(sid).termination == IAuditSessions.Termination.SnapshotUnavailable, "forfeited"
        );
        uint256 unchanged = token.balanceOf(provider) - before;
        VmReview14Delay(address(vm)).revertToState(snap);
        vm.prank(owner);
        vrf.setConfig(_vrfConfig(3, VRF_TIMEOUT));
        sessions.advance(sid);
        uint256 changed = token.balanceOf(provider) - before;
        emit log_named_uint("refunded, config unchanged", unchanged);
        emit log_named_uint("refunded, confirmations lowered after the delivery", changed);
        assertEq(changed, unchanged, "the ending does not depend on a config change after the delivery");
    }
}
