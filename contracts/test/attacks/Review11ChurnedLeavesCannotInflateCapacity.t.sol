// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review11ChurnedLeavesCannotInflateCapacity (outside review 11 of review11 6acf406, PanelTooLarge;
/// fixed)
/// @notice Property (docs/appeals-canaries.md "Round size"): an admitted round's draw is charged with its
/// refusals (REFUSED: bonds back, PASS -> INCONCLUSIVE) only if the tier's live members could have seated it
/// with half of their seat cap, so an appellant cannot void correct PASSes through one busy auditor's
/// refusal.
/// Attack: `members` in `PanelTooLarge` is the tier's leaf count, and a leaf is created by one minimum stake
/// and never removed. The appellant registers Z sybil accounts in the tier, stakes the minimum (100 TRUST)
/// in each and deregisters them in the same epoch (they never hold snapshot weight; the stake goes to a
/// withdrawal claimable after the cooldown). Capacity `members * seatCap / 2` counts the dead leaves, the
/// draw cannot seat them, and the Review9 round (14 segments, 98 seats) is admitted and fails on the cap
/// with one busy honest auditor's refusal.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review11ChurnedLeaves*' -vv`):
/// 12 honest auditors of 1,000 TRUST, seat cap 8, k_0 = 3, 14 correct PASS segments; Z = 13 sybil leaves
/// (1,300 TRUST parked for one cooldown, 1 day, 1,300 TRUST claimed back) lift capacity from 48 to 100
/// seats (25 leaves); the 98-seat round is admitted (bond 588 TRUST) and 75 of 98 seats are drawn. Before
/// the fix (main 2c2ae4f): REFUSED, the bond refunded whole (net loss 0), the trace's score 10,000 -> 0 bps
/// (verdict FAIL). After: the failed draw counts 12 live members, 2 x 98 > 12 x 8, so the refusal decided
/// nothing: UNFILLABLE, every PASS stands (score 10,000), and the appellant pays R = 6 TRUST per drawn seat
/// (450 TRUST).
/// Honest churn (auditors that left) inflated capacity the same way; it no longer matters either.
contract Review11ChurnedLeavesCannotInflateCapacity is NoCanaryAppealsFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    event log_named_uint(string key, uint256 val);

    uint256 internal constant SEGMENTS = 14;
    uint256 internal constant SYBILS = 13;
    uint256 internal sid;
    uint256[] internal claims;

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _sybils(SYBILS);
        _nextEpoch();
        sid = _passedSession(SEGMENTS, FEE); // every segment PASS: the correct verdict
    }

    /// @dev `z` accounts register in tier 1, stake the minimum and leave in the same epoch.
    function _sybils(uint256 z) internal {
        for (uint256 i = 0; i < z; ++i) {
            address a = vm.addr(0x5B00 + i);
            claims.push(_deadLeaf(a));
        }
    }

    function _range(uint256 count) internal pure returns (uint256[] memory s) {
        s = new uint256[](count);
        for (uint256 i = 0; i < count; ++i) {
            s[i] = i;
        }
    }

    /// @notice Review 13's rule: `PanelTooLarge` counts the leaves with weight in the round's snapshot
    /// (`ISortition.liveCountAt`), so the sybils' dead leaves add no capacity: the 14-segment round (98
    /// seats) is refused up front against the live 12 x 8 / 2 = 48 (since outside review 17 the eligible
    /// (12 - 3) x 8 / 2 = 36; since outside review 20 k + seatCap (E - E / 2 - k) = 0, 9 - 4 = 5 < k = 7:
    /// no capped round in this tier; was: admitted against the leaves'
    /// capacity, then UNFILLABLE at the draw, 450 TRUST = 75 drawn seats x R, every PASS standing).
    function test_DeadLeavesCannotVoidPassesThroughTheCap() public {
        emit log_named_uint("tier-1 leaves", _sortition().leafCount(1));
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.PanelTooLarge.selector, sid, 98, 0));
        appeals.quote(sid, _range(SEGMENTS));
        vm.prank(appellant);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.PanelTooLarge.selector, sid, 98, 0));
        appeals.appeal(sid, _range(SEGMENTS), type(uint256).max);
    }
}
