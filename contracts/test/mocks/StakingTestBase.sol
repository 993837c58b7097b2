// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase} from "../utils/TestBase.sol";
import {TrustToken} from "../../src/TrustToken.sol";
import {Treasury} from "../../src/Treasury.sol";
import {Staking} from "../../src/Staking.sol";
import {StakingLedger} from "../../src/StakingLedger.sol";
import {AuditorRegistry} from "../../src/AuditorRegistry.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";

/// @dev Deploys token, treasury, Staking and registry, with the test contract wired as both the draw
/// module and the settlement module, so tests lock seats and deliver results directly.
abstract contract StakingTestBase is TestBase {
    uint256 internal constant WAD = 1e18;
    uint256 internal constant EPOCH_BLOCKS = 10;

    TrustToken internal token;
    Treasury internal treasury;
    Staking internal staking;
    AuditorRegistry internal registry;
    address internal owner = address(0x0A11);

    function _params() internal pure virtual returns (StakingLedger.StakingParams memory p) {
        p.minStake = [uint96(100e18), uint96(100e18), uint96(100e18)];
        p.cooldown = 1 days;
        p.commissionDelay = 2 days;
        p.initialReputation = 0.5e18;
        p.reputationFloor = 0.5e18;
        p.maxCommissionBps = 2000;
    }

    function _deployStaking() internal {
        vm.roll(100);
        vm.warp(1_000_000);
        token = new TrustToken(address(this), 1e9 * 1e18);
        treasury = new Treasury(token, owner);
        staking = new Staking(token, owner, address(treasury), EPOCH_BLOCKS, _params());
        registry = new AuditorRegistry(IStaking(address(staking)), owner);
        vm.prank(owner);
        staking.wire(address(registry), address(this), address(this));
        token.approve(address(staking), type(uint256).max);
    }

    function _fund(address who, uint256 amount) internal {
        token.transfer(who, amount);
        vm.prank(who);
        token.approve(address(staking), type(uint256).max);
    }

    function _register(address auditor, uint8 tier) internal {
        vm.prank(auditor);
        registry.register(tier, 1, keccak256(abi.encode("x25519", auditor)));
    }

    function _stake(address holder, address auditor, uint256 amount)
        internal
        returns (uint256 shares, uint256 flow)
    {
        vm.prank(holder);
        return staking.stake(auditor, amount);
    }

    function _withdraw(address holder, address auditor, uint256 shares) internal returns (uint256 id) {
        vm.prank(holder);
        return staking.requestWithdrawal(auditor, shares);
    }

    /// @dev Lock one seat of `amount` under `key`; `entry` 0 opens the SESSION entry.
    function _lock(address auditor, uint256 key, uint256 amount, uint256 entry)
        internal
        returns (uint256 got)
    {
        (bool ok,, uint256 e) = staking.lockSeat(auditor, 1, key, amount, entry);
        assertTrue(ok, "seat locked");
        return e;
    }

    function _one(
        address auditor,
        uint256 entry,
        uint256 reward,
        uint256 slash,
        uint256 repMul,
        uint256 repAdd
    ) internal pure returns (IStaking.SessionResult[] memory r) {
        r = new IStaking.SessionResult[](1);
        r[0] = IStaking.SessionResult({
            auditor: auditor,
            entry: uint32(entry),
            reward: uint96(reward),
            slash: uint96(slash),
            repMul: uint64(repMul),
            repAdd: uint64(repAdd)
        });
    }

    /// @dev A neutral result: reward and slash only, reputation unchanged.
    function _resolve(address auditor, uint256 key, uint256 entry, uint256 reward, uint256 slash) internal {
        staking.resolve(key, _one(auditor, entry, reward, slash, WAD, 0));
    }

    function _pool(address auditor) internal view returns (Staking.PoolView memory) {
        return staking.poolOf(auditor);
    }

    function _shares(address auditor, address holder) internal view returns (uint256) {
        return staking.sharesOf(auditor, holder);
    }

    /// @dev Tokens `holder`'s shares of `auditor` redeem for at the current price.
    function _value(address auditor, address holder) internal view returns (uint256) {
        return staking.previewRedeem(auditor, _shares(auditor, holder));
    }

    function _amountOf(uint256 id) internal view returns (uint256 amount) {
        (, amount,) = staking.withdrawalOf(id);
    }

    function _assertNear(uint256 a, uint256 b, uint256 tolerance, string memory message) internal pure {
        assertLe(a > b ? a - b : b - a, tolerance, message);
    }

    /// @dev Staking's balance equals what its books hold, exactly.
    function _assertConservation() internal view {
        uint256 books = uint256(staking.totalPooled()) + staking.pendingDeposits() + staking.storedRewards()
            + staking.withdrawalReserve();
        assertEq(token.balanceOf(address(staking)), books, "Staking balance == its books");
    }
}
