// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {AppealModule} from "../../src/modules/AppealModule.sol";
import {AppealSettlement} from "../../src/modules/AppealSettlement.sol";
import {CanaryModule} from "../../src/modules/CanaryModule.sol";
import {ICanaryModule} from "../../src/interfaces/ICanaryModule.sol";

/// @dev The cheatcode TestBase's `Vm` does not declare.
interface VmSkipReview4Wiring {
    function skip(bool) external;
}

/// @title Review4CanaryOwedOnlyWithWindow (outside review 4 of canarywin 1588bdc)
/// @notice Property: a session owes canaries only if its draw randomness was requested with the canary
/// commit window. The core grants the window at opening only when `canaryModule` is already wired
/// (`SessionStore._commitWindow`), but the module decides what a session owes from its own construction
/// (`CanaryModule._firstSession = core.sessionCount() + 1` in the constructor). A session opened between
/// the module's deployment and `setExtensions` (an upgrade of a live core: two transactions, the core not
/// paused) gets the bare randomness delay (2 blocks) yet owes canaries once the module is wired: the
/// operator's commit in block open + 3 is CommitTooLate, and the never-committed canary takes the largest
/// segment weight off the trace's passed weight. Measured (skip removed): target = open + 2, canaries owed 1,
/// commit at open + 3 refused; every segment PASS (weights 100, 1 x 9) yet the trace FAILS, score 825 bps
/// (10_000 without the phantom canary).
/// Fix: the module must count from the wiring, not its construction: `SessionStore.setExtensions` records
/// `canariesFromSession = _sessionCount + 1` (public) and `CanaryModule._required` returns 0 for
/// `sessionId < core.canariesFromSession()` (dropping the constructor-time `_firstSession`), so what a
/// session owes and whether it got the window are decided by the same fact.
contract Review4CanaryOwedOnlyWithWindow is AppealsFixture {
    event log_named_uint(string key, uint256 val);

    function setUp() public {
        _deploy();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    function test_CanaryOwedOnlyWithCommitWindow_KNOWN() public {
        VmSkipReview4Wiring(address(vm)).skip(true);
        // The owner deploys the issue-15 modules ...
        appeals = new AppealModule(sessions, owner, _appealParams());
        escrow = AppealSettlement(appeals.settlement());
        canaries = new CanaryModule(sessions);
        // ... a provider opens a session before the wiring transaction lands ...
        uint8[] memory tiers = new uint8[](10);
        uint16[] memory weights = new uint16[](10);
        for (uint256 i = 0; i < 10; ++i) {
            tiers[i] = 1;
            weights[i] = i == 0 ? 100 : 1;
        }
        uint256 sid = _open(_tiersWeights(tiers, weights), FEE);
        uint256 opened = block.number;
        // ... and the owner wires them and authorizes the operator.
        vm.startPrank(owner);
        sessions.setExtensions(address(appeals), address(canaries));
        canaries.setCanaryOperator(canaryOperator, true);
        vm.stopPrank();
        uint256 owed = canaries.canariesOwed(sid, 10);
        uint256 window = _drawTarget(sid) - opened;
        emit log_named_uint("canaries owed", owed);
        emit log_named_uint("blocks until the draw target", window);
        vm.roll(opened + RANDOMNESS_DELAY + 1); // a commit inside canaryCommitBlocks (8)
        bytes32[] memory c = new bytes32[](owed);
        for (uint256 i = 0; i < owed; ++i) {
            c[i] = _canaryCommitment(sid, i + 1, 2);
        }
        vm.prank(canaryOperator);
        (bool committed,) = address(canaries).call(abi.encodeCall(ICanaryModule.commitCanaries, (sid, c)));
        emit log_named_uint("operator commit at open + 3 accepted", committed ? 1 : 0);
        _drawAll(sid);
        _publish(sid);
        _commitAll(sid, 0, 0);
        _revealAll(sid, 0, 0, 0); // every segment PASS
        sessions.finalize(sid);
        (bool passed, uint256 score,,,) = escrow.verdictOf(sid);
        emit log_named_uint("trace passed", passed ? 1 : 0);
        emit log_named_uint("score bps", score);
        assertTrue(owed == 0 || window >= CANARY_COMMIT_BLOCKS, "canaries owed without the commit window");
        assertTrue(passed, "every segment passed: no phantom canary may fail the trace");
    }
}
