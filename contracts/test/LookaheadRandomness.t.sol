// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase} from "./utils/TestBase.sol";
import {LookaheadRandomness} from "../src/LookaheadRandomness.sol";
import {IRandomness} from "../src/interfaces/IRandomness.sol";
import {TrustToken} from "../src/TrustToken.sol";
import {Treasury} from "../src/Treasury.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";

contract LookaheadRandomnessTest is TestBase {
    LookaheadRandomness internal rnd;

    function setUp() public {
        vm.roll(1000);
        rnd = new LookaheadRandomness(3);
    }

    function test_delayBounds() public {
        vm.expectRevert(abi.encodeWithSelector(LookaheadRandomness.InvalidDelay.selector, 0));
        new LookaheadRandomness(0);
        vm.expectRevert(abi.encodeWithSelector(LookaheadRandomness.InvalidDelay.selector, 129));
        new LookaheadRandomness(129);
    }

    function test_lifecycle() public {
        uint256 id = rnd.request();
        assertEq(id, 1, "first id");
        assertEq(rnd.targetBlockOf(id), 1003, "target");
        assertEq(uint256(rnd.status(id)), uint256(IRandomness.RequestStatus.Pending), "pending");
        vm.expectRevert(abi.encodeWithSelector(LookaheadRandomness.NotFulfilled.selector, id));
        rnd.valueOf(id);
        vm.roll(1003);
        vm.expectRevert(abi.encodeWithSelector(LookaheadRandomness.TooEarly.selector, id, 1003));
        rnd.fulfil(id);
        vm.roll(1004);
        assertEq(uint256(rnd.status(id)), uint256(IRandomness.RequestStatus.Ready), "ready");
        bytes32 v = rnd.fulfil(id);
        assertTrue(v != bytes32(0), "value");
        assertEq(rnd.valueOf(id), v, "stored");
        assertEq(uint256(rnd.status(id)), uint256(IRandomness.RequestStatus.Fulfilled), "fulfilled");
        vm.roll(5000);
        assertEq(rnd.fulfil(id), v, "a fixed value stays fixed");
        vm.expectRevert(abi.encodeWithSelector(LookaheadRandomness.UnknownRequest.selector, 9));
        rnd.fulfil(9);
        assertEq(uint256(rnd.status(9)), uint256(IRandomness.RequestStatus.Unknown), "unknown");
    }

    function test_tooLate() public {
        uint256 id = rnd.request();
        vm.roll(1003 + 256);
        assertEq(
            uint256(rnd.status(id)), uint256(IRandomness.RequestStatus.Ready), "last block of the window"
        );
        vm.roll(1003 + 257);
        assertEq(uint256(rnd.status(id)), uint256(IRandomness.RequestStatus.Expired), "expired");
        vm.expectRevert(abi.encodeWithSelector(LookaheadRandomness.TooLate.selector, id, 1003));
        rnd.fulfil(id);
    }

    /// @dev A lookahead request ends Fulfilled or Expired (nobody fixed it in time), never Failed, and
    /// Expired is final; a fixed value keeps its top bit set and frees the target slot.
    function test_expiredNotFailedAndFinal() public {
        uint256 id = rnd.request();
        vm.roll(1003 + 257);
        assertEq(uint256(rnd.status(id)), uint256(IRandomness.RequestStatus.Expired), "expired");
        vm.roll(1003 + 100_000);
        assertEq(uint256(rnd.status(id)), uint256(IRandomness.RequestStatus.Expired), "still expired");
        uint256 other = rnd.request();
        vm.roll(block.number + 4);
        bytes32 v = rnd.fulfil(other);
        assertTrue(uint256(v) >> 255 == 1, "top bit marks a fixed value");
        assertEq(rnd.targetBlockOf(other), 0, "no target once fixed");
    }

    function test_distinctRequestsDistinctValues() public {
        uint256 a = rnd.request();
        uint256 b = rnd.request();
        vm.roll(1010);
        assertTrue(rnd.fulfil(a) != rnd.fulfil(b), "same target block, different values");
    }
}

contract TreasuryTest is TestBase {
    function test_withdrawOnlyOwner() public {
        TrustToken token = new TrustToken(address(this), 1000e18);
        vm.expectRevert(Treasury.ZeroAddress.selector);
        new Treasury(IERC20(address(0)), address(this));
        Treasury t = new Treasury(token, address(0x0A11));
        token.transfer(address(t), 100e18);
        assertEq(t.balance(), 100e18, "balance");
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, address(this)));
        t.withdraw(address(this), 1);
        vm.prank(address(0x0A11));
        vm.expectRevert(Treasury.ZeroAddress.selector);
        t.withdraw(address(0), 1);
        vm.prank(address(0x0A11));
        t.withdraw(address(0xB0B), 40e18);
        assertEq(token.balanceOf(address(0xB0B)), 40e18, "paid out");
    }

    function test_tokenZeroHolder() public {
        vm.expectRevert(TrustToken.ZeroHolder.selector);
        new TrustToken(address(0), 1);
    }
}
