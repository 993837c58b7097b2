// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "./utils/StakingFixture.sol";
import {AppealModule} from "../src/modules/AppealModule.sol";
import {CanaryModule} from "../src/modules/CanaryModule.sol";
import {AppealDeploy} from "./utils/AppealDeploy.sol";
import {IAppealModule} from "../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";

/// @notice Wiring the issue-15 modules into a running core: a session finalized before them keeps the
/// v2 rules (its outcome was final at `finalize`) and still settles; `setExtensions` works once.
contract ExtensionsWiredLateTest is StakingFixture {
    function setUp() public {
        _deploy();
        _addAuditors(1, 6, STAKE);
        _nextEpoch();
    }

    function test_sessionFinalizedBeforeWiring_stillSettles() public {
        uint256 sid = _open(_uniform(2, 1), 1000e18);
        _drawAll(sid);
        _publish(sid);
        _commitAll(sid, 1, 0);
        _revealAll(sid, 1, 0, 0);
        _finalizeAndWait(sid);
        IAppealModule.AppealParams memory p;
        p.maxRounds = 2;
        p.appealBlocks = 10;
        p.appealBondMultiplierBps = 10_000;
        p.appealRewardBps = 2000;
        p.canaryRevealBlocks = 5;
        (AppealModule appeals,) = AppealDeploy.deploy(sessions, owner, p);
        CanaryModule canaries = new CanaryModule(sessions);
        vm.prank(owner);
        sessions.setExtensions(address(appeals), address(canaries));
        vm.prank(owner);
        vm.expectRevert(IAuditSessions.ExtensionsAlreadySet.selector);
        sessions.setExtensions(address(appeals), address(canaries));
        assertEq(
            settlement.settleBatch(sid, 0, _auditors(sid)), sessions.sessionOf(sid).auditorCount, "settled"
        );
        assertEq(token.balanceOf(address(sessions)), 0, "pool swept");
    }
}
