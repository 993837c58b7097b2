// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingAccounts} from "./StakingHoldsOps.sol";

/// @title StakingViews
/// @notice The read side of Staking: pools, ledgers, positions, withdrawals, weights and the commission
/// in force (`Staking` adds the operations).
abstract contract StakingViews is StakingAccounts {
    /// @notice A pool's accounting: assets of its shares, pending deposits, shares (all / queued for
    /// withdrawal), backing, locked stake, reputation (WAD) and share generation.
    struct PoolView {
        uint256 assets;
        uint256 pendingDeposits;
        uint256 totalShares;
        uint256 exitingShares;
        uint256 backing;
        uint256 locked;
        uint256 reputation;
        uint256 generation;
    }

    /// @notice The current parameters.
    function params() external view returns (StakingParams memory) {
        return _params;
    }

    /// @notice A pool's accounting (see `PoolView`).
    function poolOf(address auditor) external view returns (PoolView memory v) {
        PoolBook memory b = _books[auditor];
        Pool memory p = _pools[auditor];
        v.assets = b.assets;
        v.pendingDeposits = b.pendingDeposits;
        v.totalShares = b.totalShares;
        v.exitingShares = b.exitingShares;
        v.backing = p.backing;
        v.locked = p.locked;
        v.reputation = p.reputation;
        v.generation = _info[auditor].generation;
    }

    /// @notice Registration and commission of `auditor`: tier, registered, commission in force (bps).
    function auditorOf(address auditor)
        external
        view
        returns (uint8 tier, bool registered, uint256 commissionBps)
    {
        PoolInfo storage info = _info[auditor];
        return (info.tier, info.registered, _commissionOf(info));
    }

    /// @notice The ledger bounds of `auditor`: entries [head, tail) are pending.
    function ledgerOf(address auditor) external view returns (uint256 head, uint256 tail) {
        PoolInfo storage info = _info[auditor];
        return (info.head, info.tail);
    }

    /// @notice The raw word of pending ledger entry `entry` (see LedgerPacking; 0 if not pending).
    function entryWordOf(address auditor, uint256 entry)
        external
        view
        returns (uint256 word, uint256 result)
    {
        PoolInfo storage info = _info[auditor];
        if (entry < info.head || entry >= info.tail) return (0, 0);
        uint256 slot = entry % LEDGER_CAPACITY;
        return (_ring[auditor][slot], _results[auditor][slot]);
    }

    /// @notice A FLOW entry of `auditor`'s ledger (pending or applied).
    function flowOf(address auditor, uint256 entry) external view returns (Flow memory) {
        return _flows[auditor][entry];
    }

    /// @notice Shares `holder` has in `auditor`'s pool now, and its pending deposit (amount, FLOW entry).
    function positionOf(address auditor, address holder)
        external
        view
        returns (uint256 shares, uint256 depositAmount, uint256 depositFlow)
    {
        return _viewPosition(auditor, holder);
    }

    /// @notice Shares of `holder` in `auditor`'s pool (its applied deposits included).
    function sharesOf(address auditor, address holder) external view returns (uint256 shares) {
        (shares,,) = _viewPosition(auditor, holder);
    }

    /// @notice Tokens `shareAmount` shares of `auditor`'s pool would redeem for at the current price.
    function previewRedeem(address auditor, uint256 shareAmount) external view returns (uint256) {
        PoolBook memory b = _books[auditor];
        return shareAmount * (uint256(b.assets) + 1) / (uint256(b.totalShares) + 1);
    }

    /// @notice Reputation (WAD) of `auditor` after every applied session.
    function reputationOf(address auditor) external view returns (uint256) {
        return _pools[auditor].reputation;
    }

    /// @notice Current sortition weight of `auditor` in its tier's tree.
    function weightOf(address auditor) external view returns (uint256) {
        return _sortition.weightOf(_info[auditor].tier, auditor);
    }

    function _commissionOf(PoolInfo storage info) internal view returns (uint256) {
        uint256 at = info.commissionEffectiveAt;
        if (at != 0 && block.timestamp >= at) return info.pendingCommissionBps;
        return info.commissionBps;
    }
}
