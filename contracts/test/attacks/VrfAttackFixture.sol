// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "../utils/StakingFixture.sol";
import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";
import {ISettlementModule} from "../../src/interfaces/ISettlementModule.sol";
import {VRFRandomness} from "../../src/VRFRandomness.sol";
import {IVRFCoordinatorV2Plus, VRFV2PlusClient} from "../../src/interfaces/IVRFCoordinatorV2Plus.sol";
import {MockVRFCoordinator} from "../mocks/MockVRFCoordinator.sol";
import {Vm} from "../utils/TestBase.sol";

/// @dev The cheatcodes TestBase's `Vm` does not declare (a `_KNOWN` test skips itself).
interface VmReview12 {
    function skip(bool) external;
}

/// @dev The oracle's side of the coordinator doubles (MockVRFCoordinator and the upstream-like ones some
/// attack tests write): deliver the words derived from `seed` to a request's consumer.
interface IFulfillingCoordinator {
    function fulfill(uint256 requestId, uint256 seed) external returns (bool success);
}

/// @dev An outsider's one-word request on its own subscription (lane "outsider lane", 1 confirmation, a
/// 2,000,000-gas callback), made by the calling consumer contract.
function outsiderRequest(MockVRFCoordinator coord) returns (uint256) {
    return coord.requestRandomWords(
        VRFV2PlusClient.RandomWordsRequest({
            keyHash: keccak256("outsider lane"),
            subId: 666,
            requestConfirmations: 1,
            callbackGasLimit: 2_000_000,
            numWords: 1,
            extraArgs: VRFV2PlusClient.argsToBytes(VRFV2PlusClient.ExtraArgsV1({nativePayment: false}))
        })
    );
}

/// @notice The VRF set-up the attack tests share, so each test states only what its attack changes: a
/// VRFRandomness adapter on a coordinator double (lane "lane", subscription 1, callback gas 60,000; by
/// default 3 confirmations and a 400-block timeout, longer than a snapshot's readability so a slow answer
/// still counts), the core allowed to request, and delivery / settlement helpers.
/// @dev Deployments happen from the test contract in the order the tests always used (coordinator, then
/// adapter), so addresses and every measured figure stay as they were.
abstract contract VrfAttackFixture is StakingFixture {
    uint256 internal constant VRF_CONFIRMATIONS = 3;
    uint256 internal constant VRF_TIMEOUT = 400;
    uint256 internal constant VRF_CALLBACK_GAS = 60_000;

    /// @dev Set by `_deployVrf` / `_useVrf` (a test on its own coordinator double leaves it unset).
    MockVRFCoordinator internal coord;
    VRFRandomness internal vrf;

    function _vrfConfig(uint256 confirmations, uint256 timeout)
        internal
        pure
        returns (VRFRandomness.Config memory c)
    {
        c.keyHash = keccak256("lane");
        c.subscriptionId = 1;
        c.requestConfirmations = uint16(confirmations);
        c.callbackGasLimit = uint32(VRF_CALLBACK_GAS);
        c.timeoutBlocks = uint32(timeout);
    }

    /// @dev An adapter on `coordinator` owned by `owner`; the core (and `alsoRequester` unless zero) may
    /// request. Not yet the core's source.
    function _newVrf(IVRFCoordinatorV2Plus coordinator, VRFRandomness.Config memory c, address alsoRequester)
        internal
        returns (VRFRandomness v)
    {
        v = new VRFRandomness(coordinator, owner, c);
        vm.startPrank(owner);
        v.setRequester(address(sessions), true);
        if (alsoRequester != address(0)) v.setRequester(alsoRequester, true);
        vm.stopPrank();
    }

    /// @dev A fresh MockVRFCoordinator and an adapter on it (`coord`, `vrf`), not yet the core's source.
    function _deployVrf(VRFRandomness.Config memory c, address alsoRequester) internal {
        coord = new MockVRFCoordinator();
        vrf = _newVrf(IVRFCoordinatorV2Plus(address(coord)), c, alsoRequester);
    }

    /// @dev `_deployVrf`, made the core's randomness source.
    function _useVrf(VRFRandomness.Config memory c, address alsoRequester) internal {
        _deployVrf(c, alsoRequester);
        vm.prank(owner);
        sessions.setRandomness(IRandomness(address(vrf)));
    }

    /// @dev The default VRF source (3 confirmations, timeout 400); `alsoRequester` may request too.
    function _useVrf(address alsoRequester) internal {
        _useVrf(_vrfConfig(VRF_CONFIRMATIONS, VRF_TIMEOUT), alsoRequester);
    }

    function _useVrf() internal {
        _useVrf(address(0));
    }

    /// @dev The oracle answers local request `local` of `vrf` (words from `seed`), whatever double `vrf` is on.
    function _deliver(uint256 local, uint256 seed) internal returns (bool) {
        return
            IFulfillingCoordinator(address(vrf.coordinator())).fulfill(vrf.coordinatorRequestOf(local), seed);
    }

    /// @dev One tier-1 segment for `fee`: its draw value delivered once the confirmations passed (seed 7),
    /// drawn and published.
    function _drawnSession(uint256 fee) internal returns (uint256 sid) {
        sid = _open(_uniform(1, 1), fee);
        vm.roll(block.number + VRF_CONFIRMATIONS);
        assertTrue(_deliver(sessions.sessionOf(sid).drawRequest, 7), "draw value delivered");
        _drawAll(sid);
        _publish(sid);
    }

    /// @dev Settle round 0 of `sid` for `list`; the incorrect votes and slashes its AuditorSettled events report.
    function _settleCountingSlashes(uint256 sid, address[] memory list)
        internal
        returns (uint256 incorrect, uint256 slashes)
    {
        vm.recordLogs();
        settlement.settleBatch(sid, 0, list);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics[0] != ISettlementModule.AuditorSettled.selector) continue;
            (,, uint256 inc,, uint256 sl,,,) = abi.decode(
                logs[i].data, (uint256, uint256, uint256, uint256, uint256, uint256, uint256, uint256)
            );
            incorrect += inc;
            slashes += sl;
        }
    }
}

/// @notice `VrfAttackFixture` with the appeal and canary modules (`AppealsFixture`), and the round-0 and
/// settlement steps an appeal on VRF goes through.
abstract contract VrfAppealsAttackFixture is AppealsFixture, VrfAttackFixture {
    /// @dev Round 0 of the opened session `sid` on VRF: its value delivered once the canary window passed
    /// (seed 11), drawn the block after, voted PASS, then in its appeal window.
    function _finalizeRound0OnVrf(uint256 sid) internal {
        uint256 request = sessions.sessionOf(sid).drawRequest;
        vm.roll(block.number + CANARY_COMMIT_BLOCKS + 1);
        assertTrue(_deliver(request, 11), "round 0 value delivered");
        vm.roll(block.number + 1);
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 0, 0, 0);
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
    }

    /// @dev `_closeAndSettle` with the slash seed delivered by the coordinator (seed 5).
    function _closeAndSettleOnVrf(uint256 sid) internal {
        uint256 end = appeals.sessionAppeals(sid).lastWindowEnd;
        if (block.number <= end) vm.roll(end + 1);
        assertTrue(appeals.advance(sid), "outcome final");
        vm.roll(block.number + VRF_CONFIRMATIONS);
        assertTrue(_deliver(sessions.sessionOf(sid).slashRequest, 5), "slash");
        vm.roll(block.number + 1);
        escrow.settleAppeals(sid, 1024);
        uint256 rounds = appeals.sessionAppeals(sid).roundCount;
        for (uint256 r = 0; r <= rounds; ++r) {
            address[] memory list = _roundAuditors(sid, r);
            if (list.length != 0) settlement.settleBatch(sid, r, list);
        }
    }
}

/// @notice Outside reviews 11 and 12's appeal set-up on VRF: no canaries, 12 tier-1 auditors of 1,000 TRUST,
/// the default VRF source (3 confirmations, timeout 400) which the appeal module may also request from, and
/// a finalized session of `n` correct PASS segments whose appeal window is open. The oracle's delivery
/// block is the test's to pick (`_deliver`).
abstract contract VrfNoCanaryAppealsFixture is VrfAppealsAttackFixture {
    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    function _appealParams() internal pure virtual override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.canaryRateBps = 0;
    }

    function _setUpVrf() internal {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
        _useVrf(address(appeals));
    }

    /// @dev A session of `n` tier-1 segments, drawn and voted PASS on VRF, its appeal window open.
    function _finalizedOnVrf(uint256 n) internal returns (uint256 sid) {
        sid = _open(_uniform(n, 1), FEE);
        _commitCanaries(sid, new bytes32[](0));
        _finalizeRound0OnVrf(sid);
    }
}
