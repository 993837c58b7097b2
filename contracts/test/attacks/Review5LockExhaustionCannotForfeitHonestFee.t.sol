// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AttackBase} from "./AttackBase.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @dev The cheatcode TestBase's `Vm` does not declare.
interface VmSkipReview5Locks {
    function skip(bool) external;
}

/// @title Review5LockExhaustionCannotForfeitHonestFee (outside review 5 of main edc6491, DrawRefused)
/// @notice Property: nobody but the provider can turn an honest provider's failed draw into DrawRefused
/// (no refund). Review 3 found the route through a withdrawal request (being fixed in Staking: stake in a
/// draw's snapshot cannot refuse). This is a second route the Staking fix does not close: stake locked by
/// OTHER sessions. `_canLock` refuses an auditor whose free stake is used by seats of any session, and the
/// DrawModule counts that as REASON_LOCK_REFUSED. A competitor opens its own (real, paid, audited)
/// sessions in the same block as the victim, right after it, and simply draws them first: the thin tier's
/// free stake is gone and the victim's draw fails with refusals only.
/// @dev Tier 1 (3 seats per segment) has three honest auditors of 100 TRUST (12 seats of P = 8 each). The
/// victim opens 4 segments (12 seats, fee 90 TRUST); the competitor opens 8 + 4 segments (36 seats, fee
/// 270 TRUST) in the same block, after it, and draws them first. Measured (`forge test --match-path
/// 'contracts/test/attacks/Review5*' -vv`, skip removed): the victim's draw fails on segment 0 with 3
/// refusals (0 seats drawn), DrawRefused, its 72 TRUST pool forfeited to the treasury (DrawFailed would
/// have refunded all 72; the treasury gained 144 = 72 + the fee shares 18 + 54),
/// the victim loses its 90 TRUST fee; the competitor's two sessions are drawn in full (36 seats) and go on
/// to be audited, so its fee buys what it would have bought anyway: the grief costs it only the order of
/// two draw calls. Drawn in opening order (control), the victim and the competitor's first session fill and
/// the competitor's second session, opened last, is the one that fails. The same happens without
/// any malice when two honest providers share a thin tier (the docs' "pays too" case): the loser is
/// whoever's draw runs second, which any caller chooses.
/// Other instances of the same root (not tested here): an honest auditor's free stake can also fall after the
/// seed through a slash of another session applied by anyone's `settleBatch`/`drain` (locked > backing
/// refuses every lock), and an appeal panel fails (UNFILLABLE: the contested outcome stands, the segment
/// closes) the same way, which the Staking fix for withdrawals does not close either.
/// Fix (a design choice for the lead): a draw's outcome should not depend on who draws other sessions first.
/// (a) Staking reserves stake in opening order: a lock may not use stake that an earlier-opened, not yet
///     drawn session of the same tier and snapshot may need (complete; needs per-tier bookkeeping);
/// (b) draw order = opening order among sessions whose randomness is obtainable (cheap; a session still
///     waiting out its canary window can still be overtaken, and a waiting session must never block);
/// (c) at least document it, and have `node/seating.py` open only when free seats cover the
///     opened-but-undrawn demand of the tier plus its own.
/// Until then DrawRefused does not mean "a refusal the provider's side chose".
contract Review5LockExhaustionCannotForfeitHonestFee is AttackBase {
    address internal competitor;

    function setUp() public {
        _deployProtocol();
        for (uint256 i = 0; i < 3; ++i) {
            _newAuditor(1, 100e18);
        }
        competitor = _newAccount();
        _fund(competitor, 10_000e18);
    }

    /// @dev `who` opens n tier-1 segments at the minimum fee, in the current block.
    function _openAs(address who, uint256 n) internal returns (uint256 sid) {
        bytes memory tw = new bytes(3 * n);
        for (uint256 i = 0; i < n; ++i) {
            tw[3 * i] = bytes1(uint8(1));
            tw[3 * i + 2] = bytes1(uint8(1));
        }
        uint256 fee = _feeFor(3 * n);
        vm.startPrank(who);
        token.approve(address(sessions), fee);
        sid = sessions.openSession(keccak256(abi.encode("root", who, n)), tw, fee);
        vm.stopPrank();
    }

    function _draw(uint256 sid) internal {
        for (uint256 i = 0; i < 10; ++i) {
            IAuditSessions.Status st = sessions.statusOf(sid);
            if (st != IAuditSessions.Status.Created && st != IAuditSessions.Status.Drawing) return;
            if (
                _sessionRecord(sid).drawnSeats == _sessionRecord(sid).totalSeats
                    && st == IAuditSessions.Status.Drawing
            ) {
                return;
            }
            sessions.draw(sid, 64);
        }
    }

    /// @dev The victim opens 4 segments; the competitor 8 + 4 right after, in the same block.
    function _openAll() internal returns (uint256 victim, uint256 a, uint256 b) {
        victim = _openUniform(4, 1, 0);
        a = _openAs(competitor, 8);
        b = _openAs(competitor, 4);
        _waitForRandomness(b);
    }

    function test_LockExhaustionCannotForfeitHonestFee_KNOWN() public {
        VmSkipReview5Locks(address(vm)).skip(true);
        uint256 before = _balance(_provider());
        uint256 treasuryBefore = _balance(address(treasury));
        (uint256 victim, uint256 a, uint256 b) = _openAll();
        uint256 fee = before - _balance(_provider());
        _draw(a);
        _draw(b);
        _draw(victim);
        IAuditSessions.Session memory s = _sessionRecord(victim);
        uint256 lost = before - _balance(_provider());
        _logTrust("victim's fee", fee);
        _logTrust("victim lost (nothing audited)", lost);
        emit log_named_uint("victim seats drawn", s.drawnSeats);
        emit log_named_uint(
            "competitor seats drawn", _sessionRecord(a).drawnSeats + _sessionRecord(b).drawnSeats
        );
        emit log_named_uint("termination (4 DrawFailed, 7 DrawRefused)", uint256(s.termination));
        _logTrust("treasury gained", _balance(address(treasury)) - treasuryBefore);
        assertTrue(_drawDone(a) && _drawDone(b), "the competitor's sessions are drawn in full");
        assertEq(uint256(s.status), uint256(IAuditSessions.Status.Cancelled), "victim's draw failed");
        assertTrue(
            s.termination != IAuditSessions.Termination.DrawRefused,
            "Review5: locks of sessions opened later forfeited an honest provider's fee"
        );
    }

    /// @dev Control (holds): drawn in opening order the victim fills (12 seats) and so does the competitor's
    /// first session (24 seats); its second one, opened last, is the one the tier cannot fill.
    function test_InOpeningOrderTheEarlierSessionFills() public {
        (uint256 victim, uint256 a, uint256 b) = _openAll();
        _draw(victim);
        _draw(a);
        _draw(b);
        assertTrue(_drawDone(victim), "victim drawn in full");
        assertTrue(_drawDone(a), "competitor's first session drawn in full");
        assertEq(
            uint256(sessions.statusOf(b)), uint256(IAuditSessions.Status.Cancelled), "the last one fails"
        );
    }
}
