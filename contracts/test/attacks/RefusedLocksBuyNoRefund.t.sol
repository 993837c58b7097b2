// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AttackBase} from "./AttackBase.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title RefusedLocksBuyNoRefund (issue 12, attack 5's thin-tier gap: a re-roll through refused locks)
/// @notice Property: a draw is refunded only when the snapshot's eligible auditors could not fill a
/// segment by themselves. A provider whose own auditor accounts refuse their stake locks after the seed
/// is public (a withdrawal request, a deregistration) can empty a thin tier's segment; that failure is its
/// own doing, so it costs the whole fee, exactly like abandoning (the drawn auditors keep R per seat).
/// @dev Tier 1 (3 seats per segment) has two honest auditors and one account of the provider's, all in
/// the snapshot. Once the randomness is known, the provider's account asks to withdraw all its stake;
/// its lock is refused, the segment cannot be filled, and the session is cancelled.
/// Measured (`forge test --match-contract RefusedLocksBuyNoRefund -vv`, fee 22.5 TRUST, pool 18):
/// before (main 00ab5f4): DrawFailed, 6 TRUST refunded to the provider (the pool minus R for each of the
/// two honest seats drawn), so a re-roll cost it 16.5 TRUST; now: DrawRefused, 0 refunded, 22.5 TRUST.
contract RefusedLocksBuyNoRefund is AttackBase {
    address internal sybil;
    address[2] internal honestPair;

    function setUp() public {
        _deployProtocol();
        honestPair[0] = _newAuditor(1, 1000e18);
        honestPair[1] = _newAuditor(1, 1000e18);
        sybil = _newAuditor(1, 1000e18);
    }

    function test_RefusedLocksBuyNoRefund() public {
        uint256 fee = _feeFor(3);
        uint256 before = _balance(_provider());
        uint256 sid = _openUniform(1, 1, fee);
        _waitForRandomness(sid);
        // The seed is public: the provider's account has its stake locked by another session it draws
        // first (a withdrawal request no longer refuses snapshot stake, docs/protocol-v2.md 5.1).
        _lockElsewhere(sybil);
        _drawAll(sid);
        IAuditSessions.Session memory s = _sessionRecord(sid);
        assertEq(uint256(s.status), uint256(IAuditSessions.Status.Cancelled), "cancelled");
        uint256 refunded = _balance(_provider()) - (before - fee);
        _logTrust("fee", fee);
        _logTrust("refunded to the provider", refunded);
        emit log_named_uint("honest seats drawn (R each)", s.drawnSeats);
        assertEq(refunded, 0, "RefusedLocksBuyNoRefund: a draw emptied by refused locks was refunded");
        assertEq(uint256(s.termination), uint256(IAuditSessions.Termination.DrawRefused), "why");
        _settleAll(sid);
        address[] memory drawn = _auditorsOf(sid);
        for (uint256 i = 0; i < drawn.length; ++i) {
            assertTrue(drawn[i] != sybil, "the refusing account sat nowhere");
            assertEq(results[sid][drawn[i]].reward, _config().reward * _seatsOf(sid, drawn[i]).length, "R");
        }
    }

    /// @dev Without refusals the same thin tier is truly short (one honest auditor leaves before the
    /// snapshot instead): refunded as before, minus R per drawn seat.
    function test_TrulyThinTierIsStillRefunded() public {
        assertTrue(_requestWithdrawal(sybil, sybil, 1000e18), "setup: withdrawal request");
        _rollTo(block.number + 2 * EPOCH_BLOCKS); // the withdrawal is in the snapshot the session reads
        uint256 fee = _feeFor(3);
        uint256 before = _balance(_provider());
        uint256 sid = _openUniform(1, 1, fee);
        _drawAll(sid);
        IAuditSessions.Session memory s = _sessionRecord(sid);
        assertEq(uint256(s.termination), uint256(IAuditSessions.Termination.DrawFailed), "why");
        uint256 pool = 3 * _config().reward;
        assertEq(_balance(_provider()) - (before - fee), pool - s.drawnSeats * _config().reward, "refund");
    }

    /// @dev Any number of honest and refusing accounts: a failed draw is refunded exactly when nobody
    /// refused, and the fee is conserved (provider + treasury + R per drawn seat).
    function testFuzz_RefundOnlyWithoutRefusals(uint8 honestRaw, uint8 refusingRaw) public {
        uint256 honest = bound(honestRaw, 0, 4);
        uint256 refusing = bound(refusingRaw, 0, 3);
        // setUp made two honest auditors and one refusing candidate; retire or add to reach the mix.
        address[] memory refusers = new address[](refusing);
        if (refusing > 0) refusers[0] = sybil;
        for (uint256 i = 1; i < refusing; ++i) {
            refusers[i] = _newAuditor(1, 1000e18);
        }
        for (uint256 i = 2; i < honest; ++i) {
            _newAuditor(1, 1000e18);
        }
        if (refusing == 0) assertTrue(_requestWithdrawal(sybil, sybil, 1000e18), "setup: retire");
        if (honest < 2) _retireHonest(2 - honest);
        _rollTo(block.number + 2 * EPOCH_BLOCKS);
        uint256 fee = _feeFor(3);
        uint256 providerBefore = _balance(_provider());
        uint256 treasuryBefore = _balance(address(treasury));
        uint256 sid = _openUniform(1, 1, fee);
        _waitForRandomness(sid);
        for (uint256 i = 0; i < refusing; ++i) {
            _lockElsewhere(refusers[i]);
        }
        _drawAll(sid);
        IAuditSessions.Session memory s = _sessionRecord(sid);
        uint256 refunded = _balance(_provider()) - (providerBefore - fee);
        uint256 forfeited = _balance(address(treasury)) - treasuryBefore;
        if (honest >= 3) {
            assertTrue(s.status != IAuditSessions.Status.Cancelled, "filled by the honest auditors");
            return;
        }
        assertEq(uint256(s.status), uint256(IAuditSessions.Status.Cancelled), "cancelled");
        uint256 reserved = s.drawnSeats * _config().reward;
        assertEq(refunded + forfeited + reserved, fee, "fee conserved");
        if (refusing == 0) {
            assertEq(uint256(s.termination), uint256(IAuditSessions.Termination.DrawFailed), "truly short");
            assertEq(refunded, 3 * _config().reward - reserved, "refund of the pool's rest");
        } else {
            assertEq(uint256(s.termination), uint256(IAuditSessions.Termination.DrawRefused), "refused");
            assertEq(refunded, 0, "no refund after refusals");
        }
    }

    function _retireHonest(uint256 n) internal {
        for (uint256 i = 0; i < n; ++i) {
            assertTrue(_requestWithdrawal(honestPair[i], honestPair[i], 1000e18), "setup: retire honest");
        }
    }
}
