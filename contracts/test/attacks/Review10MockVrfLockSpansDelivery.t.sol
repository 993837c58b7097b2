// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfAttackFixture, outsiderRequest} from "./VrfAttackFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {AuditSessions} from "../../src/AuditSessions.sol";
import {MockVRFCoordinator} from "../mocks/MockVRFCoordinator.sol";

/// @notice An outsider's consumer whose callback first has a second word delivered (a nested fulfilment),
/// then finalizes a session. It records what it saw, so a reverting step does not undo the record.
contract NestedThenAdvance {
    MockVRFCoordinator internal immutable coord;
    AuditSessions internal immutable core;
    uint256 public target;
    uint256 public inner;
    bool public nestedDelivered;
    bool public lockAfterNested;
    bool public advanced;

    constructor(MockVRFCoordinator coord_, AuditSessions core_) {
        coord = coord_;
        core = core_;
    }

    function _ask() private returns (uint256) {
        return outsiderRequest(coord);
    }

    /// @return outer The request whose delivery runs the attack.
    function arm(uint256 sessionId) external returns (uint256 outer) {
        target = sessionId;
        outer = _ask();
        inner = _ask();
    }

    function rawFulfillRandomWords(uint256 requestId, uint256[] calldata) external {
        if (requestId == inner) return;
        try coord.fulfill(inner, 2) {
            nestedDelivered = true;
        } catch {}
        lockAfterNested = coord.reentrancyLock();
        try core.advance(target) {
            advanced = true;
        } catch {}
    }
}

/// @title Review10MockVrfLockSpansDelivery (outside review 10 of 2d6501f, test double fidelity; low)
/// @notice Property (MockVRFCoordinator NatSpec: "Upstream VRFCoordinatorV2_5 holds this lock while it
/// delivers to any consumer and refuses requests meanwhile"; docs/protocol-v2.md: the mock "holds upstream's
/// lock so the suites meet it"): the mock refuses requests for the WHOLE of a consumer's callback, as
/// upstream does. Upstream (smartcontractkit/chainlink-evm, contracts/src/v0.8/vrf/dev/VRFCoordinatorV2_5.sol)
/// `fulfillRandomWords` is itself `nonReentrant`, so no fulfilment can run inside a callback, and the lock
/// set by `_deliverRandomness` holds until the callback returns. The mock's `fulfill`/`deliver` are not
/// guarded: a delivery nested inside a callback runs and ends with `reentrancyLock = false`, so the rest of
/// the OUTER callback runs unlocked and may request.
/// @dev Attack (on the double, not on chain): an outsider's callback has a second word of its own delivered
/// (`coord.fulfill(inner)`), then calls `AuditSessions.advance` as the last reveal lands. Upstream: the nested
/// fulfilment reverts `Reentrant()` and the advance reverts `SourceBusy()` (nothing recorded). The mock: the
/// nested delivery succeeds, the lock reads false, and the advance finalizes the session from inside the
/// callback with a real slash-seed request. Harmless for review 8's property (a real request is the safe
/// outcome), but a suite built on this double sees a state the chain never reaches (a finalization from
/// inside a VRF callback), so a test claiming "a callback can never finalize" would be wrong on the double.
/// Upstream also holds the lock in `migrate` (around every consumer's `setCoordinator`), which the mock
/// leaves out; the adapter's mapping covers it the same way (any `Reentrant()` is SourceBusy).
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review10MockVrf*' -vv`, skip removed):
/// nested delivery succeeded 1, lock after it 0, advance inside the callback succeeded 1, status 6
/// (Finalized), slashRequest 2 (a real request made from inside a callback). Expected upstream: 0, 1, 0,
/// 5 (Reveal), 0. Fixed (test double only): the mock's `deliver` is non-reentrant like upstream's
/// `fulfillRandomWords` (`if (reentrancyLock) revert Reentrant();` first): now 0, 1, 0, 5, 0.
contract Review10MockVrfLockSpansDelivery is VrfAttackFixture {
    uint256 internal constant FEE = 1000e18;

    NestedThenAdvance internal outsider;

    event log_named_uint(string key, uint256 val);

    function setUp() public {
        _deploy();
        _addAuditors(1, 6, STAKE);
        _nextEpoch();
        _useVrf();
        outsider = new NestedThenAdvance(coord, sessions);
    }

    function test_NestedDeliveryKeepsTheLock() public {
        uint256 sid = _drawnSession(FEE);
        _commitAll(sid, 0, 1);
        _revealAll(sid, 0, 1, 0); // everyone revealed: ripe for finalize
        uint256 outer = outsider.arm(sid);
        vm.roll(block.number + 1);
        coord.fulfill(outer, 1);
        emit log_named_uint("nested delivery succeeded (1 yes)", outsider.nestedDelivered() ? 1 : 0);
        emit log_named_uint("lock after it (1 held)", outsider.lockAfterNested() ? 1 : 0);
        emit log_named_uint("advance inside the callback succeeded (1 yes)", outsider.advanced() ? 1 : 0);
        emit log_named_uint("status (5 Reveal, 6 Finalized)", uint256(sessions.statusOf(sid)));
        emit log_named_uint("slashRequest", sessions.sessionOf(sid).slashRequest);
        assertTrue(!outsider.nestedDelivered(), "upstream: no fulfilment inside a callback");
        assertTrue(outsider.lockAfterNested(), "upstream: the lock spans the whole callback");
        assertTrue(!outsider.advanced(), "upstream: the callback's advance reverts SourceBusy");
        assertEq(uint256(sessions.statusOf(sid)), uint256(IAuditSessions.Status.Reveal), "not finalized");
    }
}
