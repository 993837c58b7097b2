// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "../utils/StakingFixture.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";

/// @title Review6HeldLocksRefuseNoLaterSnapshot (outside review 6 of main c7e9e27, StakingHolds)
/// @notice Property (5.1, "a withdrawal request no longer refuses"): a withdrawal request made in epoch c
/// makes no lock refuse in a draw of snapshot c + 1 or c + 2 that the pool's remaining stake can back.
/// During the hold, `_lockBasis` counts the parked shares, so locks may reach backing + parked value. When
/// the hold ends the basis drops to the backing alone while `pool.locked` still holds every lock taken on
/// the parked value, and `seatQuote`/`_lock` refuse once `locked > basis` (Staking.sol:409, 434): the pool
/// is ineligible in every draw of snapshots c + 1 and c + 2, which counted its remaining stake as weight.
/// The parked shares stay in the pool until their FLOW applies, behind the sessions they backed, so those
/// sessions' slashes fall pro rata on them: the remaining shares risk only backing * locked / (backing +
/// parked), and a lock of the rest is safe (the code counts the whole `locked` against the backing).
/// @dev Auditor A (1,000 TRUST self-stake) and delegator D (1,000 TRUST) in one tier-1 pool standing in the
/// snapshots. Epoch c: A asks to withdraw its 1,000 (parked); sessions drawn from snapshot c lock 1,500 TRUST
/// (basis 2,000: allowed). Epoch c + 3: snapshot c + 1 (readable until the end of c + 3) counts D's 1,000
/// as A's weight; a session opened in c + 1 samples A. Measured (`scripts/forge test --match-path
/// 'contracts/test/attacks/Review6HeldLocks*' -vv`, skip removed): `seatQuote(A)` is not eligible (locked
/// 1,500 > basis 1,000), so the draw records a lock refusal (DrawRefused in a thin tier: the honest
/// provider's fee is forfeited, as in Review3OutsiderRefusalCannotForfeitHonestFee). With pro-rata risk the
/// pool could back 1,000 - 1,500 * 1,000 / 2,000 = 250 TRUST (31 seats of 8). Control
/// (`test_WithoutTheWithdrawalTheSameLocksLeaveRoom`): the same locks without A's request leave 500 free.
/// Holds now (branch holds2, `StakingHolds._lockLimit`): while an expired batch (value x) is still in the
/// pool, parked or in a pending FLOW (`_held`), the pool may lock up to basis + ahead * x / (basis + x),
/// ahead = the locks in entries ahead of the batch (all while parked; `locked - _held.newLocked` once
/// queued). With no later lock: eligible iff locked <= backing + x, free = backing - locked * backing /
/// (backing + x). Measured after the fix (same command): eligible, free 250 TRUST (on main: not eligible,
/// free 0). Not over-locking and the leaver bearing its part: docs/protocol-v2.md 5.1, StakingHoldsFuzz.
contract Review6HeldLocksRefuseNoLaterSnapshot is StakingFixture {
    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    uint256 internal constant HELD_LOCKS = 1500e18;
    address internal a;
    address internal d = address(0xD0D0);

    function setUp() public {
        _deploy();
        _addAuditors(1, 1, STAKE);
        a = auditorAddrs[0];
        token.transfer(d, STAKE);
        vm.startPrank(d);
        token.approve(address(staking), type(uint256).max);
        staking.stake(a, STAKE);
        vm.stopPrank();
        _nextEpoch();
        _nextEpoch(); // epoch c: the pool stands in the readable snapshots
    }

    /// @dev Sessions drawn from snapshot c lock `HELD_LOCKS` of A's pool (one entry per 500 TRUST).
    function _lockHeld() internal {
        for (uint256 i = 0; i < 3; ++i) {
            vm.prank(address(drawModule));
            (bool ok,,) = staking.lockSeat(a, 1, 0xE000 + i, HELD_LOCKS / 3, 0);
            assertTrue(ok, "a lock within the basis");
        }
    }

    /// @notice Control: without A's request, the same locks leave 500 TRUST free in epoch c + 3.
    function test_WithoutTheWithdrawalTheSameLocksLeaveRoom() public {
        _lockHeld();
        _nextEpoch();
        _nextEpoch();
        _nextEpoch();
        IStaking.SeatQuote memory q = staking.seatQuote(a);
        assertTrue(q.eligible, "eligible");
        assertEq(q.free, 2 * STAKE - HELD_LOCKS, "500 free");
    }

    /// @notice The attack: A's request in c makes the pool refuse every lock in the draws of c + 1, c + 2.
    function test_HeldLocksRefuseNoLaterSnapshot() public {
        uint256 shares = staking.sharesOf(a, a);
        vm.prank(a);
        staking.requestWithdrawal(a, shares);
        _lockHeld();
        _nextEpoch(); // c + 1: its snapshot counts D's 1,000
        uint256 c1 = _sortition().currentEpoch();
        assertTrue(_sortition().leafWeightAt(1, c1, 0) != 0, "snapshot c + 1 counts the remaining stake");
        _nextEpoch();
        _nextEpoch(); // c + 3: snapshot c + 1 is still readable, A's batch's hold is over
        IStaking.SeatQuote memory q = staking.seatQuote(a);
        emit log_named_decimal_uint("locked", staking.poolOf(a).locked, 18);
        emit log_named_decimal_uint("backing", staking.poolOf(a).backing, 18);
        emit log_named_uint("eligible (1 yes)", q.eligible ? 1 : 0);
        assertTrue(q.eligible, "stake in a readable snapshot, never requested, can back a lock");
        assertGe(q.free, 250e18 - 1e6, "its pro-rata free part");
    }
}
