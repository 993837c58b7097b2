// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {StakingLedger} from "../../src/StakingLedger.sol";

interface VmSkipReview27Lowered {
    function skip(bool) external;
}

/// @title Review27LoweredMinimumFreezesAppeals (outside review 27 of 043042c: the admission recheck, OPEN)
/// @notice Property: an appeal whose round can fill (every counted member backs every lock the session can
/// ask of it) is admitted; only a round the premise cannot back is refused.
/// Attack (owner acting honestly): `_checkStakeBacksLocks` compares Staking's CURRENT minimum with the
/// session's requirement, not the members' stake. Lowering a tier's minimum (e.g. to onboard auditors later)
/// refuses every appeal of every open session whose requirement exceeds the new minimum at once - even when
/// no account below the old minimum exists, so every draw would fill. The contested outcomes (a wrong PASS
/// included) then stand unappealed: the appeal right of all those sessions is gone until the owner raises
/// the minimum back, and their windows may close meanwhile.
/// World: minStake 72 TRUST (8 TRUST x 9 tier-1 segments); 5 auditors of 72 TRUST sit round 0, 40 more of
/// 72 TRUST join; the owner lowers every minimum to 10 TRUST; nobody joins at 10.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review27*' -vv`): quote and appeal of
/// the 9 segments revert MinStakeBelowSessionLocks(1, 10 TRUST, 72 TRUST) although all 45 members hold
/// 72 TRUST; control (minimum kept): admitted and drawn 63 of 63 (Review26MinStakeLoweredAfterOpening's
/// control). Without the `_KNOWN` skip the test fails at the quote's revert.
/// Severity: LOW-MEDIUM (needs an owner change; it suspends, not steals: the appellant pays nothing, but a
/// wrong PASS can outlive its window). Trade-off of the review-26 fix (refuse rather than admit a round that
/// may end UNFILLABLE with nobody refusing).
/// Fix options: (a) snapshot each tier's minimum at the opening (per session or per params version) and have
/// the draw treat accounts below the SESSION's minimum as not members (excluded, out of `eligible` and of
/// the refusal weight), recheck then unnecessary; (b) let `Staking.setParams` lower a minimum only with a
/// delay beyond every open session's last window; (c) document that lowering a minimum suspends appeals.
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review27LoweredMinimum*' -vv`.
contract Review27LoweredMinimumFreezesAppeals is NoCanaryAppealsFixture {
    function _stakingParams() internal pure override returns (StakingLedger.StakingParams memory p) {
        p = super._stakingParams();
        p.minStake = [uint96(72e18), uint96(72e18), uint96(72e18)];
    }

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    function _segsN(uint256 n) internal pure returns (uint256[] memory s) {
        s = new uint256[](n);
        for (uint256 i = 0; i < n; ++i) {
            s[i] = i;
        }
    }

    function _setUp(bool lower) internal returns (uint256 sid) {
        _deployAppeals();
        _addAuditors(1, 5, 72e18);
        _nextEpoch();
        sid = _passedSession(9, FEE);
        _addAuditors(1, 40, 72e18);
        if (lower) {
            StakingLedger.StakingParams memory p = _stakingParams();
            p.minStake = [uint96(10e18), uint96(10e18), uint96(10e18)];
            vm.prank(owner);
            staking.setParams(p);
        }
        _nextEpoch();
    }

    /// @dev The property: nobody below the old minimum, so the round should be admitted.
    function test_LoweredMinimumStillAdmits_KNOWN() public {
        VmSkipReview27Lowered(address(vm)).skip(true);
        uint256 sid = _setUp(true);
        IAppealModule.Quote memory q = appeals.quote(sid, _segsN(9));
        assertEq(q.totalSeats, 63, "admitted");
    }

    /// @dev The measured break (passes while open): refused with every member at 72 TRUST.
    function test_LoweredMinimumRefusesMeasured() public {
        uint256 sid = _setUp(true);
        bytes memory refusal =
            abi.encodeWithSelector(IAppealModule.MinStakeBelowSessionLocks.selector, 1, 10e18, 72e18);
        vm.expectRevert(refusal);
        appeals.quote(sid, _segsN(9));
        vm.expectRevert(refusal);
        vm.prank(appellant);
        appeals.appeal(sid, _segsN(9), type(uint256).max);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            assertGe(staking.poolOf(auditorAddrs[i]).backing, 72e18, "every member at the old minimum");
        }
    }

    /// @dev Control: the minimum kept, the same world: admitted.
    function test_ControlMinimumKept() public {
        uint256 sid = _setUp(false);
        IAppealModule.Quote memory q = appeals.quote(sid, _segsN(9));
        assertEq(q.totalSeats, 63, "admitted");
    }
}
