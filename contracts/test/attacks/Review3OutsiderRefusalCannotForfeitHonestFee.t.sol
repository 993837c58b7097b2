// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AttackBase} from "./AttackBase.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {Staking} from "../../src/Staking.sol";

/// @title Review3OutsiderRefusalCannotForfeitHonestFee (outside review 3 of commit 5f0a62e, DrawRefused)
/// @notice Property: an auditor that is not the provider's cannot make an honest provider forfeit its fee
/// at no cost to itself. 5f0a62e turns every failed draw with a refusal on the failing segment into
/// DrawRefused (no refund), and the contract cannot tell the provider's accounts from anyone else's.
/// @dev Tier 1 (3 seats per segment) has exactly three auditors: two honest ones and G, a griefer (a
/// competitor of the provider). Once the seed is public G requests the withdrawal of all its stake, its
/// lock is refused, the segment cannot be filled: DrawRefused. Without G's refusal the same session is
/// drawn in full (control test). G is never slashed: after the cooldown it gets its whole stake back.
/// Fixed at the root (docs/protocol-v2.md, 5.1, StakingHolds): stake that stands in a readable snapshot
/// cannot refuse. G's request parks its shares: no weight from now on, but its seat quote is unchanged
/// until the snapshot can no longer be drawn, so G is seated; its shares stay in the pool behind the
/// session's ledger entry, so the seat's stake is still there when the session settles.
/// On 5f0a62e-era main (edc6491) the test failed: the session ended DrawRefused (termination 7), the
/// provider lost its whole 22.5 TRUST fee with nothing audited, G got its 1,000 TRUST back.
contract Review3OutsiderRefusalCannotForfeitHonestFee is AttackBase {
    address internal griefer;

    function setUp() public {
        _deployProtocol();
        _newAuditor(1, 1000e18);
        _newAuditor(1, 1000e18);
        griefer = _newAuditor(1, 1000e18);
    }

    function test_OutsiderRefusalCannotForfeitHonestFee() public {
        uint256 fee = _feeFor(3);
        uint256 providerBefore = _balance(_provider());
        uint256 sid = _openUniform(1, 1, fee);
        _waitForRandomness(sid);
        assertTrue(_requestWithdrawal(griefer, griefer, 1000e18), "setup: withdrawal request");
        _drawAll(sid);
        IAuditSessions.Session memory s = _sessionRecord(sid);
        bool cancelled = s.status == IAuditSessions.Status.Cancelled;
        uint256 lost = cancelled ? providerBefore - _balance(_provider()) : 0;
        uint256 grieferGot = _claimWithdrawals(griefer);
        _logTrust("honest provider's fee", fee);
        _logTrust("honest provider lost (nothing audited)", lost);
        _logTrust("griefer's stake back after the cooldown", grieferGot);
        emit log_named_uint("termination (4 DrawFailed, 7 DrawRefused)", uint256(s.termination));
        assertTrue(!cancelled, "Review3: an outsider's refusal forfeited an honest provider's whole fee");
        assertTrue(_drawDone(sid), "drawn in full");
        assertEq(_seatsOf(sid, griefer).length, 1, "the griefer's snapshot stake is seated");
        // Its seat's stake cannot leave before the session settles: nothing came back, and the pool
        // still holds the locked stake.
        assertEq(grieferGot, 0, "the griefer's stake is held");
        Staking.PoolView memory p = staking.poolOf(griefer);
        assertTrue(p.locked != 0, "locked");
        assertGe(p.assets, p.locked, "the locked stake is in the pool");
    }

    /// @dev Control: nobody refuses, the three auditors fill the segment.
    function test_WithoutTheGrieferTheSessionIsDrawn() public {
        uint256 sid = _openUniform(1, 1, _feeFor(3));
        _drawAll(sid);
        assertTrue(_drawDone(sid), "drawn in full");
    }
}
