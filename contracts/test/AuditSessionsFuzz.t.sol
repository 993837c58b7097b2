// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {ProtocolFixture} from "./utils/ProtocolFixture.sol";
import {AuditSessions} from "../src/AuditSessions.sol";

contract AuditSessionsFuzzTest is ProtocolFixture {
    uint256 internal constant FEE = 2000e18;

    function setUp() public {
        _deploy();
        _addAuditors(1, 7, STAKE);
        _addAuditors(2, 5, STAKE);
        _addAuditors(0, 3, STAKE);
    }

    /// @dev The commitment hash separates auditors, sessions, chains, contracts and verdict sets.
    function testFuzz_commitmentHashBinding(
        uint256 sid,
        address a,
        address b,
        uint256 v1,
        uint256 v2,
        bytes32 salt,
        uint64 chain
    ) public {
        bytes32 c = sessions.computeCommitment(sid, a, v1, salt);
        assertEq(
            c,
            keccak256(abi.encode(block.chainid, address(sessions), sid, a, v1, salt)),
            "documented preimage"
        );
        if (b != a) assertTrue(sessions.computeCommitment(sid, b, v1, salt) != c, "other auditor");
        if (v2 != v1) assertTrue(sessions.computeCommitment(sid, a, v2, salt) != c, "other verdicts");
        assertTrue(sessions.computeCommitment(sid ^ 1, a, v1, salt) != c, "other session");
        vm.assume(chain != block.chainid && chain != 0);
        vm.chainId(chain);
        assertTrue(sessions.computeCommitment(sid, a, v1, salt) != c, "other chain");
    }

    /// @dev On a live session, an auditor's commitment never opens for another auditor, another
    /// verdict set, another session or another chain.
    /// forge-config: default.fuzz.runs = 32
    function testFuzz_commitmentNeverVerifiesElsewhere(uint256 v2, bytes32 salt, uint64 chain) public {
        uint256 sid1 = _open(_uniform(4, 1), FEE);
        uint256 sid2 = _open(_uniform(4, 1), FEE);
        _drawAll(sid1);
        _drawAll(sid2);
        _publish(sid1);
        _publish(sid2);
        address[] memory list = sessions.auditorsOf(sid1);
        address a = list[0];
        address b = list[1];
        uint256 count = sessions.seatsOf(sid1, a).length;
        uint256 v1 = uint256(salt) & ((uint256(1) << count) - 1);
        v2 = v2 & ((uint256(1) << count) - 1);
        vm.assume(v2 != v1);
        bytes32 c = sessions.computeCommitment(sid1, a, v1, salt);
        vm.prank(a);
        sessions.commit(sid1, c);
        vm.prank(b);
        sessions.commit(sid1, c); // b copies a's commitment
        if (sessions.seatsOf(sid2, a).length > 0) {
            vm.prank(a);
            sessions.commit(sid2, c); // and a replays it in another session
        }
        vm.roll(block.number + 21);
        AuditSessions.RevealItem[] memory items = new AuditSessions.RevealItem[](1);
        items[0] = AuditSessions.RevealItem({auditor: b, verdicts: v1, salt: salt});
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.CommitmentMismatch.selector, sid1, b));
        sessions.revealBatch(sid1, items);
        items[0] = AuditSessions.RevealItem({auditor: a, verdicts: v2, salt: salt});
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.CommitmentMismatch.selector, sid1, a));
        sessions.revealBatch(sid1, items);
        items[0] = AuditSessions.RevealItem({auditor: a, verdicts: v1, salt: salt});
        if (sessions.seatsOf(sid2, a).length > 0) {
            vm.expectRevert(abi.encodeWithSelector(AuditSessions.CommitmentMismatch.selector, sid2, a));
            sessions.revealBatch(sid2, items);
        }
        vm.assume(chain != block.chainid && chain != 0);
        uint256 original = block.chainid;
        vm.chainId(chain);
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.CommitmentMismatch.selector, sid1, a));
        sessions.revealBatch(sid1, items);
        vm.chainId(original);
        sessions.revealBatch(sid1, items);
        assertEq(sessions.voteWord(sid1, a) & ((uint256(1) << 64) - 1), v1, "the true opening reveals");
    }

    /// @dev Segment and trace verdicts equal a straightforward recount of the revealed bitmaps.
    /// forge-config: default.fuzz.runs = 48
    function testFuzz_tallyMatchesReference(uint256 seed, uint16 tau, uint16 beta) public {
        AuditSessions.SessionParams memory p = _sessionParams();
        p.tauBps = uint16(bound(tau, 5001, 10_000));
        p.betaBps = uint16(bound(beta, 1, 10_000));
        vm.prank(owner);
        sessions.setParams(p);
        uint256 n = bound(seed, 1, 12);
        uint8[] memory tiers = new uint8[](n);
        uint16[] memory weights = new uint16[](n);
        for (uint256 i = 0; i < n; ++i) {
            tiers[i] = uint8(uint256(keccak256(abi.encode(seed, "tier", i))) % 3);
            weights[i] = uint16(1 + uint256(keccak256(abi.encode(seed, "w", i))) % 500);
        }
        uint256 sid = _open(_tiersWeights(tiers, weights), FEE);
        _drawAll(sid);
        vm.assume(sessions.statusOf(sid) == AuditSessions.Status.Drawing);
        _publish(sid);
        address[] memory list = sessions.auditorsOf(sid);
        uint256 revealMask = uint256(keccak256(abi.encode(seed, "reveal")));
        uint256[] memory bitmaps = new uint256[](list.length);
        for (uint256 i = 0; i < list.length; ++i) {
            uint256 count = sessions.seatsOf(sid, list[i]).length;
            bitmaps[i] = uint256(keccak256(abi.encode(seed, "votes", i))) & ((uint256(1) << count) - 1);
            bytes32 c = sessions.computeCommitment(sid, list[i], bitmaps[i], bytes32(i));
            vm.prank(list[i]);
            sessions.commit(sid, c);
        }
        uint256 revealed = 0;
        for (uint256 i = 0; i < list.length; ++i) {
            if ((revealMask >> i) & 1 == 1) ++revealed;
        }
        AuditSessions.RevealItem[] memory items = new AuditSessions.RevealItem[](revealed);
        uint256 k = 0;
        uint256[] memory passVotes = new uint256[](n);
        uint256[] memory failVotes = new uint256[](n);
        for (uint256 i = 0; i < list.length; ++i) {
            if ((revealMask >> i) & 1 == 0) continue;
            items[k++] = AuditSessions.RevealItem({auditor: list[i], verdicts: bitmaps[i], salt: bytes32(i)});
            uint256[] memory segs = sessions.seatsOf(sid, list[i]);
            for (uint256 j = 0; j < segs.length; ++j) {
                if ((bitmaps[i] >> j) & 1 == 1) ++failVotes[segs[j]];
                else ++passVotes[segs[j]];
            }
        }
        if (revealed > 0) sessions.revealBatch(sid, items);
        vm.roll(block.number + 21);
        sessions.finalize(sid);
        _checkAgainstReference(sid, p, tiers, weights, passVotes, failVotes);
    }

    function _checkAgainstReference(
        uint256 sid,
        AuditSessions.SessionParams memory p,
        uint8[] memory tiers,
        uint16[] memory weights,
        uint256[] memory passVotes,
        uint256[] memory failVotes
    ) internal view {
        uint256 w = 0;
        uint256 total = 0;
        for (uint256 i = 0; i < tiers.length; ++i) {
            uint256 kt = p.seatsPerTier[tiers[i]];
            uint256 q = kt * p.tauBps / 10_000;
            if (q * 10_000 < kt * p.tauBps) ++q; // ceil
            uint256 expected = passVotes[i] >= q ? 1 : (failVotes[i] >= q ? 2 : 3);
            (,, uint256 pv, uint256 fv, uint256 outcome) = _segment(sid, i);
            assertEq(pv, passVotes[i], "pass votes");
            assertEq(fv, failVotes[i], "fail votes");
            assertEq(outcome, expected, "segment outcome");
            total += weights[i];
            if (expected == 1) w += weights[i];
        }
        AuditSessions.Session memory s = sessions.sessionOf(sid);
        assertEq(s.passWeight, w, "W");
        assertEq(s.totalWeight, total, "sum w");
        assertEq(s.scoreBps, w * 10_000 / total, "score");
        assertTrue(s.passed == (w * 10_000 >= uint256(p.betaBps) * total), "trace verdict");
    }
}
