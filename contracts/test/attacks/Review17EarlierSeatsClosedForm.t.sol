// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase} from "../utils/TestBase.sol";
import {AppealMath} from "../../src/libraries/AppealMath.sol";

/// @title Review17EarlierSeatsClosedForm (outside review 17 of 92327f6; regression, holds)
/// @notice Property: `AppealMath.earlierSeats(k0, depth)` (the closed form ((2^depth - 1)(k0 + 1) - depth)
/// that replaced the deleted `DrawModule._earlierSeats` loop) equals k_0 + ... + k_{depth-1} summed with
/// `panelSeats`, as `consensus/appeal_admission.earlier_seats` sums it, for every k0 and depth the
/// parameters allow (every k0 whose panels fit `MAX_PANEL_SEATS` at some depth, depth 0 to
/// `MAX_ROUNDS`, exhaustively) and far beyond them (fuzz); and `refusalsCharged` is exactly
/// `eligible >= 2k`. Result on 92327f6: holds. Mutations tried (both fail the exhaustive test):
/// `- depth` -> `- depth + 1`; `(k0 + 1)` -> `k0`.
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review17EarlierSeats*' -vv`.
contract Review17EarlierSeatsClosedForm is TestBase {
    function _loop(uint256 k0, uint256 depth) internal pure returns (uint256 sum) {
        for (uint256 j = 0; j < depth; ++j) {
            sum += AppealMath.panelSeats(k0, j);
        }
    }

    function test_allowedRange() public pure {
        for (uint256 k0 = 0; k0 <= AppealMath.MAX_PANEL_SEATS; ++k0) {
            for (uint256 depth = 0; depth <= AppealMath.MAX_ROUNDS + 1; ++depth) {
                assertEq(AppealMath.earlierSeats(k0, depth), _loop(k0, depth), "closed form = loop");
            }
        }
    }

    function testFuzz_beyondTheParams(uint256 k0, uint256 depth) public pure {
        k0 = bound(k0, 0, type(uint128).max);
        depth = bound(depth, 0, 100);
        assertEq(AppealMath.earlierSeats(k0, depth), _loop(k0, depth), "closed form = loop");
    }

    function testFuzz_refusalsChargedIsTwoK(uint256 eligible, uint256 k) public pure {
        eligible = bound(eligible, 0, 1 << 32);
        k = bound(k, 0, 1 << 16);
        assertTrue(AppealMath.refusalsCharged(eligible, k) == (eligible >= k + k), "eligible >= 2k");
    }
}
