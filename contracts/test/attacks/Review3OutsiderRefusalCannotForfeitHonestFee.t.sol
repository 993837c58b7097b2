// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AttackBase} from "./AttackBase.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @dev The cheatcode TestBase's `Vm` does not declare.
interface VmSkipReview3Grief {
    function skip(bool) external;
}

/// @title Review3OutsiderRefusalCannotForfeitHonestFee (outside review 3 of commit 5f0a62e, DrawRefused)
/// @notice Property: an auditor that is not the provider's cannot make an honest provider forfeit its fee
/// at no cost to itself. 5f0a62e turns every failed draw with a refusal on the failing segment into
/// DrawRefused (no refund), and the contract cannot tell the provider's accounts from anyone else's.
/// @dev Tier 1 (3 seats per segment) has exactly three auditors: two honest ones and G, a griefer (a
/// competitor of the provider). Once the seed is public G requests the withdrawal of all its stake, its
/// lock is refused, the segment cannot be filled: DrawRefused. Without G's refusal the same session is
/// drawn in full (control test). G is never slashed: after the cooldown it gets its whole stake back.
/// Fix (a design choice for the lead): a refusal must cost the refuser, not the provider. Either make
/// snapshot stake unable to refuse (Staking: a withdrawal request or deregistration after the start of
/// an epoch does not lower `seatQuote.free` below the snapshot's stake for draws of that epoch's
/// sessions), or charge a refused lock of a snapshot leaf (DrawModule._sampleSeat, reason
/// REASON_LOCK_REFUSED: take `lockAmount` of the refuser's stake into the session's pool) so that a
/// griefer pays at least what the provider loses.
contract Review3OutsiderRefusalCannotForfeitHonestFee is AttackBase {
    address internal griefer;

    function setUp() public {
        _deployProtocol();
        _newAuditor(1, 1000e18);
        _newAuditor(1, 1000e18);
        griefer = _newAuditor(1, 1000e18);
    }

    function test_OutsiderRefusalCannotForfeitHonestFee_KNOWN() public {
        VmSkipReview3Grief(address(vm)).skip(true);
        uint256 fee = _feeFor(3);
        uint256 providerBefore = _balance(_provider());
        uint256 sid = _openUniform(1, 1, fee);
        _waitForRandomness(sid);
        assertTrue(_requestWithdrawal(griefer, griefer, 1000e18), "setup: withdrawal request");
        _drawAll(sid);
        IAuditSessions.Session memory s = _sessionRecord(sid);
        uint256 lost = providerBefore - _balance(_provider());
        uint256 grieferGot = _claimWithdrawals(griefer);
        _logTrust("honest provider's fee", fee);
        _logTrust("honest provider lost (nothing audited)", lost);
        _logTrust("griefer's stake back after the cooldown", grieferGot);
        emit log_named_uint("termination (4 DrawFailed, 7 DrawRefused)", uint256(s.termination));
        assertEq(uint256(s.status), uint256(IAuditSessions.Status.Cancelled), "cancelled");
        assertTrue(
            lost < fee || grieferGot < 1000e18,
            "Review3: an outsider's free refusal forfeited an honest provider's whole fee"
        );
    }

    /// @dev Control: nobody refuses, the three auditors fill the segment.
    function test_WithoutTheGrieferTheSessionIsDrawn() public {
        uint256 sid = _openUniform(1, 1, _feeFor(3));
        _drawAll(sid);
        assertTrue(_drawDone(sid), "drawn in full");
    }
}
