// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "./utils/AppealsFixture.sol";
import {AppealDeploy, CreateCheats} from "./utils/AppealDeploy.sol";
import {AuditSessions} from "../src/AuditSessions.sol";
import {IRandomness} from "../src/interfaces/IRandomness.sol";
import {IAppealModule} from "../src/interfaces/IAppealModule.sol";
import {AppealModule} from "../src/modules/AppealModule.sol";
import {AppealSettlement} from "../src/modules/AppealSettlement.sol";
import {AppealStore} from "../src/modules/AppealStore.sol";

/// @notice The AppealSettlement is deployed before its AppealModule (one deployment would embed the
/// settlement's initcode in the module's, over EIP-3860's limit), bound to the module's predicted address.
/// Property: the module accepts only a settlement whose immutable `appeals` is the module itself and whose
/// `core` is the module's core; any other (made for another module, another core, or no contract) makes
/// its constructor revert `SettlementNotBound`, so a settlement cannot be swapped, shared or re-bound.
/// Run: `scripts/forge test --match-contract AppealSettlementBinding -vv`.
contract AppealSettlementBindingTest is AppealsFixture {
    function setUp() public {
        _deploy();
    }

    /// @dev The CREATE address of this contract's nonce `ahead` transactions from now (0: the next one).
    function _nextAddress(uint256 ahead) internal view returns (address) {
        CreateCheats c = CreateCheats(address(vm));
        return c.computeCreateAddress(address(this), uint256(c.getNonce(address(this))) + ahead);
    }

    function _refused(AuditSessions core_, AppealSettlement s) internal {
        vm.expectRevert(abi.encodeWithSelector(AppealStore.SettlementNotBound.selector, address(s)));
        new AppealModule(core_, s);
    }

    function _otherCore() internal returns (AuditSessions) {
        return new AuditSessions(
            token,
            stakingContract,
            IRandomness(address(randomness)),
            address(treasury),
            owner,
            _sessionParams()
        );
    }

    function test_pairIsBoundBothWays() public {
        (AppealModule a, AppealSettlement s) = AppealDeploy.deploy(sessions, owner, _appealParams());
        assertEq(a.settlement(), address(s), "module -> settlement");
        assertEq(address(s.appeals()), address(a), "settlement -> module");
        assertEq(address(s.core()), address(sessions), "settlement core");
        assertEq(address(s.token()), address(token), "settlement token");
        assertEq(s.owner(), owner, "parameter owner");
        assertEq(a.paramsOf(1).appealBlocks, APPEAL_BLOCKS, "version 0 read through the module");
    }

    /// @dev A settlement already serving a module cannot be given to a second one.
    function test_refusesSettlementOfAnotherModule() public {
        (, AppealSettlement s) = AppealDeploy.deploy(sessions, owner, _appealParams());
        _refused(sessions, s);
    }

    /// @dev A settlement made for some other address (a wrong prediction: one nonce too far).
    function test_refusesSettlementNamingAnotherAddress() public {
        AppealSettlement s =
            new AppealSettlement(sessions, IAppealModule(_nextAddress(2)), owner, _appealParams());
        _refused(sessions, s);
    }

    /// @dev A settlement bound to this module's address but to another core, either way round.
    function test_refusesSettlementOfAnotherCore() public {
        AuditSessions other = _otherCore();
        AppealSettlement s =
            new AppealSettlement(other, IAppealModule(_nextAddress(1)), owner, _appealParams());
        _refused(sessions, s);
        AppealSettlement t =
            new AppealSettlement(sessions, IAppealModule(_nextAddress(1)), owner, _appealParams());
        _refused(other, t);
    }

    function test_refusesNoContract() public {
        _refused(sessions, AppealSettlement(address(0xBEEF)));
    }

    /// @dev Someone else pre-deploying a settlement for the module's predicted address (their own owner)
    /// changes nothing: the module takes the settlement its deployer passes, checked by address.
    function test_settlementPredeployedByOthersIsNotUsed() public {
        address predicted = _nextAddress(1);
        vm.prank(address(0xBAD));
        AppealSettlement theirs =
            new AppealSettlement(sessions, IAppealModule(predicted), address(0xBAD), _appealParams());
        (AppealModule a, AppealSettlement s) = AppealDeploy.deploy(sessions, owner, _appealParams());
        assertEq(address(a), predicted, "same module address");
        assertEq(a.settlement(), address(s), "the deployer's settlement");
        assertTrue(address(theirs) != address(s), "not theirs");
    }
}
