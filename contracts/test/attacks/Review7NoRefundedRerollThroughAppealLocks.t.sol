// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Review7AppealLockWorld} from "./Review7AppealPanelCannotForfeitHonestFee.t.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review7NoRefundedRerollThroughAppealLocks (outside review 7 of main b460fed, draw order 6.1)
/// @notice Holds now: the overtaking rule (`_orderCheck`, commit 55307e4) was withdrawn after this review, so
/// every refusal of a failed round-0 panel counts again and the re-roll below ends DrawRefused (nothing
/// refunded). Kept as the regression test that any future draw-order rule must pass together with
/// `Review7AppealPanelCannotForfeitHonestFee` and `Review5LockExhaustionCannotForfeitHonestFee`
/// (docs/protocol-v2.md 6.1). The text below describes the code it was written against.
/// @notice Property: a provider cannot re-roll its own draw for a refund (the reason DrawRefused exists).
/// Since `_orderCheck`, refusals after an overtaking are excused; docs/protocol-v2.md 6.1 argues that
/// causing them costs the provider's side real audits or a real slash. Two cheaper parts exist:
/// (1) the overtaking costs 1.5 TRUST: `_orderCheck` runs (and raises `latestDrawnSession`) at the start of
///     any round-0 draw call, before anything is seated, so a 1-segment session in an empty tier at the
///     minimum fee (7.5 TRUST), opened after V, whose first call fails at once (DrawFailed, 6 refunded),
///     overtakes V; any later session anyone opened would do too, since draws are permissionless;
/// (2) the refusals cost one appeal bond: a friend appeals any session in its window and draws the appeal
///     panel, which takes the thin tier's last free seats (appeal draws are no overtaking, but they need
///     not be: V is already overtaken).
/// @dev World: `Review7AppealLockWorld` (tier 1: 10 auditors with one free seat each; O in its appeal
/// window; V = 2 tier-1 segments, fee 1,000 TRUST, seed public). Measured (`scripts/forge test
/// --match-path 'contracts/test/attacks/Review7NoRefundedReroll*' -vv`, skip removed): the overtaking
/// session cost 1.5 TRUST, the friend's bond is 42 TRUST (at most lost, by reading), V ends DrawFailed with
/// 0 refusals charged and 782 of its 1,000 TRUST refunded (3 of 6 seats drawn): the re-roll costs 218 of V
/// (the 200 fee share + R = 6 x 3 drawn seats, the latter paid to seated auditors) + 1.5 + <= 42 TRUST,
/// where DrawRefused would have cost 1,000 (a thin tier where the friend's appeal can exhaust the stake).
/// Fix proposals: (1) make an overtaking cost a real lock in V's tier: keep the latest drawn session per
/// tier and raise it only after a call that seated someone in that tier (move the write in `_orderCheck`
/// after the walk, `w.drawnNow != 0`); today a session of another, empty tier overtakes every earlier
/// panel of every tier; (2) as in Review7AppealPanelCannotForfeitHonestFee: reserve stake for round-0
/// panels in opening order so no lock placed after V's seed (appeal panel or later session) can take what
/// V's snapshot needs; then nothing after the seed can make V fail and neither test's attack exists.
contract Review7NoRefundedRerollThroughAppealLocks is Review7AppealLockWorld {
    /// @notice The same appeal as the provider's own re-roll (fails today: DrawFailed, V refunded). The provider
    /// of V dislikes V's public seed. It overtakes V for almost nothing: a 1-segment session in the empty
    /// tier 0 (minimum fee 7.5 TRUST), opened after V, whose first draw call fails at once (DrawFailed, 6
    /// TRUST refunded) but sets `latestDrawnSession`. A friend then appeals O and draws the appeal panel
    /// (bond 42 TRUST); V's refusals now come after the overtaking and are not charged: V ends DrawFailed
    /// and the provider opens again for a fresh seed. Measured (skip removed): V refunded 782 of its 1,000
    /// TRUST; the re-roll cost the provider's side 218 TRUST of V (the 200 fee share and R = 6 x 3 drawn
    /// seats, paid to the seated auditors) + 1.5 TRUST for the overtaking + at most the 42 TRUST bond, where
    /// DrawRefused would have cost all 1,000.
    function test_NoRerollThroughAnAppealAfterACheapOvertaking() public {
        uint256 before = token.balanceOf(provider);
        uint256 cheap = _open(_uniform(1, 0), 7.5e18);
        _commitCanaries(cheap, new bytes32[](0));
        _drawAll(cheap); // tier 0 has no auditor: fails on its first call, after `_orderCheck`
        assertEq(
            uint256(sessions.sessionOf(cheap).termination),
            uint256(IAuditSessions.Termination.DrawFailed),
            "cheap one refunded"
        );
        _logTrust("cost of the overtaking session", before - token.balanceOf(provider));
        uint256 round = _appeal(old, _segs(0)); // the provider's friend
        _drawRound(old, round);
        uint256 mid = token.balanceOf(provider);
        _drawVictim();
        IAuditSessions.Session memory s = sessions.sessionOf(victim);
        _logTrust("refunded to V's provider", token.balanceOf(provider) - mid);
        emit log_named_uint("termination (4 DrawFailed, 7 DrawRefused)", uint256(s.termination));
        assertEq(uint256(s.status), uint256(IAuditSessions.Status.Cancelled), "V's draw failed");
        assertEq(
            uint256(s.termination),
            uint256(IAuditSessions.Termination.DrawRefused),
            "Review7: a re-roll bought with a cheap overtaking and an appeal panel's locks"
        );
    }
}
