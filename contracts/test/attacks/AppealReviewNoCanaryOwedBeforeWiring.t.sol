// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {AppealDeploy} from "../utils/AppealDeploy.sol";
import {CanaryModule} from "../../src/modules/CanaryModule.sol";

/// @notice Property: a session that could never commit canaries owes none. Attack (or accident): the owner
/// wires the issue-15 modules while a session is voting; it finalizes under them, and the canaries "owed"
/// at the rate (`segments * rate`) count as never revealed, each taking the largest segment weight off the
/// passed weight: a trace whose every segment passed would fail.
contract AppealReviewNoCanaryOwedBeforeWiringTest is AppealsFixture {
    function setUp() public {
        _deploy();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    function test_NoCanaryOwedBeforeWiring() public {
        uint8[] memory tiers = new uint8[](10);
        uint16[] memory weights = new uint16[](10);
        for (uint256 i = 0; i < 10; ++i) {
            tiers[i] = 1;
            weights[i] = i == 0 ? 100 : 1;
        }
        uint256 sid = _open(_tiersWeights(tiers, weights), FEE);
        _drawAll(sid);
        _publish(sid);
        _commitAll(sid, 0, 0);
        _revealAll(sid, 0, 0, 0); // every segment PASS
        (appeals, escrow) = AppealDeploy.deploy(sessions, owner, _appealParams());
        canaries = new CanaryModule(sessions);
        vm.prank(owner);
        sessions.setExtensions(address(appeals), address(canaries));
        sessions.finalize(sid);
        (,, uint256 unrevealed) = canaries.canaryMasks(sid);
        assertEq(unrevealed, 0, "no canary owed by a session opened before the module");
        (bool passed, uint256 score,,,) = escrow.verdictOf(sid);
        assertTrue(passed, "every segment passed: the trace passes");
        assertEq(score, 10_000, "score");
        vm.roll(appeals.sessionAppeals(sid).lastWindowEnd + 1);
        assertTrue(appeals.advance(sid), "final");
        assertTrue(appeals.sessionAppeals(sid).passed, "final verdict PASS");
    }
}
