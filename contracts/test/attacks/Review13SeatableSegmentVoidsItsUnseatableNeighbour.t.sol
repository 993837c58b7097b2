// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review13SeatableSegmentVoidsItsUnseatableNeighbour (outside review 13 of 47db2d1)
/// @notice Property (docs/appeals-canaries.md "Dead leaves"): a correct PASS that the tier's live members
/// could not re-examine (fewer live auditors off its earlier panels than the panel's seats) stands; a
/// refusal must not void it.
/// Attack: `_decisiveRefusals` redoes the per-segment count for the FAILING segment only, but REFUSED ends
/// every segment of the round. Segments differ in live eligible count when an earlier-panel member of one
/// of them left (churn; or the appellant itself, a round-0 auditor of that segment, deregisters). The
/// appellant names the thin-but-seatable segment G first and the unseatable one F after it: a busy
/// auditor's refusal fails the draw on G, the live count admits G, and F's PASS is voided with it. Alone,
/// F ends UNFILLABLE (the fix works for it).
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review13SeatableSegment*' -vv`):
/// 10 tier-1 auditors of 1,000 TRUST, k_0 = 3 (k_1 = 7), 2 correct PASS segments; one round-0 auditor of
/// segment 0 (G) only deregisters before the appeal's epoch (10 leaves, 9 live); one other auditor busy.
/// Admission counts 10 - 3 = 7 for both. Live: G 9 - 2 = 7 (seatable), F 9 - 3 = 6 (not). Appeal of F
/// alone: 5 of 7 seats drawn (the busy auditor refuses), UNFILLABLE, F's PASS stands (R per drawn seat).
/// Appeal of {G, F} (bond 84 TRUST): the draw fails on G (6 of 14 seats), 9 >= 2 + 7,
/// REFUSED: both segments INCONCLUSIVE, bond back (net loss 0), trace score 10,000 -> 0 bps. Committed
/// skipped (`_KNOWN`): the assertion that F's PASS stands fails on 47db2d1.
/// Fixed (4f53258's successor): a round of several segments is charged with its refusals only if the live
/// members cover every earlier-panel seat plus k (k_0 + k_1 = 3 + 7 = 10 > 9 here): UNFILLABLE, both PASSes
/// stand, the appellant pays R per drawn seat. The node refuses such a round unless forced and says to
/// appeal the segments one per round (`live_shortfall`).
/// Fix proposal: make admission exact instead of redoing it for one segment at the draw: count live
/// members at the round's snapshot (a per-tier count of leaves with non-zero weight kept by SortitionTrees
/// and snapshotted with the total weight, `liveCountAt(tier, epoch)`) and subtract every earlier-panel seat
/// (k_0 + ... + k_d, as now: a lower bound on the live eligible). Then every named segment is seatable by
/// live members when admitted and a failed draw with refusals is REFUSED as designed; `_decisiveRefusals`
/// keeps only the live capacity rule or nothing. At the draw alone, the check would need every named
/// segment's live earlier count (members x segments `_satBefore` reads).
contract Review13SeatableSegmentVoidsItsUnseatableNeighbour is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    uint256 internal sid;

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams(); // no canaries
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS); // room to cross an epoch before appealing
    }

    function setUp() public {
        sid = _setUpPassedSession(10, 2, FEE); // both PASS: the correct verdict
        address gone = address(0);
        address busy = address(0);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address a = auditorAddrs[i];
            if (gone == address(0) && _seatedOn(sid, a, 0) && !_seatedOn(sid, a, 1)) gone = a;
            else if (busy == address(0) && !_seatedOn(sid, a, 0) && !_seatedOn(sid, a, 1)) busy = a;
        }
        assertTrue(gone != address(0) && busy != address(0), "setup: roles");
        vm.prank(gone);
        registry.deregister(); // a round-0 auditor of G leaves (churn, or the appellant itself)
        _nextEpoch();
        _busyElsewhere(busy, 7e18);
    }

    /// @notice Review 13's rule: eligible is the snapshot's live count minus every earlier-panel seat (as if
    /// each earlier auditor were still live), the same for every segment of the round, so F is refused up
    /// front alone (was: admitted, UNFILLABLE at the draw).
    function test_UnseatableSegmentAloneIsUnfillable() public {
        vm.expectRevert(
            abi.encodeWithSelector(IAppealModule.NotEnoughEligibleAuditors.selector, sid, 1, 6, 7)
        );
        appeals.quote(sid, _segs(1));
    }

    /// @notice ... and so is the round naming it beside a seatable neighbour (the first segment already
    /// fails the same count): no refusal on the neighbour can void F's PASS (was: admitted, UNFILLABLE
    /// through the several-segment bar of `_decisiveRefusals`, now deleted).
    function test_SeatableNeighbourCannotVoidTheUnseatablePass() public {
        vm.expectRevert(
            abi.encodeWithSelector(IAppealModule.NotEnoughEligibleAuditors.selector, sid, 0, 6, 7)
        );
        appeals.quote(sid, _segs(0, 1));
    }
}
