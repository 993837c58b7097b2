// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "../utils/StakingFixture.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";

/// @title Review6ParkedSharesBearTheirSlash (outside review 6 of main c7e9e27, StakingHolds; attack fails)
/// @notice Property (issue 12, 3b, with the 5.1 holds): shares parked by a withdrawal request bear the slash
/// of every session whose lock counted them, however the leaver orders its moves. The attacker is the
/// auditor A itself (it knows it will be slashed): it parks its whole self-stake, its pool is drawn during
/// the hold (the lock counts the parked value), and after the hold it queues its batch at once (`drain`)
/// and claims as soon as it can, before or after the result. The batch joins the FLOW behind the SESSION
/// entry it backed, so the slash lands pro rata on A's parked shares and D's shares alike.
/// @dev A and D have 1,000 TRUST each in a tier-1 pool that stands in the snapshots. Measured
/// (`scripts/forge test --match-path 'contracts/test/attacks/Review6ParkedSharesBear*' -vv`): a 1,000 TRUST
/// slash of the session locked during the hold leaves A 500 and D 500, whether A drains before the result
/// or not; A's claim is pending until the result is in.
contract Review6ParkedSharesBearTheirSlash is StakingFixture {
    uint256 internal constant SLASH = 1000e18;
    address internal a;
    address internal d = address(0xD0D0);
    uint256 internal withdrawalId;
    uint256 internal entry;

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
        _nextEpoch();
        uint256 shares = staking.sharesOf(a, a);
        vm.prank(a);
        withdrawalId = staking.requestWithdrawal(a, shares); // parked
        _nextEpoch(); // c + 1: still held; a session drawn now counts the parked value
        vm.prank(address(drawModule));
        bool ok;
        (ok,, entry) = staking.lockSeat(a, 1, 0x5EED, 1500e18, 0);
        assertTrue(ok, "the lock counted the parked shares");
        _nextEpoch();
        _nextEpoch(); // c + 3: hold over
    }

    function _slash() internal {
        IStaking.SessionResult[] memory r = new IStaking.SessionResult[](1);
        r[0] = IStaking.SessionResult({
            auditor: a, entry: uint32(entry), reward: 0, slash: uint96(SLASH), repMul: 1e18, repAdd: 0
        });
        vm.prank(address(settlement));
        staking.resolve(0x5EED, r);
        staking.drain(a, 256);
    }

    function _claimA() internal returns (uint256 got) {
        vm.warp(block.timestamp + 1 days + 1);
        uint256 before = token.balanceOf(a);
        vm.prank(a);
        staking.claimWithdrawal(withdrawalId);
        got = token.balanceOf(a) - before;
    }

    function _near(uint256 x, uint256 y, string memory message) internal pure {
        assertTrue(x > y ? x - y <= 1e6 : y - x <= 1e6, message);
    }

    /// @notice The leaver queues its batch right after the hold, then tries to claim before the result.
    function test_DrainAfterHoldStillBearsTheSlash() public {
        staking.drain(a, 256);
        vm.warp(block.timestamp + 2 days);
        vm.prank(a);
        vm.expectRevert();
        staking.claimWithdrawal(withdrawalId); // its FLOW waits behind the session it backed
        _slash();
        _near(_claimA(), STAKE - SLASH / 2, "A bears half the slash");
        _near(staking.previewRedeem(a, staking.sharesOf(a, d)), STAKE - SLASH / 2, "D bears the other half");
    }

    /// @notice Nobody touches the pool until the result: the same split.
    function test_UntouchedBatchBearsTheSlash() public {
        _slash();
        _near(_claimA(), STAKE - SLASH / 2, "A bears half the slash");
        _near(staking.previewRedeem(a, staking.sharesOf(a, d)), STAKE - SLASH / 2, "D bears the other half");
    }
}
