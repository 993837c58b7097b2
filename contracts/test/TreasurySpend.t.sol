// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase} from "./utils/TestBase.sol";
import {TrustToken} from "../src/TrustToken.sol";
import {Treasury} from "../src/Treasury.sol";

/// @notice The Treasury's capped module allowances (issue 15's appeal budget and canary refunds): only the
/// owner sets them, a spend pays min(amount, allowance, balance) and never reverts for lack of funds.
contract TreasurySpendTest is TestBase {
    TrustToken internal token;
    Treasury internal treasury;
    address internal owner = address(0x0A11);
    address internal module = address(0xB0D);
    address internal to = address(0xCAFE);

    function setUp() public {
        token = new TrustToken(address(this), 1e24);
        treasury = new Treasury(token, owner);
        token.transfer(address(treasury), 100e18);
    }

    function test_onlyOwnerSetsAllowances() public {
        vm.expectRevert();
        treasury.setSpender(module, 1);
        vm.prank(owner);
        vm.expectRevert(Treasury.ZeroAddress.selector);
        treasury.setSpender(address(0), 1);
    }

    /// forge-config: default.fuzz.runs = 256
    function testFuzz_spendIsCappedAndNeverReverts(uint256 allowance, uint256 amount) public {
        allowance = bound(allowance, 0, 300e18);
        amount = bound(amount, 0, 300e18);
        vm.prank(owner);
        treasury.setSpender(module, allowance);
        uint256 expected = amount;
        if (expected > allowance) expected = allowance;
        if (expected > 100e18) expected = 100e18;
        vm.prank(module);
        uint256 paid = treasury.spend(to, amount);
        assertEq(paid, expected, "min(amount, allowance, balance)");
        assertEq(token.balanceOf(to), expected, "paid out");
        assertEq(treasury.allowanceOf(module), allowance - expected, "allowance used");
        vm.prank(address(0xBAD));
        assertEq(treasury.spend(to, amount), 0, "no allowance, nothing paid");
    }
}
