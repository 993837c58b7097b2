// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Vm} from "./utils/TestBase.sol";
import {DoubleFixture} from "./utils/DoubleFixture.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {IVotingModule} from "../src/interfaces/IVotingModule.sol";
import {ISettlementModule} from "../src/interfaces/ISettlementModule.sol";
import {IStaking} from "../src/interfaces/IStaking.sol";
import {AuditSessions} from "../src/AuditSessions.sol";
import {SeatWord} from "../src/libraries/SeatWord.sol";
import {Verdicts} from "../src/libraries/Verdicts.sol";

/// @notice Settlement: scoring against final outcomes, late slash coins and draw-time reputation
/// (property 2), abstentions, terminated sessions, skips, order independence.
contract SettlementTest is DoubleFixture {
    uint256 internal constant FEE = 1000e18;
    uint256 internal constant R = 6e18;
    uint256 internal constant P = 8e18;

    function setUp() public {
        _deploy();
        _addAuditors(1, 6, STAKE);
        _addAuditors(2, 4, STAKE);
        _addAuditors(0, 2, STAKE);
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

    struct Expected {
        uint256 reward;
        uint256 slash;
        uint256 repMul;
        uint256 repAdd;
    }

    /// @dev Straightforward restatement of the settlement rules over public views.
    function _expected(uint256 sid, address a, bool hasSeed, bytes32 slashSeed)
        internal
        view
        returns (Expected memory e)
    {
        uint256 pSlash = 0.2e18 + 0.3e18 * (WAD - SeatWord.reputation(_seatWord(sid, a))) / WAD;
        uint256[] memory segs = _seats(sid, a);
        (uint256 ballot, bool revealed) = _ballotOf(sid, a);
        e.repMul = WAD;
        for (uint256 j = 0; j < segs.length; ++j) {
            (,,,, uint256 outcome) = _segment(sid, segs[j]);
            bool correct = false;
            if (!revealed) {
                e.slash += P;
            } else {
                if (outcome == 3) continue;
                if (Verdicts.abstains(ballot, j)) {
                    // nothing but reputation
                } else if (Verdicts.fails(ballot, j) == (outcome == 2)) {
                    correct = true;
                    e.reward += R;
                } else if (!hasSeed || _coin(slashSeed, a, segs[j]) < pSlash) {
                    e.slash += P;
                }
            }
            e.repMul = e.repMul * 0.9e18 / WAD;
            e.repAdd = (e.repAdd * 0.9e18 + (correct ? 0.1e18 * WAD : 0)) / WAD;
        }
    }

    function _coin(bytes32 slashSeed, address a, uint256 segment) internal pure returns (uint256) {
        return uint256(keccak256(abi.encode(slashSeed, a, uint256(0), segment))) % WAD;
    }

    function _ballotOf(uint256 sid, address a) internal view returns (uint256, bool) {
        address[] memory one = new address[](1);
        one[0] = a;
        uint256[] memory words = new uint256[](1);
        words[0] = _seatWord(sid, a);
        (uint256[] memory ballots, bool[] memory revealed) = voting.ballotsOf(_key(sid), one, words);
        return (ballots[0], revealed[0]);
    }

    function _slashSeed(uint256 sid) internal view returns (bytes32) {
        return randomness.valueOf(sessions.sessionOf(sid).slashRequest);
    }

    function _checkResults(uint256 sid, address[] memory list, bool hasSeed) internal view {
        bytes32 seed = hasSeed ? _slashSeed(sid) : bytes32(0);
        for (uint256 i = 0; i < list.length; ++i) {
            Expected memory e = _expected(sid, list[i], hasSeed, seed);
            IStaking.SessionResult memory r = staking.resultOf(_key(sid), list[i]);
            assertEq(r.reward, e.reward, "reward");
            assertEq(r.slash, e.slash, "slash");
            assertEq(r.entry, SeatWord.entry(_seatWord(sid, list[i])), "ledger entry of the draw");
            assertEq(r.repMul, e.repMul, "repMul");
            assertEq(r.repAdd, e.repAdd, "repAdd");
        }
    }

    function test_settlementMatchesTheRules() public {
        uint256 sid = _ready(_mixed());
        address[] memory list = _auditors(sid);
        uint256 failMask = (1 << 1) | (1 << 3);
        uint256 last = list.length - 1;
        _commitAll(sid, failMask, 1); // auditor 0 votes the opposite everywhere
        _revealAll(sid, failMask, 1, 1 << last); // the last auditor never reveals
        _finalizeAndWait(sid);
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        uint256 stakingBefore = token.balanceOf(address(staking));
        settlement.settleBatch(sid, 0, list);
        _checkResults(sid, list, true);
        uint256 rewards = 0;
        uint256 slashes = 0;
        for (uint256 i = 0; i < list.length; ++i) {
            IStaking.SessionResult memory r = staking.resultOf(_key(sid), list[i]);
            rewards += r.reward;
            slashes += r.slash;
            assertEq(_locked(list[i]), 0, "unlocked");
        }
        IStaking.SessionResult memory silent = staking.resultOf(_key(sid), list[last]);
        assertEq(silent.slash, _seats(sid, list[last]).length * P, "a non-revealer is slashed on every seat");
        assertEq(
            token.balanceOf(address(staking)) - stakingBefore + slashes, rewards, "rewards sent to staking"
        );
        assertEq(
            token.balanceOf(address(treasury)) - treasuryBefore, 800e18 - rewards + slashes, "sweep + slashes"
        );
        assertEq(token.balanceOf(address(sessions)), 0, "pool emptied");
    }

    /// @dev The per-seat scoring (unchecked arithmetic, seat order) against the reference rules of
    /// `_expected` for any votes: which segments fail, which auditors vote against the majority, and who
    /// never reveals (some segments end INCONCLUSIVE, some auditors are slashed by the coins).
    function testFuzz_settlementMatchesTheRules(uint256 failMask, uint256 invertMask, uint256 skipMask)
        public
    {
        uint256 sid = _ready(_mixed());
        address[] memory list = _auditors(sid);
        uint256 all = (1 << list.length) - 1;
        skipMask &= all;
        if (skipMask == all) skipMask &= skipMask - 1; // someone reveals, so the session is decided
        _commitAll(sid, failMask, invertMask);
        _revealAll(sid, failMask, invertMask, skipMask);
        _finalizeAndWait(sid);
        settlement.settleBatch(sid, 0, list);
        _checkResults(sid, list, true);
    }

    /// @dev Property 2 (SlashCoinsUnknownAtCommit): the coins' randomness is requested only when the
    /// outcome is final, for a block after it; before that settlement is impossible.
    function test_slashCoinsComeFromRandomnessRequestedAtFinalize() public {
        uint256 sid = _ready(_mixed());
        address[] memory list = _auditors(sid);
        _commitAll(sid, 0, 1);
        assertEq(sessions.sessionOf(sid).slashRequest, 0, "no slash randomness while committing");
        _revealAll(sid, 0, 1, 0);
        assertEq(sessions.sessionOf(sid).slashRequest, 0, "nor while revealing");
        uint256 before = randomness.requestCount();
        sessions.finalize(sid);
        uint256 id = sessions.sessionOf(sid).slashRequest;
        assertEq(id, before + 1, "requested at finalize");
        assertTrue(randomness.targetBlockOf(id) > block.number, "for a block that does not exist yet");
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.SlashSeedPending.selector, sid));
        settlement.settleBatch(sid, 0, list);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        settlement.settleBatch(sid, 0, list);
        _checkResults(sid, list, true);
        assertTrue(_slashSeed(sid) != sessions.seedOf(sid), "a different seed from the draw's");
    }

    /// @dev Property 2: p_slash uses the reputation fixed at the draw; settling a good session first
    /// changes nothing for a bad one.
    function test_pSlashUsesReputationFixedAtTheDraw() public {
        uint256 bad = _ready(_uniform(6, 1));
        uint256 good = _ready(_uniform(6, 1));
        address[] memory badList = _auditors(bad);
        _commitAll(bad, 0, type(uint256).max); // every vote wrong... except none: all invert
        _commitAll(good, 0, 0);
        _revealAll(bad, 0, type(uint256).max, 0);
        _revealAll(good, 0, 0, 0);
        sessions.finalize(bad);
        sessions.finalize(good);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        settlement.settleBatch(good, 0, _auditors(good));
        for (uint256 i = 0; i < badList.length; ++i) {
            if (_seatWord(good, badList[i]) != 0) {
                assertTrue(_reputation(badList[i]) > 0.5e18, "good session raised the live reputation");
            }
            assertEq(SeatWord.reputation(_seatWord(bad, badList[i])), 0.5e18, "draw-time reputation");
        }
        settlement.settleBatch(bad, 0, badList);
        _checkResults(bad, badList, true);
    }

    function test_lapsedSlashSeedSlashesEveryIncorrectVote() public {
        uint256 sid = _ready(_uniform(6, 1));
        address[] memory list = _auditors(sid);
        _commitAll(sid, 0, 1 | 4);
        _revealAll(sid, 0, 1 | 4, 0);
        sessions.finalize(sid);
        vm.roll(block.number + RANDOMNESS_DELAY + 300);
        settlement.settleBatch(sid, 0, list);
        _checkResults(sid, list, false);
        // Auditor 0 voted FAIL everywhere: each conclusive PASS segment of its seats is a slash.
        uint256[] memory segs = _seats(sid, list[0]);
        uint256 wrong = 0;
        for (uint256 j = 0; j < segs.length; ++j) {
            (,,,, uint256 outcome) = _segment(sid, segs[j]);
            if (outcome == 1) ++wrong;
        }
        assertTrue(wrong > 0, "auditor 0 was wrong somewhere");
        assertEq(staking.resultOf(_key(sid), list[0]).slash, wrong * P, "every incorrect vote slashed");
    }

    /// @dev Abstaining: no reward, no slash, reputation moves as for an incorrect vote.
    function test_abstentionRule() public {
        uint256 sid = _ready(_uniform(4, 1));
        address[] memory list = _auditors(sid);
        for (uint256 i = 0; i < list.length; ++i) {
            uint256 n = _seats(sid, list[i]).length;
            uint256 v = i == 0 ? Verdicts.pack(0, (uint256(1) << n) - 1) : 0;
            bytes32 c = voting.computeCommitment(sid, 0, list[i], v, bytes32(i));
            vm.prank(list[i]);
            voting.commit(sid, 0, c);
        }
        for (uint256 i = 0; i < list.length; ++i) {
            uint256 n = _seats(sid, list[i]).length;
            uint256 v = i == 0 ? Verdicts.pack(0, (uint256(1) << n) - 1) : 0;
            voting.reveal(sid, 0, IVotingModule.RevealItem({auditor: list[i], verdicts: v, salt: bytes32(i)}));
        }
        _finalizeAndWait(sid);
        settlement.settleBatch(sid, 0, list);
        IStaking.SessionResult memory r = staking.resultOf(_key(sid), list[0]);
        uint256 n0 = _seats(sid, list[0]).length;
        assertEq(r.reward, 0, "no reward");
        assertEq(r.slash, 0, "no slash");
        uint256 mul = WAD;
        for (uint256 j = 0; j < n0; ++j) {
            mul = mul * 0.9e18 / WAD;
        }
        assertEq(r.repMul, mul, "reputation decays per abstention");
        assertEq(r.repAdd, 0, "never rewarded");
        _checkResults(sid, list, true);
    }

    function test_skipsAndNamedErrors() public {
        uint256 sid = _ready(_uniform(4, 1));
        address[] memory list = _auditors(sid);
        vm.expectRevert(
            abi.encodeWithSelector(
                IAuditSessions.WrongStatus.selector, sid, IAuditSessions.Status.KeysPublished
            )
        );
        settlement.settleBatch(sid, 0, list);
        _commitAll(sid, 0, 0);
        _revealAll(sid, 0, 0, 0);
        _finalizeAndWait(sid);
        settlement.settle(sid, 0, list[0]);
        vm.expectRevert(abi.encodeWithSelector(ISettlementModule.AlreadySettled.selector, sid, list[0]));
        settlement.settle(sid, 0, list[0]);
        vm.expectRevert(abi.encodeWithSelector(ISettlementModule.NotSeated.selector, sid, provider));
        settlement.settle(sid, 0, provider);
        vm.expectRevert(ISettlementModule.EmptyBatch.selector);
        settlement.settleBatch(sid, 0, new address[](0));
        address[] memory mixed = new address[](list.length + 1);
        for (uint256 i = 0; i < list.length; ++i) {
            mixed[i] = list[i];
        }
        mixed[list.length] = provider;
        vm.recordLogs();
        assertEq(settlement.settleBatch(sid, 0, mixed), list.length - 1, "the rest applied");
        Vm.Log[] memory logs = vm.getRecordedLogs();
        uint256 skipped = 0;
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics[0] == ISettlementModule.ItemSkipped.selector) {
                bytes4 reason = abi.decode(logs[i].data, (bytes4));
                address who = address(uint160(uint256(logs[i].topics[2])));
                if (who == list[0]) {
                    assertTrue(reason == ISettlementModule.AlreadySettled.selector, "settled");
                } else {
                    assertTrue(who == provider && reason == ISettlementModule.NotSeated.selector, "unknown");
                }
                ++skipped;
            }
        }
        assertEq(skipped, 2, "two skips");
        assertEq(settlement.settleBatch(sid, 0, mixed), 0, "nothing left");
        assertTrue(settlement.isSettled(sid, 0, list[1]), "settled flag");
        assertTrue(!settlement.isSettled(sid, 0, provider), "stranger");
    }

    /// @dev Results do not depend on the order auditors are settled in.
    function test_settlementOrderDoesNotMatter() public {
        uint256 sid = _ready(_mixed());
        address[] memory list = _auditors(sid);
        _commitAll(sid, 1 << 4, 2 | 8);
        _revealAll(sid, 1 << 4, 2 | 8, 1);
        _finalizeAndWait(sid);
        uint256 snap = vm.snapshotState();
        settlement.settleBatch(sid, 0, list);
        IStaking.SessionResult[] memory forward = new IStaking.SessionResult[](list.length);
        for (uint256 i = 0; i < list.length; ++i) {
            forward[i] = staking.resultOf(_key(sid), list[i]);
        }
        vm.revertToState(snap);
        for (uint256 i = list.length; i > 0; --i) {
            settlement.settle(sid, 0, list[i - 1]);
        }
        for (uint256 i = 0; i < list.length; ++i) {
            IStaking.SessionResult memory r = staking.resultOf(_key(sid), list[i]);
            assertEq(r.reward, forward[i].reward, "reward");
            assertEq(r.slash, forward[i].slash, "slash");
            assertEq(r.repMul, forward[i].repMul, "repMul");
            assertEq(r.repAdd, forward[i].repAdd, "repAdd");
        }
        assertEq(token.balanceOf(address(sessions)), 0, "pool emptied either way");
    }

    /// @dev Auditors holding many seats (and several windows of seats) settle by the same rules.
    function test_manySeatsPerAuditor() public {
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.seatCap = 40;
        vm.prank(owner);
        sessions.setParams(p);
        uint256 sid = _open(_uniform(60, 1), 3000e18);
        _drawAll(sid);
        _publish(sid);
        address[] memory list = _auditors(sid);
        bool many = false;
        for (uint256 i = 0; i < list.length; ++i) {
            if (_seats(sid, list[i]).length > 16) many = true;
        }
        assertTrue(many, "some auditor holds more than 16 seats");
        uint256 failMask = (1 << 3) | (1 << 11) | (1 << 17) | (1 << 59);
        _commitAll(sid, failMask, 1 << 2);
        _revealAll(sid, failMask, 1 << 2, 0);
        _finalizeAndWait(sid);
        settlement.settleBatch(sid, 0, list);
        _checkResults(sid, list, true);
    }
}
