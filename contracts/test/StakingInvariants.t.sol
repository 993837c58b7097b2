// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase} from "./utils/TestBase.sol";
import {StakingHandler} from "./mocks/StakingHandler.sol";

/// @notice Staking under adversarial traffic (StakingHandler) must stay equal to the reference model
/// after every call: a session's rewards and slashes land only on the shares that existed at its
/// draw (pro rata, exiting shares included, later shares excluded), with the commission of the draw,
/// reputation composed in draw order whatever order results arrive in, and every token accounted for.
/// Holds (5.1, outside review 6): the handler's `lock` asserts that no batch past its hold is still
/// outside the ledger when a SESSION entry is pushed (so it is never paid or slashed for it) and that
/// locks never exceed the pool's value (no over-lock); `check` compares `seatQuote` with the model's
/// pro-rata limit (a pool never refuses a lock its pro-rata free stake covers).
contract StakingInvariantsTest is TestBase {
    StakingHandler internal handler;

    function setUp() public {
        handler = new StakingHandler();
    }

    function targetContracts() public view returns (address[] memory targets) {
        targets = new address[](1);
        targets[0] = address(handler);
    }

    /// forge-config: default.invariant.runs = 50
    /// forge-config: default.invariant.depth = 200
    /// forge-config: default.invariant.fail-on-revert = true
    function invariant_ledgerMatchesReferenceModel() public view {
        handler.check();
    }

    /// @dev Reported at the end of each run (with -vv) to show the campaign reaches the hard cases.
    function afterInvariant() public {
        emit log_named_uint("early results", handler.earlyResults());
        emit log_named_uint("pool resets", handler.resets());
        emit log_named_uint("queued deposits", handler.queuedFlows());
        emit log_named_uint("calls", handler.calls());
        emit log_named_uint("stakes", handler.stakesOk());
        emit log_named_uint("locks", handler.locksOk());
        emit log_named_uint("results", handler.resultsDelivered());
        emit log_named_uint("keys", handler.keyCount());
        emit log_named_uint("parked withdrawals (5.1)", handler.parkedWithdrawals());
        emit log_named_uint("locks behind a held FLOW (5.1)", handler.locksBehindHeldFlow());
    }

    event log_named_uint(string key, uint256 val);
}
