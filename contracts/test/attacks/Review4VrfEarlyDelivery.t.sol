// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfAppealsAttackFixture} from "./VrfAttackFixture.sol";
import {ICanaryModule} from "../../src/interfaces/ICanaryModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";

/// @dev The cheatcode TestBase's `Vm` does not declare.
interface VmSkipReview4Vrf {
    function skip(bool) external;
}

/// @title Review4VrfEarlyDelivery (outside review 4 of canarywin 1588bdc, VRFRandomness.requestAfter)
/// @notice `IRandomness.requestAfter` promises "a request made in block b stays Pending at least through
/// block b + minBlocks". VRFRandomness keeps it only by asking the coordinator for minBlocks + 1
/// confirmations. VRF v2.5's coordinator does NOT enforce `requestConfirmations` on chain: its
/// `fulfillRandomWords` checks the request commitment and the proof over `blockhash(rc.blockNum)`, which
/// exists from block b + 1 (smartcontractkit/chainlink, VRFCoordinatorV2_5._getRandomnessFromProof); the
/// confirmation count is only the oracle node's off-chain waiting rule. The test mock
/// (`MockVRFCoordinator.fulfill`) enforces it and so hides this; its `deliver` is what the real
/// coordinator allows. A coordinator (oracle node) that answers in block b + 1 fixes the value at once, and
/// the canary operator's window shrinks from canaryCommitBlocks to the opening block itself: the second
/// review's "operator misses the window, the provider pays for canaries owed" returns.
/// What still holds (test below): no commit is ever accepted once the value is public.
/// Fix: VRFRandomness records each request's earliest delivery block (`block.number + confirmations`, in the
/// request slot next to the deadline) and `rawFulfillRandomWords` ignores a delivery before it (event
/// `EarlyFulfilmentIgnored`, like `LateFulfilmentIgnored`): the request stays Pending, then Failed at its
/// deadline (RandomnessFailed: refund; no draw ever used the early value).
contract Review4VrfEarlyDelivery is VrfAppealsAttackFixture {
    uint8 internal constant FAIL = 2;

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
        _useVrf();
    }

    function _one(uint256 sid) internal pure returns (bytes32[] memory c) {
        c = new bytes32[](1);
        c[0] = _canaryCommitment(sid, 3, FAIL);
    }

    function _commitWorks(uint256 sid) internal returns (bool ok) {
        uint256 snap = vm.snapshotState();
        vm.prank(canaryOperator);
        (ok,) = address(canaries).call(abi.encodeCall(ICanaryModule.commitCanaries, (sid, _one(sid))));
        vm.revertToState(snap);
    }

    /// @dev The coordinator answers as the real v2.5 one may: one block after the request, whatever the
    /// confirmations asked.
    function _deliverEarly(uint256 sid) internal {
        uint256 cid = vrf.coordinatorRequestOf(sessions.sessionOf(sid).drawRequest);
        uint256[] memory words = new uint256[](1);
        words[0] = uint256(keccak256("early"));
        assertTrue(coord.deliver(address(vrf), cid, words, 60_000), "callback accepted");
    }

    /// @dev Property: the operator has every block of open .. open + canaryCommitBlocks to commit, even
    /// if the coordinator delivers before the confirmations it was asked for. Measured (skip removed):
    /// 9 confirmations asked, delivery in block open + 1, value Fulfilled there; commits refused in 8 of
    /// the 8 blocks open + 1 .. open + 8 (the window is the opening block only).
    function test_EarlyVrfDeliveryDoesNotShortenCanaryWindow() public {
        uint256 sid = _open(_uniform(10, 1), FEE); // 1 canary owed
        uint256 opened = block.number;
        uint256 local = sessions.sessionOf(sid).drawRequest;
        assertEq(
            coord.recorded(vrf.coordinatorRequestOf(local)).requestConfirmations,
            CANARY_COMMIT_BLOCKS + 1,
            "confirmations asked"
        );
        vm.roll(opened + 1);
        _deliverEarly(sid);
        uint256 refused = 0;
        for (uint256 b = opened + 1; b <= opened + CANARY_COMMIT_BLOCKS; ++b) {
            vm.roll(b);
            if (!_commitWorks(sid)) ++refused;
        }
        emit log_named_uint("blocks of the window refusing the commit", refused);
        assertEq(refused, 0, "an early delivery closed the operator's window");
    }

    event log_named_uint(string key, uint256 val);

    /// @dev Safety still holds: in no block is a commit accepted while the draw's value is fixed (on the
    /// current code an early delivery fixes it and every later commit is refused; with the fix above the
    /// early value is ignored and never drawn from).
    function test_NoCommitWhileAnEarlyVrfValueIsFixed() public {
        uint256 sid = _open(_uniform(10, 1), FEE);
        uint256 opened = block.number;
        uint256 local = sessions.sessionOf(sid).drawRequest;
        vm.roll(opened + 1);
        _deliverEarly(sid);
        for (uint256 b = opened + 1; b <= opened + CANARY_COMMIT_BLOCKS + 2; ++b) {
            vm.roll(b);
            bool fixedValue = vrf.status(local) == IRandomness.RequestStatus.Fulfilled;
            assertTrue(!(fixedValue && _commitWorks(sid)), "commit accepted while the value is public");
        }
    }
}
