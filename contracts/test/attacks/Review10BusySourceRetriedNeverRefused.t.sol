// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfAttackFixture, outsiderRequest} from "./VrfAttackFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";
import {AuditSessions} from "../../src/AuditSessions.sol";
import {IVRFCoordinatorV2Plus} from "../../src/interfaces/IVRFCoordinatorV2Plus.sol";
import {MockVRFCoordinator} from "../mocks/MockVRFCoordinator.sol";
import {Vm} from "../utils/TestBase.sol";

/// @dev The cheatcodes TestBase's `Vm` does not declare.
interface VmMockReview10Busy {
    function mockCallRevert(address callee, bytes calldata data, bytes calldata revertData) external;
    function clearMockedCalls() external;
}

/// @notice An outsider's VRF consumer on the project's MockVRFCoordinator whose callback finalizes a session
/// of a core WITHOUT extensions (`AuditSessions.advance` -> `finalize` -> `_onOutcomeFinal`).
contract AdvanceInCallback {
    MockVRFCoordinator internal immutable coord;
    AuditSessions internal immutable core;
    uint256 public target;

    constructor(MockVRFCoordinator coord_, AuditSessions core_) {
        coord = coord_;
        core = core_;
    }

    function arm(uint256 sessionId) external returns (uint256) {
        target = sessionId;
        return outsiderRequest(coord);
    }

    function rawFulfillRandomWords(uint256, uint256[] calldata) external {
        core.advance(target);
    }
}

/// @title Review10BusySourceRetriedNeverRefused (outside review 10 of 2d6501f, slash-seed request; holds)
/// @notice Property (docs/protocol-v2.md, "2. Slash coins": "whether the sentinel is recorded depends on the
/// source alone"; IRandomness.SourceBusy: "a consumer must never read it as a lasting refusal"): on a core
/// WITHOUT extensions too, a VRF coordinator busy delivering to an outsider's consumer makes the outcome's
/// finalization revert (nothing recorded) instead of recording "no seed"; only a lasting refusal records
/// the sentinel, and a session is never stranded: a source that stays busy is released by the adapter's
/// owner revoking the requester.
/// @dev Coverage added (2d6501f's tests drive only the AppealModule path, through a coordinator written in
/// the test; nothing drove the project's MockVRFCoordinator lock): (1) the outsider's callback on
/// MockVRFCoordinator calls `AuditSessions.advance` as the last reveal lands: the delivery reports failure
/// with return data `SourceBusy()`, the session stays Reveal with slashRequest 0, a keeper's advance records
/// a real request and settlement slashes by coin; (2) any other coordinator revert data is a lasting refusal
/// (bubbled unchanged by VRFRandomness's new assembly, recorded as no seed), fuzzed over the data;
/// (3) liveness: a coordinator reverting `Reentrant()` on every request keeps the session Finalized-pending
/// 100,000 blocks (advance reverts SourceBusy every time), and revoking the requester releases it.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review10BusySource*' -vv`): callback
/// delivery success 0, return data 0xa18419d4 (`SourceBusy()`); slashRequest 0 after it, 2 (a real local
/// request) after the keeper; stuck busy: still Reveal 100,000 blocks on, after the revocation slashRequest
/// 72057594037927935 (2^56-1) and settled (1 incorrect vote, 1 slash). On 2d6501f^ (this file copied into a
/// worktree of it, the SourceBusy selector written out): all three fail - (1) the callback SUCCEEDS and
/// records request 2 (the old mock had no lock, so no suite could see review 8's attack), the busy fuzz
/// branch and (3) record no seed instead of reverting.
/// Fix proposal: none needed. Note: the core's new `catch (bytes memory reason)` copies the source's whole
/// revert data; a caller sending just the `SlashRequestGas` floor keeps ~28k after the 500k call, so a source
/// reverting with ~100 KB would make that caller's finalization run out of gas (a caller with more gas gets
/// the refusal recorded; nothing false is ever recorded). The adapters revert with at most a few words;
/// checking `returndatasize() == 4` in assembly before copying would make the branch independent of it.
contract Review10BusySourceRetriedNeverRefused is VrfAttackFixture {
    uint256 internal constant FEE = 1000e18;

    AdvanceInCallback internal outsider;

    event log_named_uint(string key, uint256 val);
    event log_named_bytes(string key, bytes val);

    function setUp() public {
        _deploy();
        _addAuditors(1, 6, STAKE);
        _nextEpoch();
        _useVrf();
        outsider = new AdvanceInCallback(coord, sessions);
    }

    /// @dev A session whose every auditor revealed (ripe for finalize); auditor 0 voted against the others.
    function _revealedSession() internal returns (uint256 sid) {
        sid = _drawnSession(FEE);
        _commitAll(sid, 0, 1);
        _revealAll(sid, 0, 1, 0);
        assertEq(uint256(sessions.statusOf(sid)), uint256(IAuditSessions.Status.Reveal), "ripe");
    }

    function _slashes(uint256 sid) internal returns (uint256 incorrect, uint256 slashes) {
        return _settleCountingSlashes(sid, _auditors(sid));
    }

    /// @dev (1) The project's mock lock, core without extensions: the callback's finalization reverts.
    function test_CallbackFinalizeWithoutExtensionsRecordsNothing() public {
        uint256 sid = _revealedSession();
        uint256 req = outsider.arm(sid);
        vm.roll(block.number + 1);
        vm.recordLogs();
        bool ok = coord.fulfill(req, 1);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        bytes memory ret;
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics[0] == MockVRFCoordinator.RandomWordsFulfilled.selector) {
                (, ret) = abi.decode(logs[i].data, (bool, bytes));
            }
        }
        emit log_named_uint("outsider's callback succeeded (1 yes)", ok ? 1 : 0);
        emit log_named_bytes("its revert data", ret);
        emit log_named_uint("slashRequest after the callback", sessions.sessionOf(sid).slashRequest);
        assertTrue(!ok, "the callback's advance reverted");
        assertEq(keccak256(ret), keccak256(abi.encodeWithSelector(IRandomness.SourceBusy.selector)), "busy");
        assertEq(uint256(sessions.statusOf(sid)), uint256(IAuditSessions.Status.Reveal), "not finalized");
        assertEq(sessions.sessionOf(sid).slashRequest, 0, "nothing recorded");
        assertTrue(!coord.reentrancyLock(), "lock released after the delivery");

        sessions.advance(sid); // a keeper, outside any callback
        uint256 slash = sessions.sessionOf(sid).slashRequest;
        emit log_named_uint("slashRequest after the keeper", slash);
        assertTrue(slash != 0 && slash != type(uint56).max, "a real request");
        vm.roll(block.number + 3);
        assertTrue(_deliver(slash, 99), "slash seed delivered");
        (uint256 incorrect,) = _slashes(sid);
        assertEq(incorrect, 1, "one incorrect vote, slashed by its coin");
    }

    /// @dev (2) Any coordinator revert other than `Reentrant()` is a lasting refusal, bubbled unchanged; only
    /// `Reentrant()` (or a coordinator reverting `SourceBusy()` itself) makes finalization revert.
    function testFuzz_OnlyBusyRevertsAllElseIsRefusal(bytes memory reason, bool busy) public {
        bytes memory reentrant = abi.encodeWithSignature("Reentrant()");
        if (busy) reason = reentrant;
        uint256 sid = _revealedSession();
        VmMockReview10Busy(address(vm))
            .mockCallRevert(
                address(coord),
                abi.encodeWithSelector(IVRFCoordinatorV2Plus.requestRandomWords.selector),
                reason
            );
        bool isBusy = keccak256(reason) == keccak256(reentrant)
            || keccak256(reason) == keccak256(abi.encodeWithSelector(IRandomness.SourceBusy.selector));
        if (isBusy) {
            vm.expectRevert(IRandomness.SourceBusy.selector);
            sessions.advance(sid);
            assertEq(sessions.sessionOf(sid).slashRequest, 0, "busy: nothing recorded");
        } else {
            vm.prank(address(sessions));
            (bool ok, bytes memory got) = address(vrf).call(abi.encodeCall(IRandomness.request, ()));
            assertTrue(!ok && keccak256(got) == keccak256(reason), "the adapter bubbles it unchanged");
            sessions.advance(sid);
            assertEq(sessions.sessionOf(sid).slashRequest, type(uint56).max, "lasting refusal: no seed");
        }
    }

    /// @dev (3) A coordinator busy on every request strands nothing the adapter's owner cannot release.
    function test_StaysBusyUntilTheRequesterIsRevoked() public {
        uint256 sid = _revealedSession();
        VmMockReview10Busy(address(vm))
            .mockCallRevert(
                address(coord),
                abi.encodeWithSelector(IVRFCoordinatorV2Plus.requestRandomWords.selector),
                abi.encodeWithSignature("Reentrant()")
            );
        vm.expectRevert(IRandomness.SourceBusy.selector);
        sessions.advance(sid);
        vm.roll(block.number + 100_000);
        vm.expectRevert(IRandomness.SourceBusy.selector);
        sessions.advance(sid);
        assertEq(uint256(sessions.statusOf(sid)), uint256(IAuditSessions.Status.Reveal), "100,000 blocks on");
        vm.prank(owner);
        vrf.setRequester(address(sessions), false); // NotRequester: a lasting refusal
        sessions.advance(sid);
        emit log_named_uint("slashRequest after the revocation", sessions.sessionOf(sid).slashRequest);
        assertEq(sessions.sessionOf(sid).slashRequest, type(uint56).max, "no seed");
        (uint256 incorrect, uint256 slashes) = _slashes(sid);
        assertEq(slashes, incorrect, "settled: every incorrect vote slashed");
        assertEq(incorrect, 1, "one incorrect vote");
    }
}
