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

/// @notice Adversarial handler for the ending of sessions: VRF deliveries early (ignored), on time before or
/// after the snapshot's last readable block, or after the timeout (ignored), for the draw and the slash
/// seed; the VRF source stopping (and resuming) taking requests at any moment (outside review 5); a
/// lookahead source as slow as the core accepts (one epoch); pokes (draw, advance) by the provider or a
/// keeper in any order and at any time; the lookahead value fixed directly on the source; sessions driven
/// through publication, votes, finalization and settlement. Ghosts are kept from the handler's own
/// observations, not from the contracts' new view.
contract LateRandomnessHandler is StakingFixture {
    uint256 internal constant FEE = 100e18;
    uint256 internal constant MAX_SESSIONS = 24;
    uint256 internal constant TIMEOUT = 200;
    uint256 internal constant HASH_WINDOW_BLOCKS = 256;

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
    /// @dev The draw window a value must leave to be in time (`DrawWindow`, outside reviews 12 and 14):
    /// drawBlocks capped at readable - epochEnd - max(minDelay, canaryCommitBlocks) - 2 - 4 (latency).
    mapping(uint256 => uint256) public needOf;
    /// @dev What the provider and the treasury received when the session ended.
    mapping(uint256 => uint256) public refundOf;
    mapping(uint256 => uint256) public forfeitOf;
    uint256 public total;
    uint256 public lateRefunds;
    uint256 public timelyForfeits;
    uint256 public ignoredDeliveries;
    bool public revoked;
    /// @dev Openings refused while the VRF source refused requests, and any that went through (must be 0),
    /// or that cost the provider anything (must be 0).
    uint256 public refusedOpenings;
    uint256 public openedOnRefusingSource;
    uint256 public paidForRefusedOpening;
    /// @dev Slash-seed requests the source refused (the session got no seed and still settled).
    uint256 public refusedSlashSeeds;
    uint256 public settledSessions;

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
        slow = new LookaheadRandomness(EPOCH_BLOCKS); // the slowest lookahead source the core accepts
        vm.startPrank(owner);
        vrf.setRequester(address(sessions), true);
        sessions.setRandomness(IRandomness(address(slow)));
        vm.stopPrank();
        total = _held();
    }

    function _held() internal view returns (uint256) {
        return token.balanceOf(provider) + token.balanceOf(address(treasury))
            + token.balanceOf(address(sessions)) + token.balanceOf(address(staking))
            + token.balanceOf(address(settlement));
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
        bytes memory tw = _uniform(2, 1);
        if (onVrf && revoked) {
            // The source refuses the draw request: the opening reverts and nothing is paid.
            uint256 before = token.balanceOf(provider);
            uint256 count = sessions.sessionCount();
            vm.startPrank(provider);
            token.approve(address(sessions), FEE);
            try sessions.openSession(keccak256(abi.encode(tw, block.number)), tw, FEE) {
                ++openedOnRefusingSource;
            } catch {
                ++refusedOpenings;
            }
            vm.stopPrank();
            if (token.balanceOf(provider) != before || sessions.sessionCount() != count) {
                ++paidForRefusedOpening;
            }
            return;
        }
        uint256 sid = _open(tw, FEE);
        sessionIds.push(sid);
        isVrf[sid] = onVrf;
        uint256 readable = _sortition().snapshotReadableUntil(sessions.sessionOf(sid).epoch);
        readableOf[sid] = readable;
        uint256 delay = (onVrf ? IRandomness(address(vrf)) : IRandomness(address(slow))).minDelay();
        if (delay < CANARY_COMMIT_BLOCKS) delay = CANARY_COMMIT_BLOCKS;
        uint256 guaranteed = readable - (sessions.sessionOf(sid).epoch * EPOCH_BLOCKS - 1) - delay - 2 - 4;
        uint256 drawBlocks = _sessionParams().drawBlocks;
        needOf[sid] = drawBlocks < guaranteed ? drawBlocks : guaranteed;
        if (!onVrf) obtainableOf[sid] = slow.targetBlockOf(sessions.sessionOf(sid).drawRequest) + 1;
    }

    /// @dev The coordinator answers now, whatever the confirmations or the deadline say (the real one does
    /// not enforce them on chain either); only an accepted delivery makes the value obtainable. It answers
    /// the draw request of a session still Created, else its slash-seed request if one was made.
    function deliver(uint256 which, uint256 wait) external {
        if (sessionIds.length == 0) return;
        uint256 sid = _pick(which);
        if (!isVrf[sid]) return;
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        bool forDraw = s.status == IAuditSessions.Status.Created;
        uint256 id = forDraw ? s.drawRequest : s.slashRequest;
        if (id == 0 || vrf.status(id) != IRandomness.RequestStatus.Pending) return;
        vm.roll(block.number + wait % 40);
        uint256[] memory words = new uint256[](1);
        words[0] = uint256(keccak256(abi.encode(sid, block.number)));
        coord.deliver(address(vrf), vrf.coordinatorRequestOf(id), words, 60_000);
        if (vrf.status(id) != IRandomness.RequestStatus.Fulfilled) ++ignoredDeliveries;
        else if (forDraw) obtainableOf[sid] = block.number + 1; // usable from the next block (review 8)
    }

    /// @dev The VRF source stops (or resumes) taking requests at any moment: the adapter's requester
    /// permission revoked while migrating (at the real coordinator: subscription cancelled, consumer removed).
    function revoke(bool stop) external {
        revoked = stop;
        vm.prank(owner);
        vrf.setRequester(address(sessions), !stop);
    }

    /// @dev Drive a session one step the way its participants might: draw a page, publish the keys, vote
    /// (`failMask` verdicts, `invertMask` auditors the opposite, `skipMask` never reveal), finalize, settle.
    function progress(uint256 which, uint256 failMask, uint256 invertMask, uint256 skipMask) external {
        if (sessionIds.length == 0) return;
        uint256 sid = _pick(which);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        if (s.status == IAuditSessions.Status.Created) {
            _poke(sid, 2);
        } else if (s.status == IAuditSessions.Status.Drawing) {
            if (s.drawnSeats < s.totalSeats) {
                try sessions.draw(sid, 16) {} catch {}
            } else {
                vm.prank(provider);
                try sessions.publishKeys(sid, "bafy-manifest") {} catch {}
            }
        } else if (s.status == IAuditSessions.Status.KeysPublished) {
            _commitAll(sid, failMask % 4, invertMask);
            _revealAll(sid, failMask % 4, invertMask, skipMask);
        } else if (s.status == IAuditSessions.Status.Commit || s.status == IAuditSessions.Status.Reveal) {
            _recordSlashRequest(sid, sessions.advance(sid));
        } else {
            _settle(sid);
        }
    }

    function _recordSlashRequest(uint256 sid, IAuditSessions.Status st) internal {
        if (st == IAuditSessions.Status.Finalized && sessions.sessionOf(sid).slashRequest == type(uint56).max)
        {
            ++refusedSlashSeeds;
        }
    }

    function _settle(uint256 sid) internal {
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        if (s.auditorCount == 0 || s.settledCount == s.auditorCount) return;
        try settlement.settleBatch(sid, 0, _auditors(sid)) {
            ++settledSessions;
        } catch {}
    }

    /// @dev An honest keeper after the adversary stopped: bounded rounds of (roll, advance, settle) over
    /// every session, then every auditor's ledger drained. Returns the advance calls it made.
    function finishAll() external returns (uint256 calls) {
        for (uint256 k = 0; k < 3; ++k) {
            vm.roll(block.number + 1 + TIMEOUT + HASH_WINDOW_BLOCKS);
            for (uint256 i = 0; i < sessionIds.length; ++i) {
                uint256 sid = sessionIds[i];
                if (sessions.statusOf(sid) == IAuditSessions.Status.Created) _poke(sid, 0);
                else _recordSlashRequest(sid, sessions.advance(sid));
                ++calls;
                _settle(sid);
            }
        }
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            staking.drain(auditorAddrs[i], 256);
        }
    }

    /// @dev Pool locks still held by the auditors.
    function lockedTotal() external view returns (uint256 locked) {
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            locked += _locked(auditorAddrs[i]);
        }
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
        _poke(_pick(which), how);
    }

    function _poke(uint256 sid, uint8 how) internal {
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
    struct FuzzSelector {
        address addr;
        bytes4[] selectors;
    }

    LateRandomnessHandler internal handler;

    function setUp() public {
        handler = new LateRandomnessHandler();
    }

    function targetContracts() public view returns (address[] memory targets) {
        targets = new address[](1);
        targets[0] = address(handler);
    }

    /// @dev The adversary's actions; `finishAll` (the honest keeper) runs only in `afterInvariant`.
    function targetSelectors() public view returns (FuzzSelector[] memory s) {
        s = new FuzzSelector[](1);
        bytes4[] memory sel = new bytes4[](7);
        sel[0] = LateRandomnessHandler.open.selector;
        sel[1] = LateRandomnessHandler.deliver.selector;
        sel[2] = LateRandomnessHandler.fixOnSource.selector;
        sel[3] = LateRandomnessHandler.passTime.selector;
        sel[4] = LateRandomnessHandler.poke.selector;
        sel[5] = LateRandomnessHandler.revoke.selector;
        sel[6] = LateRandomnessHandler.progress.selector;
        s[0] = FuzzSelector({addr: address(handler), selectors: sel});
    }

    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_tokensConserved() public view {
        assertEq(handler.held(), handler.total(), "provider + treasury + core + staking + settlement");
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
            bool late = obtainable == 0 || obtainable + handler.needOf(sid) > handler.readableOf(sid);
            bool refunded = s.termination == IAuditSessions.Termination.RandomnessFailed;
            assertTrue(refunded == late, "refund iff the value came too late for the draw window");
            if (refunded) assertEq(handler.refundOf(sid), 80e18, "the pool refunded in full");
            else assertEq(handler.refundOf(sid), 0, "a timely value is never refunded");
        }
    }

    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    /// @dev A source refusing requests never takes a provider's fee: the opening reverts with nothing paid.
    function invariant_refusingSourceOpensNothing() public view {
        assertEq(handler.openedOnRefusingSource(), 0, "no session opens on a refusing source");
        assertEq(handler.paidForRefusedOpening(), 0, "nothing paid for a refused opening");
    }

    /// @dev Liveness (outside reviews 5 and 6): whatever the source did (refused requests, delivered late or
    /// never), after the adversary's sequence an honest keeper's bounded advance/settle calls (3 rounds, one
    /// advance per session each) bring every session to a terminal state, settle every drawn auditor and
    /// release every lock. Runs at the end of each of the 100 runs of every invariant above.
    function afterInvariant() public {
        uint256 calls = handler.finishAll();
        IAuditSessions core = handler.core();
        uint256 n = handler.sessionCount();
        assertLe(calls, 3 * n, "bounded advance calls");
        for (uint256 i = 0; i < n; ++i) {
            IAuditSessions.Session memory s = core.sessionOf(handler.sessionIds(i));
            assertTrue(
                s.status == IAuditSessions.Status.Finalized || s.status == IAuditSessions.Status.Cancelled
                    || s.status == IAuditSessions.Status.Expired,
                "every session terminal"
            );
            assertEq(s.settledCount, s.auditorCount, "every drawn auditor settled");
        }
        assertEq(handler.lockedTotal(), 0, "every lock released");
        invariant_tokensConserved();
    }

    /// @dev The liveness path is reached with a refused slash seed and a refused opening (direct sequence).
    function test_refusedSlashSeedAndOpeningStillEnd() public {
        handler.open(0, true);
        handler.deliver(0, 3); // draw value delivered after the confirmations
        handler.passTime(0); // usable from the block after the delivery (outside review 8)
        for (uint256 i = 0; i < 3; ++i) {
            handler.progress(0, 0, 0, 0); // draw, publish, vote
        }
        handler.revoke(true);
        handler.passTime(100);
        handler.progress(0, 0, 0, 0); // finalize: the slash-seed request is refused
        handler.open(0, true); // refused: nothing paid
        assertEq(handler.refusedSlashSeeds(), 1, "slash seed refused");
        assertEq(handler.refusedOpenings(), 1, "opening refused");
        invariant_refusingSourceOpensNothing();
        afterInvariant();
        assertGe(handler.settledSessions(), 1, "the finalized session settled without a seed");
    }

    /// @dev The handler reaches both endings (a direct sequence, so the invariants above are not vacuous).
    function test_handlerReachesLateRefundsAndTimelyForfeits() public {
        handler.open(0, true); // VRF, delivered late
        handler.open(0, true); // VRF, delivered in time, drawn too late
        handler.open(0, false); // lookahead, one epoch
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
