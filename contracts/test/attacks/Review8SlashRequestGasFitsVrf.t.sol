// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfAppealsAttackFixture} from "./VrfAttackFixture.sol";

/// @dev The cheatcode TestBase's `Vm` does not declare.
interface VmCoolReview8 {
    function cool(address) external;
}

/// @title Review8SlashRequestGasFitsVrf (outside review 8 of main b23b820, slash coins; regression, holds)
/// @notice Property: the slash-seed request of a session on the production source succeeds within the fixed
/// `SLASH_REQUEST_GAS` (500,000, `SessionStore`, internal) the core forwards; otherwise every session of that
/// source would record "no seed" and slash every incorrect vote. Existing tests only reach the request with
/// the adapter and coordinator already warm in the same transaction; this one measures it cold (first access
/// to both contracts, as in a keeper's `advance`).
/// @dev Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review8SlashRequestGas*' -vv`):
/// `VRFRandomness.request` + MockVRFCoordinator, cold: 208,102 gas; warm: 188,503. The mock stores a
/// five-slot record per request; upstream VRFCoordinatorV2_5.requestRandomWords writes one new slot
/// (`s_requestCommitments`) and updates one (`s_consumers`), so the real path should cost less (not measured
/// here: the upstream coordinator is not vendored).
contract Review8SlashRequestGasFitsVrf is VrfAppealsAttackFixture {
    event log_named_uint(string key, uint256 val);

    function setUp() public {
        _deployAppeals();
        _useVrf();
    }

    uint256 internal constant SLASH_REQUEST_GAS = 500_000; // SessionStore's (internal)

    function test_SlashRequestThroughVrfFitsItsGasCold() public {
        vm.prank(address(sessions));
        vrf.request(); // requestCount non-zero, as for a slash request after a draw request
        VmCoolReview8(address(vm)).cool(address(vrf));
        VmCoolReview8(address(vm)).cool(address(coord));
        vm.prank(address(sessions));
        uint256 g = gasleft();
        vrf.request();
        uint256 used = g - gasleft();
        emit log_named_uint("VRFRandomness.request + MockVRFCoordinator, cold (gas)", used);
        vm.prank(address(sessions));
        g = gasleft();
        vrf.request();
        emit log_named_uint("same, warm (gas)", g - gasleft());
        assertLe(used, SLASH_REQUEST_GAS, "the cold request fits the gas the core forwards");
    }
}
