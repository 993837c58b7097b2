// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AttackBase} from "./AttackBase.sol";
import {AttackKit} from "./AttackKit.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review3RefusalOnAnyDrawnSegmentBuysNoRefund (outside review 3 of commit 5f0a62e, DrawRefused)
/// @notice Property: a draw the provider's own accounts pushed to failure by refusing locks after the
/// seed is public is never refunded (issue 12, attack 5), wherever the refusals fell.
/// @dev 5f0a62e counts refusals only on the segment that fails (`Walk.refusals` is reset by
/// `_closeSegment`). The provider's account S refuses its lock on the EARLY segments of a thin tier
/// (a withdrawal request), then restakes between two `draw` calls and accepts on the later ones. The
/// early segments are filled by the three honest auditors, who reach the seat cap (3) together; the next
/// segment seats S and then has nobody eligible left: every other leaf is at the seat cap, a reason that
/// is not a refusal, so it fails with `lockRefusals == 0`: DrawFailed, refunded. Every tier-2 segment
/// after it is never drawn and its R per seat comes back to the provider too.
/// The attack takes a seed whose honest draw fills (4 of 8 seeds here), so the refusal is the provider's
/// free choice after it has seen the seed: a refunded re-roll.
/// Measured (`forge test --match-contract Review3RefusalOnAnyDrawnSegmentBuysNoRefund -vv`, skip removed;
/// 4 thin + 6 tier-2 segments, fee 225 TRUST, pool 180): DrawFailed after 10 seats, 120 TRUST refunded,
/// so the re-roll cost 105 TRUST instead of the whole 225.
/// Fixed: the DrawModule counts refusals over the whole panel (`_panelRefusals`, kept across segments
/// and calls) and reports them in `DrawResult.lockRefusals`: now DrawRefused, 0 refunded.
contract Review3RefusalOnAnyDrawnSegmentBuysNoRefund is AttackBase {
    uint256 internal constant THIN_SEGMENTS = 4; // tier 1, 3 seats each, seat cap 3
    uint256 internal constant THICK_SEGMENTS = 6; // tier 2, 3 seats each, plenty of auditors
    address internal sybil;

    function _config() internal pure override returns (AttackKit.Config memory c) {
        c = super._config();
        c.seatCap = 3;
    }

    function setUp() public {
        _deployProtocol();
        for (uint256 i = 0; i < 3; ++i) {
            _newAuditor(1, 1000e18);
        }
        sybil = _newAuditor(1, 1000e18);
        for (uint256 i = 0; i < 8; ++i) {
            _newAuditor(2, 1000e18);
        }
    }

    function _openMixed() internal returns (uint256 sid, uint256 fee) {
        uint256 n = THIN_SEGMENTS + THICK_SEGMENTS;
        uint8[] memory tiers = new uint8[](n);
        uint16[] memory weights = new uint16[](n);
        for (uint256 i = 0; i < n; ++i) {
            tiers[i] = i < THIN_SEGMENTS ? 1 : 2;
            weights[i] = 1;
        }
        fee = _feeFor(3 * n);
        sid = _open(tiers, weights, fee);
    }

    /// @dev Whether the draw of `sid` fills when nobody refuses (a what-if, thrown away).
    function _honestDrawFills(uint256 sid) internal returns (bool filled) {
        _simulate();
        _drawAll(sid);
        IAuditSessions.Session memory s = _sessionRecord(sid);
        filled = s.drawnSeats == s.totalSeats && s.status != IAuditSessions.Status.Cancelled;
        _endSimulation();
    }

    /// @dev A session whose seed fills the draw honestly (the provider would be stuck with this panel);
    /// sessions whose honest draw would fail are left undrawn (the snapshot's own shortage; no locks taken).
    function _sessionThatWouldFill() internal returns (uint256 sid, uint256 fee, uint256 tried) {
        for (tried = 1; tried <= 16; ++tried) {
            (sid, fee) = _openMixed();
            _waitForRandomness(sid);
            if (_honestDrawFills(sid)) return (sid, fee, tried);
        }
        revert("setup: no seed filled the honest draw in 16 sessions");
    }

    /// @dev The attack: on a seed whose honest draw fills, refuse on segments 0..2 (one `draw` call per
    /// segment), restake, accept on segment 3.
    function test_RefusalOnAnEarlierSegmentBuysNoRefund() public {
        (uint256 sid, uint256 fee, uint256 tried) = _sessionThatWouldFill();
        uint256 providerBefore = _balance(_provider());
        // The seed is public. S refuses the locks of the first three thin segments (its stake locked by
        // another session it drew first; a withdrawal no longer refuses, docs/protocol-v2.md 5.1) ...
        _lockElsewhere(sybil);
        for (uint256 seg = 0; seg < 3; ++seg) {
            _drawSome(sid, 3); // a call completes whole segments: exactly one thin segment
        }
        // ... comes back (a deposit backs a new ledger entry at once) and takes its seat.
        _stake(sybil, sybil, 1000e18);
        _drawAll(sid);
        IAuditSessions.Session memory s = _sessionRecord(sid);
        uint256 refunded = _balance(_provider()) - providerBefore;
        emit log_named_uint("sessions opened to find a seed that fills honestly", tried);
        _logTrust("fee", fee);
        _logTrust("refunded to the provider", refunded);
        emit log_named_uint("seats drawn (R each)", s.drawnSeats);
        emit log_named_uint("termination (4 DrawFailed, 7 DrawRefused)", uint256(s.termination));
        assertEq(uint256(s.status), uint256(IAuditSessions.Status.Cancelled), "cancelled");
        assertEq(_seatsOf(sid, sybil).length, 1, "S sat on the failing segment only");
        assertEq(refunded, 0, "Review3: a draw emptied by refusals on earlier segments was refunded");
        assertEq(uint256(s.termination), uint256(IAuditSessions.Termination.DrawRefused), "why");
    }

    /// @dev Control: how often this snapshot fills without any refusal (the attack above needs one such
    /// seed; the others fail honestly and are refunded as DrawFailed, which is right).
    function test_HonestDrawsOfTheThinTierFillOrFailWithoutRefusals() public {
        uint256 filled = 0;
        for (uint256 i = 0; i < 8; ++i) {
            (uint256 sid,) = _openMixed();
            _drawAll(sid);
            IAuditSessions.Session memory s = _sessionRecord(sid);
            if (s.drawnSeats == s.totalSeats) {
                ++filled;
            } else {
                assertEq(uint256(s.termination), uint256(IAuditSessions.Termination.DrawFailed), "no refusal");
            }
        }
        emit log_named_uint("honest draws that filled, of 8", filled);
        assertTrue(filled > 0, "some seeds fill honestly");
    }
}
