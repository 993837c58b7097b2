// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AuditSessions} from "../../src/AuditSessions.sol";
import {AppealModule} from "../../src/modules/AppealModule.sol";
import {AppealSettlement} from "../../src/modules/AppealSettlement.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";

/// @notice The two forge cheatcodes the deployment needs (TestBase's Vm does not declare them).
interface CreateCheats {
    function getNonce(address account) external view returns (uint64 nonce);
    function computeCreateAddress(address deployer, uint256 nonce) external pure returns (address);
}

/// @title AppealDeploy
/// @notice The one way tests deploy the appeal pair, as `chain/deploy.py` does on a chain: the
/// AppealSettlement first, bound to the AppealModule's predicted address (the caller's CREATE address
/// of the nonce after the settlement's), then the AppealModule with the settlement's address. Two
/// deployments because one would embed the settlement's initcode in the module's (EIP-3860, AppealStore).
library AppealDeploy {
    CreateCheats private constant CHEATS =
        CreateCheats(address(uint160(uint256(keccak256("hevm cheat code")))));

    /// @notice The module deployed where the settlement expected it (this helper's own invariant).
    error ModuleNotAtPrediction(address predicted, address deployed);

    /// @dev Deploys from the calling test contract (an internal library function runs in its context);
    /// call it outside any prank.
    function deploy(AuditSessions core, address owner, IAppealModule.AppealParams memory params)
        internal
        returns (AppealModule appeals, AppealSettlement escrow)
    {
        address predicted =
            CHEATS.computeCreateAddress(address(this), uint256(CHEATS.getNonce(address(this))) + 1);
        escrow = new AppealSettlement(core, IAppealModule(predicted), owner, params);
        appeals = new AppealModule(core, escrow);
        if (address(appeals) != predicted) revert ModuleNotAtPrediction(predicted, address(appeals));
    }
}
