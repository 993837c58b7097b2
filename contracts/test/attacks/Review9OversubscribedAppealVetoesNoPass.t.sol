// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @dev The cheatcode TestBase's `Vm` does not declare.
interface VmSkipReview9Oversubscribed {
    function skip(bool) external;
}

/// @title Review9OversubscribedAppealVetoesNoPass (outside review 9 of main a14de6d, REFUSED rounds)
/// @notice Property (docs/appeals-canaries.md, money table, REFUSED: "the appellant pays nothing for
/// refusals it cannot tell from the defender's"; "the defender cannot veto an appeal of a PASS" and,
/// conversely, an appellant cannot veto a correct PASS for free): a correct PASS can only be turned
/// INCONCLUSIVE by a panel that decides, or at a cost to the appellant.
/// Attack: the quote (`AppealModule._checkOne`) checks eligibility per segment (`leaves - earlier panels
/// >= k_{d+1}`) but never the round's total seats against what the tier can seat under the seat cap
/// (`seatCap` seats per auditor per panel). So an appellant can name more segments of one tier than the
/// tier can ever fill: the draw must fail. A failed draw with any lock refusal anywhere in the panel
/// (panel-wide count, `DrawModule._panelRefusals`) ends REFUSED, not UNFILLABLE: bonds back whole, every
/// named contested PASS becomes INCONCLUSIVE (final). One refusal is enough, and it need not be the
/// appellant's: any honest auditor of the tier whose stake is locked in other sessions (the busy ones)
/// refuses when sampled. In a THICK tier, with no refusing account of its own, the appellant vetoes every
/// PASS of a trace for nothing; without a refusal it pays R per drawn seat (UNFILLABLE), which it can
/// avoid by appealing when the tier is busy.
/// @dev Tier 1: 12 auditors of 1,000 TRUST, seat cap 8 (96 seats per panel at most), k_0 = 3, so a depth-1
/// panel seats 7 per segment. A 14-segment tier-1 trace passes unanimously in round 0 (correct). The
/// appellant names all 14 in one round (98 seats > 96): admitted. One honest auditor has 993 TRUST locked
/// in another session (free 7 < the 8 TRUST seat lock). Measured (`scripts/forge test --match-path
/// 'contracts/test/attacks/Review9Oversubscribed*' -vv`, skip removed): bonds paid 588 TRUST (14 x 42),
/// 75 of 98 seats drawn and the draw fails: REFUSED; all 14 segments end INCONCLUSIVE, the trace goes
/// from passed (score 10,000 bps) to not passed (score 0), and after settlement the appellant's net loss
/// is 0 TRUST. Control `test_OversubscribedWithoutRefusalIsUnfillable` (same command): with no busy
/// auditor the same round ends UNFILLABLE (89 of 98 seats drawn), the 14 PASSes stand and the appellant
/// loses 534 TRUST (R per drawn seat). So one honest busy auditor is worth 534 TRUST and a whole trace's
/// verdict to the appellant; an appellant with an auditor account of the tier supplies the refusal itself
/// (its stake locked in a session it draws first).
/// Fix proposals: (1) refuse at the quote a round whose total seats exceed what the tier can seat:
/// `q.totalSeats > (eligible leaves) * seatCap` (e.g. `PanelTooLarge(sessionId, totalSeats, capacity)`),
/// counting the smallest per-segment eligibility; or (2) end a failed draw REFUSED only if the failing
/// segment itself saw a refusal that mattered (its eligible weight would not have run out without the
/// refused leaves), else UNFILLABLE; (1) is simple and closes the appellant-made failure.
contract Review9OversubscribedAppealVetoesNoPass is AppealsFixture {
    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    uint256 internal constant PASS = 1;
    uint256 internal constant INCONCLUSIVE = 3;
    uint256 internal constant SEGMENTS = 14;
    uint256 internal sid;

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.canaryRateBps = 0; // no canary: the 14 segments are all real
    }

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
        sid = _open(_uniform(SEGMENTS, 1), FEE);
        _commitCanaries(sid, new bytes32[](0));
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 0, 0, 0); // every segment PASS: the correct verdict
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
    }

    function _all() internal pure returns (uint256[] memory s) {
        s = new uint256[](SEGMENTS);
        for (uint256 i = 0; i < SEGMENTS; ++i) {
            s[i] = i;
        }
    }

    /// @dev An honest auditor busy in another session: all but 7 TRUST of its free stake locked there.
    function _busyAuditor() internal {
        address a = auditorAddrs[11];
        uint256 free = staking.seatQuote(a).free;
        vm.prank(address(drawModule));
        (bool ok,,) = staking.lockSeat(a, 1, 0xB05E, free - 7e18, 0);
        assertTrue(ok, "setup: locked in another session");
    }

    /// @dev Appeal all 14 segments in one round (admitted on a14de6d); false if the quote refuses it.
    function _appealAll() internal returns (bool admitted, uint256 round, uint256 paid) {
        uint256 before = token.balanceOf(appellant);
        vm.prank(appellant);
        try appeals.appeal(sid, _all(), type(uint256).max) returns (uint256 r) {
            round = r;
            admitted = true;
        } catch {
            return (false, 0, 0);
        }
        paid = before - token.balanceOf(appellant);
    }

    /// @notice The attack: one busy honest auditor turns an oversubscribed round REFUSED, voiding 14 PASSes.
    function test_OversubscribedRoundVetoesNoPass_KNOWN() public {
        VmSkipReview9Oversubscribed(address(vm)).skip(true);
        (bool passed, uint256 score,,,) = escrow.verdictOf(sid);
        emit log_named_uint("trace score bps before the appeal", score);
        assertTrue(passed, "setup: the trace passes");
        _busyAuditor();
        (bool admitted, uint256 round, uint256 paid) = _appealAll();
        if (!admitted) return; // a quote that refuses an unfillable round holds the property
        emit log_named_decimal_uint("bonds paid (TRUST)", paid, 18);
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        emit log_named_uint("seats named", rd.totalSeats);
        emit log_named_uint("seats drawn", rd.drawnSeats);
        emit log_named_uint("refused", rd.refused ? 1 : 0);
        (passed, score,,,) = escrow.verdictOf(sid);
        emit log_named_uint("trace score bps after", score);
        uint256 voided = 0;
        for (uint256 i = 0; i < SEGMENTS; ++i) {
            if (_outcomeOf(sid, i) == INCONCLUSIVE) ++voided;
        }
        emit log_named_uint("PASS segments voided", voided);
        uint256 before = token.balanceOf(appellant) + paid;
        _closeAndSettle(sid);
        emit log_named_decimal_uint("appellant's net loss (TRUST)", before - token.balanceOf(appellant), 18);
        assertEq(voided, 0, "no decided panel, yet the correct PASSes are voided for a refunded bond");
        assertTrue(passed, "the trace still passes");
    }

    /// @notice Control: no busy auditor; the same round fails UNFILLABLE and the PASSes stand.
    function test_OversubscribedWithoutRefusalIsUnfillable() public {
        (bool admitted, uint256 round, uint256 paid) = _appealAll();
        if (!admitted) return;
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        emit log_named_uint("seats named", rd.totalSeats);
        emit log_named_uint("seats drawn", rd.drawnSeats);
        assertTrue(rd.drawnSeats < rd.totalSeats, "the tier cannot seat the round");
        assertTrue(rd.status == IAuditSessions.Status.Cancelled && !rd.refused, "UNFILLABLE");
        for (uint256 i = 0; i < SEGMENTS; ++i) {
            assertEq(_outcomeOf(sid, i), PASS, "the PASS stands");
        }
        uint256 before = token.balanceOf(appellant) + paid;
        _closeAndSettle(sid);
        uint256 lost = before - token.balanceOf(appellant);
        emit log_named_decimal_uint("appellant's net loss (TRUST)", lost, 18);
        assertEq(lost, rd.drawnSeats * R, "UNFILLABLE: R per drawn seat");
    }
}
