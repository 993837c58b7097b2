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

    /// @dev A SESSION entry of another session (key 0xB0B0 + its index, no stake locked) in `a`'s
    /// ledger: the way to take snapshot stake away after the snapshot now that its owner cannot
    /// (docs/protocol-v2.md 5.1).
    function _pushEntry(address a) internal returns (uint256 entry) {
        (uint8 tier,,) = staking.auditorOf(a);
        (, uint256 tail) = staking.ledgerOf(a);
        vm.prank(address(drawModule));
        bool ok;
        (ok,, entry) = staking.lockSeat(a, tier, 0xB0B0 + tail, 0, 0);
        assertTrue(ok && entry == tail, "setup: another session's entry");
    }

    /// @dev That session's result: `slash` taken from `a`'s pool (at once if `entry` is the head).
    function _slashNow(address a, uint256 entry, uint256 slash) internal {
        IStaking.SessionResult[] memory r = new IStaking.SessionResult[](1);
        r[0] = IStaking.SessionResult({
            auditor: a, entry: uint32(entry), reward: 0, slash: uint96(slash), repMul: 1e18, repAdd: 0
        });
        vm.prank(address(settlement));
        staking.resolve(0xB0B0 + entry, r);
    }
}
