// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "../utils/StakingFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";
import {VRFRandomness} from "../../src/VRFRandomness.sol";
import {IVRFCoordinatorV2Plus} from "../../src/interfaces/IVRFCoordinatorV2Plus.sol";
import {MockVRFCoordinator} from "../mocks/MockVRFCoordinator.sol";

/// @dev The cheatcode TestBase's `Vm` does not declare.
interface VmSkipReview8LastBlock {
    function skip(bool) external;
}

/// @title Review8VrfLastBlockDelivery (outside review 8 of main b23b820, late randomness; low)
/// @notice Property (docs/protocol-v2.md, "Refund iff the value came after the snapshot": `obtainableAt` is
/// "the first block anyone could obtain a value", and a forfeit means "the value was available in time and
/// nobody drew"): a value that no keeper's transaction submitted after seeing it can use while the
/// snapshot is readable is refunded. For lookahead, `obtainableAt = target + 1`, the first block in which a
/// separately submitted transaction can fix it. For VRF it is the delivery block itself: a delivery in the
/// snapshot's last readable block counts as "in time", yet the only draw that can use it is one ordered
/// after the delivery inside that same block (a bundle/backrun); the provider's (or anyone's) draw submitted
/// on seeing the delivery lands at `readable + 1` and ends the session `SnapshotUnavailable`: forfeit.
/// @dev Attack: none by the provider; an oracle delayed by about two epochs (an outage) that answers in the
/// last readable block. The refund/forfeit line is off by one block against VRF. Measured
/// (`scripts/forge test --match-path 'contracts/test/attacks/Review8VrfLastBlock*' -vv`, skip removed):
/// fee 1000 TRUST; delivery at `readable`; draw at `readable + 1` returns 0; termination 3
/// (SnapshotUnavailable); provider refunded 0; treasury +800 beyond its fee share. A delivery at
/// `readable + 1` is refunded (existing `Review4CanaryWindowFitsSnapshot`).
/// Fix proposal: `VRFRandomness.obtainableAt` = delivery block + 1 (the first block a transaction submitted
/// after the delivery can use it, as lookahead's target + 1) AND `_startDraw` refuses a value before its
/// `obtainableAt` (no draw ordered behind the delivery in its own block). Both halves are needed: with only
/// the first, a provider able to backrun the last-block delivery would draw a good seed and take the refund
/// on a bad one (a re-roll). `_requestDraw`'s check already leaves an epoch, so only outages move.
contract Review8VrfLastBlockDelivery is StakingFixture {
    uint256 internal constant FEE = 1000e18;

    MockVRFCoordinator internal coord;
    VRFRandomness internal vrf;

    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    function setUp() public {
        _deploy();
        _addAuditors(1, 6, STAKE);
        _nextEpoch();
        coord = new MockVRFCoordinator();
        VRFRandomness.Config memory c;
        c.keyHash = keccak256("lane");
        c.subscriptionId = 1;
        c.requestConfirmations = 3;
        c.callbackGasLimit = 60_000;
        c.timeoutBlocks = 400; // longer than the snapshot's readability: a slow answer still counts
        vrf = new VRFRandomness(IVRFCoordinatorV2Plus(address(coord)), owner, c);
        vm.startPrank(owner);
        vrf.setRequester(address(sessions), true);
        sessions.setRandomness(IRandomness(address(vrf)));
        vm.stopPrank();
    }

    /// @dev Open, then the oracle answers in the snapshot's last readable block; returns the session and it.
    function _deliveredInLastBlock() internal returns (uint256 sid, uint256 readable) {
        sid = _open(_uniform(1, 1), FEE);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        readable = _sortition().snapshotReadableUntil(s.epoch);
        vm.roll(readable);
        coord.fulfill(vrf.coordinatorRequestOf(s.drawRequest), 7);
        assertEq(vrf.obtainableAt(s.drawRequest), readable, "delivered in the last readable block");
    }

    function test_LastBlockDeliveryIsNotForfeited_KNOWN() public {
        VmSkipReview8LastBlock(address(vm)).skip(true);
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        uint256 providerBefore = token.balanceOf(provider);
        (uint256 sid, uint256 readable) = _deliveredInLastBlock();
        vm.roll(readable + 1); // the first block a draw submitted on seeing the delivery can land in
        emit log_named_uint("seats drawn", sessions.draw(sid, 16));
        emit log_named_uint(
            "termination (2 RandomnessFailed, 3 SnapshotUnavailable)",
            uint256(sessions.sessionOf(sid).termination)
        );
        uint256 refunded = token.balanceOf(provider) + FEE - providerBefore;
        emit log_named_decimal_uint("provider refunded (TRUST)", refunded, 18);
        emit log_named_decimal_uint(
            "treasury gained beyond the 20% fee share (TRUST)",
            token.balanceOf(address(treasury)) - treasuryBefore - FEE / 5,
            18
        );
        assertEq(refunded, FEE * 8 / 10, "Review8: a VRF answer in the last readable block is forfeited");
    }

    /// @dev Today (holds): only a draw inside the delivery block itself (after the delivery) uses it. The proposed
    /// fix makes this draw wait for `obtainableAt` (then: end RandomnessFailed); change this test with it.
    function test_OnlyASameBlockDrawUsesIt() public {
        (uint256 sid,) = _deliveredInLastBlock();
        sessions.draw(sid, 16);
        assertEq(
            uint256(sessions.statusOf(sid)), uint256(IAuditSessions.Status.Drawing), "drawn in that block"
        );
    }
}
