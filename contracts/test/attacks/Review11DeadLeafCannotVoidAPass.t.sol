// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review11DeadLeafCannotVoidAPass (outside review 11 of review11 6acf406, small rounds; fixed)
/// @notice Property (docs/appeals-canaries.md "Round size"): a correct PASS becomes INCONCLUSIVE through a
/// refused appeal draw only if the tier's live members could have seated the failing segment had nobody
/// refused; a shortage of live auditors ends the round UNFILLABLE (the PASS stands, the appellant pays R per
/// drawn seat).
/// Attack: `_eligible` counts leaves (every account that ever staked in the tier), not members with weight
/// in the round's snapshot. The appellant adds ONE dead leaf (register, stake the 100 TRUST minimum,
/// deregister and request the withdrawal in the same epoch) to a tier of 9 auditors: the depth-1 panel of a
/// segment (7 seats, 3 round-0 auditors excluded) needs 7 of the 6 who can sit; the quote said 9 - 3 = 6 < 7
/// before, 10 - 3 = 7 after. The draw must run out; a failing draw samples every eligible auditor first, so
/// one busy auditor (or one the appellant runs) supplies the refusal.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review11DeadLeaf*' -vv`): 9 tier-1
/// auditors of 1,000 TRUST, k_0 = 3, 2 correct PASS segments; without the leaf the appeal of segment 0 is
/// refused (NotEnoughEligibleAuditors 6 < 7). With it (100 TRUST parked for a 1-day cooldown, claimed back)
/// it is admitted (bond 42 TRUST) and 5 of 7 seats are drawn. Before the fix (main 2c2ae4f): REFUSED, net
/// loss 0, segment 0 INCONCLUSIVE, the trace's score 10,000 -> 5,000 bps. After: the draw module finds 9
/// live members (every leaf with snapshot weight is excluded when a draw fails), 3 of them on the round-0
/// panel, 6 < 7: the refusal decided nothing, so the round ends UNFILLABLE, the PASS stands (score 10,000)
/// and the appellant loses 30 TRUST (R = 6 per drawn seat). Admission still counts leaves (an upper bound);
/// the draw is where the live count is known.
contract Review11DeadLeafCannotVoidAPass is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    uint256 internal sid;
    uint256 internal claim;

    function _world(bool withLeaf) internal {
        _deployAppeals();
        _addAuditors(1, 9, STAKE);
        if (withLeaf) {
            address a = vm.addr(0x5B00);
            claim = _deadLeaf(a);
        }
        _nextEpoch();
        sid = _passedSession(2, FEE);
        // one auditor busy in another session (all but 7 TRUST of its free stake locked)
        address busy = auditorAddrs[8];
        _busyElsewhere(busy, 7e18);
    }

    function test_WithoutTheLeafTheAppealIsRefused() public {
        _world(false);
        vm.expectRevert(
            abi.encodeWithSelector(IAppealModule.NotEnoughEligibleAuditors.selector, sid, 0, 6, 7)
        );
        appeals.quote(sid, _segs(0));
    }

    /// @notice Review 13's rule: admission counts the leaves with weight in the round's snapshot
    /// (`ISortition.liveCountAt`), so the dead leaf no longer gets the appeal admitted at all: the same
    /// NotEnoughEligibleAuditors (6 < 7) as without it, before any bond (was: admitted, UNFILLABLE at the
    /// draw, 30 TRUST = 5 drawn seats x R, the PASS standing).
    function test_OneDeadLeafCannotVoidAPass() public {
        _world(true);
        vm.expectRevert(
            abi.encodeWithSelector(IAppealModule.NotEnoughEligibleAuditors.selector, sid, 0, 6, 7)
        );
        appeals.quote(sid, _segs(0));
        vm.prank(appellant);
        vm.expectRevert(
            abi.encodeWithSelector(IAppealModule.NotEnoughEligibleAuditors.selector, sid, 0, 6, 7)
        );
        appeals.appeal(sid, _segs(0), type(uint256).max);
    }
}
