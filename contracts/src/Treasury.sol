// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Ownable, Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";

/// @title Treasury
/// @notice Receives the 20% fee share, slashed stake and unspent audit pools; the owner spends it.
/// @dev A separate contract so the protocol's money is never mixed with an operator's own balance.
contract Treasury is Ownable2Step {
    using SafeERC20 for IERC20;

    /// @notice The protocol token.
    IERC20 public immutable token;

    /// @notice Zero recipient or zero token.
    error ZeroAddress();

    /// @notice The owner moved funds out.
    event TreasuryWithdrawal(address indexed to, uint256 amount);

    /// @param token_ The protocol token.
    /// @param owner_ Who may spend the treasury.
    constructor(IERC20 token_, address owner_) Ownable(owner_) {
        if (address(token_) == address(0)) revert ZeroAddress();
        token = token_;
    }

    /// @notice Send `amount` tokens to `to`.
    function withdraw(address to, uint256 amount) external onlyOwner {
        if (to == address(0)) revert ZeroAddress();
        emit TreasuryWithdrawal(to, amount);
        token.safeTransfer(to, amount);
    }

    /// @notice Tokens held.
    function balance() external view returns (uint256) {
        return token.balanceOf(address(this));
    }
}
