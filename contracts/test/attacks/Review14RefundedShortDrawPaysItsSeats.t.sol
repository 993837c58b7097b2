// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfAppealsAttackFixture} from "./VrfAttackFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";

/// @title Review14RefundedShortDrawPaysItsSeats (outside review 14 of 89d0887, conservation)
/// @notice Property: 89d0887 makes a new combination possible, a round-0 session ended RandomnessFailed
/// (refunded) with drawn seats (before, RandomnessFailed only ended a draw never started). Its pool is still
/// paid out exactly: R per drawn seat stays in the core and reaches the drawn auditors when they are settled
/// (their seats unlocked), the rest is refunded to the provider, nothing goes to the treasury, and the core
/// keeps nothing of the session afterwards.
/// Attack: a late oracle (delivery two blocks before the snapshot lapses); a griefer draws one segment
/// (3 seats) and stops; the session lapses; every drawn auditor is settled.
/// Measured (fixture: 4 tier-1 segments, 12 seats, fee 1000 TRUST, pool 800, R 6): RandomnessFailed, 3 seats
/// drawn, 782 TRUST refunded, 18 TRUST (3 x R) reserved and paid to the staking contract for the 3 drawn
/// auditors by their settlement, 0 to the treasury from the pool, core balance back to its level before the
/// opening. Python side: `termination_payout(800e18, 6e18, 3, RANDOMNESS_FAILED)` = reserved 18, refunded
/// 782, forfeited 0 (general in drawn_seats; checked by reading, not run here).
/// Mutation: `_terminate` reserving nothing for a refund (`reserved = refund ? 0 : R * drawnSeats`) fails this
/// test (the refund is 800 and the settlement pays nothing / reverts).
/// Command: scripts/forge test --match-path 'contracts/test/attacks/Review14RefundedShortDraw*' -vv
contract Review14RefundedShortDrawPaysItsSeats is VrfAppealsAttackFixture {
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.canaryRateBps = 0;
    }

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
        _useVrf();
    }

    function test_RandomnessFailedWithDrawnSeatsPaysEachSeat() public {
        uint256 coreBefore = token.balanceOf(address(sessions));
        uint256 sid = _open(_uniform(4, 1), FEE);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        uint256 readable = _sortition().snapshotReadableUntil(s.epoch);
        vm.roll(readable - 2);
        assertTrue(_deliver(s.drawRequest, 0xBAD5EED), "a late delivery");
        vm.roll(readable - 1);
        vm.prank(address(0xBAD));
        uint256 drawn = sessions.draw(sid, 1);
        assertEq(drawn, 3, "one segment drawn");
        vm.roll(readable + 1);
        uint256 providerBefore = token.balanceOf(provider);
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        uint256 stakingBefore = token.balanceOf(address(stakingContract));
        sessions.advance(sid);
        s = sessions.sessionOf(sid);
        assertTrue(s.termination == IAuditSessions.Termination.RandomnessFailed, "short window: refund");
        uint256 pool = FEE * 8000 / 10_000;
        uint256 reserved = drawn * R;
        assertEq(token.balanceOf(provider) - providerBefore, pool - reserved, "refund: pool less R per seat");
        assertEq(s.pool, reserved, "R per drawn seat kept");
        address[] memory list = _roundAuditors(sid, 0);
        assertGe(list.length, 1, "drawn auditors");
        settlement.settleBatch(sid, 0, list);
        uint256 paid = token.balanceOf(address(stakingContract)) - stakingBefore;
        emit log_named_decimal_uint("refunded (TRUST)", token.balanceOf(provider) - providerBefore, 18);
        emit log_named_decimal_uint("paid to the drawn auditors' stakes (TRUST)", paid, 18);
        assertEq(paid, reserved, "the drawn auditors get R per seat");
        assertEq(token.balanceOf(address(treasury)), treasuryBefore, "nothing of the pool to the treasury");
        assertEq(token.balanceOf(address(sessions)), coreBefore, "the core keeps nothing of the session");
        assertEq(sessions.sessionOf(sid).pool, 0, "pool empty");
    }
}
