// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfNoCanaryAppealsFixture} from "./VrfAttackFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review12FullDrawWindowBoundary (outside review 12 of c0fad00, the full-window rule)
/// @notice Property (`AppealModule._sync`, Drawing; docs/appeals-canaries.md, ABANDONED): a round whose
/// draw was started and left short past its deadline is ABANDONED (Expired drawn short: the whole bond
/// forfeited, R per drawn seat, the rest to the pot) exactly when its randomness left a full draw window,
/// `obtainableAt + drawBlocks <= snapshotReadableUntil(epoch)`, and UNFILLABLE (Cancelled: bond back minus
/// R per drawn seat) one block later. Every ending pays out exactly the bond and leaves nothing in the
/// appeal settlement.
/// Attack checked: an appellant who dislikes the (public) seed starts the draw with one call and walks
/// away; the oracle (mock VRF, 3 confirmations, timeout 400) delivers at the last block that still leaves
/// a full window, or one block later.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review12FullDrawWindow*' -vv`): 2
/// PASS segments appealed (bond 84 TRUST, 14 seats, drawBlocks 20), one call draws segment 0's 7 seats;
/// delivery at readable - 21 (obtainableAt + 20 == readable): Expired, the appellant loses 84 TRUST (42 to
/// the 7 seats, 42 to the pot); delivery at readable - 20: Cancelled, it loses 42 (R per drawn seat), 42
/// refunded. The appeal settlement ends both with the balance it had before the appeal.
/// Mutations tried (each reverted): `<=` -> `<` in `_sync`'s `full` fails `test_FullWindowLeftShortIsAbandoned`
/// (Cancelled, 42 TRUST); `full` forced true (c0fad00 undone) fails `test_OneBlockShortWindowLeftShortIsUnfillable`
/// (Expired, 84); `full` forced false fails the first; deleting `pot += py.refund` in AppealSettlement's
/// abandoned branch leaves 42 TRUST stuck in the settlement and fails the first test's conservation check;
/// reading `full` from the started draw (`rd.drawDeadline < readable`, "the deadline was not clipped") fails
/// `test_LateSelfStartInAFullWindowIsStillAbandoned` (and the first); `late = obtainableAt > readable + 1`
/// in the Created branch fails `test_UndrawnLateValueIsRefundedWhole`.
/// Also measured: an appellant that waits for the last readable block (130 blocks after obtainableAt) and
/// draws one call there has its deadline clipped to `readable` and still loses 84 TRUST (Expired); a round
/// nobody draws costs 84 (value in time, Expired) or 0 (value delivered in `readable`, Cancelled); in every
/// ending the settlement's balance returns to its pre-appeal 0.
contract Review12FullDrawWindowBoundary is VrfNoCanaryAppealsFixture {
    uint256 internal sid;
    uint256 internal round;
    uint256 internal bond;
    uint256 internal before;
    uint256 internal escrowBefore;

    function setUp() public {
        _setUpVrf();
        sid = _finalizedOnVrf(2);
        before = token.balanceOf(appellant);
        escrowBefore = token.balanceOf(address(escrow));
        round = _appeal(sid, _segs(0, 1));
        bond = before - token.balanceOf(appellant);
    }

    /// @dev The oracle delivers so that the value is obtainable `slack` blocks before the full-window
    /// limit (negative: after it); one call draws segment 0 and the round lapses. Returns the appellant's
    /// cost and the round's status.
    function _walkAway(int256 slack) internal returns (uint256 cost, IAuditSessions.Status st) {
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        uint256 readable = _sortition().snapshotReadableUntil(rd.epoch);
        uint256 drawBlocks = sessions.paramsAt(sessions.sessionOf(sid).paramsVersion).drawBlocks;
        // obtainableAt = delivery + 1; full iff obtainableAt + drawBlocks <= readable
        uint256 delivery = uint256(int256(readable - drawBlocks - 1) - slack);
        assertTrue(delivery > block.number + 3, "setup: delivery after the confirmations");
        vm.roll(delivery);
        assertTrue(_deliver(rd.drawRequest, 7), "delivered");
        vm.roll(delivery + 1);
        appeals.drawPanel(sid, round, 1);
        rd = appeals.roundOf(sid, round);
        emit log_named_uint("obtainableAt + drawBlocks", vrf.obtainableAt(rd.drawRequest) + drawBlocks);
        emit log_named_uint("snapshotReadableUntil", readable);
        emit log_named_uint("seats drawn before walking away (of 14)", rd.drawnSeats);
        assertEq(rd.drawnSeats, 7, "setup: one segment drawn");
        vm.roll(uint256(rd.drawDeadline) + 1);
        appeals.advance(sid);
        st = appeals.roundOf(sid, round).status;
        _closeAndSettleOnVrf(sid);
        cost = before - token.balanceOf(appellant);
        emit log_named_decimal_uint("bond (TRUST)", bond, 18);
        emit log_named_uint("round status (7 Cancelled, 8 Expired)", uint256(st));
        emit log_named_decimal_uint("appellant's cost (TRUST)", cost, 18);
        assertEq(token.balanceOf(address(escrow)), escrowBefore, "nothing stuck in the appeal settlement");
    }

    function test_FullWindowLeftShortIsAbandoned() public {
        (uint256 cost, IAuditSessions.Status st) = _walkAway(0);
        assertTrue(st == IAuditSessions.Status.Expired, "a full window left short is ABANDONED");
        assertEq(cost, bond, "the whole bond is forfeited");
        assertEq(_outcomeOf(sid, 0), 1, "the contested PASS stands");
    }

    function test_OneBlockShortWindowLeftShortIsUnfillable() public {
        (uint256 cost, IAuditSessions.Status st) = _walkAway(-1);
        assertTrue(st == IAuditSessions.Status.Cancelled, "a window one block short is UNFILLABLE");
        assertEq(cost, 7 * R, "R per drawn seat, the rest refunded");
        assertEq(_outcomeOf(sid, 0), 1, "the contested PASS stands");
    }

    /// @dev Settle and return the appellant's cost; the appeal settlement must end as it began.
    function _settleCost(IAuditSessions.Status want) internal returns (uint256 cost) {
        appeals.advance(sid);
        IAuditSessions.Status st = appeals.roundOf(sid, round).status;
        _closeAndSettleOnVrf(sid);
        cost = before - token.balanceOf(appellant);
        emit log_named_uint("round status (7 Cancelled, 8 Expired)", uint256(st));
        emit log_named_decimal_uint("appellant's cost (TRUST)", cost, 18);
        assertTrue(st == want, "status");
        assertEq(token.balanceOf(address(escrow)), escrowBefore, "nothing stuck in the appeal settlement");
    }

    /// @dev The appellant waits for the snapshot's last readable block, then starts the draw with one
    /// call: the deadline is clipped to that block, but the value left a full window, so it is abandoned.
    /// Fails if `full` were read from the started draw (e.g. `rd.drawDeadline == start + drawBlocks`).
    function test_LateSelfStartInAFullWindowIsStillAbandoned() public {
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        uint256 readable = _sortition().snapshotReadableUntil(rd.epoch);
        vm.roll(block.number + 4);
        assertTrue(_deliver(rd.drawRequest, 7), "delivered");
        vm.roll(readable);
        appeals.drawPanel(sid, round, 1);
        rd = appeals.roundOf(sid, round);
        emit log_named_uint(
            "blocks from obtainableAt to readable", readable - vrf.obtainableAt(rd.drawRequest)
        );
        emit log_named_uint("draw deadline - readable (clipped: 0)", rd.drawDeadline - readable);
        vm.roll(readable + 1);
        uint256 cost = _settleCost(IAuditSessions.Status.Expired);
        assertEq(cost, bond, "a late start buys nothing");
    }

    /// @dev Created branch, value in time, nobody draws: Expired, the whole bond to the pot (0 seats).
    function test_UndrawnInTimeForfeitsTheWholeBond() public {
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        uint256 readable = _sortition().snapshotReadableUntil(rd.epoch);
        vm.roll(block.number + 4);
        assertTrue(_deliver(rd.drawRequest, 7), "delivered");
        vm.roll(readable + 1);
        assertEq(_settleCost(IAuditSessions.Status.Expired), bond, "forfeited");
    }

    /// @dev Created branch, value delivered in the last readable block (obtainable only after it): Cancelled,
    /// the whole bond back (0 seats). Fails if `late` compared with `<` or read the delivery block.
    function test_UndrawnLateValueIsRefundedWhole() public {
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        uint256 readable = _sortition().snapshotReadableUntil(rd.epoch);
        vm.roll(readable);
        assertTrue(_deliver(rd.drawRequest, 7), "delivered");
        vm.roll(readable + 1);
        assertEq(_settleCost(IAuditSessions.Status.Cancelled), 0, "refunded whole");
    }
}
