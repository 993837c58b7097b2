// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfNoCanaryAppealsFixture} from "./VrfAttackFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review11VrfLateDeliveryOneBlockDraw (outside review 11 of review11 6acf406, draw deadlines)
/// @notice Property (docs/appeals-canaries.md; `AppealModule._sync`): an honest appellant forfeits its bond
/// only by its own fault - it could have drawn the panel and did not. Refund (Cancelled) is for randomness
/// nobody could use in time, decided by the oracle, never by the appellant.
/// Attack / liveness: with VRF the oracle picks the delivery block. A delivery in `readable - 1` makes the
/// value obtainable in `readable` (delivery + 1) only: `_startDraw`'s deadline is clipped to `readable`, so
/// the whole panel must be drawn in that one block, and `late = obtainableAt > readable` is false, so not
/// finishing is abandonment. Since this branch a round left short past its deadline ends Expired (bond
/// forfeited) instead of Cancelled. Anyone (the provider defending its PASSes) starts the draw in `readable`
/// with `maxSeats = 1` (one segment) ahead of the appellant and stuffs the rest of the block (or the round
/// simply needs more than one block of gas: `PanelTooLarge` admits up to members * seatCap / 2 seats,
/// 1,280 for 40 members at seat cap 64); the appellant's completing call lands in `readable + 1`.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review11VrfLate*' -vv`, skip removed):
/// 12 tier-1 auditors of 1,000 TRUST, VRF (3 confirmations, timeout 400), 8 correct PASS segments all
/// appealed (56 seats, bond 336 TRUST), delivery at readable - 1: draw window 1 block (obtainableAt ==
/// drawDeadline == readable); the griefer's call draws 7 seats, the completing call needs 1,697,183 gas (see
/// log); one block later the round ends Expired (8): the appellant loses its whole 336 TRUST bond and the
/// PASSes stand. On main (22739ac) the same lapse was Cancelled (refunded; read from the diff of `_sync`,
/// not re-run); a round not started in that one block is forfeited on both (pre-existing: Created past
/// readable with obtainableAt == readable is Expired).
/// Fix proposal: treat the randomness as late when the draw window it leaves is shorter than the draw
/// needs - `late = obtainableAt + minDrawWindow > readable + 1` (e.g. minDrawWindow = drawBlocks), in both
/// `_sync` branches (and in `AuditSessions._endUndrawn` for round 0) - so the oracle's timing, not the
/// appellant, decides refunds, and a started short draw stays Expired only when the window was full.
/// Fixed for the started draw (`AppealModule._sync`: a round Drawing short past its deadline is abandoned only
/// if `obtainableAt + drawBlocks <= readable`, a full window; else Cancelled, UNFILLABLE as before): the
/// round ends Cancelled and the appellant pays R per drawn seat (7 x 6 = 42 TRUST) instead of its 336 TRUST
/// bond. Left as it was (pre-existing, not made worse here): a round nobody starts in such a one-block
/// window, and round 0's same window for the provider (`AuditSessions._endUndrawn`).
contract Review11VrfLateDeliveryOneBlockDraw is VrfNoCanaryAppealsFixture {
    function setUp() public {
        _setUpVrf();
    }

    function test_LateDeliveryLeavesOneBlockNoForfeit() public {
        uint256 sid = _finalizedOnVrf(8);
        uint256[] memory all = new uint256[](8);
        for (uint256 i = 0; i < 8; ++i) {
            all[i] = i;
        }
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, all);
        emit log_named_decimal_uint("bond (TRUST)", before - token.balanceOf(appellant), 18);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        uint256 readable = _sortition().snapshotReadableUntil(rd.epoch);
        vm.roll(readable - 1);
        assertTrue(_deliver(rd.drawRequest, 7), "delivered in readable - 1");
        vm.expectRevert();
        appeals.drawPanel(sid, round, 64); // TooEarly in the delivery block
        vm.roll(readable);
        // a griefer starts the draw first, one segment only
        vm.prank(address(0xBAD));
        appeals.drawPanel(sid, round, 1);
        rd = appeals.roundOf(sid, round);
        emit log_named_uint(
            "draw window (blocks) = drawDeadline - obtainableAt + 1",
            rd.drawDeadline + 1 - vrf.obtainableAt(rd.drawRequest)
        );
        emit log_named_uint("seats drawn by the griefer (of 56)", rd.drawnSeats);
        uint256 snap = vm.snapshotState();
        uint256 g = gasleft();
        appeals.drawPanel(sid, round, 64);
        emit log_named_uint("gas the completing call needs", g - gasleft());
        vm.revertToState(snap);
        // the completing call misses block `readable` (stuffed block / more than one block of gas)
        vm.roll(readable + 1);
        _closeAndSettleOnVrf(sid);
        rd = appeals.roundOf(sid, round);
        uint256 cost = before - token.balanceOf(appellant);
        emit log_named_uint("round status (7 Cancelled: refunded, 8 Expired)", uint256(rd.status));
        emit log_named_decimal_uint("appellant's cost (TRUST)", cost, 18);
        assertTrue(rd.status == IAuditSessions.Status.Cancelled, "UNFILLABLE, not abandoned");
        assertEq(
            cost,
            uint256(rd.drawnSeats) * 6e18,
            "an appellant given one block by the oracle forfeits nothing: R per drawn seat"
        );
    }
}
