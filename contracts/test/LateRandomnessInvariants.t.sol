// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase} from "./utils/TestBase.sol";
import {StakingFixture} from "./utils/StakingFixture.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../src/interfaces/IRandomness.sol";
import {LookaheadRandomness} from "../src/LookaheadRandomness.sol";
import {VRFRandomness} from "../src/VRFRandomness.sol";
import {IVRFCoordinatorV2Plus} from "../src/interfaces/IVRFCoordinatorV2Plus.sol";
import {MockVRFCoordinator} from "./mocks/MockVRFCoordinator.sol";

/// @notice Adversarial handler for the ending of sessions whose draw never started: VRF deliveries early
/// (ignored), on time before or after the snapshot's last readable block, or after the timeout (ignored); a
/// lookahead source whose 128-block delay puts some targets past the snapshot; pokes (draw, advance) by the
/// provider or a keeper in any order and at any time; the lookahead value fixed directly on the source.
/// Ghosts are kept from the handler's own observations, not from the contracts' new view.
contract LateRandomnessHandler is StakingFixture {
    uint256 internal constant FEE = 100e18;
    uint256 internal constant MAX_SESSIONS = 24;
    uint256 internal constant TIMEOUT = 200;

    MockVRFCoordinator public coord;
    VRFRandomness public vrf;
    LookaheadRandomness public slow;
    bool internal _onVrf;

    uint256[] public sessionIds;
    mapping(uint256 => bool) public isVrf;
    /// @dev The snapshot's last readable block, and the first block the value was obtainable as the handler
    /// saw it (VRF: the accepted delivery, 0 = none; lookahead: target + 1, known at opening).
    mapping(uint256 => uint256) public readableOf;
    mapping(uint256 => uint256) public obtainableOf;
    /// @dev What the provider and the treasury received when the session ended.
    mapping(uint256 => uint256) public refundOf;
    mapping(uint256 => uint256) public forfeitOf;
    uint256 public total;
    uint256 public lateRefunds;
    uint256 public timelyForfeits;
    uint256 public ignoredDeliveries;

    constructor() {
        _deploy();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
        coord = new MockVRFCoordinator();
        VRFRandomness.Config memory c;
        c.keyHash = keccak256("lane");
        c.subscriptionId = 1;
        c.requestConfirmations = 3;
        c.callbackGasLimit = 60_000;
        c.timeoutBlocks = uint32(TIMEOUT);
        vrf = new VRFRandomness(IVRFCoordinatorV2Plus(address(coord)), owner, c);
        slow = new LookaheadRandomness(128);
        vm.startPrank(owner);
        vrf.setRequester(address(sessions), true);
        sessions.setRandomness(IRandomness(address(slow)));
        vm.stopPrank();
        total = _held();
    }

    function _held() internal view returns (uint256) {
        return
            token.balanceOf(provider) + token.balanceOf(address(treasury))
                + token.balanceOf(address(sessions));
    }

    function held() external view returns (uint256) {
        return _held();
    }

    function sessionCount() external view returns (uint256) {
        return sessionIds.length;
    }

    function core() external view returns (IAuditSessions) {
        return IAuditSessions(address(sessions));
    }

    function _pick(uint256 which) internal view returns (uint256) {
        return sessionIds[which % sessionIds.length];
    }

    // ------------------------------------------------------------ actions

    function open(uint256 wait, bool onVrf) external {
        if (sessionIds.length >= MAX_SESSIONS) return;
        vm.roll(block.number + wait % 60);
        if (onVrf != _onVrf) {
            _onVrf = onVrf;
            vm.prank(owner);
            sessions.setRandomness(onVrf ? IRandomness(address(vrf)) : IRandomness(address(slow)));
        }
        uint256 sid = _open(_uniform(2, 1), FEE);
        sessionIds.push(sid);
        isVrf[sid] = onVrf;
        readableOf[sid] = _sortition().snapshotReadableUntil(sessions.sessionOf(sid).epoch);
        if (!onVrf) obtainableOf[sid] = slow.targetBlockOf(sessions.sessionOf(sid).drawRequest) + 1;
    }

    /// @dev The coordinator answers now, whatever the confirmations or the deadline say (the real one does
    /// not enforce them on chain either); only an accepted delivery makes the value obtainable.
    function deliver(uint256 which, uint256 wait) external {
        if (sessionIds.length == 0) return;
        uint256 sid = _pick(which);
        if (!isVrf[sid]) return;
        uint256 id = sessions.sessionOf(sid).drawRequest;
        if (vrf.status(id) != IRandomness.RequestStatus.Pending) return;
        vm.roll(block.number + wait % 40);
        uint256[] memory words = new uint256[](1);
        words[0] = uint256(keccak256(abi.encode(sid, block.number)));
        coord.deliver(address(vrf), vrf.coordinatorRequestOf(id), words, 60_000);
        if (vrf.status(id) == IRandomness.RequestStatus.Fulfilled) obtainableOf[sid] = block.number;
        else ++ignoredDeliveries;
    }

    /// @dev Anyone fixes a lookahead value on the source itself (it reverts unless Ready).
    function fixOnSource(uint256 which) external {
        if (sessionIds.length == 0) return;
        uint256 sid = _pick(which);
        if (isVrf[sid]) return;
        try slow.fulfil(sessions.sessionOf(sid).drawRequest) {} catch {}
    }

    function passTime(uint256 blocks) external {
        vm.roll(block.number + 1 + blocks % 150);
    }

    /// @dev The provider or a keeper draws or advances; the ending's money is recorded.
    function poke(uint256 which, uint8 how) external {
        if (sessionIds.length == 0) return;
        uint256 sid = _pick(which);
        if (sessions.statusOf(sid) != IAuditSessions.Status.Created) return;
        uint256 p0 = token.balanceOf(provider);
        uint256 t0 = token.balanceOf(address(treasury));
        if (how & 1 == 1) vm.prank(provider);
        if (how & 2 == 2) {
            try sessions.draw(sid, 64) {} catch {}
        } else {
            sessions.advance(sid);
        }
        if (sessions.statusOf(sid) == IAuditSessions.Status.Created) return;
        refundOf[sid] = token.balanceOf(provider) - p0;
        forfeitOf[sid] = token.balanceOf(address(treasury)) - t0;
        IAuditSessions.Termination why = sessions.sessionOf(sid).termination;
        if (why == IAuditSessions.Termination.RandomnessFailed) ++lateRefunds;
        if (
            why == IAuditSessions.Termination.SnapshotUnavailable
                || why == IAuditSessions.Termination.RandomnessMissed
        ) ++timelyForfeits;
    }
}

/// @title LateRandomnessInvariants (outside review 4, finding 1)
/// @notice Over 10,000 handler calls per invariant: tokens are conserved, and a session whose draw never
/// started is refunded only when its randomness became obtainable after its snapshot's last readable block
/// (never for a value obtainable in time, whoever poked it and in whatever order), and then in full.
contract LateRandomnessInvariantsTest is TestBase {
    LateRandomnessHandler internal handler;

    function setUp() public {
        handler = new LateRandomnessHandler();
    }

    function targetContracts() public view returns (address[] memory targets) {
        targets = new address[](1);
        targets[0] = address(handler);
    }

    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_tokensConserved() public view {
        assertEq(handler.held(), handler.total(), "provider + treasury + core");
    }

    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_refundOnlyWhenObtainableAfterTheSnapshot() public view {
        IAuditSessions core = handler.core();
        for (uint256 i = 0; i < handler.sessionCount(); ++i) {
            uint256 sid = handler.sessionIds(i);
            IAuditSessions.Session memory s = core.sessionOf(sid);
            if (s.status != IAuditSessions.Status.Expired || s.drawnSeats != 0) continue;
            uint256 obtainable = handler.obtainableOf(sid);
            bool late = obtainable == 0 || obtainable > handler.readableOf(sid);
            bool refunded = s.termination == IAuditSessions.Termination.RandomnessFailed;
            assertTrue(refunded == late, "refund iff the value came after the snapshot");
            if (refunded) assertEq(handler.refundOf(sid), 80e18, "the pool refunded in full");
            else assertEq(handler.refundOf(sid), 0, "a timely value is never refunded");
        }
    }

    /// @dev The handler reaches both endings (a direct sequence, so the invariants above are not vacuous).
    function test_handlerReachesLateRefundsAndTimelyForfeits() public {
        handler.open(0, true); // VRF, delivered late
        handler.open(0, true); // VRF, delivered in time, drawn too late
        handler.open(0, false); // lookahead 128
        handler.deliver(1, 5);
        handler.passTime(149); // past every readable block (at most 149 after the opening), within the timeout
        handler.deliver(0, 0);
        handler.poke(0, 3);
        handler.poke(1, 3);
        handler.poke(2, 1);
        assertGe(handler.lateRefunds(), 1, "a late value refunded");
        assertGe(handler.timelyForfeits(), 1, "a timely value forfeited");
        invariant_tokensConserved();
        invariant_refundOnlyWhenObtainableAfterTheSnapshot();
    }
}
