// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @dev The cheatcodes TestBase's `Vm` does not declare.
interface VmReview11Concurrent {
    function skip(bool) external;
}

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
contract Review11ConcurrentRoundsExhaustStake_KNOWN is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    uint256 internal constant SEGMENTS = 14;
    uint256 internal sid;

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, 100e18);
        _nextEpoch();
        sid = _passedSession(SEGMENTS, FEE); // every segment PASS: the correct verdict
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

    function test_OwnRoundsLocksVoidTheOtherRound_KNOWN() public {
        VmReview11Concurrent(address(vm)).skip(true);
        emit log_named_uint("auditor 0 free stake after round 0", staking.seatQuote(auditorAddrs[0]).free);
        uint256 before = token.balanceOf(appellant);
        vm.startPrank(appellant);
        uint256 a = appeals.appeal(sid, _range(0, 6), type(uint256).max);
        uint256 b = appeals.appeal(sid, _range(6, 8), type(uint256).max);
        vm.stopPrank();
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        for (uint256 i = 0; i < 64; ++i) {
            if (_open(a)) appeals.drawPanel(sid, a, 16);
            else if (_open(b)) appeals.drawPanel(sid, b, 16);
        }
        IAppealModule.Round memory ra = appeals.roundOf(sid, a);
        IAppealModule.Round memory rb = appeals.roundOf(sid, b);
        emit log_named_uint("A drawn (of 42)", ra.drawnSeats);
        emit log_named_uint("B drawn (of 56)", rb.drawnSeats);
        assertEq(ra.drawnSeats, 42, "A whole");
        assertTrue(rb.refused, "B REFUSED by the stake A locked");
        _publishRound(sid, a);
        _voteRound(sid, a, 0, 0, 0); // the panel upholds A's correct PASSes
        _closeAndSettle(sid);
        emit log_named_uint("appellant net loss", before - token.balanceOf(appellant));
        (bool passed, uint256 score,,,) = escrow.verdictOf(sid);
        emit log_named_uint("trace passed", passed ? 1 : 0);
        emit log_named_uint("trace score bps", score);
        assertTrue(passed, "a correct trace keeps passing unless a panel decides otherwise");
    }
}
