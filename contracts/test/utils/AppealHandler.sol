// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "./AppealsFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {ICanaryModule} from "../../src/interfaces/ICanaryModule.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";
import {IVotingModule} from "../../src/interfaces/IVotingModule.sol";
import {AppealScoringGhosts} from "./AppealScoringGhosts.sol";
import {Staking} from "../../src/Staking.sol";
import {PanelKey} from "../../src/libraries/PanelKey.sol";
import {AppealWord} from "../../src/libraries/AppealWord.sol";
import {SegmentWord} from "../../src/libraries/SegmentWord.sol";

/// @notice Adversarial traffic of issue 15 for the invariant fuzzer, against the real Staking: sessions
/// with canaries committed and revealed by one of two canary operators (or never committed, or left
/// unrevealed), operators authorized and revoked by governance at any moment, canary commits and reveals
/// tried by the provider (authorized as an operator or not), appellants, auditors, a stranger and the
/// other operator, appeals of any segment at any time by two
/// appellants, rounds whose keys are published or withheld and whose panels vote, abstain or stay
/// silent, stake changes and withdrawals at any moment, appeal money resolved in random pages, and
/// settlement of every round in any order and in random subsets; panel accounts that refuse their
/// stake locks at any moment (deregistration, a withdrawal of the whole stake, or stake locked elsewhere);
/// every appeal's settlement audited against the scoring rule (`AppealScoringGhosts`).
contract AppealHandler is AppealScoringGhosts {
    uint256 internal constant MAX_SESSIONS = 4;

    uint256[] public sessionIds;
    address[] public appellants;
    address[] public delegators;
    uint256[] internal _withdrawals;
    /// @dev Settle calls that applied something to a finalized session whose outcome was not final.
    uint256 public ghostEarlySettles;
    /// @dev Sum of `applied` over every settle call, and the distinct (session, round, auditor) found
    /// settled after those calls.
    uint256 public ghostApplied;
    uint256 public ghostDistinct;
    mapping(uint256 key => mapping(address => bool)) internal _seen;
    /// @dev Coverage: admitted appeals, decided rounds, resolved segments, revealed canaries.
    uint256 public ghostAppeals;
    uint256 public ghostResolved;
    uint256 public ghostCanaries;
    uint256 public ghostFinal;
    /// @dev Canary operators (two, so that "only the committing operator reveals" is exercised), the
    /// canary commits and reveals that succeeded although the caller was not allowed to make them, and
    /// the commits and reveals that succeeded at all (coverage).
    address[] public operators;
    uint256 public ghostForbiddenCanaryCalls;
    uint256 public ghostCanaryCommits;
    /// @dev The opening of each session's first canary (index << 8 | verdict), known to its operator.
    mapping(uint256 sid => uint256) internal _truth;
    /// @dev The canary commit window (second review): commits that succeeded although the draw's randomness
    /// could already be fixed, and commits of an authorized operator refused within `canaryCommitBlocks`
    /// of the opening (both must stay 0); late commits tried (coverage).
    uint256 public ghostCommitWhileKnown;
    uint256 public ghostRefusedInWindow;
    uint256 public ghostLateCommits;
    mapping(uint256 sid => uint256) internal _openedAt;

    constructor() {
        // Sessions of up to 20 segments of a tier, over what the fixture's 100 TRUST minimum backs at 8 TRUST
        // per lock (outside review 22's rule): the invariants cover the draw's session-held rule too.
        stakePremiseWaived = true;
        _deployAppeals();
        _addAuditors(1, 14, STAKE);
        // Tier 0 (k_0 = 1: panels of 3 and 7) has room for a depth-2 panel, so keys are withheld at
        // every depth the parameters allow (second review: withholding at depth 2 erased a decided FAIL).
        _addAuditors(0, 14, STAKE);
        appellants.push(appellant);
        appellants.push(address(0xA99F));
        token.transfer(appellants[1], 100_000e18);
        vm.prank(appellants[1]);
        token.approve(address(appeals), type(uint256).max);
        for (uint256 i = 0; i < 2; ++i) {
            address d = address(uint160(0xD000 + i));
            delegators.push(d);
            token.transfer(d, 20_000e18);
            vm.prank(d);
            token.approve(address(staking), type(uint256).max);
        }
        operators.push(canaryOperator);
        operators.push(address(0xCA4B));
        vm.prank(owner);
        canaries.setCanaryOperator(operators[1], true);
        _nextEpoch();
    }

    /// @dev Longer windows than the unit tests, so that the fuzzer's time jumps leave room to appeal.
    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = 80;
        p.canaryRevealBlocks = 20;
    }

    // ------------------------------------------------------------------ accessors

    function sessionList() external view returns (uint256[] memory) {
        return sessionIds;
    }

    function people() external view returns (address[] memory list) {
        list = new address[](auditorAddrs.length + appellants.length + delegators.length + 4);
        uint256 k = 0;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            list[k++] = auditorAddrs[i];
        }
        for (uint256 i = 0; i < appellants.length; ++i) {
            list[k++] = appellants[i];
        }
        for (uint256 i = 0; i < delegators.length; ++i) {
            list[k++] = delegators[i];
        }
        list[k++] = provider;
        list[k++] = address(this);
        list[k++] = operators[0];
        list[k++] = operators[1];
    }

    function contracts() external view returns (address[] memory list) {
        list = new address[](10);
        list[0] = address(token);
        list[1] = address(staking);
        list[2] = address(sessions);
        list[3] = address(treasury);
        list[4] = address(drawModule);
        list[5] = address(voting);
        list[6] = address(settlement);
        list[7] = address(appeals);
        list[8] = address(escrow);
        list[9] = address(canaries);
    }

    function reward() external pure returns (uint256) {
        return R;
    }

    function roundAuditors(uint256 sid, uint256 round) external view returns (address[] memory) {
        return _roundAuditors(sid, round);
    }

    function _pick(uint256 seed) internal view returns (uint256) {
        if (sessionIds.length == 0) return 0;
        return sessionIds[seed % sessionIds.length];
    }

    // ------------------------------------------------------------------ round 0

    function open(uint256 nSeed, uint256 mode) external {
        if (sessionIds.length >= MAX_SESSIONS) return;
        // Half the sessions owe a canary (10 to 20 segments at 10%), half none (1 to 9).
        uint256 n = nSeed % 2 == 0 ? bound(nSeed >> 1, 10, 20) : bound(nSeed >> 1, 1, 9);
        uint256 sid = _open(_uniform(n, uint8((nSeed >> 8) % 2)), FEE);
        sessionIds.push(sid);
        _openedAt[sid] = block.number;
        uint256 owed = n / 10; // canaryRateBps 1000
        if (mode % 4 == 0) return; // sometimes the canaries are never committed
        bytes32[] memory c = new bytes32[](owed);
        for (uint256 i = 0; i < owed; ++i) {
            uint256 index = (mode + i) % n; // distinct segments
            uint8 verdict = uint8(1 + ((mode >> 8) + i) % 2);
            c[i] = _canaryCommitment(sid, index, verdict);
            if (i == 0) _truth[sid] = (index << 8) | verdict;
        }
        // Mostly an operator; one time in eight someone else tries (and must fail).
        _tryCommit(sid, (mode >> 16) % 8 == 0 ? _anyone(mode >> 24) : operators[(mode >> 16) % 2], c);
    }

    /// @dev Anyone who might try a canary call: the provider, an appellant, an auditor, the handler or an
    /// operator.
    function _anyone(uint256 seed) internal view returns (address) {
        uint256 k = seed % 5;
        if (k == 0) return provider;
        if (k == 1) return appellants[(seed >> 8) % appellants.length];
        if (k == 2) return auditorAddrs[(seed >> 8) % auditorAddrs.length];
        if (k == 3) return address(this);
        return operators[(seed >> 8) % 2];
    }

    /// @dev A commit by `who`; a success is forbidden unless `who` was an authorized operator other than
    /// the session's provider.
    function _tryCommit(uint256 sid, address who, bytes32[] memory c) internal {
        bool allowed = canaries.isCanaryOperator(who) && who != provider;
        vm.prank(who);
        try canaries.commitCanaries(sid, c) {
            ++ghostCanaryCommits;
            if (!allowed) ++ghostForbiddenCanaryCalls;
        } catch {}
    }

    /// @dev An operator commits some blocks after the opening (a placement round trip, or a flooded
    /// operator): accepted in every block through `open + canaryCommitBlocks`, never once the draw's
    /// randomness can be fixed.
    function commitLate(uint256 which, uint256 wait, uint256 mode) external {
        uint256 sid = _pick(which);
        if (sid == 0 || canaries.canariesOf(sid).operator != address(0)) return;
        vm.roll(block.number + wait % (CANARY_COMMIT_BLOCKS + 4));
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        bool known = s.status != IAuditSessions.Status.Created
            || sessions.sourceOf(sid).status(s.drawRequest) != IRandomness.RequestStatus.Pending;
        bytes32[] memory c = new bytes32[](canaries.canariesOwed(sid, s.segmentCount));
        for (uint256 i = 0; i < c.length; ++i) {
            c[i] = _canaryCommitment(sid, i, uint8(1 + (mode >> 8) % 2));
        }
        address who = operators[mode % 2];
        bool inWindow = c.length != 0 && s.status == IAuditSessions.Status.Created
            && block.number <= _openedAt[sid] + CANARY_COMMIT_BLOCKS && canaries.isCanaryOperator(who);
        ++ghostLateCommits;
        vm.prank(who);
        try canaries.commitCanaries(sid, c) {
            ++ghostCanaryCommits;
            if (known) ++ghostCommitWhileKnown;
            if (c.length != 0) _truth[sid] = 1 + (mode >> 8) % 2; // index 0
        } catch {
            if (inWindow) ++ghostRefusedInWindow;
        }
    }

    /// @dev A reveal by `who`; a success is forbidden unless `who` committed the session's canaries and is
    /// still authorized.
    function _tryReveal(uint256 sid, address who, ICanaryModule.CanaryReveal memory it) internal {
        bool allowed = canaries.isCanaryOperator(who) && canaries.canariesOf(sid).operator == who;
        vm.prank(who);
        try canaries.revealCanary(sid, it) {
            ++ghostCanaries;
            if (!allowed) ++ghostForbiddenCanaryCalls;
        } catch {}
    }

    /// @dev Governance authorizes or revokes an operator, or the provider, at any moment (mostly
    /// authorizes, so that canaries keep flowing).
    function setOperator(uint256 who, uint256 mode) external {
        address a = who % 3 == 2 ? provider : operators[who % 2];
        vm.prank(owner);
        canaries.setCanaryOperator(a, mode % 4 != 0);
    }

    /// @dev An adversarial commit of a random session by anyone (the provider first of all).
    function commitAsAnyone(uint256 which, uint256 who, uint256 mode) external {
        uint256 sid = _pick(which);
        if (sid == 0) return;
        uint256 n = sessions.sessionOf(sid).segmentCount;
        bytes32[] memory c = new bytes32[](n / 10);
        if (c.length != 0) c[0] = _canaryCommitment(sid, mode % n, uint8(1 + (mode >> 8) % 2));
        _tryCommit(sid, _anyone(who), c);
    }

    /// @dev Push round 0 of a session up to three phases on.
    function step(uint256 which, uint256 mask) external {
        uint256 sid = _pick(which);
        if (sid == 0) return;
        for (uint256 i = 0; i < 3; ++i) {
            _step(sid, uint256(keccak256(abi.encode(mask, i))));
        }
    }

    function _step(uint256 sid, uint256 mask) internal {
        IAuditSessions.Status st = sessions.statusOf(sid);
        if (st == IAuditSessions.Status.Created || _drawing(sid)) {
            _rollPastDrawTarget(sid);
            try sessions.draw(sid, 40) {} catch {}
        } else if (st == IAuditSessions.Status.Drawing) {
            if (mask % 8 != 0) {
                vm.prank(provider);
                try sessions.publishKeys(sid, "manifest") {} catch {}
            }
        } else if (st == IAuditSessions.Status.KeysPublished || st == IAuditSessions.Status.Commit) {
            _vote(sid, 0, mask, true);
        } else if (st == IAuditSessions.Status.Reveal) {
            _vote(sid, 0, mask, false);
            vm.roll(block.number + 21);
            sessions.advance(sid);
        }
    }

    /// @dev Commit (or reveal) random verdicts of a random subset of a panel's auditors.
    function _vote(uint256 sid, uint256 round, uint256 mask, bool commitPhase) internal {
        address[] memory list = _roundAuditors(sid, round);
        IVotingModule.RevealItem[] memory items = new IVotingModule.RevealItem[](list.length);
        uint256 k = 0;
        for (uint256 i = 0; i < list.length; ++i) {
            if ((mask >> i) & 1 == 0 && (mask >> (i + 64)) & 1 == 0) continue; // a quarter stay silent
            uint256 v = _roundVerdicts(sid, round, list[i], mask >> 128, (mask >> (i + 32)) & 1 == 1);
            bytes32 salt = _salt(sid, list[i]);
            if (commitPhase) {
                // The commitment first: a call in the argument list would take the prank, and the commit
                // would come from the handler (NotSeated), so no panel ever voted.
                bytes32 c = voting.computeCommitment(sid, round, list[i], v, salt);
                vm.prank(list[i]);
                try voting.commit(sid, round, c) {} catch {}
            } else {
                items[k++] = IVotingModule.RevealItem({auditor: list[i], verdicts: v, salt: salt});
            }
        }
        if (k == 0) return;
        assembly ("memory-safe") {
            mstore(items, k)
        }
        try voting.revealBatch(sid, round, items) {} catch {}
    }

    function revealCanary(uint256 which, uint256 mode) external {
        uint256 sid = _pick(which);
        if (sid == 0) return;
        uint256 finalizedAt = appeals.sessionAppeals(sid).finalizedAt;
        if (finalizedAt != 0 && block.number == finalizedAt) vm.roll(block.number + 1); // the window opens after
        _guessCanary(sid, mode);
    }

    /// @dev The committing operator reveals its first canary's true opening, or (one time in four) a guessed
    /// one; one time in four someone else tries.
    function _guessCanary(uint256 sid, uint256 mode) internal {
        ICanaryModule.CanaryState memory st = canaries.canariesOf(sid);
        if (st.committed == 0) return;
        uint256 n = sessions.sessionOf(sid).segmentCount;
        address who = (mode >> 16) % 4 == 0 ? _anyone(mode >> 24) : st.operator;
        uint256 index = mode % 4 == 0 ? (mode >> 2) % n : _truth[sid] >> 8;
        uint8 verdict = mode % 4 == 0 ? uint8(1 + (mode >> 8) % 2) : uint8(_truth[sid]);
        _tryReveal(
            sid,
            who,
            ICanaryModule.CanaryReveal({
                slot: 0, index: index, verdict: verdict, salt: _canarySalt(sid, index)
            })
        );
    }

    // ------------------------------------------------------------------ appeals

    /// @dev Appeal one or two segments, of a session still appealable if there is one.
    function appeal(uint256 which, uint256 segSeed, uint256 who) external {
        uint256 sid = _pick(which);
        if (sid == 0) return;
        for (uint256 i = 0; i < sessionIds.length && which % 4 != 0; ++i) {
            uint256 cand = sessionIds[(which % sessionIds.length + i) % sessionIds.length];
            if (appeals.appealableUntil(cand) >= block.number) {
                sid = cand;
                break;
            }
        }
        if (segSeed % 2 == 0 && _appealDeeper(sid, segSeed >> 1, who)) return;
        _appealSegments(sid, segSeed, who);
    }

    /// @dev Appeal again a segment whose last panel decided and whose window is open (a depth-2 panel,
    /// so that its keys can be withheld over a decided outcome), one whose panel said FAIL first; false
    /// if there is none.
    function _appealDeeper(uint256 sid, uint256 start, uint256 who) internal returns (bool) {
        uint256 n = sessions.sessionOf(sid).segmentCount;
        for (uint256 j = 0; j < 2 * n; ++j) {
            uint256 seg = (start + j) % n;
            uint256 w = appeals.appealWordOf(sid, seg);
            if (AppealWord.depth(w) == 0 || AppealWord.pending(w) || AppealWord.closed(w)) continue;
            if (AppealWord.windowEnd(w) < block.number) continue;
            if (j < n && AppealWord.outcome(w) != SegmentWord.OUTCOME_FAIL) continue;
            vm.prank(appellants[who % appellants.length]);
            try appeals.appeal(sid, _segs(seg), type(uint256).max) {
                ++ghostAppeals;
                return true;
            } catch {}
        }
        return false;
    }

    function _appealSegments(uint256 sid, uint256 segSeed, uint256 who) internal {
        uint256 n = sessions.sessionOf(sid).segmentCount;
        uint256 a = segSeed % n;
        uint256 b = (segSeed >> 16) % n;
        uint256[] memory segs = a == b ? _segs(a) : a < b ? _segs(a, b) : _segs(b, a);
        vm.prank(appellants[who % appellants.length]);
        try appeals.appeal(sid, segs, type(uint256).max) {
            ++ghostAppeals;
        } catch {}
    }

    /// @dev Push one appeal round up to three phases on (keys withheld one time in six at depth 1, in
    /// every other round deeper).
    function stepRound(uint256 which, uint256 roundSeed, uint256 mask) external {
        uint256 sid = _pick(which);
        if (sid == 0) return;
        uint256 count = appeals.sessionAppeals(sid).roundCount;
        if (count == 0) return;
        uint256 round = 1 + roundSeed % count;
        for (uint256 i = 0; i < 3; ++i) {
            _stepRound(sid, round, uint256(keccak256(abi.encode(mask, i))));
        }
    }

    function _stepRound(uint256 sid, uint256 round, uint256 mask) internal {
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        if (
            rd.status == IAuditSessions.Status.Created
                || (rd.status == IAuditSessions.Status.Drawing && rd.drawnSeats < rd.totalSeats)
        ) {
            vm.roll(block.number + RANDOMNESS_DELAY + 1);
            try appeals.drawPanel(sid, round, 32) {} catch {}
            if (appeals.roundOf(sid, round).refused) _countRefused(sid, round);
        } else if (rd.status == IAuditSessions.Status.Drawing) {
            // Deeper, the provider decides once per round (half the rounds: never), so that a withheld
            // panel over a decided outcome is common, not the rare round nobody stepped in time.
            bool withhold = rd.depth > 1 ? uint256(keccak256(abi.encode(sid, round))) % 2 == 0 : mask % 6 == 0;
            if (!withhold) {
                vm.prank(provider);
                try appeals.publishPanelKeys(sid, round, "round-manifest") {} catch {}
            } else {
                appeals.advance(sid); // ends the round (KEYS_WITHHELD) once its key deadline passed
            }
        } else if (
            rd.status == IAuditSessions.Status.KeysPublished || rd.status == IAuditSessions.Status.Commit
        ) {
            _vote(sid, round, mask, true);
        } else if (rd.status == IAuditSessions.Status.Reveal) {
            _vote(sid, round, mask, false);
            vm.roll(block.number + 21);
            appeals.advance(sid);
        }
    }

    /// @dev Drive one session through up to four steps of its whole life from wherever it is: round 0,
    /// canary reveal, appeals while a window is open, their rounds, the outcome, the appeal money and the
    /// settlement of random rounds in random subsets.
    function drive(uint256 which, uint256 mask) external {
        uint256 sid = _pick(which);
        if (sid == 0) return;
        // Mostly the oldest session whose appeal money is not resolved yet, so lives run to their end.
        for (uint256 i = 0; i < sessionIds.length && which % 4 != 0; ++i) {
            IAppealModule.SessionAppeals memory sa = appeals.sessionAppeals(sessionIds[i]);
            if (!sa.outcomeFinal || escrow.sessionMoney(sessionIds[i]).resolvedCount < sa.appealedCount) {
                sid = sessionIds[i];
                break;
            }
        }
        for (uint256 i = 0; i < 4; ++i) {
            mask = uint256(keccak256(abi.encode(mask, i)));
            IAppealModule.SessionAppeals memory sa = appeals.sessionAppeals(sid);
            if (sa.finalizedAt == 0) {
                if (uint8(sessions.statusOf(sid)) >= uint8(IAuditSessions.Status.Cancelled)) {
                    _settleSome(sid, 0, mask);
                    return;
                }
                _step(sid, mask);
            } else if (!sa.outcomeFinal) {
                _driveAppeals(sid, sa, mask);
            } else {
                vm.roll(block.number + RANDOMNESS_DELAY + 1);
                _settleAppeals(sid, mask);
                _settleSome(sid, mask >> 8, mask >> 16);
            }
        }
    }

    function _driveAppeals(uint256 sid, IAppealModule.SessionAppeals memory sa, uint256 mask) internal {
        if (block.number <= sa.canaryEnd) {
            if (block.number == sa.finalizedAt) vm.roll(block.number + 1); // the window opens after it
            if (mask % 4 != 0) _guessCanary(sid, mask >> 8);
            vm.roll(sa.canaryEnd + 1);
            return;
        }
        for (uint256 r = 1; r <= sa.roundCount; ++r) {
            IAuditSessions.Status st = appeals.roundOf(sid, r).status;
            if (uint8(st) < uint8(IAuditSessions.Status.Finalized)) {
                _stepRound(sid, r, mask);
                return;
            }
        }
        if (mask % 3 != 0 && appeals.appealableUntil(sid) >= block.number) {
            if (mask % 2 == 0 && _appealDeeper(sid, mask >> 8, mask >> 24)) return;
            _appealSegments(sid, mask >> 8, mask >> 24);
            return;
        }
        if (block.number <= sa.lastWindowEnd) vm.roll(sa.lastWindowEnd + 1);
        if (appeals.advance(sid)) ++ghostFinal;
    }

    function advance(uint256 which) external {
        uint256 sid = _pick(which);
        if (sid == 0) return;
        sessions.advance(sid);
        if (appeals.advance(sid)) ++ghostFinal;
    }

    function settleAppeals(uint256 which, uint256 maxSegments) external {
        uint256 sid = _pick(which);
        if (sid != 0) _settleAppeals(sid, maxSegments);
    }

    function _settleAppeals(uint256 sid, uint256 maxSegments) internal {
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        ghostResolved += _settleAudited(sid, bound(maxSegments, 1, 3));
    }

    /// @dev Settle a random subset of a random round, plus a stranger and a repeat.
    function settleSome(uint256 which, uint256 roundSeed, uint256 mask) external {
        uint256 sid = _pick(which);
        if (sid != 0) _settleSome(sid, roundSeed, mask);
    }

    function _settleSome(uint256 sid, uint256 roundSeed, uint256 mask) internal {
        uint256 round = roundSeed % (uint256(appeals.sessionAppeals(sid).roundCount) + 1);
        address[] memory list = _roundAuditors(sid, round);
        address[] memory batch = new address[](list.length + 2);
        uint256 k = 0;
        for (uint256 j = 0; j < list.length; ++j) {
            if ((mask >> j) & 1 == 1) batch[k++] = list[list.length - 1 - j];
        }
        if (k != 0 && mask % 3 == 0) batch[k++] = batch[0]; // the same auditor twice
        if (mask % 5 == 0) batch[k++] = provider; // a stranger
        if (k == 0) return;
        assembly ("memory-safe") {
            mstore(batch, k)
        }
        bool finalBefore = appeals.isOutcomeFinal(sid);
        bool finalized = sessions.statusOf(sid) == IAuditSessions.Status.Finalized;
        try settlement.settleBatch(sid, round, batch) returns (uint256 applied) {
            ghostApplied += applied;
            if (applied != 0 && finalized && !finalBefore) ++ghostEarlySettles;
        } catch {}
        uint256 key = PanelKey.keyOf(sid, round);
        for (uint256 j = 0; j < k; ++j) {
            if (_seen[key][batch[j]] || !settlement.isSettled(sid, round, batch[j])) continue;
            _seen[key][batch[j]] = true;
            ++ghostDistinct;
        }
    }

    function passTime(uint256 blocks) external {
        vm.roll(block.number + bound(blocks, 1, 60));
    }

    // ------------------------------------------------------------------ stake changes

    function delegate(uint256 who, uint256 to, uint256 amount) external {
        address d = delegators[who % delegators.length];
        amount = bound(amount, 1e18, 2000e18);
        if (token.balanceOf(d) < amount) return;
        vm.prank(d);
        try staking.stake(auditorAddrs[to % auditorAddrs.length], amount) {} catch {}
    }

    function withdraw(uint256 who, uint256 from, uint256 fraction) external {
        address a = auditorAddrs[from % auditorAddrs.length];
        address holder = who % 2 == 0 ? a : delegators[who % delegators.length];
        uint256 shares = staking.sharesOf(a, holder) * bound(fraction, 1, 100) / 100;
        if (shares == 0) return;
        vm.prank(holder);
        try staking.requestWithdrawal(a, shares) returns (uint256 id) {
            _withdrawals.push(id);
        } catch {}
    }

    function claim(uint256 which) external {
        if (_withdrawals.length == 0) return;
        uint256 id = _withdrawals[which % _withdrawals.length];
        vm.warp(block.timestamp + 1 days);
        (Staking.Withdrawal memory w,,) = staking.withdrawalOf(id);
        vm.prank(w.owner);
        try staking.claimWithdrawal(id) {} catch {}
    }

    function drainAny(uint256 who) external {
        staking.drain(auditorAddrs[who % auditorAddrs.length], 8);
    }

    function _recordWithdrawal(uint256 id) internal override {
        _withdrawals.push(id);
    }

    function _pickSession(uint256 seed) internal view override returns (uint256) {
        return _pick(seed);
    }
}
