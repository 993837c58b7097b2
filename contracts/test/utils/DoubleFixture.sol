// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {SessionsFixture} from "./SessionsFixture.sol";
import {StakingDouble} from "./StakingDouble.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";

/// @notice The session modules against StakingDouble: every lock and result is recorded, and a test
/// can refuse an auditor's locks.
abstract contract DoubleFixture is SessionsFixture {
    StakingDouble internal staking;

    function _deployStaking() internal override returns (IStaking) {
        staking = new StakingDouble(token, EPOCH_BLOCKS, address(treasury));
        return IStaking(address(staking));
    }

    function _wireStaking() internal override {
        staking.wire(address(registry), address(drawModule), address(settlement));
    }

    function _stake(address auditor, uint256 amount) internal override {
        staking.deposit(auditor, amount);
    }

    function _locked(address auditor) internal view override returns (uint256) {
        return staking.lockedOf(auditor);
    }

    function _backing(address auditor) internal view override returns (uint256) {
        return staking.stakeOf(auditor);
    }

    function _reputation(address auditor) internal view override returns (uint256) {
        return staking.reputationOf(auditor);
    }
}
