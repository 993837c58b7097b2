// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Ownable, Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {Checkpoints} from "@openzeppelin/contracts/utils/structs/Checkpoints.sol";
import {IAppealSettlement} from "../interfaces/IAppealSettlement.sol";
import {IAppealModule} from "../interfaces/IAppealModule.sol";
import {IAuditSessions} from "../interfaces/IAuditSessions.sol";
import {ICanaryModule} from "../interfaces/ICanaryModule.sol";
import {AuditSessions} from "../AuditSessions.sol";
import {Treasury} from "../Treasury.sol";
import {PanelKey} from "../libraries/PanelKey.sol";
import {SegmentWord} from "../libraries/SegmentWord.sol";
import {AppealWord} from "../libraries/AppealWord.sol";
import {AppealMath} from "../libraries/AppealMath.sol";

/// @title AppealSettlement
/// @notice The money of appeals (see IAppealSettlement), deployed just before its AppealModule. Reproduces
/// `consensus/appeals.py: settle_segment` in the same integer arithmetic and order: segments in index
/// order draw on the session's appeal budget first come first served.
/// @dev Token flows of one segment: in - its pot (from the core's pool, through the appeal module), the
/// bonds (held since each appeal), the budget (Treasury `spend`); out - appellant refunds and rewards,
/// the panels' rewards (held per round until `payOut`), the pot's remainder to the treasury. In equals
/// out exactly, per segment.
contract AppealSettlement is IAppealSettlement, Ownable2Step {
    using SafeERC20 for IERC20;
    using Checkpoints for Checkpoints.Trace208;

    uint256 private constant BPS = 10_000;

    /// @notice The session core.
    AuditSessions public immutable core;
    /// @notice The appeal module this settlement serves: fixed here, checked by the module's constructor.
    IAppealModule public immutable appeals;
    /// @notice The protocol token.
    IERC20 public immutable token;

    IAppealModule.AppealParams[] private _params;
    Checkpoints.Trace208 private _versions;
    mapping(uint256 sessionId => SessionMoney) private _sessions;
    mapping(uint256 key => RoundMoney) private _rounds;
    mapping(uint256 key => mapping(uint256 segment => uint256)) private _perVote;

    /// @dev What one `settleAppeals` call carries from segment to segment.
    struct Env {
        uint256 sessionId;
        uint256 reward;
        uint256 mult;
        uint256 rewardBps;
        uint8[3] seats;
        uint256 budgetLeft;
        uint256 budgetUsed;
        uint256 shortfall;
        Treasury treasury;
    }

    /// @dev The trace verdict being summed.
    struct Tally {
        uint256[] canaries;
        uint256[] fails;
        uint256[] appealed;
        bytes outcomes;
        uint256 maxW;
        uint256 passW;
        uint256 totalW;
    }

    /// @dev One appeal of the segment being resolved.
    struct Pay {
        uint256 round;
        address appellant;
        uint256 refund;
        uint256 due;
        uint256 paid;
        uint256 owed;
        IAppealModule.AppealResult result;
        /// The owed seats are paid by the pot only, never the budget.
        bool potOnly;
    }

    /// @param core_ The session core.
    /// @param appeals_ The appeal module's address, predicted (the deployer's CREATE address of the next
    /// nonce): the module is deployed right after with this settlement's address and refuses a settlement
    /// naming another module or core (AppealStore: separate deployments keep the initcode under EIP-3860).
    /// @param owner_ Parameter owner.
    /// @param p Version 0 of the parameters.
    constructor(
        AuditSessions core_,
        IAppealModule appeals_,
        address owner_,
        IAppealModule.AppealParams memory p
    ) Ownable(owner_) {
        core = core_;
        appeals = appeals_;
        token = core_.token();
        _setParams(p);
    }

    // ------------------------------------------------------------------------------ parameters

    /// @inheritdoc IAppealSettlement
    function setParams(IAppealModule.AppealParams calldata params) external onlyOwner {
        _setParams(params);
    }

    function _setParams(IAppealModule.AppealParams memory p) private {
        if (!validParams(p)) revert IAppealModule.InvalidParams();
        uint256 version = _params.length;
        _params.push(p);
        uint256 from = core.sessionCount() + 1;
        _versions.push(uint48(from), uint208(version));
        emit ParamsSet(version, from, p);
    }

    /// @inheritdoc IAppealSettlement
    /// @dev `maxRounds` is the most rounds the session's own core parameters keep safe (for an opened session): `setParams` checked
    /// the version against the core parameters of its day, and a later `AuditSessions.setParams` (more
    /// seats, another quorum or slash) would otherwise pair it with ones nobody checked.
    function paramsOf(uint256 sessionId) public view returns (IAppealModule.AppealParams memory p) {
        p = _params[_versions.upperLookup(uint48(sessionId))];
        IAuditSessions.Session memory s = core.sessionOf(sessionId);
        if (s.status != IAuditSessions.Status.None) {
            p.maxRounds = uint8(_safeRounds(p, core.paramsAt(s.paramsVersion)));
        }
    }

    /// @inheritdoc IAppealSettlement
    function canaryTermsOf(uint256 sessionId) public view returns (uint256 rateBps, uint256 refundBps) {
        IAppealModule.AppealParams storage p = _params[_versions.upperLookup(uint48(sessionId))];
        return (p.canaryRateBps, p.canaryRefundBps);
    }

    /// @inheritdoc IAppealSettlement
    function canaryRateOf(uint256 sessionId) external view returns (uint256 rateBps) {
        (rateBps,) = canaryTermsOf(sessionId);
    }

    /// @inheritdoc IAppealSettlement
    function settleAppeals(uint256 sessionId, uint256 maxSegments) external returns (uint256 resolved) {
        if (!appeals.isOutcomeFinal(sessionId)) revert OutcomeNotFinal(sessionId);
        SessionMoney storage sm = _sessions[sessionId];
        Env memory e = _env(sessionId, sm);
        uint256[] memory appealed = appeals.appealedBits(sessionId);
        uint256 n = core.sessionOf(sessionId).segmentCount;
        uint256 cursor = sm.resolveCursor;
        for (; cursor < n && resolved < maxSegments; ++cursor) {
            if ((appealed[cursor >> 8] >> (cursor & 255)) & 1 == 0) continue;
            _resolveSegment(e, cursor);
            ++resolved;
        }
        sm.resolveCursor = uint16(cursor);
        sm.resolvedCount += uint16(resolved);
        sm.budgetUsed += uint96(e.budgetUsed);
        sm.shortfall += uint96(e.shortfall);
    }

    function _env(uint256 sessionId, SessionMoney storage sm) private view returns (Env memory e) {
        IAuditSessions.SessionParams memory c = core.paramsAt(core.sessionOf(sessionId).paramsVersion);
        IAppealModule.AppealParams memory p = paramsOf(sessionId);
        e.sessionId = sessionId;
        e.reward = c.reward;
        e.mult = p.appealBondMultiplierBps;
        e.rewardBps = p.appealRewardBps;
        e.seats = c.seatsPerTier;
        e.treasury = Treasury(core.treasury());
        uint256 left = p.appealBudget > sm.budgetUsed ? p.appealBudget - sm.budgetUsed : 0;
        uint256 allowed = e.treasury.allowanceOf(address(this));
        uint256 held = token.balanceOf(address(e.treasury));
        if (allowed < left) left = allowed;
        if (held < left) left = held;
        e.budgetLeft = left;
    }

    /// @dev `appeals.settle_segment` for one appealed segment, then its transfers.
    function _resolveSegment(Env memory e, uint256 seg) private {
        uint256 sid = e.sessionId;
        uint256 w = appeals.appealWordOf(sid, seg);
        (Pay[] memory pays, uint256 pot, uint256 pot0) = _scoreRounds(e, seg, w);
        uint256 budgetBefore = e.budgetLeft;
        uint256 shortBefore = e.shortfall;
        pot = _fund(e, seg, pays, pot);
        uint256 used = budgetBefore - e.budgetLeft;
        e.budgetUsed += used;
        if (pot0 != 0) appeals.pullPot(sid, pot0);
        if (used != 0) e.treasury.spend(address(this), used);
        _payAppellants(e, seg, pays);
        emit SegmentResolved(sid, seg, pot, used, e.shortfall - shortBefore);
        if (pot != 0) token.safeTransfer(address(e.treasury), pot);
    }

    /// @dev Every appeal of the segment scored against its final outcome; the pot after round 0's
    /// agreeing votes (`pot0`, taken from the core's pool) and after the bonds.
    function _scoreRounds(Env memory e, uint256 seg, uint256 w)
        private
        returns (Pay[] memory pays, uint256 pot, uint256 pot0)
    {
        uint256 lane0 = SegmentWord.lane(core.segmentWord(e.sessionId, 0, SegmentWord.wordOf(seg)), seg);
        uint256 k0 = e.seats[SegmentWord.tier(lane0)];
        uint256 fin = _scoring(e.sessionId, w);
        pot0 = (k0 - AppealMath.agreeing(lane0, fin)) * e.reward;
        pot = pot0;
        uint256 d = AppealWord.depth(w);
        pays = new Pay[](d);
        for (uint256 j = 1; j <= d; ++j) {
            pot = _scoreRound(e, seg, w, fin, j, k0, pays[j - 1], pot);
        }
    }

    /// @dev Panels owed by the pot: the agreeing seats of an OVERTURNED round get min(R, (pot + budget) /
    /// count) each; every seat of a KEYS_WITHHELD round and every drawn seat of a REFUSED one
    /// min(R, pot / count), from the pot only, never the
    /// budget (review finding 2: withholding is the provider's doing, and paying those seats from the
    /// Treasury let a coalition holding more than ~54% of a panel net Treasury money by appealing its own
    /// segment and withholding the keys; what the pot does not cover is a reported shortfall). Then each
    /// OVERTURNED appellant its reward, pot first, budget second, as far as they reach. The agreeing seats of an
    /// overturn scored only by a later withheld PASS's adverse inference are owed by the pot only too.
    function _fund(Env memory e, uint256 seg, Pay[] memory pays, uint256 pot) private returns (uint256) {
        for (uint256 j = 0; j < pays.length; ++j) {
            Pay memory py = pays[j];
            if (py.owed == 0) continue;
            uint256 key = PanelKey.keyOf(e.sessionId, py.round);
            uint256 pv = (pot + (py.potOnly ? 0 : e.budgetLeft)) / py.owed;
            if (pv > e.reward) pv = e.reward;
            _perVote[key][seg] = pv;
            _rounds[key].held += uint96(pv * py.owed);
            pot = _take(e, pot, pv * py.owed);
            e.shortfall += (e.reward - pv) * py.owed;
        }
        for (uint256 j = 0; j < pays.length; ++j) {
            Pay memory py = pays[j];
            uint256 paid = py.due < pot + e.budgetLeft ? py.due : pot + e.budgetLeft;
            pot = _take(e, pot, paid);
            e.shortfall += py.due - paid;
            py.paid = paid;
        }
        return pot;
    }

    function _payAppellants(Env memory e, uint256 seg, Pay[] memory pays) private {
        for (uint256 j = 0; j < pays.length; ++j) {
            Pay memory py = pays[j];
            _emitSettled(e.sessionId, seg, py);
            if (py.refund + py.paid != 0) token.safeTransfer(py.appellant, py.refund + py.paid);
        }
    }

    function _emitSettled(uint256 sid, uint256 seg, Pay memory py) private {
        uint256 pv = _perVote[PanelKey.keyOf(sid, py.round)][seg];
        emit AppealSettled(sid, py.round, seg, py.appellant, uint8(py.result), py.refund, py.due, py.paid, pv);
    }

    /// @dev The appeal of depth `j`: its result against the final outcome, what its bond pays and where
    /// the rest goes (UPHELD: the bond pays the agreeing seats R each, the rest joins the pot; KEYS_WITHHELD
    /// over a FAIL that stood (`AppealMath.withheldKeeps`): the bond pays every locked seat R, the rest
    /// joins the pot; UNFILLABLE: R per drawn seat from the bond, the rest refunded; REFUSED: refunded
    /// whole, its drawn seats owed by the pot only (an honest appellant never pays for refusals it cannot
    /// tell from the defender's); otherwise the bond is refunded whole).
    function _scoreRound(
        Env memory e,
        uint256 seg,
        uint256 w,
        uint256 fin,
        uint256 j,
        uint256 k0,
        Pay memory py,
        uint256 pot
    ) private returns (uint256) {
        py.round = AppealWord.roundAt(w, j);
        uint256 key = PanelKey.keyOf(e.sessionId, py.round);
        IAppealModule.Round memory rd = appeals.roundOf(e.sessionId, py.round);
        RoundMoney storage rm = _rounds[key];
        py.appellant = rd.appellant;
        py.refund = AppealMath.minBond(k0, j, e.reward, e.mult); // the bond, refunded unless said below
        py.result = AppealMath.result(AppealWord.appealedAt(w, j), fin, rd);
        ++rm.resolvedSegments;
        if (rd.status == IAuditSessions.Status.Finalized) {
            pot = _scoreDecided(e, py.round, seg, fin, py, pot);
        } else if (rd.refused) {
            // Refused: the bond is refunded whole, the drawn (locked) seats are owed by the pot only.
            py.owed = _drawnOn(e, py.round, rd, seg);
            py.potOnly = true;
        } else if (AppealMath.withheld(rd)) {
            uint256 k = AppealMath.panelSeats(k0, j); // every locked seat of the panel
            if (AppealMath.withheldKeeps(j, AppealWord.appealedAt(w, j))) {
                // The outcome stood: the bond is forfeited, R per locked seat, the rest joins the pot.
                _perVote[key][seg] = e.reward;
                rm.held += uint96(k * e.reward);
                pot += py.refund - k * e.reward;
                py.refund = 0;
            } else {
                py.owed = k;
                py.potOnly = true;
            }
        } else {
            // Unfillable or abandoned: R per drawn seat from the bond; the rest refunded, or (abandoned: a
            // timely seed nobody drew, Expired) forfeited to the pot, which ends in the treasury.
            uint256 drawn = _drawnOn(e, py.round, rd, seg);
            _perVote[key][seg] = e.reward;
            rm.held += uint96(drawn * e.reward);
            py.refund -= drawn * e.reward;
            if (rd.status == IAuditSessions.Status.Expired) {
                pot += py.refund;
                py.refund = 0;
            }
        }
        if (py.result == IAppealModule.AppealResult.Overturned) {
            // Scored FAIL over an INCONCLUSIVE verdict: only a later panel's keys withheld over a contested
            // PASS does that (adverse inference, `AppealMath.scoringOutcome`), not a panel's decision. Such an
            // overturn earns no reward and its seats are owed by the pot only (else a provider's alias that
            // lost its appeal of the provider's own correct PASS netted 20% of its bond from the budget by
            // the provider withholding a deeper panel: Review5SelfAppealThenWithholdDeeper).
            if (fin == SegmentWord.OUTCOME_FAIL && AppealWord.outcome(w) == SegmentWord.OUTCOME_INCONCLUSIVE)
            {
                py.potOnly = true;
            } else {
                py.due = py.refund * e.rewardBps / BPS;
            }
        }
        return pot;
    }

    /// @dev A decided appeal panel: UPHELD - its bond pays the agreeing seats R each and the rest joins
    /// the pot; OVERTURNED - its agreeing seats are owed by the pot (bond refunded whole).
    function _scoreDecided(Env memory e, uint256 round, uint256 seg, uint256 fin, Pay memory py, uint256 pot)
        private
        returns (uint256)
    {
        uint256 key = PanelKey.keyOf(e.sessionId, round);
        uint256 tallies = appeals.roundWord(e.sessionId, round, SegmentWord.wordOf(seg));
        uint256 agree = AppealMath.agreeing(SegmentWord.lane(tallies, seg), fin);
        if (py.result == IAppealModule.AppealResult.Upheld) {
            _perVote[key][seg] = e.reward;
            _rounds[key].held += uint96(agree * e.reward);
            pot += py.refund - agree * e.reward;
            py.refund = 0;
        } else if (py.result == IAppealModule.AppealResult.Overturned) {
            py.owed = agree;
        }
        return pot;
    }

    /// @dev The segment's scoring outcome (`AppealMath.scoringOutcome`), from its word and its last panel.
    function _scoring(uint256 sessionId, uint256 w) private view returns (uint256) {
        uint256 last = AppealWord.roundAt(w, AppealWord.depth(w));
        return AppealMath.scoringOutcome(w, appeals.roundOf(sessionId, last));
    }

    /// @dev Seats an unfillable round drew on `seg`: its named segments are drawn whole in ascending order.
    function _drawnOn(Env memory e, uint256 round, IAppealModule.Round memory rd, uint256 seg)
        private
        view
        returns (uint256)
    {
        uint256 before = 0;
        uint256 k = 0;
        for (uint256 w = 0; w <= SegmentWord.wordOf(seg); ++w) {
            uint256 word = appeals.roundWord(e.sessionId, round, w);
            if (word == 0) continue;
            for (uint256 i = w << 3; i < (w + 1) << 3 && i <= seg; ++i) {
                uint256 laneValue = SegmentWord.lane(word, i);
                if (SegmentWord.weight(laneValue) == 0) continue;
                k = AppealMath.panelSeats(e.seats[SegmentWord.tier(laneValue)], rd.depth);
                if (i != seg) before += k;
            }
        }
        uint256 drawnSeats = rd.drawnSeats;
        if (drawnSeats <= before) return 0;
        return drawnSeats - before < k ? drawnSeats - before : k;
    }

    function _take(Env memory e, uint256 pot, uint256 amount) private pure returns (uint256) {
        uint256 fromPot = amount < pot ? amount : pot;
        e.budgetLeft -= amount - fromPot;
        return pot - fromPot;
    }

    /// @inheritdoc IAppealSettlement
    function payOut(uint256 sessionId, uint256 round, uint256 rewards, uint256 auditors) external {
        if (msg.sender != core.settlementModule()) revert NotModule(msg.sender);
        RoundMoney storage rd = _rounds[PanelKey.keyOf(sessionId, round)];
        rd.held -= uint96(rewards);
        uint256 settled = rd.settledCount + auditors;
        rd.settledCount = uint16(settled);
        if (rewards != 0) token.safeTransfer(msg.sender, rewards);
        uint256 rest = rd.held;
        if (settled == appeals.roundOf(sessionId, round).auditorCount && rest != 0) {
            rd.held = 0;
            token.safeTransfer(core.treasury(), rest);
        }
    }

    // ------------------------------------------------------------------------------ views

    /// @inheritdoc IAppealSettlement
    function panelContext(uint256 sessionId, uint256 round) external view returns (PanelContext memory x) {
        IAppealModule.SessionAppeals memory sa = appeals.sessionAppeals(sessionId);
        if (sa.finalizedAt == 0 && round == 0 && core.sessionOf(sessionId).slashRequest != 0) {
            // Finalized before the extensions were wired: its outcome was final at `finalize`.
            // No canary revealed, no segment appealed: its final words are the core's.
            x.decided = true;
            (x.finalWords,) = _finalWords(sessionId, core.sessionOf(sessionId).segmentCount);
            return x;
        }
        if (!sa.outcomeFinal) revert OutcomeNotFinal(sessionId);
        if (_sessions[sessionId].resolvedCount != sa.appealedCount) revert AppealsUnresolved(sessionId);
        if (round > sa.roundCount) revert UnknownRound(sessionId, round);
        uint256 n = core.sessionOf(sessionId).segmentCount;
        uint256[] memory canaries;
        (x.finalWords, canaries) = _finalWords(sessionId, n);
        x.canaryGamma = paramsOf(sessionId).canaryGamma;
        if (round == 0) {
            x.decided = true;
            x.canaryBits = canaries;
            return x;
        }
        uint256 key = PanelKey.keyOf(sessionId, round);
        x.decided = appeals.roundOf(sessionId, round).status == IAuditSessions.Status.Finalized;
        x.rewards = new uint256[](n);
        for (uint256 w = 0; w < SegmentWord.wordCount(n); ++w) {
            uint256 word = appeals.roundWord(sessionId, round, w);
            if (word == 0) continue;
            for (uint256 i = w << 3; i < n && i < (w + 1) << 3; ++i) {
                if (SegmentWord.lane(word, i) != 0) x.rewards[i] = _perVote[key][i];
            }
        }
    }

    /// @dev Round-0 words with every segment's scoring outcome (`AppealMath.scoringOutcome`; a revealed canary: its
    /// truth): what every vote is scored against. The verdict uses `verdictOf` (the final outcomes).
    function _finalWords(uint256 sessionId, uint256 n)
        private
        view
        returns (uint256[] memory words, uint256[] memory canaries)
    {
        uint256[] memory fails;
        (canaries, fails,) = _canaryMasks(sessionId);
        uint256[] memory appealed = appeals.appealedBits(sessionId);
        words = new uint256[](SegmentWord.wordCount(n));
        for (uint256 w = 0; w < words.length; ++w) {
            uint256 word = core.segmentWord(sessionId, 0, w);
            for (uint256 i = w << 3; i < n && i < (w + 1) << 3; ++i) {
                if (_bit(canaries, i)) {
                    uint256 truth = _bit(fails, i) ? SegmentWord.OUTCOME_FAIL : SegmentWord.OUTCOME_PASS;
                    word = SegmentWord.setOutcome(word, i, truth);
                } else if (_bit(appealed, i)) {
                    word = SegmentWord.setOutcome(
                        word, i, _scoring(sessionId, appeals.appealWordOf(sessionId, i))
                    );
                }
            }
            words[w] = word;
        }
    }

    /// @notice The trace verdict with the current outcomes (`canaries.trace_verdict_with_canaries`): revealed
    /// canaries leave W and T, each canary owed but never revealed takes the largest weight off W.
    /// `outcomes`: per segment, its current outcome (a revealed canary: its truth).
    function verdictOf(uint256 sessionId)
        external
        view
        returns (bool passed, uint256 score, uint256 passW, uint256 totalW, bytes memory outcomes)
    {
        uint256 n = core.sessionOf(sessionId).segmentCount;
        Tally memory t;
        uint256 unrevealed;
        (t.canaries, t.fails, unrevealed) = _canaryMasks(sessionId);
        t.outcomes = new bytes(n);
        t.appealed = appeals.appealedBits(sessionId);
        for (uint256 w = 0; w < SegmentWord.wordCount(n); ++w) {
            _tallyWord(sessionId, w, n, t);
        }
        uint256 penalty = unrevealed * t.maxW;
        passW = t.passW > penalty ? t.passW - penalty : 0;
        totalW = t.totalW;
        outcomes = t.outcomes;
        if (totalW != 0) {
            passed = passW * BPS
                >= uint256(core.paramsAt(core.sessionOf(sessionId).paramsVersion).betaBps) * totalW;
            score = passW * BPS / totalW;
        }
    }

    function _tallyWord(uint256 sessionId, uint256 w, uint256 n, Tally memory t) private view {
        uint256 word = core.segmentWord(sessionId, 0, w);
        uint256[] memory appealed = t.appealed;
        for (uint256 i = w << 3; i < n && i < (w + 1) << 3; ++i) {
            uint256 laneValue = SegmentWord.lane(word, i);
            uint256 weight = SegmentWord.weight(laneValue);
            if (weight > t.maxW) t.maxW = weight;
            if (_bit(t.canaries, i)) {
                t.outcomes[i] =
                    bytes1(uint8(_bit(t.fails, i) ? SegmentWord.OUTCOME_FAIL : SegmentWord.OUTCOME_PASS));
                continue;
            }
            uint256 o = _bit(appealed, i)
                ? AppealWord.outcome(appeals.appealWordOf(sessionId, i))
                : SegmentWord.outcome(laneValue);
            t.outcomes[i] = bytes1(uint8(o));
            t.totalW += weight;
            if (o == SegmentWord.OUTCOME_PASS) t.passW += weight;
        }
    }

    /// @notice Whether appeal parameters are inside the hard bounds, keep every panel within 63 seats and
    /// make spoiling a round and appealing it lose (`appeals.check_appeal_params`), against the core's
    /// current parameters.
    function validParams(IAppealModule.AppealParams memory p) public view returns (bool) {
        if (
            p.appealBlocks > AppealMath.MAX_PHASE_BLOCKS || p.maxRounds > AppealMath.MAX_ROUNDS
                || p.appealBondMultiplierBps < BPS || p.appealBondMultiplierBps > 10 * BPS
                || p.appealRewardBps > BPS || p.canaryRateBps > AppealMath.MAX_CANARY_RATE_BPS
                || p.canaryRevealBlocks == 0 || p.canaryRevealBlocks > AppealMath.MAX_PHASE_BLOCKS
                || p.canaryGamma > AppealMath.WAD || p.canaryRefundBps > AppealMath.MAX_CANARY_REFUND_BPS
        ) return false;
        return _safeRounds(p, core.paramsAt(core.paramsVersion())) == p.maxRounds;
    }

    /// @dev The most rounds (up to `p.maxRounds`) whose every panel stays within 63 seats and after whose
    /// every earlier round spoiling and appealing loses, in every tier, under core parameters `c`.
    function _safeRounds(IAppealModule.AppealParams memory p, IAuditSessions.SessionParams memory c)
        private
        pure
        returns (uint256 r)
    {
        for (; r < p.maxRounds; ++r) {
            for (uint256 t = 0; t < 3; ++t) {
                uint256 k0 = c.seatsPerTier[t];
                if (
                    AppealMath.panelSeats(k0, r + 1) > AppealMath.MAX_PANEL_SEATS
                        || !AppealMath.farmingLoses(
                            k0,
                            r,
                            c.tauBps,
                            c.reward,
                            c.slashAmount,
                            c.pMin,
                            p.appealBondMultiplierBps,
                            p.appealRewardBps
                        )
                ) return r;
            }
        }
    }

    /// @inheritdoc IAppealSettlement
    function roundMoney(uint256 sessionId, uint256 round) external view returns (RoundMoney memory) {
        return _rounds[PanelKey.keyOf(sessionId, round)];
    }

    /// @inheritdoc IAppealSettlement
    function sessionMoney(uint256 sessionId) external view returns (SessionMoney memory) {
        return _sessions[sessionId];
    }

    /// @inheritdoc IAppealSettlement
    function perVoteOf(uint256 sessionId, uint256 round, uint256 segment) external view returns (uint256) {
        return _perVote[PanelKey.keyOf(sessionId, round)][segment];
    }

    function _canaryMasks(uint256 sessionId)
        private
        view
        returns (uint256[] memory bits, uint256[] memory fails, uint256 unrevealed)
    {
        address canaries = core.canaryModule();
        if (canaries == address(0)) return (bits, fails, 0);
        return ICanaryModule(canaries).canaryMasks(sessionId);
    }

    function _bit(uint256[] memory bits, uint256 i) private pure returns (bool) {
        return bits.length > i >> 8 && (bits[i >> 8] >> (i & 255)) & 1 == 1;
    }
}
