// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {SessionsFixture} from "./SessionsFixture.sol";
import {Staking} from "../../src/Staking.sol";
import {StakingLedger} from "../../src/StakingLedger.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";

/// @notice The session modules against the real Staking (share pools, per-auditor ledger, snapshot trees).
abstract contract StakingFixture is SessionsFixture {
    Staking internal staking;

    function _stakingParams() internal pure virtual returns (StakingLedger.StakingParams memory p) {
        p.minStake = [uint96(100e18), uint96(100e18), uint96(100e18)];
        p.cooldown = 1 days;
        p.commissionDelay = 1 days;
        p.initialReputation = 0.5e18;
        p.reputationFloor = 0.5e18;
        p.maxCommissionBps = 2000;
    }

    function _deployStaking() internal override returns (IStaking) {
        staking = new Staking(token, owner, address(treasury), EPOCH_BLOCKS, _stakingParams());
        return IStaking(address(staking));
    }

    function _wireStaking() internal override {
        vm.prank(owner);
        staking.wire(address(registry), address(drawModule), address(settlement));
    }

    function _stake(address auditor, uint256 amount) internal override {
        staking.stake(auditor, amount);
    }

    function _locked(address auditor) internal view override returns (uint256) {
        return staking.poolOf(auditor).locked;
    }

    function _backing(address auditor) internal view override returns (uint256) {
        return staking.poolOf(auditor).backing;
    }

    function _reputation(address auditor) internal view override returns (uint256) {
        return staking.reputationOf(auditor);
    }
}
