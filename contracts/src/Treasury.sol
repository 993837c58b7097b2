// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Ownable, Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";

/// @title Treasury
/// @notice Receives the 20% fee share, slashed stake and unspent audit pools; the owner spends it, and
/// lets protocol modules spend capped allowances (issue 15: the appeal budget, canary refunds).
/// @dev A separate contract so the protocol's money is never mixed with an operator's own balance.
contract Treasury is Ownable2Step {
    using SafeERC20 for IERC20;

    /// @notice The protocol token.
    IERC20 public immutable token;

    /// @notice Zero recipient or zero token.
    error ZeroAddress();

    /// @notice What each protocol module may still spend (the appeal budget, canary refunds).
    mapping(address spender => uint256) public allowanceOf;

    /// @notice The owner moved funds out.
    event TreasuryWithdrawal(address indexed to, uint256 amount);
    /// @notice The owner set what `spender` may spend.
    event SpenderSet(address indexed spender, uint256 allowance);
    /// @notice A module spent `paid` of the `requested` it asked for (less when allowance or balance ran out).
    event BudgetSpent(address indexed spender, address indexed to, uint256 requested, uint256 paid);

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

    /// @notice Let `spender` (the appeal module, the canary module) spend up to `allowance` (owner).
    function setSpender(address spender, uint256 allowance) external onlyOwner {
        if (spender == address(0)) revert ZeroAddress();
        allowanceOf[spender] = allowance;
        emit SpenderSet(spender, allowance);
    }

    /// @notice Send up to `amount` to `to` from the caller's allowance; never reverts for lack of funds:
    /// pays min(amount, allowance, balance) and returns it.
    function spend(address to, uint256 amount) external returns (uint256 paid) {
        uint256 allowed = allowanceOf[msg.sender];
        uint256 held = token.balanceOf(address(this));
        paid = amount < allowed ? amount : allowed;
        if (paid > held) paid = held;
        if (to == address(0)) paid = 0;
        allowanceOf[msg.sender] = allowed - paid;
        emit BudgetSpent(msg.sender, to, amount, paid);
        if (paid != 0) token.safeTransfer(to, paid);
    }

    /// @notice Tokens held.
    function balance() external view returns (uint256) {
        return token.balanceOf(address(this));
    }
}
