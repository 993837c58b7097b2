// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @dev The cheatcodes TestBase's `Vm` does not declare.
interface VmReview13LiveLeaf {
    function skip(bool) external;
}

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
/// review 11's dead leaf, one epoch later; its claim was not measured here). Committed skipped (`_KNOWN`): the assertion that
/// the PASS stands fails on 47db2d1.
/// Fix proposal: the live count must not be what the appellant sets for the price of one minimum stake.
/// Either (a) charge refusals (REFUSED) only when the failing segment's live eligible auditors are at least
/// 2 k (`members >= earlier + 2 * k`: the draw then failed only because more than half of them refused,
/// PanelTooLarge's honest-majority argument per segment) and admit a segment only with that slack
/// (`eligible >= 2 k`), so that a thin tier's appeal is refused up front instead of becoming UNFILLABLE;
/// or (b) count members by stake, not by account: a member counts for `min(seatCap, weight / minStake)`
/// (or the live eligible WEIGHT must cover k seats of the tier's median weight), so a minimum-stake account
/// adds a fraction of a member. (a) also closes the busy-auditor exposure at zero slack that review 11's
/// attack rests on; its cost is that a segment with k <= eligible < 2k can no longer be appealed.
contract Review13LiveLeafStillVoidsAPass_KNOWN is NoCanaryAppealsFixture {
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
            token.transfer(leaf, 100e18);
            vm.startPrank(leaf);
            registry.register(1, uint64(1) << 1, keccak256(abi.encode("x25519", leaf)));
            token.approve(address(stakingContract), type(uint256).max);
            staking.stake(leaf, 100e18);
            vm.stopPrank();
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

    function test_OneLiveMinimumStakeAccountVoidsAPass_KNOWN() public {
        VmReview13LiveLeaf(address(vm)).skip(true);
        _world(true);
        uint256 before = token.balanceOf(appellant);
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
        emit log_named_uint("refused (1 = REFUSED)", rd.refused ? 1 : 0);
        _closeAndSettle(sid);
        emit log_named_uint("appellant net loss", before - token.balanceOf(appellant));
        (, uint256 score,,,) = escrow.verdictOf(sid);
        emit log_named_uint("trace score bps", score);
        emit log_named_uint("segment 0 outcome", _outcomeOf(sid, 0));
        assertTrue(!rd.refused, "a round only the appellant's account made seatable is not REFUSED");
        assertEq(_outcomeOf(sid, 0), 1, "the correct PASS stands");
        assertEq(score, 10_000, "trace score unchanged");
    }
}
