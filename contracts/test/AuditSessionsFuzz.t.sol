// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {DoubleFixture} from "./utils/DoubleFixture.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {IVotingModule} from "../src/interfaces/IVotingModule.sol";
import {IStaking} from "../src/interfaces/IStaking.sol";
import {SeatWord} from "../src/libraries/SeatWord.sol";
import {Verdicts} from "../src/libraries/Verdicts.sol";

/// @notice Fuzzed sessions against straightforward reference computations.
contract AuditSessionsFuzzTest is DoubleFixture {
    uint256 internal constant FEE = 2000e18;

    function setUp() public {
        _deploy();
        _addAuditors(1, 7, STAKE);
        _addAuditors(2, 5, STAKE);
        _addAuditors(0, 3, STAKE);
        _nextEpoch();
    }

    /// @dev The commitment hash separates chains, modules, sessions, rounds, auditors and verdicts.
    function testFuzz_commitmentBinding(
        uint256 sid,
        uint8 round,
        address a,
        address b,
        uint256 v1,
        uint256 v2,
        bytes32 salt,
        uint64 chain
    ) public {
        bytes32 c = voting.computeCommitment(sid, round, a, v1, salt);
        assertEq(
            c,
            keccak256(abi.encode(block.chainid, address(voting), sid, uint256(round), a, v1, salt)),
            "documented preimage"
        );
        if (b != a) assertTrue(voting.computeCommitment(sid, round, b, v1, salt) != c, "other auditor");
        if (v2 != v1) assertTrue(voting.computeCommitment(sid, round, a, v2, salt) != c, "other verdicts");
        assertTrue(voting.computeCommitment(sid ^ 1, round, a, v1, salt) != c, "other session");
        assertTrue(voting.computeCommitment(sid, uint256(round) + 1, a, v1, salt) != c, "other round");
        vm.assume(chain != block.chainid && chain != 0);
        vm.chainId(chain);
        assertTrue(voting.computeCommitment(sid, round, a, v1, salt) != c, "other chain");
    }

    /// @dev Seat words round-trip their fields.
    function testFuzz_seatWordPacking(uint16 index, uint64 reputation, uint32 entry, uint256 segments)
        public
        pure
    {
        uint256 w = SeatWord.create(index, reputation, entry);
        uint256 expectedBits = 0;
        uint256 count = 0;
        for (uint256 i = 0; i < 40; ++i) {
            uint256 seg = uint256(keccak256(abi.encode(segments, i))) % 1024;
            if (seg < 128 && expectedBits & (uint256(1) << seg) != 0) continue;
            w = SeatWord.addSeat(w, seg);
            if (seg < 128) expectedBits |= uint256(1) << seg;
            ++count;
        }
        assertEq(SeatWord.index(w), index, "index");
        assertEq(SeatWord.reputation(w), reputation, "reputation");
        assertEq(SeatWord.count(w), count, "count");
        assertEq(SeatWord.window0(w), expectedBits, "window 0");
        assertEq(SeatWord.entry(w), entry, "ledger entry");
        if (expectedBits != 0) {
            uint256 low = 0;
            while ((expectedBits >> low) & 1 == 0) {
                ++low;
            }
            assertEq(SeatWord.lowest(expectedBits), low, "lowest set bit");
        }
    }

    /// @dev Segment and trace verdicts equal a recount of the revealed ballots (abstentions included).
    /// forge-config: default.fuzz.runs = 48
    function testFuzz_tallyMatchesReference(uint256 seed, uint16 tau, uint16 beta) public {
        IAuditSessions.SessionParams memory p = _sessionParams();
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
        vm.assume(sessions.statusOf(sid) == IAuditSessions.Status.Drawing);
        _publish(sid);
        (uint256[] memory passVotes, uint256[] memory failVotes) = _voteRandomly(sid, n, seed);
        vm.roll(block.number + 21);
        sessions.finalize(sid);
        _checkAgainstReference(sid, p, tiers, weights, passVotes, failVotes);
    }

    function _randomBallot(uint256 seed, uint256 i, uint256 count) internal pure returns (uint256) {
        uint256 mask = (uint256(1) << count) - 1;
        uint256 fails = uint256(keccak256(abi.encode(seed, "votes", i))) & mask;
        uint256 abstains = uint256(keccak256(abi.encode(seed, "abstain", i))) & mask & ~fails;
        if (uint256(keccak256(abi.encode(seed, "abstainer", i))) % 4 != 0) abstains = 0;
        return Verdicts.pack(fails, abstains);
    }

    function _voteRandomly(uint256 sid, uint256 n, uint256 seed)
        internal
        returns (uint256[] memory passVotes, uint256[] memory failVotes)
    {
        address[] memory list = _auditors(sid);
        uint256 revealMask = uint256(keccak256(abi.encode(seed, "reveal")));
        passVotes = new uint256[](n);
        failVotes = new uint256[](n);
        IVotingModule.RevealItem[] memory items = new IVotingModule.RevealItem[](list.length);
        uint256 k = 0;
        for (uint256 i = 0; i < list.length; ++i) {
            uint256 ballot = _randomBallot(seed, i, _seats(sid, list[i]).length);
            bytes32 c = voting.computeCommitment(sid, 0, list[i], ballot, bytes32(i));
            vm.prank(list[i]);
            voting.commit(sid, 0, c);
            if ((revealMask >> i) & 1 == 0) continue;
            items[k++] = IVotingModule.RevealItem({auditor: list[i], verdicts: ballot, salt: bytes32(i)});
            uint256[] memory segs = _seats(sid, list[i]);
            for (uint256 j = 0; j < segs.length; ++j) {
                if (Verdicts.abstains(ballot, j)) continue;
                if (Verdicts.fails(ballot, j)) ++failVotes[segs[j]];
                else ++passVotes[segs[j]];
            }
        }
        assembly ("memory-safe") {
            mstore(items, k)
        }
        if (k > 0 && sessions.statusOf(sid) == IAuditSessions.Status.Reveal) {
            voting.revealBatch(sid, 0, items);
        } else if (k > 0) {
            vm.roll(block.number + 21);
            voting.revealBatch(sid, 0, items);
        }
    }

    function _checkAgainstReference(
        uint256 sid,
        IAuditSessions.SessionParams memory p,
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
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        assertEq(s.scoreBps, w * 10_000 / total, "score");
        assertTrue(s.passed == (w * 10_000 >= uint256(p.betaBps) * total), "trace verdict");
    }

    /// @dev Whatever the ballots, settlement conserves tokens: rewards paid + pool swept = pool, and
    /// every auditor's unlock equals its locks.
    /// forge-config: default.fuzz.runs = 32
    function testFuzz_settlementConservesThePool(uint256 seed) public {
        uint256 n = bound(seed, 1, 10);
        uint256 sid = _open(_uniform(n, 1), FEE);
        _drawAll(sid);
        _publish(sid);
        _voteRandomly(sid, n, seed);
        vm.roll(block.number + 41);
        sessions.advance(sid);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        uint256 pool = sessions.sessionOf(sid).pool;
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        address[] memory list = _auditors(sid);
        settlement.settleBatch(sid, 0, list);
        uint256 rewards = 0;
        uint256 slashes = 0;
        for (uint256 i = 0; i < list.length; ++i) {
            IStaking.SessionResult memory r = staking.resultOf(_key(sid), list[i]);
            rewards += r.reward;
            slashes += r.slash;
            assertEq(staking.lockedFor(_key(sid), list[i]), _seats(sid, list[i]).length * 8e18, "P per seat");
            assertEq(_locked(list[i]), 0, "unlocked");
            assertLe(r.repMul, WAD, "repMul <= 1");
            assertLe(r.repAdd + r.repMul, WAD, "reputation stays in [0, 1]");
        }
        assertEq(
            token.balanceOf(address(treasury)) - treasuryBefore, pool - rewards + slashes, "conservation"
        );
        assertEq(token.balanceOf(address(sessions)), 0, "pool emptied");
    }
}
