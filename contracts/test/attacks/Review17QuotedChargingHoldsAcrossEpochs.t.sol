// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review17QuotedChargingHoldsAcrossEpochs (outside review 17 of 92327f6, was
/// Review17EpochBoundaryFlipsCharging)
/// @notice Property (docs/appeals-canaries.md: "the quote says so before the bond is paid"): an appellant
/// who was quoted `refusalsCharged` is never held to an uncharged round (UNFILLABLE on refusals, the
/// contested PASS final, R per drawn seat kept) without having agreed to it.
/// Attack: `refusalsCharged` is decided from the live count of the epoch the appeal is MINED in; the bond
/// does not depend on it. A quote read in the last block(s) of epoch e, and an appeal mined in e + 1, are
/// judged on different snapshots, and a defender (or ordinary churn) can move the count in epoch e: one
/// account of the tier deregistering in e is live at the start of e, dead at the start of e + 1.
/// Setup: 17 tier-1 auditors of 1,000 TRUST, k_0 = 3, a 1-segment session voted PASS (the fixture's; what
/// is measured is what the appellant was promised, whoever is right). Quote at the last block of epoch e:
/// refusalsCharged = true (eligible 17 - 3 = 14 = 2 k_1), bond 42 TRUST. One eligible account deregisters
/// in that block; the appeal is mined one block later (epoch e + 1).
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review17*Epoch*' -vv`).
/// Before (92327f6 .. 2e066eb, `appeal(sessionId, segments, maxBond)` guarding the bond only; the old
/// `test_QuotedChargedRoundMinedUncharged_KNOWN` unskipped): accepted with the quoted bond, round
/// refusalsCharged = false (eligible 13), no revert; eight eligible accounts then refuse (stake locked
/// elsewhere): UNFILLABLE, the PASS final, the appellant loses 30 TRUST (5 drawn seats x R).
/// After (fix: `appeal(sessionId, segments, maxBond, requireCharged)`, the node and CLI pass the quote's
/// flag): reverts `RefusalsNotCharged(sessionId, 13, 14)`, nothing paid, no round; the re-quote says
/// refusalsCharged = false and an appellant who accepts it appeals with `requireCharged` false (its
/// choice). Control (no account leaves, the same 8 refuse): admitted with `requireCharged`, REFUSED as
/// quoted, bond back whole. (The new test does not compile on 2e066eb: the 4-argument `appeal` is the fix.)
/// Severity: LOW (timing: a transaction straddling an epoch boundary, EPOCH_BLOCKS = 50 here).
contract Review17QuotedChargingHoldsAcrossEpochs is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    uint256 internal sid;

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    /// @dev The eligible auditors of segment 0 (not on its round-0 panel).
    function _eligible() internal view returns (address[] memory out, uint256 n) {
        out = new address[](auditorAddrs.length);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            if (!_seatedOn(sid, auditorAddrs[i], 0)) out[n++] = auditorAddrs[i];
        }
    }

    /// @dev Quote in the last block of an epoch; optionally one eligible account deregisters in that block;
    /// then the next block (next epoch) is where the appeal is mined.
    function _quoteAcrossTheBoundary(bool leave)
        internal
        returns (IAppealModule.Quote memory q, address[] memory el)
    {
        sid = _setUpPassedSession(17, 1, FEE);
        vm.roll((block.number / EPOCH_BLOCKS + 1) * EPOCH_BLOCKS - 1); // last block of epoch e
        q = appeals.quote(sid, _segs(0));
        uint256 n;
        (el, n) = _eligible();
        if (leave) {
            vm.prank(el[n - 1]);
            registry.deregister();
        }
        vm.roll(block.number + 1); // the appeal is mined in epoch e + 1
    }

    /// @dev Eight eligible accounts (not the leaver) refuse, the round is drawn, the session settles.
    function _refuseAndSettle(uint256 round, address[] memory el)
        internal
        returns (IAppealModule.Round memory)
    {
        for (uint256 i = 0; i < 8; ++i) {
            _busyElsewhere(el[i], 0);
        }
        _drawRound(sid, round);
        _closeAndSettle(sid);
        return appeals.roundOf(sid, round);
    }

    function test_ControlQuotedRuleHoldsWithoutChurn() public {
        (IAppealModule.Quote memory q, address[] memory el) = _quoteAcrossTheBoundary(false);
        uint256 before = token.balanceOf(appellant);
        vm.prank(appellant);
        uint256 round = appeals.appeal(sid, _segs(0), q.bond, q.refusalsCharged);
        IAppealModule.Round memory rd = _refuseAndSettle(round, el);
        assertTrue(q.refusalsCharged && rd.refusalsCharged, "charged as quoted");
        assertTrue(rd.status == IAuditSessions.Status.Cancelled && rd.refused, "REFUSED");
        assertEq(before - token.balanceOf(appellant), 0, "bond back whole");
    }

    function test_QuotedChargedRoundIsNeverMinedUncharged() public {
        (IAppealModule.Quote memory q, address[] memory el) = _quoteAcrossTheBoundary(true);
        emit log_named_uint("quote refusalsCharged", q.refusalsCharged ? 1 : 0);
        emit log_named_uint("quote bond", q.bond);
        assertTrue(q.refusalsCharged, "setup: the quote promised charged refusals");
        uint256 before = token.balanceOf(appellant);
        uint256 rounds = appeals.sessionAppeals(sid).roundCount;
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.RefusalsNotCharged.selector, sid, 13, 14));
        vm.prank(appellant);
        appeals.appeal(sid, _segs(0), q.bond, q.refusalsCharged);
        assertEq(token.balanceOf(appellant), before, "nothing paid");
        assertEq(appeals.sessionAppeals(sid).roundCount, rounds, "no round opened");
        // The re-quote is honest; an appellant who accepts the uncharged terms says so.
        IAppealModule.Quote memory again = appeals.quote(sid, _segs(0));
        emit log_named_uint("re-quote refusalsCharged", again.refusalsCharged ? 1 : 0);
        assertTrue(!again.refusalsCharged, "re-quote: uncharged");
        vm.prank(appellant);
        uint256 round = appeals.appeal(sid, _segs(0), again.bond, again.refusalsCharged);
        IAppealModule.Round memory rd = _refuseAndSettle(round, el);
        emit log_named_uint("accepted round refusalsCharged", rd.refusalsCharged ? 1 : 0);
        emit log_named_uint("appellant loss (accepted terms)", before - token.balanceOf(appellant));
        assertTrue(!rd.refusalsCharged, "held to the terms it accepted");
    }
}
