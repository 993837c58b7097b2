// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";

/// @dev The cheatcode TestBase's `Vm` does not declare.
interface VmMockReview3 {
    function mockCall(address callee, bytes calldata data, bytes calldata returnData) external;
}

/// @title Review3AppealPanelRefusalsVetoNothing (outside review 3 of commit 5f0a62e: appeal panels)
/// @notice Property: refused stake locks on an appeal panel cannot defeat the appeal. 5f0a62e stops a
/// provider's accounts from buying a refund by refusing on round 0, but AppealModule.drawPanel ignores
/// `DrawResult.lockRefusals`: any failed panel draw ends the round Cancelled (UNFILLABLE), which leaves
/// the contested outcome unchanged AND closes the segment (`_endSegment`: `AppealWord.end(.., !decided,
/// ..)`), and the appellant pays R per drawn seat.
/// @dev Tier 1 has 12 auditors; round 0 PASSes segment 0 unanimously (wrongly). An honest appellant
/// appeals it: a 7-seat panel, 12 - 3 = 9 auditors eligible, so the appeal is admitted. The provider holds
/// the three accounts that are not on segment 0's round-0 panel and can refuse (here: `deregister` once
/// the appeal is posted; a withdrawal, or stake locked in its own other sessions, does the same). The
/// panel fills 6 of 7 seats and fails: PASS stands, the segment is final, the appellant pays 6 R.
/// A keys-withheld veto of the same appeal would at least make the segment INCONCLUSIVE; refusing is
/// strictly better for the provider, and costs it nothing (its accounts are never slashed).
/// Fix (AppealModule.drawPanel, AppealModule._endSegment; AppealSettlement._scoreRound): when the panel
/// draw fails with `r.lockRefusals != 0` (counted over the whole panel, see
/// Review3RefusalOnAnyDrawnSegmentBuysNoRefund), do not close the segment at the contested outcome: end
/// the round like a withheld one over a contested PASS (INCONCLUSIVE) and refund the appellant's bond
/// whole (the drawn seats' R from the pot / the refusers' stake), or reopen the segment's window so the
/// appeal can be posted again; a PASS may never survive an appeal through its defender's refusals.
/// Closed by the REFUSED round (`IAppealModule.AppealResult.Refused`, docs/protocol-v2.md "Refused appeal
/// panels"): the round ends like a withheld one (the contested PASS becomes INCONCLUSIVE, the segment is
/// final), the bond is refunded whole and the drawn seats are owed by the segment's pot only. On 5f0a62e's
/// successor edc6491 this test printed: 7 seats, 9 eligible, 3 refusers, 6 seats drawn, appellant paid 36
/// TRUST, outcome 1 (PASS), and failed.
contract Review3AppealPanelRefusalsVetoNothing is AppealsFixture {
    uint256 internal constant N = 4;

    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 17, STAKE); // eligible 14 = 2 k_1: refusals charged (review 13's rule)
        _nextEpoch();
    }

    /// @dev The auditors of the tier who did not sit on `seg` in round 0 (the panel's eligible ones).
    function _notOnSegment(uint256 sid, uint256 seg) internal view returns (address[] memory out, uint256 n) {
        out = new address[](auditorAddrs.length);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            uint256[] memory segs = drawModule.seatsOf(sid, 0, auditorAddrs[i]);
            bool on = false;
            for (uint256 j = 0; j < segs.length; ++j) {
                if (segs[j] == seg) on = true;
            }
            if (!on) out[n++] = auditorAddrs[i];
        }
    }

    function test_RefusalsOnAnAppealPanelDoNotCloseTheSegment() public {
        uint256 sid = _openReady(N, 1, new bytes32[](0));
        _voteRound0(sid, 0, 0, 0); // every segment PASS; segment 0 was wrong
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segs(0));
        (address[] memory eligible, uint256 n) = _notOnSegment(sid, 0);
        uint256 k = appeals.roundOf(sid, round).totalSeats;
        emit log_named_uint("panel seats", k);
        emit log_named_uint("eligible auditors (not on round 0 of the segment)", n);
        // The provider's accounts: just enough of the eligible ones to leave k - 1.
        uint256 refusers = n - k + 1;
        for (uint256 i = 0; i < refusers; ++i) {
            vm.prank(eligible[i]);
            registry.deregister();
            // ... and its stake is locked elsewhere: the refusal that stays once snapshot stake can no
            // longer leave by deregistration or withdrawal (the Staking fix of section 5).
            IStaking.SeatQuote memory q = stakingContract.seatQuote(eligible[i]);
            q.free = 0;
            VmMockReview3(address(vm))
                .mockCall(
                    address(stakingContract), abi.encodeCall(IStaking.seatQuote, (eligible[i])), abi.encode(q)
                );
        }
        emit log_named_uint("provider accounts that refuse", refusers);
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        assertEq(uint256(rd.status), uint256(IAuditSessions.Status.Cancelled), "the draw failed");
        assertTrue(rd.refused, "after lock refusals: REFUSED, not UNFILLABLE");
        emit log_named_uint("seats drawn", rd.drawnSeats);
        bool closed = appeals.segmentAppeals(sid, 0).closed;
        uint256 outcome = _outcomeOf(sid, 0);
        _closeAndSettle(sid);
        emit log_named_decimal_uint("appellant paid (TRUST)", before - token.balanceOf(appellant), 18);
        emit log_named_uint("segment outcome (1 PASS, 3 INCONCLUSIVE)", outcome);
        assertTrue(
            !(closed && outcome == 1),
            "Review3: the provider's refusals closed the appealed segment at its contested PASS"
        );
        assertEq(outcome, 3, "the contested PASS ends INCONCLUSIVE, as if the keys were withheld");
        assertEq(before, token.balanceOf(appellant), "the honest appellant pays nothing for the refusals");
    }

    /// @dev The control: with nobody refusing, the same appeal is drawn in full.
    function test_WithoutRefusalsThePanelFills() public {
        uint256 sid = _openReady(N, 1, new bytes32[](0));
        _voteRound0(sid, 0, 0, 0);
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
        uint256 round = _appeal(sid, _segs(0));
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        assertEq(rd.drawnSeats, rd.totalSeats, "filled");
        assertEq(uint256(rd.status), uint256(IAuditSessions.Status.Drawing), "waits for keys");
    }
}
