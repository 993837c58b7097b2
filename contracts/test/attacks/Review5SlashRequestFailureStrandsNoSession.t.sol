// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfAppealsAttackFixture} from "./VrfAttackFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {AuditSessions} from "../../src/AuditSessions.sol";

/// @title Review5SlashRequestFailureStrandsNoSession (outside review 5 of main edc6491, VRF requests)
/// @notice Property: sessions always terminate (docs/protocol-v2.md, "Liveness: every SESSION entry must
/// eventually receive its result"), whatever the randomness source does. A VRF source that stops taking
/// requests - the adapter's requester permission revoked while migrating to a new adapter, or, at the real
/// coordinator, the subscription cancelled or the consumer removed (`requestRandomWords` reverts
/// InvalidSubscription / InvalidConsumer), or its minimum confirmations raised above ours - makes the
/// session's SECOND request (the slash seed, `AuditSessions._onOutcomeFinal`, reached through
/// `AppealModule.advance` -> `onOutcomeFinal`, or `finalize` without extensions) revert. Every session
/// of that source that has not reached that point yet is stuck: it can never be settled, its auditors'
/// stake stays locked and their ledgers hold back their later deposits and withdrawals, until someone
/// outside the protocol repairs the old source. `IRandomness.Failed` (every wrong vote slashed, refund
/// paths) exists exactly so that a source that does not deliver ends sessions; a source that refuses to
/// take the request has no such exit.
/// @dev Measured (`forge test --match-path 'contracts/test/attacks/Review5*' -vv`, skip removed): session
/// voted and finalized (PASS); requester revoked; `advance` after every window reverts;
/// 100,000 blocks later still Finalized with no slash request, `settleBatch` reverts, the 3 auditors' 24
/// TRUST of locks still held.
/// Fixed: `_onOutcomeFinal` calls `request{gas: SLASH_REQUEST_GAS}()` in try/catch after checking that much
/// gas is there (a caller cannot starve the call to fake a refusal: `SlashRequestGas`); on failure it records
/// `slashRequest = type(uint56).max` (`SlashSeedRefused`), which `_fixSlashSeed` reads as "no seed" (every
/// incorrect vote slashed, as for Expired/Failed; one rule, in SettlementModule). `AppealModule.appeal` keeps
/// reverting (no round opens). After: `advance` succeeds, `settleBatch` succeeds, 0 TRUST locked after drain.
contract Review5SlashRequestFailureStrandsNoSession is VrfAppealsAttackFixture {
    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
        _useVrf();
    }

    function _lockedOf(uint256 sid) internal view returns (uint256 locked) {
        address[] memory list = _roundAuditors(sid, 0);
        for (uint256 i = 0; i < list.length; ++i) {
            locked += staking.poolOf(list[i]).locked;
        }
    }

    function test_SlashRequestFailureStrandsNoSession() public {
        uint256 sid = _drawnSession(FEE);
        _voteRound0(sid, 0, 0, 0);
        assertEq(uint256(sessions.statusOf(sid)), uint256(IAuditSessions.Status.Finalized), "finalized");
        // The source stops taking requests (adapter migration; at the real coordinator: subscription
        // cancelled or consumer removed).
        vm.prank(owner);
        vrf.setRequester(address(sessions), false);
        uint256 end = appeals.sessionAppeals(sid).lastWindowEnd;
        if (block.number <= end) vm.roll(end + 1);
        (bool ok,) = address(appeals).call(abi.encodeWithSignature("advance(uint256)", sid));
        emit log_named_uint("advance after every window succeeded (1 yes)", ok ? 1 : 0);
        vm.roll(block.number + 100_000);
        (ok,) = address(appeals).call(abi.encodeWithSignature("advance(uint256)", sid));
        address[] memory list = _roundAuditors(sid, 0);
        (bool settled,) = address(settlement)
            .call(abi.encodeWithSignature("settleBatch(uint256,uint256,address[])", sid, 0, list));
        emit log_named_uint("slash request id 100,000 blocks later", sessions.sessionOf(sid).slashRequest);
        emit log_named_uint("settleBatch succeeded (1 yes)", settled ? 1 : 0);
        emit log_named_decimal_uint("auditors' stake still locked (TRUST)", _lockedOf(sid), 18);
        assertTrue(settled, "Review5: a source refusing requests strands a finalized session forever");
        assertEq(sessions.sessionOf(sid).slashRequest, type(uint56).max, "refusal recorded as no seed");
        for (uint256 i = 0; i < list.length; ++i) {
            staking.drain(list[i], 16);
        }
        assertEq(_lockedOf(sid), 0, "every lock released");
    }

    /// @dev The refusal means "no seed": every incorrect vote is slashed (auditor 0 votes against the other
    /// two on the single segment and is slashed once), as for an Expired or Failed request.
    function test_RefusedSeedSlashesEveryIncorrectVote() public {
        uint256 sid = _drawnSession(FEE);
        _voteRound0(sid, 0, 1, 0); // auditor 0 votes FAIL, the others PASS: PASS by 2 of 3
        vm.prank(owner);
        vrf.setRequester(address(sessions), false);
        uint256 end = appeals.sessionAppeals(sid).lastWindowEnd;
        if (block.number <= end) vm.roll(end + 1);
        vm.expectEmit(true, false, false, false, address(sessions));
        emit AuditSessions.SlashSeedRefused(sid);
        assertTrue(appeals.advance(sid), "outcome final");
        (uint256 incorrect, uint256 slashes) = _settleCountingSlashes(sid, _roundAuditors(sid, 0));
        emit log_named_uint("incorrect votes", incorrect);
        emit log_named_uint("slashes", slashes);
        assertEq(incorrect, 1, "one incorrect vote");
        assertEq(slashes, incorrect, "every incorrect vote slashed");
    }

    /// @dev Attack: a caller (an auditor whose vote was wrong, hoping for a lucky coin... or any voter)
    /// sends too little gas so the request runs out of it inside the try. The core refuses to try with less
    /// than SLASH_REQUEST_GAS available (SlashRequestGas): nothing is recorded, and the next caller with
    /// enough gas gets a real request.
    function testFuzz_StarvedCallerCannotFakeARefusal(uint256 gasLimit) public {
        uint256 sid = _drawnSession(FEE);
        _voteRound0(sid, 0, 1, 0);
        uint256 end = appeals.sessionAppeals(sid).lastWindowEnd;
        if (block.number <= end) vm.roll(end + 1);
        gasLimit = bound(gasLimit, 30_000, 700_000);
        (bool ok,) = address(appeals).call{gas: gasLimit}(abi.encodeWithSignature("advance(uint256)", sid));
        uint256 slash = sessions.sessionOf(sid).slashRequest;
        if (ok) {
            assertTrue(
                slash != 0 && slash != type(uint56).max, "a starved call records a real request or nothing"
            );
        } else {
            assertEq(slash, 0, "a failed call records nothing");
            assertTrue(appeals.advance(sid), "an honest caller then makes the outcome final");
            slash = sessions.sessionOf(sid).slashRequest;
        }
        assertTrue(slash != type(uint56).max, "never the no-seed sentinel from a working source");
        assertEq(vrf.coordinatorRequestOf(slash) != 0 ? 1 : 0, 1, "a real coordinator request");
    }

    /// @dev Control (holds): with the source taking requests, the same session settles and every lock is
    /// released.
    function test_WithAWorkingSourceTheSessionSettles() public {
        uint256 sid = _drawnSession(FEE);
        _voteRound0(sid, 0, 0, 0);
        uint256 end = appeals.sessionAppeals(sid).lastWindowEnd;
        if (block.number <= end) vm.roll(end + 1);
        assertTrue(appeals.advance(sid), "outcome final");
        uint256 slash = sessions.sessionOf(sid).slashRequest;
        vm.roll(block.number + 3);
        _deliver(slash, 9);
        settlement.settleBatch(sid, 0, _roundAuditors(sid, 0));
        address[] memory list = _roundAuditors(sid, 0);
        for (uint256 i = 0; i < list.length; ++i) {
            staking.drain(list[i], 16);
        }
        assertEq(_lockedOf(sid), 0, "every lock released");
    }
}
