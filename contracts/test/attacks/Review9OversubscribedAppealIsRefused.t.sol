// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review9OversubscribedAppealIsRefused (outside review 9 of main a14de6d, REFUSED rounds)
/// @notice Property (docs/appeals-canaries.md, money table, REFUSED: "the appellant pays nothing for
/// refusals it cannot tell from the defender's", and conversely an appellant cannot veto a correct PASS
/// for free): a correct PASS can only be turned INCONCLUSIVE by a panel that decides, or at a cost to the
/// appellant; the round's size, which the appellant chooses, never makes one busy auditor's refusal fail it.
/// Attack (found on a14de6d): the quote checked eligibility per segment only, never the round's total seats
/// against what the tier can seat under the seat cap (`seatCap` seats per auditor per panel). An appellant
/// named more segments of one tier than the tier can seat; the draw had to fail, and a failed draw with any
/// lock refusal in the panel ends REFUSED: bonds back, every named contested PASS INCONCLUSIVE. One honest
/// auditor busy in another session (free stake below the seat lock) supplied the refusal.
/// Measured on a14de6d (`scripts/forge test --match-path
/// 'contracts/test/attacks/Review9Oversubscribed*' -vv`): 12 auditors of 1,000 TRUST, seat cap 8, k_0 = 3,
/// a 14-segment tier-1 trace passed unanimously (correct, score 10,000 bps); one round naming all 14
/// (98 seats > 96 = 12 x 8) was admitted, bonds 588 TRUST, 75 of 98 seats drawn, REFUSED: 14 PASSes
/// voided, score 0, appellant's net loss 0. Without the busy auditor the same round ended UNFILLABLE (89 of
/// 98 seats) and cost the appellant 534 TRUST. Refusing only rounds above 96 seats would not do: 13
/// segments (91 seats) fail the same way once one busy auditor takes its 8 seats of capacity away.
/// Fix (AppealModule._check, `consensus.appeals.check_capacity`): a round that names more segments than the
/// seat cap (the only case in which the cap can bind: with no more segments than the cap, an auditor may sit
/// on every one) may use at most half of what the tier's members can seat, `members * seatCap / 2`
/// (`PanelTooLarge`). Its draw then fails on the cap only if more than half of the tier's members refuse:
/// an appellant must control (or find busy) half the tier, which is the honest-majority assumption the
/// panels rest on anyway. Rounds of up to `seatCap` segments are unchanged (per-segment eligibility, where
/// the tier and the depth, not the appellant, set the slack: Review3AppealPanelRefusalsVetoNothing). An
/// appellant splits a large appeal into rounds. Measured after: all 14 refused at the quote
/// (`PanelTooLarge(sid, 98, 48)`; since outside review 17 the capacity counts the eligible, (12 - 3) x 8 / 2:
/// `PanelTooLarge(sid, 98, 36)`; since outside review 20 k + seatCap (E - E / 2 - k), 0 as 9 - 4 < k = 7:
/// `PanelTooLarge(sid, 98, 0)`), as is every round of 9-14 segments; the trace keeps passing; the same 14
/// segments appealed as rounds of 8 and 6 are drawn whole (56 + 42 seats) with the busy auditor refusing.
contract Review9OversubscribedAppealIsRefused is AppealsFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    event log_named_uint(string key, uint256 val);

    uint256 internal constant SEGMENTS = 14;
    uint256 internal constant SEAT_CAP = 8;
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

    function _range(uint256 from, uint256 count) internal pure returns (uint256[] memory s) {
        s = new uint256[](count);
        for (uint256 i = 0; i < count; ++i) {
            s[i] = from + i;
        }
    }

    /// @dev `count` honest auditors busy in another session: all but 7 TRUST of their free stake locked.
    function _busy(uint256 count) internal {
        for (uint256 j = 0; j < count; ++j) {
            address a = auditorAddrs[11 - j];
            uint256 free = staking.seatQuote(a).free;
            vm.prank(address(drawModule));
            (bool ok,,) = staking.lockSeat(a, 1, 0xB05E + j, free - 7e18, 0);
            assertTrue(ok, "setup: locked in another session");
        }
    }

    /// @dev Appeal `segs` in one round; (admitted, round, revert data).
    function _try(uint256[] memory segs) internal returns (bool admitted, uint256 round, bytes memory err) {
        vm.prank(appellant);
        try appeals.appeal(sid, segs, type(uint256).max) returns (uint256 r) {
            return (true, r, "");
        } catch (bytes memory data) {
            return (false, 0, data);
        }
    }

    function _tooLarge(uint256 seats) internal view returns (bytes memory) {
        // outside reviews 17, 20: E = 12 - 3, E - E / 2 = 5 < k_1 = 7: capacity 0
        return abi.encodeWithSelector(IAppealModule.PanelTooLarge.selector, sid, seats, 0);
    }

    /// @notice The attack's round (all 14 segments, one busy auditor) is refused before any bond moves.
    function test_OversubscribedRoundIsRefusedAtTheQuote() public {
        _busy(1);
        uint256 before = token.balanceOf(appellant);
        (bool admitted,, bytes memory err) = _try(_range(0, SEGMENTS));
        assertTrue(!(admitted), "a round the seat cap can fail is refused");
        assertEq(keccak256(err), keccak256(_tooLarge(98)), "PanelTooLarge(sid, 98 seats, capacity 0)");
        vm.expectRevert(_tooLarge(98));
        appeals.quote(sid, _range(0, SEGMENTS));
        assertEq(token.balanceOf(appellant), before, "no bond moved");
        (bool passed, uint256 score,,,) = escrow.verdictOf(sid);
        emit log_named_uint("trace score bps after the refused appeal", score);
        assertTrue(passed && score == 10_000, "the trace still passes");
    }

    /// @notice Every round of more segments than the seat cap is refused here (each needs 7 x n > 36
    /// seats), including 13 segments (91 seats), which a 96-seat limit would admit and one busy auditor fails.
    function test_EveryRoundAboveTheCapUsesAtMostHalfTheTier() public {
        for (uint256 n = SEAT_CAP + 1; n <= SEGMENTS; ++n) {
            (bool admitted,, bytes memory err) = _try(_range(0, n));
            assertTrue(!(admitted), "above the cap and above half the tier");
            assertEq(keccak256(err), keccak256(_tooLarge(7 * n)), "PanelTooLarge");
        }
        (bool ok,,) = _try(_range(0, SEAT_CAP));
        assertTrue(ok, "a round of seatCap segments is admitted (per-segment checks only)");
    }

    /// @notice The same 14 segments, appealed as two rounds of 8 and 6, are seated whole despite the busy
    /// auditor's refusals: the PASSes can only move through panels that vote.
    function test_SplitRoundsAreSeatedDespiteABusyAuditor() public {
        _busy(1);
        (bool okA, uint256 a,) = _try(_range(0, SEAT_CAP));
        (bool okB, uint256 b,) = _try(_range(SEAT_CAP, SEGMENTS - SEAT_CAP));
        assertTrue(okA && okB, "both admitted");
        _drawRound(sid, a);
        _drawRound(sid, b);
        IAppealModule.Round memory ra = appeals.roundOf(sid, a);
        IAppealModule.Round memory rb = appeals.roundOf(sid, b);
        emit log_named_uint("round A seats drawn (of 56)", ra.drawnSeats);
        emit log_named_uint("round B seats drawn (of 42)", rb.drawnSeats);
        assertEq(ra.drawnSeats, 56, "round A whole");
        assertEq(rb.drawnSeats, 42, "round B whole");
        assertTrue(!ra.refused && !rb.refused, "no round refused");
        assertTrue(ra.status != IAuditSessions.Status.Cancelled, "A not cancelled");
        assertTrue(rb.status != IAuditSessions.Status.Cancelled, "B not cancelled");
    }

    /// @notice Fuzz: with at most 2 busy auditors (fewer than a segment's slack, 12 - 3 - 7 = 2, and far
    /// fewer than half the tier), no admitted round's draw fails, and every round above the cap is refused.
    function testFuzz_AdmittedRoundsAreSeatedWhole(uint256 first, uint256 n, uint256 busy) public {
        n = bound(n, 1, SEGMENTS);
        first = bound(first, 0, SEGMENTS - n);
        _busy(bound(busy, 0, 2));
        (bool admitted, uint256 round, bytes memory err) = _try(_range(first, n));
        if (n > SEAT_CAP) {
            assertTrue(!(admitted), "refused above the cap");
            assertEq(keccak256(err), keccak256(_tooLarge(7 * n)), "PanelTooLarge");
            return;
        }
        assertTrue(admitted, "admitted up to the cap");
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        assertEq(rd.drawnSeats, 7 * n, "seated whole");
        assertTrue(
            !rd.refused && rd.status != IAuditSessions.Status.Cancelled, "never REFUSED nor UNFILLABLE"
        );
    }
}
