// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";

/// @dev The cheatcodes TestBase's `Vm` does not declare.
interface VmReview6Refused {
    function mockCall(address callee, bytes calldata data, bytes calldata returnData) external;
    function skip(bool) external;
}

/// @title Review6RefusalsNeverRefundALostAppeal (outside review 6 of main c7e9e27, REFUSED rounds)
/// @notice Property ("Refused appeal panels": refusals give no side a gain): an appellant that lost a
/// decided appeal keeps having lost it, whatever happens to a later round it opens itself.
/// A REFUSED round ends its segment as if withheld: a contested PASS becomes INCONCLUSIVE
/// (`AppealModule._endSegment`). Before the fix the money of EVERY earlier round of the segment was scored
/// against that final INCONCLUSIVE (`AppealSettlement._scoreRound` -> `AppealMath.result`): a depth-1 round that
/// UPHELD the PASS now reads VOIDED, so its losing appellant's bond is refunded whole and the panel that
/// decided correctly is paid nothing (`_scoreDecided` pays agreeing seats only when UPHELD). Withheld keys
/// do the same, but only the provider can withhold and it loses its own PASS by it; REFUSED hands that
/// lever to the appellant, who controls its refusing accounts (stake locked in other sessions, the
/// refusal 5.1 leaves).
/// @dev Tier 1 (k0 = 3, panels 7 and 15), 26 auditors of 1,000 TRUST, R = 6 TRUST, bond multiplier 1x.
/// Round 0 unanimously PASS (correct). The appellant appeals it (bond 42 TRUST); the 7-seat panel upholds
/// the PASS: the appellant has lost 42 TRUST to the 7 agreeing seats (control,
/// `test_LostAppealCostsTheBond`). It then appeals again at depth 2 (bond 90 TRUST) and two of the 16
/// eligible accounts refuse (stake locked elsewhere, mocked as in AppealRefusedPanels): 14 of 15 seats
/// drawn, REFUSED. Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review6Refusals*'
/// -vv`, skip removed): both bonds come back whole (the appellant's balance is unchanged: 0 lost instead of
/// 42), the segment is INCONCLUSIVE instead of PASS, the depth-1 panel's 7 correct seats get 0 instead of
/// 6 TRUST each, and round 0's three correct PASS votes lose their 18 TRUST to the refused panel's drawn
/// seats (min(R, 18 / 14) = 1.2857 TRUST each, measured).
/// Fixed (the lead's rule): each segment has a SCORING outcome apart from its verdict outcome
/// (`AppealMath.scoringOutcome`, `appeal_resolution.scoring_outcome`). A last round that ended undecided for
/// any reason but withheld keys over a PASS (REFUSED, UNFILLABLE) is neutral: round 0 and every earlier
/// appeal are scored against the contested outcome (the last decided one); only the verdict reads
/// INCONCLUSIVE. Measured now (same command): the appellant's net loss 42 TRUST (its depth-1 bond, paid to
/// the 7 correct seats at 6 TRUST each), the refused round's bond back whole and no reward, segment 0
/// INCONCLUSIVE for the verdict, the 14 drawn seats paid 0 from an empty pot (round 0's three PASS votes
/// agree with the scoring PASS, so nothing is left over: a reported shortfall).
contract Review6RefusalsNeverRefundALostAppeal is AppealsFixture {
    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    uint256 internal constant PASS = 1;
    uint256 internal constant INCONCLUSIVE = 3;
    uint256 internal constant BOND1 = 7 * R;

    uint256 internal sid;
    uint256 internal round1;
    uint256 internal before;

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 40, STAKE); // depth 2: eligible 40 - 3 - 7 = 30 = 2 k_2 (review 13's rule)
        _nextEpoch();
        sid = _openReady(4, 1, new bytes32[](0));
        _voteRound0(sid, 0, 0, 0); // unanimous PASS: the correct verdict
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
        before = token.balanceOf(appellant);
        round1 = _appeal(sid, _segs(0)); // a wrong appeal of a correct PASS
        _drawRound(sid, round1);
        _publishRound(sid, round1);
        _voteRound(sid, round1, 0, 0, 0); // the panel upholds the PASS
        assertEq(_outcomeOf(sid, 0), PASS, "setup: PASS upheld at depth 1");
    }

    function _onSegment0(uint256 round, address x) internal view returns (bool) {
        uint256[] memory segs = drawModule.seatsOf(sid, round, x);
        for (uint256 j = 0; j < segs.length; ++j) {
            if (segs[j] == 0) return true;
        }
        return false;
    }

    /// @notice Control: the lost appeal costs the appellant its 42 TRUST bond, paid to the 7 agreeing seats.
    function test_LostAppealCostsTheBond() public {
        _closeAndSettle(sid);
        assertEq(_outcomeOf(sid, 0), PASS, "PASS stands");
        assertEq(before - token.balanceOf(appellant), BOND1, "the lost appeal cost its bond");
        assertEq(escrow.perVoteOf(sid, round1, 0), R, "the correct panel is paid R per agreeing seat");
    }

    /// @notice The attack: a second appeal whose panel the appellant's own accounts refuse.
    function test_RefusedRoundCannotRefundALostAppeal() public {
        uint256 round2 = _appeal(sid, _segs(0));
        uint256 k = appeals.roundOf(sid, round2).totalSeats;
        address[] memory eligible = new address[](auditorAddrs.length);
        uint256 n = 0;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address x = auditorAddrs[i];
            if (!_onSegment0(0, x) && !_onSegment0(round1, x)) eligible[n++] = x;
        }
        for (uint256 i = 0; i < n - k + 1; ++i) {
            IStaking.SeatQuote memory q = staking.seatQuote(eligible[i]);
            q.free = 0; // the appellant's account: its stake is locked in other sessions
            VmReview6Refused(address(vm))
                .mockCall(address(staking), abi.encodeCall(IStaking.seatQuote, (eligible[i])), abi.encode(q));
        }
        _drawRound(sid, round2);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round2);
        assertEq(uint256(rd.status), uint256(IAuditSessions.Status.Cancelled), "the draw failed");
        assertTrue(rd.refused, "REFUSED");
        _closeAndSettle(sid);
        uint256 lost = before - token.balanceOf(appellant);
        emit log_named_decimal_uint("appellant's net loss over both appeals", lost, 18);
        emit log_named_decimal_uint(
            "depth-1 panel pay per correct seat", escrow.perVoteOf(sid, round1, 0), 18
        );
        emit log_named_uint("segment 0 outcome (1 PASS, 3 INCONCLUSIVE)", _outcomeOf(sid, 0));
        emit log_named_uint("seats drawn on the refused panel", rd.drawnSeats);
        emit log_named_decimal_uint("refused panel pay per drawn seat", escrow.perVoteOf(sid, round2, 0), 18);
        assertEq(lost, BOND1, "the lost depth-1 appeal still costs its bond");
        assertEq(escrow.perVoteOf(sid, round1, 0), R, "the panel that decided correctly is still paid");
    }
}
