// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "./utils/AppealsFixture.sol";
import {CreateCheats} from "./utils/AppealDeploy.sol";
import {IAppealModule} from "../src/interfaces/IAppealModule.sol";
import {AppealAdmission} from "../src/modules/AppealAdmission.sol";
import {AppealStore} from "../src/modules/AppealStore.sol";

/// @notice AppealModule runs `appeal` and `quote` in its AppealAdmission by DELEGATECALL (issue 12: EIP-170
/// margin 836 B -> 5,573 B). Property: the admission contract is deployed by the module's constructor with
/// the module's core and settlement, serves only DELEGATECALLs (a direct call of any entry reverts
/// `NotCore` and touches no storage), and cannot be deployed for a settlement bound to another module.
/// Admission behaviour itself is covered by the existing appeal suites, unchanged.
/// Run: `scripts/forge test --match-contract AppealAdmissionTest -vv`.
contract AppealAdmissionTest is AppealsFixture {
    AppealAdmission internal admission;

    function setUp() public {
        _deployAppeals();
        // The module's first CREATE (contract nonces start at 1).
        admission = AppealAdmission(CreateCheats(address(vm)).computeCreateAddress(address(appeals), 1));
    }

    function test_deployedByModuleWithItsImmutables() public view {
        assertTrue(address(admission).code.length != 0, "admission deployed");
        assertEq(address(admission.core()), address(appeals.core()), "core");
        assertEq(address(admission.token()), address(appeals.token()), "token");
        assertEq(address(admission.sortition()), address(appeals.sortition()), "sortition");
        assertEq(admission.settlement(), appeals.settlement(), "settlement");
    }

    function test_directCallsRevertNotCore() public {
        uint256[] memory segs = new uint256[](1);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.NotCore.selector, address(this)));
        admission.appeal(1, segs, type(uint256).max);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.NotCore.selector, address(this)));
        admission.quote(1, segs);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.NotCore.selector, address(this)));
        admission.drawPanel(1, 1, 1);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.NotCore.selector, address(this)));
        admission.advance(1);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.NotCore.selector, address(this)));
        admission.pullPot(1, 1);
    }

    /// @dev The settlement serves the module, not this deployer: a second admission is refused.
    function test_refusesSettlementOfAnotherModule() public {
        vm.expectRevert(abi.encodeWithSelector(AppealStore.SettlementNotBound.selector, address(escrow)));
        new AppealAdmission(sessions, escrow);
    }
}
