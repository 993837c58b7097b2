// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase} from "./utils/TestBase.sol";
import {AppealHandler} from "./utils/AppealHandler.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {IAppealModule} from "../src/interfaces/IAppealModule.sol";
import {IAppealSettlement} from "../src/interfaces/IAppealSettlement.sol";
import {ICanaryModule} from "../src/interfaces/ICanaryModule.sol";
import {Staking} from "../src/Staking.sol";
import {AppealWord} from "../src/libraries/AppealWord.sol";
import {SegmentWord} from "../src/libraries/SegmentWord.sol";
import {AppealMath} from "../src/libraries/AppealMath.sol";

interface TokenBalances {
    function balanceOf(address) external view returns (uint256);
    function totalSupply() external view returns (uint256);
}

contract AppealInvariantsTest is TestBase {
    AppealHandler internal handler;

    function setUp() public {
        handler = new AppealHandler();
    }

    function targetContracts() public view returns (address[] memory targets) {
        targets = new address[](1);
        targets[0] = address(handler);
    }

    /// @dev Every token is somewhere known, bonds included, and each contract holds exactly its books:
    /// the core the open pools, the appeal settlement the bonds not yet resolved plus the panel rewards
    /// not yet paid, Staking its pools, deposits, results and reserve, every other module nothing.
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_tokenConservationWithAppeals() public view {
        address[] memory c = handler.contracts();
        TokenBalances t = TokenBalances(c[0]);
        uint256 sum = 0;
        for (uint256 i = 1; i < c.length; ++i) {
            sum += t.balanceOf(c[i]);
        }
        address[] memory ppl = handler.people();
        for (uint256 i = 0; i < ppl.length; ++i) {
            sum += t.balanceOf(ppl[i]);
        }
        assertEq(sum, t.totalSupply(), "every token accounted for");
        Staking st = Staking(c[1]);
        uint256 books = st.totalPooled() + st.pendingDeposits() + st.storedRewards() + st.withdrawalReserve();
        assertEq(t.balanceOf(c[1]), books, "Staking holds its books");
        (uint256 pools, uint256 escrowBooks) = _books(c);
        assertEq(t.balanceOf(c[2]), pools, "core holds the open pools");
        assertEq(t.balanceOf(c[8]), escrowBooks, "appeal settlement holds unresolved bonds + unpaid rewards");
        assertEq(
            t.balanceOf(c[4]) + t.balanceOf(c[5]) + t.balanceOf(c[6]) + t.balanceOf(c[7]) + t.balanceOf(c[9]),
            0,
            "modules hold nothing"
        );
    }

    /// @dev Canary truth comes only from operators: no commit or reveal by a caller the rules forbid ever
    /// succeeded (the provider, authorized or not, appellants, auditors, strangers, a revoked operator, an
    /// operator revealing another's commitments), and no session's committing operator is its provider.
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_canaryTruthOnlyFromOperators() public view {
        assertEq(handler.ghostForbiddenCanaryCalls(), 0, "a canary commit or reveal by a caller not allowed");
        address[] memory c = handler.contracts();
        uint256[] memory sids = handler.sessionList();
        for (uint256 i = 0; i < sids.length; ++i) {
            address op = CanaryView(c[9]).canariesOf(sids[i]).operator;
            assertTrue(op != IAuditSessions(c[2]).sessionOf(sids[i]).provider, "provider committed canaries");
        }
    }

    /// @dev The canary commit window: no commit was accepted while the draw's randomness could be fixed, and
    /// no authorized operator's commit was refused within `canaryCommitBlocks` of the opening.
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_canaryCommitWindowHolds() public view {
        assertEq(handler.ghostCommitWhileKnown(), 0, "a canary commit accepted after the draw randomness");
        assertEq(handler.ghostRefusedInWindow(), 0, "an operator's commit refused inside the window");
    }

    function _books(address[] memory c) internal view returns (uint256 pools, uint256 escrowBooks) {
        IAppealModule appeals = IAppealModule(c[7]);
        IAppealSettlement escrow = IAppealSettlement(c[8]);
        uint256[] memory sids = handler.sessionList();
        for (uint256 i = 0; i < sids.length; ++i) {
            pools += IAuditSessions(c[2]).sessionOf(sids[i]).pool;
            uint256 rounds = appeals.sessionAppeals(sids[i]).roundCount;
            for (uint256 r = 1; r <= rounds; ++r) {
                IAppealModule.Round memory rd = appeals.roundOf(sids[i], r);
                IAppealSettlement.RoundMoney memory m = escrow.roundMoney(sids[i], r);
                // Every segment of a session has one tier: a round's bond splits evenly over its segments.
                escrowBooks += rd.bond - rd.bond / rd.segmentCount * m.resolvedSegments + m.held;
            }
        }
    }

    /// @dev Keys withheld never erase a decided FAIL nor keep a PASS: a segment whose last panel's keys
    /// were withheld is closed, at the FAIL its appeal contested, at any depth (AppealMath.withheldKeeps), else
    /// INCONCLUSIVE; and once its money is resolved, that panel's seats got R each (the forfeited bond)
    /// exactly when the FAIL stood, never more than R otherwise.
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_withheldKeysKeepOnlyADecidedFail() public view {
        address[] memory c = handler.contracts();
        IAppealModule appeals = IAppealModule(c[7]);
        IAppealSettlement escrow = IAppealSettlement(c[8]);
        uint256[] memory sids = handler.sessionList();
        for (uint256 i = 0; i < sids.length; ++i) {
            uint256 n = IAuditSessions(c[2]).sessionOf(sids[i]).segmentCount;
            for (uint256 seg = 0; seg < n; ++seg) {
                uint256 w = appeals.appealWordOf(sids[i], seg);
                uint256 d = AppealWord.depth(w);
                if (d == 0 || AppealWord.pending(w)) continue;
                uint256 round = AppealWord.roundAt(w, d);
                if (!AppealMath.withheld(appeals.roundOf(sids[i], round))) continue; // drawn short: abandoned
                uint256 contested = AppealWord.appealedAt(w, d);
                bool keeps = AppealMath.withheldKeeps(d, contested);
                assertTrue(AppealWord.closed(w), "a withheld segment is final");
                assertEq(
                    AppealWord.outcome(w),
                    keeps ? contested : SegmentWord.OUTCOME_INCONCLUSIVE,
                    "withheld: a decided FAIL or INCONCLUSIVE"
                );
                if (escrow.sessionMoney(sids[i]).resolveCursor <= seg) continue; // its money not resolved yet
                uint256 pv = escrow.perVoteOf(sids[i], round, seg);
                if (keeps) assertEq(pv, handler.reward(), "forfeited bond: R per locked seat");
                else assertTrue(pv <= handler.reward(), "pot share: at most R");
            }
        }
    }

    /// @dev No contested PASS survives a panel draw failed by refusals: a segment whose last panel's draw
    /// ended REFUSED (`Round.refused`, after auditors deregistered, withdrew or had their stake locked
    /// elsewhere at any moment: `AppealHandler.refuse`) is final, INCONCLUSIVE if it contested a PASS and
    /// at its contested FAIL or INCONCLUSIVE otherwise; a refused round is never followed by another panel
    /// of the segment; once resolved, its drawn seats got at most R each (from the pot) and its appellant's
    /// bond came back whole (the escrow's books in `invariant_tokenConservationWithAppeals`).
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_noContestedPassSurvivesARefusedDraw() public view {
        address[] memory c = handler.contracts();
        IAppealModule appeals = IAppealModule(c[7]);
        IAppealSettlement escrow = IAppealSettlement(c[8]);
        uint256[] memory sids = handler.sessionList();
        for (uint256 i = 0; i < sids.length; ++i) {
            uint256 n = IAuditSessions(c[2]).sessionOf(sids[i]).segmentCount;
            for (uint256 seg = 0; seg < n; ++seg) {
                uint256 w = appeals.appealWordOf(sids[i], seg);
                uint256 d = AppealWord.depth(w);
                for (uint256 j = 1; j <= d; ++j) {
                    IAppealModule.Round memory rd = appeals.roundOf(sids[i], AppealWord.roundAt(w, j));
                    if (!rd.refused) continue;
                    assertEq(
                        uint256(rd.status), uint256(IAuditSessions.Status.Cancelled), "refused: Cancelled"
                    );
                    assertEq(j, d, "no panel after a refused one");
                    assertTrue(AppealWord.closed(w) && !AppealWord.pending(w), "refused: final");
                    uint256 contested = AppealWord.appealedAt(w, j);
                    uint256 o = AppealWord.outcome(w);
                    assertTrue(o != SegmentWord.OUTCOME_PASS, "a contested PASS survived refusals");
                    assertEq(
                        o,
                        contested == SegmentWord.OUTCOME_PASS ? SegmentWord.OUTCOME_INCONCLUSIVE : contested,
                        "refused: as if withheld"
                    );
                    if (escrow.sessionMoney(sids[i]).resolveCursor <= seg) continue;
                    uint256 pv = escrow.perVoteOf(sids[i], AppealWord.roundAt(w, j), seg);
                    assertTrue(pv <= handler.reward(), "refused: at most R per drawn seat");
                }
            }
        }
    }

    /// @dev A round that ends undecided never rescores the earlier ones (outside reviews 5 and 6): every
    /// decided appeal of a segment whose last panel was REFUSED or UNFILLABLE settled as if that panel had
    /// never been appealed, and behind keys withheld over a PASS as if the panel had voted FAIL
    /// (`AppealScoringGhosts`, from the `AppealSettled` events); an appellant whose appeal a decided panel
    /// rejected never got any bond back through a later REFUSED or UNFILLABLE round; the undecided round's own
    /// appellant is never rewarded (the provider may be it, under any address).
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_undecidedRoundsNeverRescoreEarlierOnes() public view {
        assertEq(handler.ghostRescored(), 0, "an undecided last round rescored an earlier appeal");
        assertEq(handler.ghostLostRefunded(), 0, "a rejected appeal got its bond back through a later round");
        assertEq(handler.ghostUndecidedRewards(), 0, "an undecided round's appellant was rewarded");
    }

    /// @dev The provider never ends better off by withholding than by letting the round vote: a segment whose
    /// last panel's keys were withheld never reads PASS (verdict), and once its session's appeal money is
    /// resolved every vote is scored (`panelContext(sid, 0).finalWords`, what SettlementModule scores round 0
    /// and every panel against) as if the panel had voted FAIL: FAIL over a contested PASS or FAIL, the
    /// decided INCONCLUSIVE it contested otherwise. A FAIL vote is the worst the panel could have returned for
    /// the provider, so withholding can only match or worsen its verdict, its auditors' scores and the
    /// earlier appeals it made.
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_withholdingNeverBeatsAFailVote() public view {
        address[] memory c = handler.contracts();
        IAppealModule appeals = IAppealModule(c[7]);
        uint256[] memory sids = handler.sessionList();
        for (uint256 i = 0; i < sids.length; ++i) {
            uint256 n = IAuditSessions(c[2]).sessionOf(sids[i]).segmentCount;
            uint256[] memory words = _scoringWords(IAppealSettlement(c[8]), sids[i]);
            for (uint256 seg = 0; seg < n; ++seg) {
                uint256 w = appeals.appealWordOf(sids[i], seg);
                uint256 d = AppealWord.depth(w);
                if (d == 0 || AppealWord.pending(w)) continue;
                if (!AppealMath.withheld(appeals.roundOf(sids[i], AppealWord.roundAt(w, d)))) continue;
                assertTrue(AppealWord.outcome(w) != SegmentWord.OUTCOME_PASS, "withholding kept a PASS");
                if (words.length == 0) continue; // money not resolved yet
                uint256 contested = AppealWord.appealedAt(w, d);
                uint256 scored = SegmentWord.outcome(SegmentWord.lane(words[SegmentWord.wordOf(seg)], seg));
                assertEq(
                    scored,
                    contested == SegmentWord.OUTCOME_INCONCLUSIVE ? contested : SegmentWord.OUTCOME_FAIL,
                    "withheld: scored as a FAIL vote"
                );
            }
        }
    }

    function _scoringWords(IAppealSettlement escrow, uint256 sid) internal view returns (uint256[] memory) {
        try escrow.panelContext(sid, 0) returns (IAppealSettlement.PanelContext memory x) {
            return x.finalWords;
        } catch {
            return new uint256[](0);
        }
    }

    /// @dev A finalized session's votes are scored only once its outcome is final (canary and appeal
    /// windows closed, no round running), and no vote is scored twice across rounds: every applied
    /// result is one distinct (session, round, auditor) newly marked settled.
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    /// forge-config: default.invariant.fail-on-revert = true
    function invariant_settledOnlyWhenFinal_andOnce() public view {
        assertEq(handler.ghostEarlySettles(), 0, "a vote was scored before the outcome was final");
        assertEq(handler.ghostApplied(), handler.ghostDistinct(), "each applied result is one distinct vote");
    }
}

interface CanaryView {
    function canariesOf(uint256 sessionId) external view returns (ICanaryModule.CanaryState memory);
}

interface SettledView {
    function isSettled(uint256 sessionId, uint256 round, address auditor) external view returns (bool);
}
