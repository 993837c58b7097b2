// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "../utils/StakingFixture.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";
import {StakingLedger} from "../../src/StakingLedger.sol";

/// @title Review6ParkedSharesEarnOnlyWhatTheyBacked (outside review 6 of main c7e9e27, StakingHolds)
/// @notice Property (issue 12, 3a, with the 5.1 holds): a session's reward falls only on the shares that
/// backed the auditor when it was drawn. Shares parked by a withdrawal request back locks until the end of
/// their own hold (`_lockBasis`), and from then on back nothing. But a batch whose hold is over stays in
/// the pool's `totalShares` until the next `_unpark` (a stake, request, result, `drain`, `poke` or
/// registration change of that pool), and `lockSeat`/`lockSeats` (`Staking._lock`) never call `_unpark`:
/// a SESSION entry pushed between the end of the hold and the next touch lies BEFORE the FLOW the batch
/// later joins, so the batch is paid (and slashed) for a session its stake never backed.
/// @dev Auditor A (self-stake 1,000 TRUST) and delegator D (1,000 TRUST) share a tier-1 pool that stands
/// in the snapshots. In epoch c, A asks to withdraw all its shares (parked, hold until the end of c + 2).
/// In epoch c + 3 nobody has touched the pool; the draw module locks one seat (8 TRUST): the quote counts
/// D's 1,000 only (the batch's hold is over). The session's net reward, 60 TRUST, then arrives;
/// `_resolveOne` applies it to the pool and only then `_unpark`s A's batch, which is redeemed at the new
/// price. Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review6Parked*' -vv`, skip
/// removed): A claims 1,030 TRUST (30 of the 60 TRUST reward), D's position is worth 1,030 TRUST; fair is
/// A 1,000 and D 1,060. The leaver takes its share of every reward drawn between its hold's end and the
/// next touch; a busy auditor that leaves (or a large delegator) takes that share of all the sessions it is
/// drawn into in that window, which the staying delegators' stake alone backed. The control
/// (`test_TouchBeforeTheLockPaysTheBackersOnly`) shows a `drain` before the lock gives D all 60.
/// Holds now (branch holds2): `Staking._lock` queues every batch past its hold before `_openEntry` pushes
/// the SESSION entry (`_unparkAt`, only when `info.holdEpoch != 0`: pools that never held pay one warm
/// read), so the batch's FLOW lies ahead of the session. Measured after the fix (same command): A claims
/// 1,000 TRUST, D's position is worth 1,060 TRUST (on main: 1,030 and 1,030). `_unpark`'s code now runs by
/// DELEGATECALL in `StakingHoldsOps` (EIP-170 room).
contract Review6ParkedSharesEarnOnlyWhatTheyBacked is StakingFixture {
    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    uint256 internal constant NET_REWARD = 60e18;
    uint256 internal constant SEAT_LOCK = 8e18;
    address internal a;
    address internal d = address(0xD0D0);
    uint256 internal withdrawalId;

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
        _nextEpoch(); // the pool stands in the readable snapshots
        token.transfer(address(settlement), NET_REWARD);
        vm.prank(address(settlement));
        token.approve(address(staking), type(uint256).max);
        // Epoch c: A asks to withdraw its whole self-stake; it is parked until the end of c + 2.
        uint256 shares = staking.sharesOf(a, a);
        vm.prank(a);
        withdrawalId = staking.requestWithdrawal(a, shares);
        (StakingLedger.Withdrawal memory rec,,) = staking.withdrawalOf(withdrawalId);
        assertTrue(rec.parkEpoch != 0, "setup: parked");
        _nextEpoch();
        _nextEpoch();
        _nextEpoch(); // epoch c + 3: the batch's hold is over
        assertEq(staking.seatQuote(a).free, STAKE, "setup: only D's stake backs a lock now");
    }

    /// @dev The draw module seats A once (8 TRUST locked) and the session's result pays `NET_REWARD`.
    function _seatAndReward() internal {
        vm.prank(address(drawModule));
        (bool ok,, uint256 entry) = staking.lockSeat(a, 1, 0xC0FFEE, SEAT_LOCK, 0);
        assertTrue(ok, "seat locked on D's stake");
        IStaking.SessionResult[] memory r = new IStaking.SessionResult[](1);
        r[0] = IStaking.SessionResult({
            auditor: a, entry: uint32(entry), reward: uint96(NET_REWARD), slash: 0, repMul: 1e18, repAdd: 0
        });
        vm.prank(address(settlement));
        staking.resolve(0xC0FFEE, r);
        staking.drain(a, 256);
    }

    /// @dev What A's withdrawal pays and what D's position is worth after the session.
    function _outcome() internal returns (uint256 aGot, uint256 dValue) {
        vm.warp(block.timestamp + 1 days + 1);
        uint256 before = token.balanceOf(a);
        vm.prank(a);
        staking.claimWithdrawal(withdrawalId);
        aGot = token.balanceOf(a) - before;
        dValue = staking.previewRedeem(a, staking.sharesOf(a, d));
    }

    /// @notice Control: anyone's `drain` between the hold's end and the lock queues A's batch first; the
    /// reward then goes to D, whose stake alone backed the seat.
    function test_TouchBeforeTheLockPaysTheBackersOnly() public {
        staking.drain(a, 256);
        _seatAndReward();
        (uint256 aGot, uint256 dValue) = _outcome();
        _near(aGot, STAKE, "A gets its stake back");
        _near(dValue, STAKE + NET_REWARD, "D gets the whole reward");
    }

    /// @notice The attack: nobody touches the pool before the lock; A's expired batch takes half the reward.
    function test_ExpiredBatchTakesNoRewardItDidNotBack() public {
        _seatAndReward();
        (uint256 aGot, uint256 dValue) = _outcome();
        emit log_named_decimal_uint("A (left, backed nothing) received", aGot, 18);
        emit log_named_decimal_uint("D (backed the seat) holds", dValue, 18);
        _near(aGot, STAKE, "the leaver earns nothing of a session it did not back");
        _near(dValue, STAKE + NET_REWARD, "the backer earns the whole reward");
    }

    function _near(uint256 x, uint256 y, string memory message) internal pure {
        assertTrue(x > y ? x - y <= 1e6 : y - x <= 1e6, message);
    }
}
