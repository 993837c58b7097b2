// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "./utils/StakingFixture.sol";
import {IStaking} from "../src/interfaces/IStaking.sol";

/// @title StakingHoldsFuzz (docs/protocol-v2.md 5.1, outside review 6)
/// @notice Over arbitrary stakes, lock sizes, rewards, slashes and timing:
/// - a batch whose hold is over is paid and slashed for no session drawn after its hold (it joins the
///   FLOW before the lock pushes the SESSION entry), whether or not anyone touched the pool first;
/// - after a hold, the pool's quote is its pro-rata free stake: backing - locked * backing / (backing +
///   batch value); a lock of all of it is accepted, one wei more is refused, and slashing every lock in
///   full then takes exactly the locked stake (no over-lock), of which the leaver bears only its pro-rata
///   part of the sessions it backed.
contract StakingHoldsFuzz is StakingFixture {
    address internal a;
    address internal d = address(0xD0D0);

    function _setUpPool(uint256 aStake, uint256 dStake) internal {
        _deploy();
        _addAuditors(1, 1, aStake);
        a = auditorAddrs[0];
        token.transfer(d, dStake);
        vm.startPrank(d);
        token.approve(address(staking), type(uint256).max);
        staking.stake(a, dStake);
        vm.stopPrank();
        _nextEpoch();
        _nextEpoch();
    }

    function _result(uint256 key, uint256 entry, uint256 reward, uint256 slash) internal {
        IStaking.SessionResult[] memory r = new IStaking.SessionResult[](1);
        r[0] = IStaking.SessionResult({
            auditor: a,
            entry: uint32(entry),
            reward: uint96(reward),
            slash: uint96(slash),
            repMul: 1e18,
            repAdd: 0
        });
        vm.prank(address(settlement));
        staking.resolve(key, r);
    }

    function _claimAll(uint256 id) internal returns (uint256 got) {
        staking.drain(a, 256);
        vm.warp(block.timestamp + 1 days + 1);
        uint256 before = token.balanceOf(a);
        vm.prank(a);
        staking.claimWithdrawal(id);
        got = token.balanceOf(a) - before;
    }

    function _near(uint256 x, uint256 y, uint256 tol, string memory message) internal pure {
        assertTrue(x > y ? x - y <= tol : y - x <= tol, message);
    }

    uint256 internal aValue;
    uint256 internal reward;

    /// @notice A batch past its hold earns and loses nothing of a session drawn after its hold.
    function testFuzz_ExpiredBatchBearsNoLaterSession(
        uint256 aStake,
        uint256 dStake,
        uint256 lockSeed,
        uint256 rewardSeed,
        uint256 slashSeed,
        uint256 late,
        bool touchFirst
    ) public {
        dS = bound(dStake, 100e18, 1e24);
        reward = bound(rewardSeed, 0, 1e22);
        _setUpPool(bound(aStake, 100e18, 1e24), dS);
        uint256 shares = staking.sharesOf(a, a);
        aValue = staking.previewRedeem(a, shares);
        vm.prank(a);
        wid = staking.requestWithdrawal(a, shares);
        late = bound(late, 3, 6);
        for (uint256 i = 0; i < late; ++i) {
            _nextEpoch();
        }
        if (touchFirst) staking.drain(a, 256);
        assertEq(staking.seatQuote(a).free, dS, "only the remaining stake backs a lock after the hold");
        held = bound(lockSeed, 0, dS);
        _lockAndResult(bound(slashSeed, 0, held));
    }

    function _lockAndResult(uint256 slash) internal {
        vm.prank(address(drawModule));
        (bool ok,, uint256 entry) = staking.lockSeat(a, 1, 0xF00D, held, 0);
        assertTrue(ok, "lock on the remaining stake");
        token.transfer(address(settlement), reward);
        vm.prank(address(settlement));
        token.approve(address(staking), reward);
        _result(0xF00D, entry, reward, slash);
        uint256 got = _claimAll(wid);
        _near(got, aValue, 1e6, "the leaver's claim is its value at the hold's end");
        _near(staking.previewRedeem(a, staking.sharesOf(a, d)), dS + reward - slash, 1e6, "D bears it all");
    }

    uint256 internal aS;
    uint256 internal dS;
    uint256 internal held;
    uint256 internal freeLeft;
    uint256 internal e1;
    uint256 internal e2;
    uint256 internal wid;

    /// @notice Held locks leave the remaining stake its pro-rata part; locking it all never over-locks.
    function testFuzz_HeldLocksLeaveTheProRataPart(
        uint256 aStake,
        uint256 dStake,
        uint256 heldSeed,
        uint256 late,
        bool touchFirst
    ) public {
        aS = bound(aStake, 100e18, 1e24);
        dS = bound(dStake, 100e18, 1e24);
        _setUpPool(aS, dS);
        uint256 shares = staking.sharesOf(a, a);
        vm.prank(a);
        wid = staking.requestWithdrawal(a, shares);
        held = bound(heldSeed, 0, aS + dS);
        vm.prank(address(drawModule));
        bool ok;
        (ok,, e1) = staking.lockSeat(a, 1, 0xE001, held, 0);
        assertTrue(ok, "the held stake backs locks during the hold");
        late = bound(late, 3, 5);
        for (uint256 i = 0; i < late; ++i) {
            _nextEpoch();
        }
        if (touchFirst) staking.drain(a, 256);
        _lockTheProRataPart();
        _slashEverythingAndCheck();
    }

    function _lockTheProRataPart() internal {
        IStaking.SeatQuote memory q = staking.seatQuote(a);
        assertTrue(q.eligible, "the remaining stake is never refused");
        _near(
            q.free, dS - held * dS / (aS + dS), 1e6, "free = backing - locked * backing / (backing + batch)"
        );
        vm.prank(address(drawModule));
        (bool over,,) = staking.lockSeat(a, 1, 0xE002, q.free + 1, 0);
        assertTrue(!over, "one wei above the pro-rata part is refused");
        vm.prank(address(drawModule));
        bool all;
        (all,, e2) = staking.lockSeat(a, 1, 0xE002, q.free, 0);
        assertTrue(all, "the whole pro-rata part locks");
        assertEq(staking.seatQuote(a).free, 0, "nothing left");
        freeLeft = q.free;
    }

    /// @dev Every lock slashed in full: the pool pays exactly what it locked (nothing was over-locked).
    function _slashEverythingAndCheck() internal {
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        _result(0xE001, e1, 0, held);
        _result(0xE002, e2, 0, freeLeft);
        uint256 got = _claimAll(wid);
        uint256 paid = token.balanceOf(address(treasury)) - treasuryBefore;
        uint256 dLeft = staking.previewRedeem(a, staking.sharesOf(a, d));
        assertGe(paid + 2e6, held + freeLeft, "every lock's slash is taken in full");
        uint256 fair = aS - held * aS / (aS + dS);
        // A slash leaving a share worth < 1e-9 resets the pool (StakingLedger): the batch is void then.
        if (staking.poolOf(a).generation == 0) {
            _near(got, fair, 1e6, "the leaver bears its part of what it backed");
        } else {
            assertLe(got, fair + 1e6, "a reset pays the leaver no more");
        }
        assertLe(paid + got + dLeft, aS + dS + 1e6, "nothing created");
        assertGe(paid + got + dLeft + 2e6, aS + dS, "nothing lost");
    }
}
