// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";
import {IDrawModule} from "../../src/interfaces/IDrawModule.sol";
import {Vm} from "../utils/TestBase.sol";

/// @dev The cheatcodes TestBase's `Vm` does not declare.
interface VmReview7Appeal {
    function skip(bool) external;
}

/// @notice Shared world of the Review7 appeal-lock tests: tier 1 has 10 auditors of 100 TRUST (12 seats of
/// P = 8 each); session O (1 segment) passed in round 0 and is in its appeal window; stake locked by other
/// sessions (entries locked through the draw module, as `_lockElsewhere` does in DrawOrder.t.sol) leaves
/// each auditor one free seat, 10 in all; then V (2 tier-1 segments, 6 seats, fee 1,000 TRUST) is opened
/// and its seed is public.
abstract contract Review7AppealLockWorld is AppealsFixture {
    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    uint256 internal constant THIN = 100e18;
    uint256 internal old;
    uint256 internal victim;

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 10, THIN);
        _nextEpoch();
        old = _open(_uniform(1, 1), FEE);
        _commitCanaries(old, new bytes32[](0));
        _drawAll(old);
        _publish(old);
        _voteRound0(old, 0, 0, 0); // PASS, the correct verdict
        vm.roll(block.number + 1);
        _toAppealWindow(old);
        // The busy tier: every auditor keeps exactly one free seat.
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            IStaking.SeatQuote memory q = staking.seatQuote(auditorAddrs[i]);
            uint256 keep = P + (q.free % P);
            vm.prank(address(drawModule));
            (bool ok,,) = staking.lockSeat(auditorAddrs[i], q.tier, 0xB0B0 + i, q.free - keep, 0);
            assertTrue(ok, "setup: locked by other sessions");
        }
        victim = _open(_uniform(2, 1), FEE);
        _commitCanaries(victim, new bytes32[](0));
        _rollPastDrawTarget(victim); // V's seed is public
    }

    function _freeSeats() internal view returns (uint256 n) {
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            n += staking.seatQuote(auditorAddrs[i]).free / P;
        }
    }

    function _logTrust(string memory key, uint256 amount) internal {
        emit log_named_decimal_uint(key, amount, 18);
    }

    /// @dev Draw V in full (recording logs) and return the refusals its DrawFailed event charged.
    function _drawVictim() internal returns (uint256 charged) {
        vm.recordLogs();
        _drawAll(victim);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 i = 0; i < logs.length; ++i) {
            if (
                logs[i].emitter != address(drawModule) || logs[i].topics[0] != IDrawModule.DrawFailed.selector
            ) {
                continue;
            }
            if (uint256(logs[i].topics[1]) != victim) continue;
            (,,,,, charged) = abi.decode(logs[i].data, (uint256, uint256, uint256, uint256, uint256, uint256));
        }
        emit log_named_uint("refusals V's DrawFailed event charged", charged);
    }
}

/// @title Review7AppealPanelCannotForfeitHonestFee (outside review 7 of main b460fed, draw order 6.1)
/// @notice Still open after the overtaking rule was withdrawn (every refusal counts again, so the appeal
/// route below works as measured, and the later-session route of Review5 too): see docs/protocol-v2.md 6.1
/// for the opening-order design that closes both without a re-roll.
/// @notice Property: nobody but the provider's side can turn an honest provider's failed draw into
/// DrawRefused (fee forfeited). Review 5 closed the route through later-opened sessions (`_orderCheck`).
/// An appeal panel is a second route it does not close: appeal panels lock stake of the same tier when
/// their draw runs, `_orderCheck` runs for round 0 only and an appeal's draw never counts as an
/// overtaking, so the victim's panel meets refusals that count in full. The appeal is filed after the
/// victim opened (the node's pre-open check, `node/seating.py`, cannot foresee it), on any session still
/// in its appeal window, by anyone.
/// @dev World: `Review7AppealLockWorld` (10 free tier-1 seats when V's seed is public). The honest provider opens V (2 segments, 6 seats, fee 1,000
/// TRUST): 6 of 10 free seats, any pre-open check passes. After V's seed is public the griefer appeals O's
/// segment (depth 1: 7 seats, bond 42 TRUST) and draws the appeal panel before V: it takes the last seat of
/// the 7 auditors who did not sit on O. V's segment 0 seats the other 3, segment 1 meets 7 refusals and
/// cannot fill.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review7AppealPanel*' -vv`, skip
/// removed): the appeal panel draws 7 seats (free tier-1 seats 10 -> 3), V ends DrawRefused with 3 of 6
/// seats drawn, 17 refusals charged (7 on segment 0, 10 on segment 1), the provider gets 0 of its 1,000 TRUST back (DrawFailed refunds
/// 782 = the 800 pool minus R = 6 x 3 drawn seats, measured in Review7NoRefundedRerollThroughAppealLocks);
/// the griefer paid a 42 TRUST appeal bond (by reading it loses at most that, when the panel confirms O's
/// PASS), for a real appeal panel. Control (`test_WithoutTheAppealTheVictimFills`): without the appeal V is drawn in full.
/// Fix proposal. Simply counting an appeal draw as an overtaking (excusing later refusals) opens the mirror
/// attack, `Review7NoRefundedRerollThroughAppealLocks`: the provider's friend files the appeal and V is
/// refunded for a re-roll. Any lock a third party can place after V's seed is public either forfeits an
/// honest fee (if charged) or buys a re-roll (if excused); so the draw's outcome must not depend on
/// foreign locks placed after the seed: (a) reserve stake for round-0 panels in opening order, per tier
/// and snapshot (Review5's option (a)), and let an appeal panel lock only stake no opened, undrawn round-0
/// panel of its tier may need (appeal draws that cannot then fill wait or end UNFILLABLE, which already
/// exists); or (b) draw appeal panels from stake already reserved at the appealed session's opening (its
/// appeal demand k_1 + ... per segment, priced into the bond). With (a) neither test's lock exists: the
/// appeal panel waits, V fills.
contract Review7AppealPanelCannotForfeitHonestFee is Review7AppealLockWorld {
    /// @notice The attack (fails today: DrawRefused, 0 of 1,000 TRUST refunded).
    function test_AppealPanelCannotForfeitHonestFee_KNOWN() public {
        VmReview7Appeal(address(vm)).skip(true);
        emit log_named_uint("free tier-1 seats when V's seed is public", _freeSeats());
        uint256 appellantBefore = token.balanceOf(appellant);
        uint256 round = _appeal(old, _segs(0));
        _logTrust("griefer's appeal bond", appellantBefore - token.balanceOf(appellant));
        _drawRound(old, round);
        IAppealModule.Round memory rd = appeals.roundOf(old, round);
        emit log_named_uint("appeal panel seats drawn", rd.drawnSeats);
        emit log_named_uint("free tier-1 seats after the appeal draw", _freeSeats());
        uint256 before = token.balanceOf(provider);
        _drawVictim();
        IAuditSessions.Session memory s = sessions.sessionOf(victim);
        _logTrust("victim's fee", FEE);
        _logTrust("refunded to the victim", token.balanceOf(provider) - before);
        emit log_named_uint("victim seats drawn", s.drawnSeats);
        emit log_named_uint("termination (4 DrawFailed, 7 DrawRefused)", uint256(s.termination));
        assertEq(uint256(s.status), uint256(IAuditSessions.Status.Cancelled), "the victim's draw failed");
        assertTrue(
            s.termination != IAuditSessions.Termination.DrawRefused,
            "Review7: an appeal panel drawn first forfeited an honest provider's fee"
        );
    }

    /// @notice Control (holds): without the appeal, V is drawn in full from the 10 free seats.
    function test_WithoutTheAppealTheVictimFills() public {
        _drawAll(victim);
        IAuditSessions.Session memory s = sessions.sessionOf(victim);
        assertEq(s.drawnSeats, s.totalSeats, "drawn in full");
    }
}
