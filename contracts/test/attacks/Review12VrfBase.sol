// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";
import {VRFRandomness} from "../../src/VRFRandomness.sol";
import {IVRFCoordinatorV2Plus} from "../../src/interfaces/IVRFCoordinatorV2Plus.sol";
import {MockVRFCoordinator} from "../mocks/MockVRFCoordinator.sol";

/// @dev The cheatcodes TestBase's `Vm` does not declare (a `_KNOWN` test skips itself).
interface VmReview12 {
    function skip(bool) external;
}

/// @notice Outside review 12's fixture: the appeals protocol on a mock VRF coordinator (3 confirmations,
/// timeout 400 blocks, longer than a snapshot's readability), 12 tier-1 auditors of 1,000 TRUST, no canaries,
/// and a finalized session of `n` correct PASS segments whose appeal window is open. The oracle's delivery
/// block is the test's to pick (`_deliver`).
abstract contract Review12VrfBase is AppealsFixture {
    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    MockVRFCoordinator internal coord;
    VRFRandomness internal vrf;

    function _appealParams() internal pure virtual override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.canaryRateBps = 0;
    }

    function _setUpVrf() internal {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
        coord = new MockVRFCoordinator();
        VRFRandomness.Config memory c;
        c.keyHash = keccak256("lane");
        c.subscriptionId = 1;
        c.requestConfirmations = 3;
        c.callbackGasLimit = 60_000;
        c.timeoutBlocks = 400;
        vrf = new VRFRandomness(IVRFCoordinatorV2Plus(address(coord)), owner, c);
        vm.startPrank(owner);
        vrf.setRequester(address(sessions), true);
        vrf.setRequester(address(appeals), true);
        sessions.setRandomness(IRandomness(address(vrf)));
        vm.stopPrank();
    }

    /// @dev The oracle delivers request `id` in the current block (value `word`).
    function _deliver(uint256 id, uint256 word) internal {
        assertTrue(coord.fulfill(vrf.coordinatorRequestOf(id), word), "delivered");
    }

    /// @dev A session of `n` tier-1 segments, drawn and voted PASS on VRF, its appeal window open.
    function _finalizedOnVrf(uint256 n) internal returns (uint256 sid) {
        sid = _open(_uniform(n, 1), FEE);
        _commitCanaries(sid, new bytes32[](0));
        uint256 request = sessions.sessionOf(sid).drawRequest;
        vm.roll(block.number + CANARY_COMMIT_BLOCKS + 1);
        _deliver(request, 11);
        vm.roll(block.number + 1);
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 0, 0, 0);
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
    }

    /// @dev `_closeAndSettle` with the slash seed delivered by the oracle.
    function _closeAndSettleOnVrf(uint256 sid) internal {
        uint256 end = appeals.sessionAppeals(sid).lastWindowEnd;
        if (block.number <= end) vm.roll(end + 1);
        assertTrue(appeals.advance(sid), "outcome final");
        vm.roll(block.number + 3);
        _deliver(sessions.sessionOf(sid).slashRequest, 5);
        vm.roll(block.number + 1);
        escrow.settleAppeals(sid, 1024);
        uint256 rounds = appeals.sessionAppeals(sid).roundCount;
        for (uint256 r = 0; r <= rounds; ++r) {
            address[] memory list = _roundAuditors(sid, r);
            if (list.length != 0) settlement.settleBatch(sid, r, list);
        }
    }
}
