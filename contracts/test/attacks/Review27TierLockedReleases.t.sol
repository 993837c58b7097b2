// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {Staking} from "../../src/Staking.sol";

/// @title Review27TierLockedReleases (outside review 27 of 043042c: `StakingHoldsOps.onRegister`'s TierLocked)
/// @notice Property: TierLocked cannot trap an honest auditor - every lock it holds is released by
/// permissionless calls once the session's deadlines pass, whatever the other parties do - and cannot be
/// bypassed by deregistering first.
/// Attack (trap): the provider opens a session, its round 0 draws the auditor (its stake locked), then the
/// provider vanishes: no keys published, nobody commits or reveals. The auditor itself drives the session:
/// `advance` (anyone) after the deadlines, then `settle(sid, 0, itself)` (anyone).
/// Attack (bypass): deregister, wait out the hold, register in another tier while the lock stands.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review27*' -vv`): a holds 16 TRUST of
/// locks (2 seats x 8 TRUST) after round 0's draw; deregistered and past its hold, tier 2 is refused
/// TierLocked(a, 16 TRUST); 100 epochs later its own `advance` ends the session (status 8, Expired) and its own
/// `settle(sid, 0, a)` releases the lock (0 locked after the drain); tier 2 is then accepted.
/// Result: HOLDS in this path (no trap: a never-published session ends by deadline and the auditor frees its
/// own stake; no bypass by deregistration).
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review27TierLocked*' -vv`.
contract Review27TierLockedReleases is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    function test_AbandonedSessionReleasesTierLock() public {
        _deployAppeals();
        _addAuditors(1, 5, STAKE);
        address a = auditorAddrs[0];
        _nextEpoch();
        uint256 sid = _open(_uniform(3, 1), FEE);
        _commitCanaries(sid, new bytes32[](0));
        _drawAll(sid);
        uint256 locked = staking.poolOf(a).locked;
        emit log_named_uint("a's lock after round 0's draw", locked);
        assertTrue(locked != 0, "setup: a is seated");
        bytes32 key = keccak256(abi.encode("x25519", a));
        // Bypass attempt: deregister, wait out the hold, ask for tier 2.
        vm.prank(a);
        registry.deregister();
        for (uint256 i = 0; i < 4; ++i) {
            _nextEpoch();
        }
        vm.prank(a);
        vm.expectRevert(abi.encodeWithSelector(Staking.TierLocked.selector, a, locked));
        registry.register(2, uint64(1) << 2, key);
        // The provider never publishes: the auditor drives the session by its deadlines.
        vm.roll(block.number + 100 * EPOCH_BLOCKS);
        vm.prank(a);
        IAuditSessions.Status st = sessions.advance(sid);
        emit log_named_uint("status after advance", uint256(st));
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        vm.prank(a);
        settlement.settle(sid, 0, a);
        vm.roll(block.number + 4 * EPOCH_BLOCKS);
        staking.drain(a, 64);
        uint256 after_ = staking.poolOf(a).locked;
        emit log_named_uint("a's lock after its own settle", after_);
        assertEq(after_, 0, "released by permissionless calls");
        vm.prank(a);
        registry.register(2, uint64(1) << 2, key);
        (uint8 tier, bool registered,) = staking.auditorOf(a);
        assertEq(tier, 2, "a moved to tier 2");
        assertTrue(registered, "registered");
    }
}
