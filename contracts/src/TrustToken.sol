// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";

/// @title TrustToken
/// @notice The single ERC-20 of the network: audit fees, auditor stake and rewards.
/// @dev Fixed supply minted once to `holder`; EIP-2612 permit lets providers pay a fee
/// without a separate approval transaction.
contract TrustToken is ERC20, ERC20Permit {
    /// @notice Thrown when the initial holder is the zero address.
    error ZeroHolder();

    /// @param holder Receives the whole supply.
    /// @param supply Total supply in wei (18 decimals).
    constructor(address holder, uint256 supply)
        ERC20("Trust Audit Token", "TRUST")
        ERC20Permit("Trust Audit Token")
    {
        if (holder == address(0)) revert ZeroHolder();
        _mint(holder, supply);
    }
}
