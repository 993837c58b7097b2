// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "./utils/StakingFixture.sol";
import {AuditSessions} from "../src/AuditSessions.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {IDrawModule} from "../src/interfaces/IDrawModule.sol";
import {LookaheadRandomness} from "../src/LookaheadRandomness.sol";
import {IRandomness} from "../src/interfaces/IRandomness.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";

/// @notice The session core: opening, parameters, keys, finalization, views.
contract AuditSessionsTest is StakingFixture {
    uint256 internal constant FEE = 1000e18;

    function setUp() public {
        _deploy();
        _addAuditors(1, 6, STAKE); // LLM tier
        _addAuditors(2, 4, STAKE); // Human tier
        _addAuditors(0, 2, STAKE); // Computer tier
        _nextEpoch();
    }

    function _mixed() internal pure returns (bytes memory) {
        uint8[] memory tiers = new uint8[](6);
        uint16[] memory weights = new uint16[](6);
        tiers[0] = 1;
        tiers[1] = 1;
        tiers[2] = 0;
        tiers[3] = 2;
        tiers[4] = 1;
        tiers[5] = 2;
        for (uint256 i = 0; i < 6; ++i) {
            weights[i] = uint16(i + 1);
        }
        return _tiersWeights(tiers, weights);
    }

    function _ready(bytes memory tw) internal returns (uint256 sid) {
        sid = _open(tw, FEE);
        _drawAll(sid);
        _publish(sid);
    }

    // ------------------------------------------------------------------ open

    function test_openSplitsFeeAndRecordsSegments() public {
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        uint256 sid = _open(_mixed(), FEE);
        assertEq(sid, 1, "first id");
        assertEq(token.balanceOf(address(sessions)), 800e18, "80% audit pool");
        assertEq(token.balanceOf(address(treasury)) - treasuryBefore, 200e18, "20% treasury");
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        assertEq(uint256(s.status), uint256(IAuditSessions.Status.Created), "status");
        assertEq(s.provider, provider, "provider");
        assertEq(s.segmentCount, 6, "segments");
        assertEq(s.totalSeats, 3 + 3 + 1 + 3 + 3 + 3, "seats = sum k_t");
        assertEq(s.pool, 800e18, "pool");
        assertEq(s.epoch, _sortition().epochOf(block.number), "snapshot epoch of the opening block");
        assertEq(s.drawRequest, randomness.requestCount(), "draw randomness requested at opening");
        assertEq(
            randomness.targetBlockOf(s.drawRequest), block.number + RANDOMNESS_DELAY, "target in the future"
        );
        (uint256 tier, uint256 weight,,, uint256 outcome) = _segment(sid, 3);
        assertEq(tier, 2, "tier of segment 3");
        assertEq(weight, 4, "weight of segment 3");
        assertEq(outcome, 0, "no outcome yet");
    }

    function test_openWithPermit() public {
        bytes memory tw = _uniform(2, 1);
        uint256 deadline = block.timestamp + 1 hours;
        bytes32 structHash = keccak256(
            abi.encode(
                keccak256(
                    "Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)"
                ),
                provider,
                address(sessions),
                FEE,
                token.nonces(provider),
                deadline
            )
        );
        bytes32 digest = keccak256(abi.encodePacked("\x19\x01", token.DOMAIN_SEPARATOR(), structHash));
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(providerKey, digest);
        vm.prank(provider);
        uint256 sid = sessions.openSessionWithPermit(bytes32(uint256(1)), tw, FEE, deadline, v, r, s);
        assertEq(sid, 1, "opened");
        assertEq(token.balanceOf(address(sessions)), 800e18, "fee pulled with the permit");
        assertEq(token.allowance(provider, address(sessions)), 0, "allowance consumed");
    }

    function test_openReverts() public {
        vm.startPrank(provider);
        token.approve(address(sessions), type(uint256).max);
        vm.expectRevert(AuditSessions.InvalidSegments.selector);
        sessions.openSession(bytes32(uint256(1)), "", FEE);
        vm.expectRevert(AuditSessions.InvalidSegments.selector);
        sessions.openSession(bytes32(uint256(1)), hex"01000100", FEE);
        vm.expectRevert(AuditSessions.InvalidSegments.selector);
        sessions.openSession(bytes32(0), hex"010001", FEE);
        vm.expectRevert(AuditSessions.InvalidSegments.selector);
        sessions.openSession(bytes32(uint256(1)), new bytes(3 * 1025), FEE);
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.InvalidTier.selector, 1, 3));
        sessions.openSession(bytes32(uint256(1)), hex"010001030001", FEE);
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.InvalidWeight.selector, 0, 0));
        sessions.openSession(bytes32(uint256(1)), hex"010000", FEE);
        // 2 LLM segments need 6 seats * 6 TRUST = 36 TRUST of pool, i.e. a 45 TRUST fee.
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.FeeTooLow.selector, 28e18, 36e18));
        sessions.openSession(bytes32(uint256(1)), hex"010001010001", 35e18);
        vm.expectRevert(
            abi.encodeWithSelector(AuditSessions.FeeTooHigh.selector, uint256(type(uint96).max) + 1)
        );
        sessions.openSession(bytes32(uint256(1)), hex"010001", uint256(type(uint96).max) + 1);
        sessions.openSession(bytes32(uint256(1)), hex"010001010001", 45e18);
        vm.stopPrank();
    }

    function test_fixedTierWeightIsEnforced() public {
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.tierWeight = [uint16(0), uint16(5), uint16(0)];
        vm.prank(owner);
        sessions.setParams(p);
        vm.startPrank(provider);
        token.approve(address(sessions), type(uint256).max);
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.InvalidWeight.selector, 0, 4));
        sessions.openSession(bytes32(uint256(1)), hex"010004", FEE);
        uint256 sid = sessions.openSession(bytes32(uint256(1)), hex"010005", FEE);
        vm.stopPrank();
        assertEq(sessions.sessionOf(sid).paramsVersion, 1, "pins the new version");
    }

    function test_unknownSessionReverts() public {
        vm.expectRevert(abi.encodeWithSelector(IAuditSessions.UnknownSession.selector, 99));
        sessions.draw(99, 1);
        vm.expectRevert(abi.encodeWithSelector(IAuditSessions.UnknownSession.selector, 99));
        sessions.advance(99);
    }

    // ------------------------------------------------------------------ keys

    function test_publishKeys() public {
        uint256 sid = _open(_mixed(), FEE);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        sessions.draw(sid, 3);
        vm.prank(provider);
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.DrawIncomplete.selector, sid));
        sessions.publishKeys(sid, "cid");
        sessions.draw(sid, 100);
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.NotProvider.selector, sid));
        sessions.publishKeys(sid, "cid");
        vm.prank(provider);
        vm.expectRevert(AuditSessions.EmptyManifest.selector);
        sessions.publishKeys(sid, "");
        vm.prank(provider);
        vm.expectEmit(true, false, false, true, address(sessions));
        emit AuditSessions.KeysPublished(sid, "cid", block.number + 20, block.number + 40);
        sessions.publishKeys(sid, "cid");
        assertEq(uint256(sessions.statusOf(sid)), uint256(IAuditSessions.Status.KeysPublished), "status");
        vm.expectRevert(
            abi.encodeWithSelector(
                IAuditSessions.WrongStatus.selector, sid, IAuditSessions.Status.KeysPublished
            )
        );
        sessions.draw(sid, 1);
    }

    // -------------------------------------------------------------- finalize

    function test_finalizeAppliesQuorumAndTraceRule() public {
        uint256 sid = _ready(_mixed());
        address[] memory list = _auditors(sid);
        // Truth: segments 1 and 3 FAIL. Auditor 0 votes the opposite everywhere; the last auditor
        // commits but never reveals.
        uint256 failMask = (1 << 1) | (1 << 3);
        _commitAll(sid, failMask, 1);
        _revealAll(sid, failMask, 1, 1 << (list.length - 1));
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.RevealOpen.selector, sid, block.number + 20));
        sessions.finalize(sid);
        vm.roll(block.number + 21);
        vm.recordLogs();
        sessions.finalize(sid);
        uint256 passW = 0;
        for (uint256 i = 0; i < 6; ++i) {
            (uint256 tier, uint256 weight, uint256 pv, uint256 fv, uint256 outcome) = _segment(sid, i);
            uint256 q = tier == 0 ? 1 : 2;
            uint256 expected = pv >= q ? 1 : (fv >= q ? 2 : 3);
            assertEq(outcome, expected, "outcome by the quorum rule");
            if (outcome == 1) passW += weight;
        }
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        assertEq(uint256(s.status), uint256(IAuditSessions.Status.Finalized), "finalized");
        assertEq(s.scoreBps, passW * 10_000 / 21, "score");
        assertTrue(s.passed == (passW * 10_000 >= 7000 * 21), "trace verdict by beta");
        assertEq(s.slashRequest, randomness.requestCount(), "slash randomness requested at finalize");
        assertEq(
            randomness.targetBlockOf(s.slashRequest),
            block.number + RANDOMNESS_DELAY,
            "slash seed in the future"
        );
        vm.expectRevert(
            abi.encodeWithSelector(IAuditSessions.WrongStatus.selector, sid, IAuditSessions.Status.Finalized)
        );
        sessions.finalize(sid);
    }

    function test_advanceDrivesToFinalized() public {
        uint256 sid = _ready(_mixed());
        vm.roll(block.number + 21);
        assertEq(uint256(sessions.advance(sid)), uint256(IAuditSessions.Status.Reveal), "reveal");
        vm.roll(block.number + 21);
        assertEq(uint256(sessions.advance(sid)), uint256(IAuditSessions.Status.Finalized), "finalized");
        for (uint256 i = 0; i < 6; ++i) {
            (,,,, uint256 outcome) = _segment(sid, i);
            assertEq(outcome, 3, "nobody voted: inconclusive");
        }
    }

    function test_allRevealedFinalizesEarly() public {
        uint256 sid = _ready(_mixed());
        _commitAll(sid, 0, 0);
        _revealAll(sid, 0, 0, 0);
        assertEq(uint256(sessions.advance(sid)), uint256(IAuditSessions.Status.Finalized), "no waiting");
        assertTrue(sessions.sessionOf(sid).passed, "all PASS");
        assertEq(sessions.sessionOf(sid).scoreBps, 10_000, "score 1");
    }

    // ----------------------------------------------------------------- proofs

    /// @dev Property 8 (ProofMatchesStoredSegment): a valid Merkle proof is not enough; the leaf's tier
    /// and weight must be the ones stored for the segment.
    function test_verifySegmentChecksStoredTierAndWeight() public {
        bytes32[4] memory leaves;
        uint8[4] memory tiers = [uint8(1), 1, 2, 1];
        uint16[4] memory weights = [uint16(1), 1, 7, 1];
        for (uint256 i = 0; i < 4; ++i) {
            leaves[i] = _leaf(i, string(abi.encodePacked("cid", bytes1(uint8(48 + i)))), tiers[i], weights[i]);
        }
        bytes32 root = _hashPair(_hashPair(leaves[0], leaves[1]), _hashPair(leaves[2], leaves[3]));
        // The committed root includes segment 2 as (tier 2, weight 7), but the provider stores (1, 1).
        uint8[] memory stTiers = new uint8[](4);
        uint16[] memory stWeights = new uint16[](4);
        for (uint256 i = 0; i < 4; ++i) {
            stTiers[i] = 1;
            stWeights[i] = 1;
        }
        vm.startPrank(provider);
        token.approve(address(sessions), FEE);
        uint256 sid = sessions.openSession(root, _tiersWeights(stTiers, stWeights), FEE);
        vm.stopPrank();
        bytes32[] memory proof = new bytes32[](2);
        proof[0] = leaves[3];
        proof[1] = _hashPair(leaves[0], leaves[1]);
        assertTrue(!sessions.verifySegment(sid, 2, "cid2", 2, 7, proof), "proof alone is not enough");
        assertTrue(!sessions.verifySegment(sid, 2, "cid2", 1, 1, proof), "stored values, but not in the root");
        proof[0] = leaves[2];
        assertTrue(sessions.verifySegment(sid, 3, "cid3", 1, 1, proof), "root and storage agree");
        assertTrue(!sessions.verifySegment(sid, 3, "cid2", 1, 1, proof), "wrong cid");
        assertTrue(!sessions.verifySegment(sid, 4, "cid3", 1, 1, proof), "index beyond the session");
    }

    function _leaf(uint256 index, string memory cid, uint8 tier, uint16 weight)
        internal
        pure
        returns (bytes32)
    {
        return keccak256(bytes.concat(keccak256(abi.encode(index, cid, tier, weight))));
    }

    function _hashPair(bytes32 a, bytes32 b) internal pure returns (bytes32) {
        return a < b ? keccak256(abi.encode(a, b)) : keccak256(abi.encode(b, a));
    }

    // ----------------------------------------------------------------- owner

    function test_openSessionKeepsItsRandomnessSource() public {
        uint256 sid = _open(_mixed(), FEE);
        LookaheadRandomness other = new LookaheadRandomness(50);
        vm.prank(owner);
        sessions.setRandomness(IRandomness(address(other)));
        assertEq(address(sessions.sourceOf(sid)), address(randomness), "pinned at open");
        assertEq(address(sessions.randomness()), address(other), "new sessions use the new one");
        _drawAll(sid); // draws from the old source, 3 blocks later
        assertEq(sessions.sessionOf(sid).drawnSeats, sessions.sessionOf(sid).totalSeats, "drawn");
        uint256 sid2 = _open(_mixed(), FEE);
        assertEq(address(sessions.sourceOf(sid2)), address(other), "pinned the new one");
    }

    function test_modulesAreWiredOnce() public {
        vm.prank(owner);
        vm.expectRevert(AuditSessions.ModulesAlreadySet.selector);
        sessions.setModules(IDrawModule(address(1)), address(2), address(3));
        vm.expectRevert(abi.encodeWithSelector(IAuditSessions.NotModule.selector, address(this)));
        sessions.onCommits(1, 0, 1);
        vm.expectRevert(abi.encodeWithSelector(IAuditSessions.NotModule.selector, address(this)));
        sessions.payOut(1, 0, 0, 1);
        vm.expectRevert(abi.encodeWithSelector(IDrawModule.NotCore.selector, address(this)));
        IDrawModule.DrawJob memory job;
        drawModule.draw(job);
    }

    function test_paramsBoundsAndOwnership() public {
        IAuditSessions.SessionParams memory p = _sessionParams();
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, address(this)));
        sessions.setParams(p);
        vm.startPrank(owner);
        p.tauBps = 5000;
        vm.expectRevert(AuditSessions.InvalidParams.selector);
        sessions.setParams(p);
        p = _sessionParams();
        p.seatCap = 65;
        vm.expectRevert(AuditSessions.InvalidParams.selector);
        sessions.setParams(p);
        p = _sessionParams();
        p.seatsPerTier[1] = 32;
        vm.expectRevert(AuditSessions.InvalidParams.selector);
        sessions.setParams(p);
        p = _sessionParams();
        p.pMin = 0.6e18;
        vm.expectRevert(AuditSessions.InvalidParams.selector);
        sessions.setParams(p);
        p = _sessionParams();
        p.revealBlocks = 0;
        vm.expectRevert(AuditSessions.InvalidParams.selector);
        sessions.setParams(p);
        p = _sessionParams();
        p.betaBps = 10_001;
        vm.expectRevert(AuditSessions.InvalidParams.selector);
        sessions.setParams(p);
        p = _sessionParams();
        p.reward = 2e24;
        vm.expectRevert(AuditSessions.InvalidParams.selector);
        sessions.setParams(p);
        p = _sessionParams();
        p.canaryCommitBlocks = 200; // a VRF source would need 201 confirmations (v2.5 caps at 200)
        vm.expectRevert(AuditSessions.InvalidParams.selector);
        sessions.setParams(p);
        p.canaryCommitBlocks = uint32(EPOCH_BLOCKS + 1); // longer than an epoch: the draw could strand
        vm.expectRevert(AuditSessions.InvalidParams.selector);
        sessions.setParams(p);
        p.canaryCommitBlocks = uint32(EPOCH_BLOCKS);
        sessions.setParams(p);
        p = _sessionParams();
        p.tauBps = 7500;
        sessions.setParams(p);
        assertEq(sessions.paramsVersion(), 2, "new version");
        assertEq(sessions.paramsAt(1).canaryCommitBlocks, EPOCH_BLOCKS, "stored window");
        assertEq(sessions.paramsAt(2).tauBps, 7500, "stored");
        vm.expectRevert(AuditSessions.ZeroAddress.selector);
        sessions.setTreasury(address(0));
        sessions.setTreasury(address(0xBEEF));
        assertEq(sessions.treasury(), address(0xBEEF), "treasury");
        vm.expectRevert(AuditSessions.ZeroAddress.selector);
        sessions.setRandomness(IRandomness(address(0)));
        sessions.transferOwnership(address(0xCAFE));
        vm.stopPrank();
        assertEq(sessions.owner(), owner, "two-step: not yet");
        vm.prank(address(0xCAFE));
        sessions.acceptOwnership();
        assertEq(sessions.owner(), address(0xCAFE), "accepted");
    }

    /// @dev A pause stops openings only: a paid session is drawn, voted and settled through it (outside
    /// review 8: a paused draw let the snapshot lapse and forfeited honest fees).
    function test_pauseBlocksOpenButNotDrawVotingOrSettlement() public {
        uint256 sid = _open(_mixed(), FEE);
        vm.prank(owner);
        sessions.pause();
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        vm.startPrank(provider);
        token.approve(address(sessions), FEE);
        vm.expectRevert(Pausable.EnforcedPause.selector);
        sessions.openSession(bytes32(uint256(1)), hex"010001", FEE);
        vm.stopPrank();
        _drawAll(sid);
        _publish(sid);
        _commitAll(sid, 0, 0);
        _revealAll(sid, 0, 0, 0);
        _finalizeAndWait(sid);
        settlement.settleBatch(sid, 0, _auditors(sid));
        assertEq(token.balanceOf(address(sessions)), 0, "settled while paused");
    }
}
