// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Review24DrawProbe, VmReview24} from "./Review24DrawProbe.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {PanelKey} from "../../src/libraries/PanelKey.sol";
import {SeatWord} from "../../src/libraries/SeatWord.sol";

/// @title Review24CappedEarlierWalkGas (outside review 24 of 9aecdcc, DrawModule `_cappedEarlier`)
/// @notice Property: the W_E walk a failed appeal draw adds (`_cappedEarlier`: one `memberAt` and n + 1 <=
/// AppealMath.MAX_ROUNDS seat words per panel-wide exclusion, n the failing segment's earlier appeal panels)
/// is linear in the panel-wide exclusions, runs once per round (after the last sample, round > 0 only), and
/// is small next to the draw's own calls: every sample passes the same list to `sampleAt`, about 2.3k gas
/// per exclusion per sample (Review12ExclusionCostCurve after its fix), so the failed call (walk included)
/// never becomes the round's most expensive call by more than the walk itself.
/// Attack tried: the steepest walk per seat - seatCap 1, so every seated auditor becomes a panel-wide
/// exclusion - in an admitted round (120 tier-1 members of 1,000 TRUST, 8 PASS segments appealed at depth 1,
/// 56 seats <= cappedCapacity(117, 7, 1) = 59) where 66 members refuse (stake locked elsewhere), so the last
/// segment fails after every seated auditor reached the cap; drawn one segment per call.
/// Measured (command below; in-test `gasleft()` deltas; the walk's reads re-measured with `vm.cool` on
/// SortitionTrees and DrawModule before each entry, each `memberAt` + `seatWordOf` an external call from the
/// test, so an upper bound on the internal walk): 53 of 56 seats drawn in 9 calls; failed call 1,358,446 gas
/// (walk included), largest other call 16,935,580; walk 53 entries, 390,658 gas = 7,370 per entry: 29% of
/// the (short) failed call, 2.3% of the largest call.
/// Worst case by construction (not measured: depth 4 needs three decided rounds): per entry one cold
/// `memberAt` (~2.6k) + 4 seat words (4 x 2.1k) + 4 high windows for segments >= 256 (4 x 2.1k) = ~19.4k,
/// i.e. about 8.4 samples' worth of per-exclusion cost, once per round; a call's 64 rejections cost ~64 x
/// 2.3k per exclusion. Not a liveness risk of its own; the per-call exclusion cost (Review12) dominates.
/// Severity: none (property holds).
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review24CappedEarlierWalkGas*' -vv`.
contract Review24CappedEarlierWalkGas is Review24DrawProbe {
    uint256 internal constant MEMBERS = 120;
    uint256 internal constant SEGMENTS = 8;
    uint256 internal constant REFUSERS = 66;

    event log_named_uint(string key, uint256 val);

    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatCap = 1;
    }

    /// @dev The walk's reads for the panel-wide entries (the round's auditors at the cap), each cold.
    function _walkCost(uint256 sid, uint256 round) internal returns (uint256 gasUsed, uint256 entries) {
        uint256 key = PanelKey.keyOf(sid, round);
        uint256 key0 = PanelKey.keyOf(sid, 0);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address a = auditorAddrs[i];
            if (SeatWord.count(drawModule.seatWordOf(key, a)) < 1) continue;
            (, uint256 leaf) = _sortition().leafOf(1, a);
            VmReview24(address(vm)).cool(address(_sortition()));
            VmReview24(address(vm)).cool(address(drawModule));
            uint256 g = gasleft();
            _sortition().memberAt(1, leaf);
            drawModule.seatWordOf(key0, a);
            gasUsed += g - gasleft();
            ++entries;
        }
    }

    function test_WalkIsSmallNextToTheFailedCall() public {
        uint256 sid = _setUpPassedSession(MEMBERS, SEGMENTS, 2000e18);
        uint256[] memory all = new uint256[](SEGMENTS);
        for (uint256 i = 0; i < SEGMENTS; ++i) {
            all[i] = i;
        }
        uint256 round = _appeal(sid, all);
        for (uint256 i = MEMBERS - REFUSERS; i < MEMBERS; ++i) {
            _busyElsewhere(auditorAddrs[i], 0);
        }
        _drawProbing(sid, round, 1);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        assertTrue(rd.status == IAuditSessions.Status.Cancelled && probed.failed, "setup: the draw failed");
        assertEq(probed.cursor, SEGMENTS - 1, "setup: on the last segment");
        (uint256 walk, uint256 entries) = _walkCost(sid, round);
        emit log_named_uint("round seats", rd.totalSeats);
        emit log_named_uint("drawn seats", rd.drawnSeats);
        emit log_named_uint("draw calls", drawCalls);
        emit log_named_uint("failed call gas", failedCallGas);
        emit log_named_uint("largest other call gas", largestOtherCallGas);
        emit log_named_uint("panel-wide entries walked", entries);
        emit log_named_uint("walk gas (cold, upper bound)", walk);
        emit log_named_uint("walk gas per entry", walk / entries);
        emit log_named_uint("walk / failed call (bps)", walk * 10_000 / failedCallGas);
        assertEq(entries, rd.drawnSeats, "setup: seatCap 1, every seated auditor is a panel-wide entry");
        assertLe(walk / entries, 8000, "depth 1: one memberAt and one seat word per entry");
        assertLe(walk * 20, largestOtherCallGas, "the walk is under 5% of the round's largest call");
        assertLe(
            failedCallGas, largestOtherCallGas + walk, "the failed call is no larger than the largest + walk"
        );
    }
}
