// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review11ConcurrentRoundsExhaustStake (outside review 11 of review11 6acf406, REFUSED rounds)
/// @notice Property (docs/appeals-canaries.md "Round size", Review9OversubscribedAppealIsRefused): a correct
/// PASS becomes INCONCLUSIVE only through a panel that decides, never through refusals the appellant causes;
/// rounds of at most `seatCap` segments are "unaffected" because the tier, not the appellant, sets their
/// slack.
/// Attack: refusals the appellant causes itself. Two concurrent rounds of one session and tier share the
/// auditors' free stake (the seat cap is per panel, the stake is not). The appellant appeals 6 segments
/// (round A, 42 seats) and 8 segments (round B, 56 seats; 8 = seatCap, so PanelTooLarge never looks), draws
/// A whole first, then B: honest auditors whose stake A just locked refuse B's locks, B's draw runs out
/// and, having lock refusals, ends REFUSED: B's bond back, its 8 correct PASSes INCONCLUSIVE. A is upheld
/// (the sacrifice). The draw is permissionless and the appellant picks the order, so it knows the outcome
/// before paying (seat quotes are public).
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review11Concurrent*' -vv`): 12 tier-1
/// auditors of 100 TRUST (the minimum stake; 68 TRUST free = 8 seats of 8 TRUST after round 0), seat cap 8,
/// k_0 = 3, 14 correct PASS segments (score 10,000 bps). A drawn 42/42 and upheld, B drawn 55/56 and
/// REFUSED; after settlement the trace FAILS (score 4,285 bps, segments 6-13 INCONCLUSIVE) for the
/// appellant's net loss of 252 TRUST (A's bond) - an upheld 8-segment appeal of correct PASSes would lose
/// 8 x 42 = 336 TRUST (computed, not run) and change nothing; all 14 upheld: 588 TRUST (Review9's bonds),
/// trace passes. A 7 + 7 split drawn in turn (an earlier run of this file) was seated whole at 110, 120,
/// 150 and 200 TRUST stakes and its second round REFUSED at 48/49 at 100 TRUST; Review9's 8 + 6 is seated
/// whole at 1,000 TRUST: the exposure is a tier
/// whose free stake is near the demand, which the appellant can also simply wait for (busy tiers).
/// Fix proposal: a lock refused because the auditor's stake is held by another open panel of the same
/// session counts as no refusal (the draw then ends UNFILLABLE: R per drawn seat from the bond), e.g. the
/// draw module excludes such auditors with an EARLIER_PANEL-like reason; or admit a round only when the
/// tier's free seats (sum over members of min(seatCap, free / lockAmount)) cover twice the seats of the
/// session's open rounds in the tier plus this one, as PanelTooLarge does for the seat cap.
/// After review 13's rule (refusals charged only if eligible >= 2 k at admission): the 12-auditor tier has
/// eligible 12 - 3 = 9 < 14, so B ends UNFILLABLE (drawn 55/56, not REFUSED): every PASS stands (score
/// 10,000), the appellant loses 582 TRUST (A's 252 bond + 55 x R); `test_OwnRoundsLocksCannotVoidTheOtherRound`.
/// Large tier (`test_LargeTierOwnRoundsLocksVoidTheLastRound`): the same attack in a tier large enough that
/// the 2k rule charges refusals: 20 auditors of 100 TRUST (eligible 17 >= 14), 24 correct PASS segments,
/// three 8-segment rounds drawn in turn: 56/56, 56/56, then 48/56. Before the fix (main 92327f6): the third
/// round REFUSED (its refusals are the honest auditors whose stake the first two rounds locked), the trace
/// FAILS (score 10,000 -> 6,666 bps, 8 PASSes INCONCLUSIVE) for a net loss of 672 TRUST (the two upheld
/// bonds). After the fix (DrawModule reason 5, `_sessionHeld`: a stake-short refusal by an auditor seated
/// in another appeal panel of the same session is excluded for the segment but not charged): the third
/// round ends UNFILLABLE (48/56, refusalsCharged but not refused), every PASS stands (score 10,000, trace
/// passes) and the appellant loses 960 TRUST (672 of bonds + 48 x R = 288). Genuine refusals in the same
/// draw are still charged: Review11ConcurrentRoundsGenuineRefusals.
/// Mirror (measured by the same figures): the fix makes a draw the session's own concurrent rounds exhaust
/// UNFILLABLE, so whoever wants a contested outcome to stand (the provider) can open and draw concurrent
/// rounds of the session before an honest round to end it UNFILLABLE: 672 TRUST of upheld bonds here (it
/// cannot have the correct PASSes it appeals overturned), against 288 of R for the victim, and the victim's
/// round, opened first, has its randomness first and can be drawn first (the draw is permissionless).
contract Review11ConcurrentRoundsExhaustStake is NoCanaryAppealsFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    event log_named_uint(string key, uint256 val);

    uint256 internal sid;

    function _world(uint256 auditors, uint256 segments) internal {
        _deployAppeals();
        _addAuditors(1, auditors, 100e18);
        _nextEpoch();
        sid = _passedSession(segments, FEE); // every segment PASS: the correct verdict
    }

    function _range(uint256 from, uint256 count) internal pure returns (uint256[] memory s) {
        s = new uint256[](count);
        for (uint256 i = 0; i < count; ++i) {
            s[i] = from + i;
        }
    }

    function _open(uint256 r) internal view returns (bool) {
        IAppealModule.Round memory rd = appeals.roundOf(sid, r);
        return rd.status == IAuditSessions.Status.Created
            || (rd.status == IAuditSessions.Status.Drawing && rd.drawnSeats < rd.totalSeats);
    }

    /// @dev Open one round per entry of `sizes` (consecutive segments), then draw them in that order.
    function _attack(uint256[] memory sizes) internal returns (uint256[] memory rounds) {
        rounds = new uint256[](sizes.length);
        uint256 from = 0;
        vm.startPrank(appellant);
        for (uint256 i = 0; i < sizes.length; ++i) {
            rounds[i] = appeals.appeal(sid, _range(from, sizes[i]), type(uint256).max);
            from += sizes[i];
        }
        vm.stopPrank();
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        for (uint256 j = 0; j < 256; ++j) {
            bool any = false;
            for (uint256 i = 0; i < rounds.length && !any; ++i) {
                if (_open(rounds[i])) {
                    appeals.drawPanel(sid, rounds[i], 16);
                    any = true;
                }
            }
            if (!any) break;
        }
    }

    function test_OwnRoundsLocksCannotVoidTheOtherRound() public {
        _world(12, 14);
        emit log_named_uint("auditor 0 free stake after round 0", staking.seatQuote(auditorAddrs[0]).free);
        uint256 before = token.balanceOf(appellant);
        uint256[] memory sizes = new uint256[](2);
        sizes[0] = 6;
        sizes[1] = 8;
        uint256[] memory r = _attack(sizes);
        IAppealModule.Round memory ra = appeals.roundOf(sid, r[0]);
        IAppealModule.Round memory rb = appeals.roundOf(sid, r[1]);
        emit log_named_uint("A drawn (of 42)", ra.drawnSeats);
        emit log_named_uint("B drawn (of 56)", rb.drawnSeats);
        emit log_named_uint("B refused (1 = REFUSED)", rb.refused ? 1 : 0);
        assertEq(ra.drawnSeats, 42, "A whole");
        assertTrue(rb.status == IAuditSessions.Status.Cancelled, "B's draw failed");
        assertTrue(!rb.refusalsCharged && !rb.refused, "eligible 9 < 14: B UNFILLABLE");
        _publishRound(sid, r[0]);
        _voteRound(sid, r[0], 0, 0, 0); // the panel upholds A's correct PASSes
        _closeAndSettle(sid);
        emit log_named_uint("appellant net loss", before - token.balanceOf(appellant));
        (bool passed, uint256 score,,,) = escrow.verdictOf(sid);
        emit log_named_uint("trace passed", passed ? 1 : 0);
        emit log_named_uint("trace score bps", score);
        assertTrue(passed, "a correct trace keeps passing unless a panel decides otherwise");
        assertEq(score, 10_000, "every PASS stands");
    }

    function test_LargeTierOwnRoundsLocksVoidTheLastRound() public {
        _world(20, 24);
        emit log_named_uint("auditor 0 free stake after round 0", staking.seatQuote(auditorAddrs[0]).free);
        uint256 before = token.balanceOf(appellant);
        uint256[] memory sizes = new uint256[](3);
        sizes[0] = 8;
        sizes[1] = 8;
        sizes[2] = 8;
        uint256[] memory r = _attack(sizes);
        IAppealModule.Round memory last = appeals.roundOf(sid, r[2]);
        for (uint256 i = 0; i < 3; ++i) {
            emit log_named_uint("round drawn (of 56)", appeals.roundOf(sid, r[i]).drawnSeats);
        }
        emit log_named_uint("last round charged (1 = eligible >= 2k)", last.refusalsCharged ? 1 : 0);
        emit log_named_uint("last round refused (1 = REFUSED)", last.refused ? 1 : 0);
        for (uint256 i = 0; i < 2; ++i) {
            if (appeals.roundOf(sid, r[i]).drawnSeats == 56) {
                _publishRound(sid, r[i]);
                _voteRound(sid, r[i], 0, 0, 0);
            }
        }
        _closeAndSettle(sid);
        emit log_named_uint("appellant net loss", before - token.balanceOf(appellant));
        (bool passed, uint256 score,,,) = escrow.verdictOf(sid);
        emit log_named_uint("trace passed", passed ? 1 : 0);
        emit log_named_uint("trace score bps", score);
        assertTrue(last.status == IAuditSessions.Status.Cancelled, "the last draw failed");
        assertTrue(last.refusalsCharged, "eligible 17 >= 14: refusals would be charged");
        assertTrue(!last.refused, "the appellant's own locks void no PASS");
        assertTrue(passed, "a correct trace keeps passing unless a panel decides otherwise");
        assertEq(score, 10_000, "every PASS stands");
        assertGe(before - token.balanceOf(appellant), 672e18, "the appellant gains nothing");
    }
}
