// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {ProtocolFixture} from "./utils/ProtocolFixture.sol";
import {AuditSessions} from "../src/AuditSessions.sol";
import {LookaheadRandomness} from "../src/LookaheadRandomness.sol";
import {IRandomness} from "../src/interfaces/IRandomness.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";

contract AuditSessionsTest is ProtocolFixture {
    uint256 internal constant FEE = 1000e18;

    function setUp() public {
        _deploy();
        _addAuditors(1, 6, STAKE); // LLM tier
        _addAuditors(2, 4, STAKE); // Human tier
        _addAuditors(0, 2, STAKE); // Computer tier
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
        bytes memory tw = _mixed();
        uint256 sid = _open(tw, FEE);
        assertEq(sid, 1, "first id");
        assertEq(token.balanceOf(address(sessions)), 800e18, "80% audit pool");
        assertEq(token.balanceOf(address(treasury)) - treasuryBefore, 200e18, "20% treasury");
        AuditSessions.Session memory s = sessions.sessionOf(sid);
        assertEq(uint256(s.status), uint256(AuditSessions.Status.Created), "status");
        assertEq(s.provider, provider, "provider");
        assertEq(s.segmentCount, 6, "segments");
        assertEq(s.totalSeats, 3 + 3 + 1 + 3 + 3 + 3, "seats = sum k_t");
        assertEq(s.pool, 800e18, "pool");
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
        sessions.openSession(bytes32(uint256(1)), hex"010001010001", 45e18);
        vm.stopPrank();
    }

    function test_fixedTierWeightIsEnforced() public {
        AuditSessions.SessionParams memory p = _sessionParams();
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

    function test_cancelRefundsPool() public {
        uint256 sid = _open(_mixed(), FEE);
        uint256 before = token.balanceOf(provider);
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.NotProvider.selector, sid));
        sessions.cancel(sid);
        vm.prank(provider);
        sessions.cancel(sid);
        assertEq(token.balanceOf(provider) - before, 800e18, "pool refunded");
        assertEq(uint256(sessions.statusOf(sid)), uint256(AuditSessions.Status.Cancelled), "cancelled");
        vm.prank(provider);
        vm.expectRevert(
            abi.encodeWithSelector(AuditSessions.WrongStatus.selector, sid, AuditSessions.Status.Cancelled)
        );
        sessions.cancel(sid);
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.UnknownSession.selector, 99));
        sessions.cancel(99);
    }

    // ------------------------------------------------------------------ draw

    function test_drawTooEarlyReverts() public {
        uint256 sid = _open(_mixed(), FEE);
        vm.expectRevert();
        sessions.draw(sid, 5);
    }

    function test_drawIsPaginatedAndRespectsRules() public {
        // The provider is also a registered LLM auditor: it must never be drawn.
        token.transfer(provider, STAKE);
        vm.startPrank(provider);
        registry.register(1, 2, keccak256("provider-key"));
        token.approve(address(staking), STAKE);
        staking.stake(provider, STAKE);
        vm.stopPrank();
        uint256 sid = _open(_uniform(8, 1), FEE);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        uint256 calls = 0;
        while (_drawing(sid) || sessions.statusOf(sid) == AuditSessions.Status.Created) {
            assertLe(sessions.draw(sid, 5), 5, "page size respected");
            ++calls;
        }
        assertEq(calls, 5, "24 seats in pages of 5");
        AuditSessions.Session memory s = sessions.sessionOf(sid);
        assertEq(s.drawnSeats, 24, "all seats");
        address[] memory list = sessions.auditorsOf(sid);
        uint256 seatSum = 0;
        for (uint256 i = 0; i < list.length; ++i) {
            assertTrue(list[i] != provider, "provider excluded");
            uint256[] memory segs = sessions.seatsOf(sid, list[i]);
            assertLe(segs.length, 8, "seat cap");
            for (uint256 j = 1; j < segs.length; ++j) {
                assertTrue(segs[j] > segs[j - 1], "distinct segments in seat order");
            }
            assertEq(_locked(list[i]), segs.length * 8e18, "P locked per seat");
            seatSum += segs.length;
        }
        assertEq(seatSum, 24, "seats add up");
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.DrawComplete.selector, sid));
        sessions.draw(sid, 1);
    }

    function test_drawCancelsWhenTooFewAuditors() public {
        // Human tier has 4 auditors with a cap of 8 seats: 11 human segments need 33 seats > 32.
        uint256 sid = _open(_uniform(11, 2), FEE);
        uint256 before = token.balanceOf(provider);
        _drawAll(sid);
        assertEq(uint256(sessions.statusOf(sid)), uint256(AuditSessions.Status.Cancelled), "cancelled");
        assertEq(token.balanceOf(provider) - before, 800e18, "pool refunded");
        // Locks of the seats drawn before the cancellation are released by settlement.
        address[] memory list = sessions.auditorsOf(sid);
        sessions.settleBatch(sid, list);
        for (uint256 i = 0; i < list.length; ++i) {
            assertEq(_locked(list[i]), 0, "unlocked");
            assertEq(staking.reputationOf(list[i]), 0.5e18, "reputation untouched");
        }
    }

    function test_randomnessExpiryExpiresSession() public {
        uint256 sid = _open(_mixed(), FEE);
        vm.roll(block.number + RANDOMNESS_DELAY + 258);
        uint256 before = token.balanceOf(provider);
        assertEq(uint256(sessions.advance(sid)), uint256(AuditSessions.Status.Expired), "expired");
        assertEq(token.balanceOf(provider) - before, 800e18, "refund");
    }

    function test_drawDeadlineExpiresPartialDraw() public {
        uint256 sid = _open(_mixed(), FEE);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        sessions.draw(sid, 2);
        vm.roll(block.number + 21);
        assertEq(uint256(sessions.advance(sid)), uint256(AuditSessions.Status.Expired), "expired");
    }

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
        AuditSessions.Session memory s = sessions.sessionOf(sid);
        assertEq(uint256(s.status), uint256(AuditSessions.Status.KeysPublished), "status");
        assertEq(s.keyManifestHash, keccak256("cid"), "manifest hash");
    }

    function test_keysNotPublishedExpires() public {
        uint256 sid = _open(_mixed(), FEE);
        _drawAll(sid);
        vm.roll(block.number + 21);
        assertEq(uint256(sessions.advance(sid)), uint256(AuditSessions.Status.Expired), "expired");
        vm.prank(provider);
        vm.expectRevert(
            abi.encodeWithSelector(AuditSessions.WrongStatus.selector, sid, AuditSessions.Status.Expired)
        );
        sessions.publishKeys(sid, "cid");
    }

    // ---------------------------------------------------------------- commit

    function test_commitAndRecommit() public {
        uint256 sid = _ready(_mixed());
        address a = sessions.auditorsOf(sid)[0];
        bytes32 c1 = sessions.computeCommitment(sid, a, 0, bytes32("s1"));
        vm.prank(a);
        sessions.commit(sid, c1);
        assertEq(uint256(sessions.statusOf(sid)), uint256(AuditSessions.Status.Commit), "commit phase");
        uint256 v = sessions.voteWord(sid, a);
        assertEq(v & ((uint256(1) << 192) - 1), uint256(c1) >> 64, "commitment prefix stored");
        assertEq((v >> 208) & 0xff, 1, "nonce 1");
        // Replaying the first signed commit after a re-commit fails: the nonce moved on.
        AuditSessions.SignedCommit[] memory items = new AuditSessions.SignedCommit[](1);
        items[0] = _signCommit(sid, a, c1);
        bytes32 c2 = sessions.computeCommitment(sid, a, 1, bytes32("s2"));
        vm.prank(a);
        sessions.commit(sid, c2);
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.BadSignature.selector, a));
        sessions.commitBatch(sid, items);
        assertEq(sessions.sessionOf(sid).committedCount, 1, "counted once");
    }

    function test_commitReverts() public {
        uint256 sid = _open(_mixed(), FEE);
        vm.expectRevert(
            abi.encodeWithSelector(AuditSessions.WrongStatus.selector, sid, AuditSessions.Status.Created)
        );
        sessions.commit(sid, bytes32("c"));
        _drawAll(sid);
        _publish(sid);
        vm.prank(provider);
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.NotSeated.selector, sid, provider));
        sessions.commit(sid, bytes32("c"));
        vm.expectRevert(AuditSessions.EmptyBatch.selector);
        sessions.commitBatch(sid, new AuditSessions.SignedCommit[](0));
        address a = sessions.auditorsOf(sid)[0];
        address b = sessions.auditorsOf(sid)[1];
        AuditSessions.SignedCommit[] memory items = new AuditSessions.SignedCommit[](1);
        items[0] = _signCommit(sid, a, bytes32("c"));
        items[0].auditor = b; // a's signature presented for b
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.BadSignature.selector, b));
        sessions.commitBatch(sid, items);
        vm.roll(block.number + 21);
        vm.prank(a);
        vm.expectRevert(
            abi.encodeWithSelector(AuditSessions.WrongStatus.selector, sid, AuditSessions.Status.Reveal)
        );
        sessions.commit(sid, bytes32("c"));
    }

    function test_allCommittedOpensRevealEarly() public {
        uint256 sid = _ready(_mixed());
        _commitAll(sid, 0, 0);
        AuditSessions.Session memory s = sessions.sessionOf(sid);
        assertEq(uint256(s.status), uint256(AuditSessions.Status.Reveal), "reveal opened early");
        assertEq(s.revealDeadline, block.number + 20, "reveal window from now");
    }

    // ---------------------------------------------------------------- reveal

    function test_revealReverts() public {
        uint256 sid = _ready(_mixed());
        address[] memory list = sessions.auditorsOf(sid);
        AuditSessions.RevealItem[] memory items = new AuditSessions.RevealItem[](1);
        items[0] = AuditSessions.RevealItem({auditor: list[0], verdicts: 0, salt: _salt(sid, list[0])});
        vm.expectRevert(
            abi.encodeWithSelector(
                AuditSessions.WrongStatus.selector, sid, AuditSessions.Status.KeysPublished
            )
        );
        sessions.revealBatch(sid, items);
        _commitAll(sid, 0, 0);
        vm.expectRevert(AuditSessions.EmptyBatch.selector);
        sessions.revealBatch(sid, new AuditSessions.RevealItem[](0));
        items[0].verdicts = 1;
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.CommitmentMismatch.selector, sid, list[0]));
        sessions.revealBatch(sid, items);
        items[0].verdicts = 0;
        items[0].salt = bytes32("wrong");
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.CommitmentMismatch.selector, sid, list[0]));
        sessions.revealBatch(sid, items);
        items[0].salt = _salt(sid, list[0]);
        sessions.revealBatch(sid, items);
        assertEq(sessions.sessionOf(sid).revealedCount, 1, "revealed once");
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.AlreadyRevealed.selector, sid, list[0]));
        sessions.revealBatch(sid, items);
        items[0].auditor = provider;
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.NotCommitted.selector, sid, provider));
        sessions.revealBatch(sid, items);
    }

    function test_revealRejectsBitsBeyondSeats() public {
        uint256 sid = _ready(_mixed());
        address a = sessions.auditorsOf(sid)[0];
        uint256 count = sessions.seatsOf(sid, a).length;
        uint256 bad = uint256(1) << count;
        bytes32 c = sessions.computeCommitment(sid, a, bad, bytes32("s"));
        vm.prank(a);
        sessions.commit(sid, c);
        vm.roll(block.number + 21);
        AuditSessions.RevealItem[] memory items = new AuditSessions.RevealItem[](1);
        items[0] = AuditSessions.RevealItem({auditor: a, verdicts: bad, salt: bytes32("s")});
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.InvalidVerdicts.selector, bad, count));
        sessions.revealBatch(sid, items);
    }

    // ------------------------------------------------------ finalize / settle

    function test_fullSessionOutcomesRewardsSlashesReputation() public {
        bytes memory tw = _mixed();
        uint256 sid = _ready(tw);
        address[] memory list = sessions.auditorsOf(sid);
        // Truth: segments 1 and 3 FAIL. Auditor 0 votes the opposite everywhere; the last auditor
        // commits but never reveals.
        uint256 failMask = (1 << 1) | (1 << 3);
        _commitAll(sid, failMask, 1);
        uint256 last = list.length - 1;
        _revealAll(sid, failMask, 1, 1 << last);
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.RevealOpen.selector, sid, block.number + 20));
        sessions.finalize(sid);
        vm.roll(block.number + 21);
        vm.expectRevert(
            abi.encodeWithSelector(AuditSessions.WrongStatus.selector, sid, AuditSessions.Status.Reveal)
        );
        sessions.settleBatch(sid, list);
        sessions.finalize(sid);

        // Outcomes follow q_t = ceil(0.6 k_t) against the revealed votes.
        uint256 passW = 0;
        for (uint256 i = 0; i < 6; ++i) {
            (uint256 tier, uint256 weight, uint256 pv, uint256 fv, uint256 outcome) = _segment(sid, i);
            uint256 q = tier == 0 ? 1 : 2;
            uint256 expected = pv >= q ? 1 : (fv >= q ? 2 : 3);
            assertEq(outcome, expected, "outcome by the quorum rule");
            if (outcome == 1) passW += weight;
        }
        AuditSessions.Session memory s = sessions.sessionOf(sid);
        assertEq(uint256(s.status), uint256(AuditSessions.Status.Finalized), "finalized");
        assertEq(s.passWeight, passW, "W");
        assertEq(s.totalWeight, 21, "sum w");
        assertEq(s.scoreBps, passW * 10_000 / 21, "score");
        assertTrue(s.passed == (passW * 10_000 >= 7000 * 21), "trace verdict by beta");

        // Expected per-auditor outcome, computed independently from the public state.
        uint256[] memory expectedAssets = new uint256[](list.length);
        uint256[] memory expectedRep = new uint256[](list.length);
        uint256 totalReward = 0;
        uint256 totalSlash = 0;
        for (uint256 i = 0; i < list.length; ++i) {
            (uint256 reward, uint256 slash, uint256 rep) =
                _expectedSettlement(sid, list[i], i == last, s.seed);
            expectedAssets[i] = _assets(list[i]) + reward - slash;
            expectedRep[i] = rep;
            totalReward += reward;
            totalSlash += slash;
        }
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        sessions.settleBatch(sid, list);
        for (uint256 i = 0; i < list.length; ++i) {
            assertEq(_assets(list[i]), expectedAssets[i], "pool assets after settlement");
            assertEq(staking.reputationOf(list[i]), expectedRep[i], "reputation after settlement");
            assertEq(_locked(list[i]), 0, "locks released");
        }
        assertTrue(_assets(list[last]) <= STAKE - 8e18, "non-revealer slashed");
        assertEq(
            token.balanceOf(address(treasury)) - treasuryBefore,
            totalSlash + (800e18 - totalReward),
            "treasury gets slashes and the pool remainder"
        );
        assertEq(token.balanceOf(address(sessions)), 0, "pool emptied");
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.AlreadySettled.selector, sid, list[0]));
        sessions.settleBatch(sid, list);
        address[] memory stranger = new address[](1);
        stranger[0] = provider;
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.NotSeated.selector, sid, provider));
        sessions.settleBatch(sid, stranger);
        vm.expectRevert(AuditSessions.EmptyBatch.selector);
        sessions.settleBatch(sid, new address[](0));
    }

    /// @dev Auditors with more than 8 seats (seat list not copied into the vote word) settle the same way.
    function test_settlementWithManySeatsPerAuditor() public {
        AuditSessions.SessionParams memory p = _sessionParams();
        p.seatCap = 20;
        vm.prank(owner);
        sessions.setParams(p);
        uint256 sid = _ready(_uniform(20, 1)); // 60 LLM seats over 6 auditors
        address[] memory list = sessions.auditorsOf(sid);
        bool many = false;
        for (uint256 i = 0; i < list.length; ++i) {
            if (sessions.seatsOf(sid, list[i]).length > 8) many = true;
        }
        assertTrue(many, "some auditor holds more than 8 seats");
        uint256 failMask = (1 << 3) | (1 << 11) | (1 << 17);
        _commitAll(sid, failMask, 1 << 2);
        _revealAll(sid, failMask, 1 << 2, 0);
        sessions.finalize(sid);
        bytes32 seed = sessions.sessionOf(sid).seed;
        uint256[] memory expectedAssets = new uint256[](list.length);
        uint256[] memory expectedRep = new uint256[](list.length);
        for (uint256 i = 0; i < list.length; ++i) {
            (uint256 reward, uint256 slash, uint256 rep) = _expectedSettlement(sid, list[i], false, seed);
            expectedAssets[i] = _assets(list[i]) + reward - slash;
            expectedRep[i] = rep;
        }
        sessions.settleBatch(sid, list);
        for (uint256 i = 0; i < list.length; ++i) {
            assertEq(_assets(list[i]), expectedAssets[i], "assets");
            assertEq(staking.reputationOf(list[i]), expectedRep[i], "reputation");
        }
    }

    /// @dev Straightforward re-statement of the settlement rules over public views.
    function _expectedSettlement(uint256 sid, address a, bool silent, bytes32 seed)
        internal
        view
        returns (uint256 reward, uint256 slash, uint256 rep)
    {
        uint256 r0 = staking.reputationOf(a);
        rep = r0;
        uint256 pSlash = 0.2e18 + 0.3e18 * (WAD - r0) / WAD;
        uint256[] memory segs = sessions.seatsOf(sid, a);
        uint256 verdicts = sessions.voteWord(sid, a) & ((uint256(1) << 64) - 1);
        for (uint256 j = 0; j < segs.length; ++j) {
            if (silent) {
                slash += 8e18;
                rep = rep * 0.9e18 / WAD;
                continue;
            }
            (,,,, uint256 outcome) = _segment(sid, segs[j]);
            if (outcome == 3) continue;
            bool fail = (verdicts >> j) & 1 == 1;
            if (fail == (outcome == 2)) {
                reward += 6e18;
                rep = (0.9e18 * rep + 0.1e18 * WAD) / WAD;
            } else {
                rep = rep * 0.9e18 / WAD;
                if (uint256(keccak256(abi.encode(seed, a, segs[j]))) % WAD < pSlash) slash += 8e18;
            }
        }
    }

    function test_commissionPaidDirectlyToAuditor() public {
        address a = auditorAddrs[0];
        vm.prank(a);
        staking.setCommission(1000);
        vm.warp(block.timestamp + 1 days);
        uint256 sid = _ready(_uniform(4, 1));
        _commitAll(sid, 0, 0);
        _revealAll(sid, 0, 0, 0);
        sessions.finalize(sid);
        address[] memory list = sessions.auditorsOf(sid);
        uint256 walletBefore = token.balanceOf(a);
        uint256 assetsBefore = _assets(a);
        uint256 seats = sessions.seatsOf(sid, a).length;
        sessions.settleBatch(sid, list);
        assertEq(token.balanceOf(a) - walletBefore, seats * 6e18 / 10, "10% commission in the wallet");
        assertEq(_assets(a) - assetsBefore, seats * 6e18 * 9 / 10, "90% into the pool");
    }

    function test_advanceDrivesToFinalized() public {
        uint256 sid = _ready(_mixed());
        vm.roll(block.number + 21);
        assertEq(uint256(sessions.advance(sid)), uint256(AuditSessions.Status.Reveal), "reveal");
        vm.roll(block.number + 21);
        assertEq(uint256(sessions.advance(sid)), uint256(AuditSessions.Status.Finalized), "finalized");
        // Nobody committed: every segment is inconclusive and every seat is slashed.
        address[] memory list = sessions.auditorsOf(sid);
        uint256 before = _assets(list[0]);
        uint256 seats = sessions.seatsOf(sid, list[0]).length;
        sessions.settleBatch(sid, list);
        assertEq(before - _assets(list[0]), seats * 8e18, "non-reveal always slashed");
    }

    function test_verifySegmentMerkleProof() public {
        bytes32[4] memory leaves;
        for (uint256 i = 0; i < 4; ++i) {
            leaves[i] = keccak256(
                bytes.concat(
                    keccak256(abi.encode(i, string.concat("cid", vm_toString(i)), uint8(1), uint16(1)))
                )
            );
        }
        bytes32 n01 = _hashPair(leaves[0], leaves[1]);
        bytes32 n23 = _hashPair(leaves[2], leaves[3]);
        bytes32 root = _hashPair(n01, n23);
        vm.startPrank(provider);
        token.approve(address(sessions), FEE);
        uint256 sid = sessions.openSession(root, _uniform(4, 1), FEE);
        vm.stopPrank();
        bytes32[] memory proof = new bytes32[](2);
        proof[0] = leaves[3];
        proof[1] = n01;
        assertTrue(sessions.verifySegment(sid, 2, "cid2", 1, 1, proof), "valid proof");
        assertTrue(!sessions.verifySegment(sid, 2, "cid3", 1, 1, proof), "wrong cid");
        assertTrue(!sessions.verifySegment(sid, 2, "cid2", 2, 1, proof), "wrong tier");
        assertTrue(!sessions.verifySegment(sid, 3, "cid2", 1, 1, proof), "wrong index");
    }

    function vm_toString(uint256 i) internal pure returns (string memory) {
        return string(abi.encodePacked(bytes1(uint8(48 + i))));
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
        assertEq(address(sessions.sessionOf(sid).randomnessSource), address(randomness), "pinned at open");
        _drawAll(sid); // draws from the old source, 3 blocks later
        assertTrue(sessions.sessionOf(sid).drawnSeats == sessions.sessionOf(sid).totalSeats, "drawn");
        uint256 sid2 = _open(_mixed(), FEE);
        assertEq(
            address(sessions.sessionOf(sid2).randomnessSource), address(other), "new sessions use the new one"
        );
        vm.startPrank(provider);
        token.approve(address(sessions), type(uint256).max);
        vm.expectRevert(
            abi.encodeWithSelector(AuditSessions.FeeTooHigh.selector, uint256(type(uint96).max) + 1)
        );
        sessions.openSession(bytes32(uint256(1)), hex"010001", uint256(type(uint96).max) + 1);
        vm.stopPrank();
    }

    function test_paramsBoundsAndOwnership() public {
        AuditSessions.SessionParams memory p = _sessionParams();
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
        p.tauBps = 7500;
        sessions.setParams(p);
        assertEq(sessions.paramsVersion(), 1, "new version");
        assertEq(sessions.paramsAt(1).tauBps, 7500, "stored");
        vm.expectRevert(AuditSessions.ZeroAddress.selector);
        sessions.setTreasury(address(0));
        sessions.setTreasury(address(0xBEEF));
        assertEq(sessions.treasury(), address(0xBEEF), "treasury");
        LookaheadRandomness other = new LookaheadRandomness(5);
        sessions.setRandomness(IRandomness(address(other)));
        assertEq(address(sessions.randomness()), address(other), "randomness");
        vm.expectRevert(AuditSessions.ZeroAddress.selector);
        sessions.setRandomness(IRandomness(address(0)));
        sessions.transferOwnership(address(0xCAFE));
        vm.stopPrank();
        assertEq(sessions.owner(), owner, "two-step: not yet");
        vm.prank(address(0xCAFE));
        sessions.acceptOwnership();
        assertEq(sessions.owner(), address(0xCAFE), "accepted");
    }

    function test_pauseBlocksOpenAndDrawButNotVotingOrSettlement() public {
        uint256 sid = _open(_mixed(), FEE);
        vm.prank(owner);
        sessions.pause();
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        vm.expectRevert(Pausable.EnforcedPause.selector);
        sessions.draw(sid, 10);
        vm.startPrank(provider);
        token.approve(address(sessions), FEE);
        vm.expectRevert(Pausable.EnforcedPause.selector);
        sessions.openSession(bytes32(uint256(1)), hex"010001", FEE);
        vm.stopPrank();
        vm.prank(owner);
        sessions.unpause();
        _drawAll(sid);
        _publish(sid);
        vm.prank(owner);
        sessions.pause();
        _commitAll(sid, 0, 0);
        _revealAll(sid, 0, 0, 0);
        sessions.finalize(sid);
        sessions.settleBatch(sid, sessions.auditorsOf(sid));
        assertEq(token.balanceOf(address(sessions)), 0, "settled while paused");
    }
}
