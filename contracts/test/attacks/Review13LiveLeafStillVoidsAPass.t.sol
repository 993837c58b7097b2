// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review13LiveLeafStillVoidsAPass (outside review 13 of 47db2d1, the dead-leaf fix)
/// @notice Property (docs/appeals-canaries.md "Round size", "Dead leaves"): a correct PASS becomes
/// INCONCLUSIVE through a refused appeal draw only if the tier, not the appellant, made the round
/// seatable; "the slack `eligible - k_{d+1}` is set by the tier and the depth, not by the appellant".
/// Attack: review 11's attack (Review11DeadLeafCannotVoidAPass) with the appellant's extra leaf kept LIVE
/// through the start of the appeal's epoch instead of dead. 47db2d1 counts members with weight in the
/// round's snapshot, one per account whatever its stake, so a 100 TRUST (tier minimum) account staked
/// one epoch before the appeal is one more "live member": it lifts the segment's eligible count from
/// 6 to 7 = k_1 both at admission (leaves) and in `_decisiveRefusals` (live). It need not refuse: it is
/// seated like anyone (5 honest + it = 6 of 7 seats), and ONE honest auditor busy elsewhere supplies the
/// refusal, exactly as in review 11. The account may even deregister and request its withdrawal in the
/// appeal's epoch (StakingHolds keeps it seatable for the round's snapshot).
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review13LiveLeaf*' -vv`): 9 tier-1
/// auditors of 1,000 TRUST, k_0 = 3, 2 correct PASS segments, one auditor busy. Without the account:
/// NotEnoughEligibleAuditors (6 < 7), as in review 11. With it: admitted (bond 42 TRUST), 6 of 7 seats
/// drawn (the account holds one), the draw fails on the busy auditor's refusal; live members 10,
/// earlier 3, 10 >= 3 + 7, so REFUSED: bond back, appellant net loss 0, segment 0 INCONCLUSIVE, trace score
/// 10,000 -> 5,000 bps. The account, seated and then released by the REFUSED round, requested its 100 TRUST
/// back in the appeal's epoch (parked for the hold, then a normal withdrawal: the same parked stake as
/// review 11's dead leaf, one epoch later; its claim was not measured here).
/// Fix (built, option (a) with admission kept at `eligible >= k`): admission counts the snapshot's live
/// leaves exactly (`ISortition.liveCountAt`) and decides once whether refusals are charged:
/// `Round.refusalsCharged` iff eligible >= 2 k (`Quote.refusalsCharged` tells the appellant before it pays).
/// Here eligible = 10 - 3 = 7 < 14: the round is admitted, but uncharged, so the busy auditor's refusal
/// ends it UNFILLABLE. After (this file): admitted (bond 42 TRUST, quote `refusalsCharged` false), 6 of 7
/// seats drawn, UNFILLABLE, the PASS stands (outcome 1), trace score 10,000 bps, the appellant pays R per
/// drawn seat (36 TRUST = 6 x 6 TRUST). Checked against the old code: with contracts/src at c9c6de4 (git
/// stash of the fix) this test fails with "a round only the appellant's account made seatable is not
/// REFUSED" (REFUSED, net loss 0, score 5,000). Trade-off: in a tier with k <= eligible < 2k a refusing
/// minority (the defender's accounts too) now ends the round UNFILLABLE; the quote says so up front.
contract Review13LiveLeafStillVoidsAPass is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    uint256 internal sid;
    address internal leaf = vm.addr(0x5B13);

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams(); // no canaries
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS); // room to cross an epoch before appealing
    }

    function _world(bool withLeaf) internal {
        sid = _setUpPassedSession(9, 2, FEE); // both segments PASS: the correct verdict
        if (withLeaf) {
            // after round 0 (so it sits on no round-0 panel), before the appeal's epoch
            _joinTier(leaf, 1, 100e18);
        }
        _nextEpoch(); // the appeal's snapshot counts the account
        // one honest auditor busy in another session (all but 7 TRUST of its free stake locked)
        address busy = auditorAddrs[8];
        _busyElsewhere(busy, 7e18);
    }

    function test_WithoutTheAccountTheAppealIsRefused() public {
        _world(false);
        vm.expectRevert(
            abi.encodeWithSelector(IAppealModule.NotEnoughEligibleAuditors.selector, sid, 0, 6, 7)
        );
        appeals.quote(sid, _segs(0));
    }

    function test_OneLiveMinimumStakeAccountCannotVoidAPass() public {
        _world(true);
        uint256 before = token.balanceOf(appellant);
        IAppealModule.Quote memory q = appeals.quote(sid, _segs(0));
        assertTrue(!q.refusalsCharged, "quote: eligible 7 < 2 x 7, refusals would not be charged");
        uint256 round = _appeal(sid, _segs(0));
        emit log_named_uint("bond paid", before - token.balanceOf(appellant));
        // the account leaves at once (its stake is parked for the round's snapshot, then returned)
        vm.startPrank(leaf);
        registry.deregister();
        staking.requestWithdrawal(leaf, staking.sharesOf(leaf, leaf));
        vm.stopPrank();
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        emit log_named_uint("seats drawn (of 7)", rd.drawnSeats);
        emit log_named_uint("account seated (1 = yes)", drawModule.seatsOf(sid, round, leaf).length);
        assertTrue(rd.status == IAuditSessions.Status.Cancelled, "the draw failed");
        assertTrue(!rd.refusalsCharged, "the round keeps the quote's rule");
        emit log_named_uint("refused (1 = REFUSED)", rd.refused ? 1 : 0);
        _closeAndSettle(sid);
        uint256 loss = before - token.balanceOf(appellant);
        emit log_named_uint("appellant net loss", loss);
        (, uint256 score,,,) = escrow.verdictOf(sid);
        emit log_named_uint("trace score bps", score);
        emit log_named_uint("segment 0 outcome", _outcomeOf(sid, 0));
        assertTrue(!rd.refused, "a round only the appellant's account made seatable is not REFUSED");
        assertEq(_outcomeOf(sid, 0), 1, "the correct PASS stands");
        assertEq(score, 10_000, "trace score unchanged");
        assertEq(loss, uint256(rd.drawnSeats) * R, "UNFILLABLE: R per drawn seat");
    }
}
