// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";

interface VmSkipReview22Leave {
    function skip(bool) external;
}

/// @title Review22EarlierAuditorsLeaveToVeto (outside review 22 of 0f4112d, open)
/// @notice Property (docs/appeals-canaries.md "Who counts": "A segment's eligible is that live count minus
/// every seat of its earlier panels, as if every earlier auditor were still live, so a provider's round-0
/// accounts cannot veto an appeal by leaving"; `_checkOne`'s comment says the same).
/// Attack: E = members - earlierSeats(k_0, d). An earlier-panel auditor of the segment that leaves (deregisters;
/// its round-0 locks stay) before the appeal's snapshot epoch lowers `members` by one while earlierSeats stays,
/// so E drops by one per leaver although the auditors who can sit on the segment (live, not on its earlier
/// panels) are exactly as many as before. Whoever holds round-0 seats of a contested PASS - the accounts that
/// voted it - can so (1) make a marginal tier's appeal NotEnoughEligibleAuditors (a veto: the wrong PASS
/// cannot be appealed at all), (2) turn a charged appeal uncharged (the honest appellant's requireCharged call
/// reverts RefusalsNotCharged; with the 3-argument call a busy honest minority then ends it UNFILLABLE),
/// (3) lower a capped round's capacity by about seatCap / 2 per leaver.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review22EarlierAuditors*' -vv`), k_0 = 3,
/// one-segment PASS sessions, the leavers two of segment 0's three round-0 auditors (deregistered, next
/// epoch): (1) 10 members: before, quote E 7 = k_1, admitted; after, members 8, NotEnoughEligibleAuditors(sid,
/// 0, 5, 7) while 7 live auditors sat on no panel of the segment (the control draws them: 7 of 7). (2) 17
/// members: before E 14, charged; after members 15, appeal(.., requireCharged) reverts RefusalsNotCharged(sid,
/// 12, 14) while 14 live auditors are eligible. The leavers' cost: none measurable here (their round-0 seats
/// keep their locks and rewards; they may rejoin after the window).
/// Severity: MEDIUM in thin tiers (the accounts behind a wrong PASS veto or de-charge its appeal for free),
/// nil in tiers with slack. The admission error is conservative for (a): E never exceeds the true count.
/// Fix proposal: count the earlier-panel auditors still live instead of assuming all are: for each named
/// segment E_s = members - (its earlier-panel auditors with weight in the round's snapshot), bounded reads
/// (k_0 + ... + k_d <= 120 seat words per segment, the draw's `_satBefore` data), round E = min over the
/// named segments; or, if that gas is unwanted, drop the claim from the doc and `_checkOne`'s comment and
/// state the veto as a trade-off.
contract Review22EarlierAuditorsLeaveToVeto is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    /// @dev `members` auditors, a 1-segment PASS session; `leavers` of segment 0's round-0 auditors leave
    /// (live count from the next epoch, which this moves to).
    function _setUp(uint256 members, uint256 leavers) internal returns (uint256 sid) {
        sid = _setUpPassedSession(members, 1, FEE);
        uint256 gone = 0;
        for (uint256 i = 0; i < auditorAddrs.length && gone < leavers; ++i) {
            address a = auditorAddrs[i];
            if (!_seatedOn(sid, a, 0)) continue;
            vm.prank(a);
            registry.deregister();
            ++gone;
        }
        assertEq(gone, leavers, "setup: leavers");
        _nextEpoch();
        uint256 epoch = block.number / EPOCH_BLOCKS + 1;
        assertEq(_sortition().liveCountAtExcept(1, epoch, provider), members - leavers, "setup: live count");
    }

    function test_LeavingRound0AuditorsVetoTheAppeal_KNOWN() public {
        VmSkipReview22Leave(address(vm)).skip(true);
        uint256 sid = _setUp(10, 2);
        IAppealModule.Quote memory q = appeals.quote(sid, _segs(0));
        assertEq(q.totalSeats, 7, "7 live auditors sat on no panel of segment 0: admitted");
    }

    function test_LeavingRound0AuditorsUnchargeTheAppeal_KNOWN() public {
        VmSkipReview22Leave(address(vm)).skip(true);
        uint256 sid = _setUp(17, 2);
        IAppealModule.Quote memory q = appeals.quote(sid, _segs(0));
        assertTrue(q.refusalsCharged, "14 live eligible auditors = 2 k_1: charged");
    }

    /// @dev Control: today's figures, and the 7 live eligible auditors the vetoed round would have drawn.
    function test_ControlLeaversShrinkEligible() public {
        uint256 sid = _setUp(10, 2);
        vm.expectRevert(
            abi.encodeWithSelector(IAppealModule.NotEnoughEligibleAuditors.selector, sid, 0, 5, 7)
        );
        appeals.quote(sid, _segs(0));
        uint256 fresh = 0;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            if (!_seatedOn(sid, auditorAddrs[i], 0)) ++fresh;
        }
        emit log_named_uint("live auditors on no panel of segment 0", fresh);
        assertEq(fresh, 7, "7 could sit");

        uint256 sid2 = _setUp(17, 2);
        IAppealModule.Quote memory q = appeals.quote(sid2, _segs(0));
        assertTrue(!q.refusalsCharged, "E 12 < 14: uncharged");
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.RefusalsNotCharged.selector, sid2, 12, 14));
        vm.prank(appellant);
        appeals.appeal(sid2, _segs(0), type(uint256).max, true);
    }

    /// @dev Control: nobody leaves, 10 members: admitted (E 7) and drawn 7 of 7.
    function test_ControlWithoutLeaversDrawsInFull() public {
        uint256 sid = _setUp(10, 0);
        uint256 round = _appeal(sid, _segs(0));
        _drawRound(sid, round);
        assertEq(appeals.roundOf(sid, round).drawnSeats, 7, "drawn in full");
    }
}
