// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {ISettlementModule} from "../interfaces/ISettlementModule.sol";
import {IAuditSessions} from "../interfaces/IAuditSessions.sol";
import {IDrawModule} from "../interfaces/IDrawModule.sol";
import {IVotingModule} from "../interfaces/IVotingModule.sol";
import {IStaking} from "../interfaces/IStaking.sol";
import {IAppealModule} from "../interfaces/IAppealModule.sol";
import {IAppealSettlement} from "../interfaces/IAppealSettlement.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {PanelKey} from "../libraries/PanelKey.sol";
import {SegmentWord} from "../libraries/SegmentWord.sol";
import {SeatWord} from "../libraries/SeatWord.sol";
import {Verdicts} from "../libraries/Verdicts.sol";

/// @title SettlementModule
/// @notice Scores each auditor's seats against the final outcomes and sends one SessionResult per
/// auditor to Staking, whose ledger applies it to the shares that backed the auditor at the draw.
/// @dev Rules per seat, in seat order, for a finalized session:
/// - not revealed: slashed (P), reputation moves as incorrect;
/// - segment INCONCLUSIVE: nothing;
/// - abstained: no reward, no slash, reputation moves as incorrect;
/// - correct: reward R, reputation moves as correct;
/// - incorrect: reputation moves as incorrect, slashed if coin < p_slash(r), where
///   coin = keccak256(abi.encode(slashSeed, auditor, round, segment)) % 1e18 from the randomness
///   requested when the outcome became final (every incorrect vote is slashed if that request lapsed),
///   and r is the reputation fixed when the auditor was drawn (SeatWord), so settling other sessions
///   first changes nothing.
/// Reputation: each counted seat maps r -> (1 - gamma) r + gamma 1[correct]; the session's composite
/// r -> r * repMul / 1e18 + repAdd is computed here in seat order (truncating at each step) and
/// Staking composes sessions in ledger (draw) order, so the result does not depend on settle order.
/// A session that ended without a verdict pays R per drawn seat and changes nothing else.
/// Issue 15: with an appeal module, every round (0 = the session's panel, 1, 2, ... = appeal panels) is
/// scored against the FINAL outcomes (`IAppealSettlement.panelContext`, available once the outcome is final and
/// every appealed segment's money is resolved); a revealed canary's seats against its truth with
/// `canaryGamma`; an appeal panel's agreeing seats earn that (round, segment)'s reward per vote, and the
/// seats of an appeal panel that never voted (keys withheld, unfillable) earn their flat reward and nothing
/// else. Round-0 rewards come from the core's pool, appeal rewards from the appeal module.
contract SettlementModule is ISettlementModule {
    using SafeERC20 for IERC20;

    uint256 private constant WAD = 1e18;

    /// @notice The session core.
    IAuditSessions public immutable core;
    /// @notice Where seats live.
    IDrawModule public immutable drawModule;
    /// @notice Where ballots live.
    IVotingModule public immutable votingModule;
    /// @notice Receives the results.
    IStaking public immutable staking;

    mapping(uint256 key => mapping(uint256 => uint256)) private _settled;

    /// @dev One auditor's scoring state.
    struct Score {
        address auditor;
        uint256 round;
        uint256 verdicts;
        bool revealed;
        uint256 pSlash;
        uint256 correct;
        uint256 incorrect;
        uint256 abstained;
        uint256 slashes;
        uint256 repMul;
        uint256 repAdd;
        uint256 reward;
    }

    /// @dev The panel being settled: the core's session context and the appeal module's panel context.
    struct Ctx {
        IAuditSessions.SettlementContext c;
        IAppealSettlement.PanelContext p;
        address host;
    }

    /// @dev Rewards pass through this contract within one call: the core sends them (`payOut`) and
    /// Staking pulls them (`resolve`), so it holds no tokens between transactions.
    constructor(
        IERC20 token_,
        IAuditSessions core_,
        IDrawModule drawModule_,
        IVotingModule votingModule_,
        IStaking staking_
    ) {
        core = core_;
        drawModule = drawModule_;
        votingModule = votingModule_;
        staking = staking_;
        token_.forceApprove(address(staking_), type(uint256).max);
    }

    /// @inheritdoc ISettlementModule
    function settle(uint256 sessionId, uint256 round, address auditor) external {
        address[] memory one = new address[](1);
        one[0] = auditor;
        if (_settle(sessionId, round, one, true) == 0) revert AlreadySettled(sessionId, auditor);
    }

    /// @inheritdoc ISettlementModule
    function settleBatch(uint256 sessionId, uint256 round, address[] calldata auditors)
        external
        returns (uint256 applied)
    {
        if (auditors.length == 0) revert EmptyBatch();
        return _settle(sessionId, round, auditors, false);
    }

    function _settle(uint256 sessionId, uint256 round, address[] memory auditors, bool strict)
        private
        returns (uint256 applied)
    {
        Ctx memory x = _context(sessionId, round);
        uint256 key = PanelKey.keyOf(sessionId, round);
        (IStaking.SessionResult[] memory results, uint256 rewards) = _results(x, key, auditors, strict);
        applied = results.length;
        if (applied == 0) return 0;
        if (round == 0) core.payOut(sessionId, round, rewards, applied);
        else IAppealSettlement(x.host).payOut(sessionId, round, rewards, applied);
        staking.resolve(key, results);
    }

    /// @dev The core's session context (round 0's: seed, parameters), completed by the appeal module's
    /// view of the panel when there is one (final outcomes, canaries, per-segment appeal rewards).
    function _context(uint256 sessionId, uint256 round) private returns (Ctx memory x) {
        x.c = core.settlementContext(sessionId, 0);
        x.host = core.appealModule();
        if (x.host == address(0) || !x.c.finalized) {
            if (round != 0) revert IAuditSessions.UnsupportedRound(round);
            x.p.decided = x.c.finalized;
            return x;
        }
        x.host = IAppealModule(x.host).settlement();
        x.p = IAppealSettlement(x.host).panelContext(sessionId, round);
        x.c.segmentWords = x.p.finalWords;
    }

    /// @dev The results of the auditors not yet settled, marking them settled.
    function _results(Ctx memory x, uint256 key, address[] memory auditors, bool strict)
        private
        returns (IStaking.SessionResult[] memory results, uint256 rewards)
    {
        uint256[] memory seats = drawModule.seatWords(key, auditors);
        (uint256[] memory ballots, bool[] memory revealed) = votingModule.ballotsOf(key, auditors, seats);
        results = new IStaking.SessionResult[](auditors.length);
        uint256 n = 0;
        for (uint256 i = 0; i < auditors.length; ++i) {
            bytes4 reason = _claim(key, seats[i]);
            if (reason != bytes4(0)) {
                if (strict) _revertWith(reason, PanelKey.sessionOf(key), auditors[i]);
                emit ItemSkipped(PanelKey.sessionOf(key), auditors[i], reason);
                continue;
            }
            IStaking.SessionResult memory res =
                _result(x, key, auditors[i], seats[i], ballots[i], revealed[i]);
            rewards += res.reward;
            results[n++] = res;
        }
        assembly ("memory-safe") {
            mstore(results, n)
        }
    }

    function _revertWith(bytes4 reason, uint256 sessionId, address auditor) private pure {
        bytes memory data = abi.encodeWithSelector(reason, sessionId, auditor);
        assembly ("memory-safe") {
            revert(add(data, 0x20), mload(data))
        }
    }

    /// @dev Mark the auditor settled, or say why not.
    function _claim(uint256 key, uint256 seat) private returns (bytes4) {
        if (seat == 0) return NotSeated.selector;
        uint256 index = SeatWord.index(seat);
        uint256 bit = uint256(1) << (index & 255);
        uint256 word = _settled[key][index >> 8];
        if (word & bit != 0) return AlreadySettled.selector;
        _settled[key][index >> 8] = word | bit;
        return bytes4(0);
    }

    function _result(Ctx memory x, uint256 key, address auditor, uint256 seat, uint256 ballot, bool revealed)
        private
        returns (IStaking.SessionResult memory res)
    {
        uint256 count = SeatWord.count(seat);
        Score memory sc;
        sc.auditor = auditor;
        sc.round = PanelKey.roundOf(key);
        sc.repMul = WAD;
        if (x.p.decided) {
            sc.revealed = revealed;
            sc.verdicts = revealed ? ballot : 0;
            _score(x, key, seat, sc);
        } else if (x.p.rewards.length != 0) {
            _score(x, key, seat, sc); // an appeal panel that never voted: flat reward per drawn seat
        } else {
            sc.reward = count * x.c.reward;
        }
        res.reward = uint96(sc.reward);
        res.auditor = auditor;
        res.entry = uint32(SeatWord.entry(seat));
        res.slash = uint96(sc.slashes * x.c.slashAmount);
        res.repMul = uint64(sc.repMul);
        res.repAdd = uint64(sc.repAdd);
        emit AuditorSettled(
            PanelKey.sessionOf(key),
            sc.round,
            auditor,
            sc.correct,
            sc.incorrect,
            sc.abstained,
            sc.slashes,
            res.reward,
            sc.repMul,
            sc.repAdd
        );
    }

    /// @dev Seat by seat in seat order (see the contract notes).
    function _score(Ctx memory x, uint256 key, uint256 seat, Score memory sc) private view {
        uint256 r = SeatWord.reputation(seat);
        sc.pSlash = x.c.pMin + (x.c.pMax - x.c.pMin) * (WAD - r) / WAD;
        uint256 count = SeatWord.count(seat);
        uint256 bits = SeatWord.window0(seat);
        uint256 j = 0;
        bool decided = x.p.decided;
        // Bounded: count <= 64 seats and at most 8 windows.
        unchecked {
            for (uint256 window = 0; j < count; ++window) {
                if (window != 0) bits = drawModule.highSeats(key, sc.auditor, window);
                while (bits != 0) {
                    uint256 segment = window * SeatWord.WINDOW_BITS + SeatWord.lowest(bits);
                    bits &= bits - 1;
                    if (decided) _scoreSeat(x, segment, j, sc);
                    else sc.reward += x.p.rewards[segment];
                    ++j;
                }
            }
        }
    }

    /// @dev Unchecked: counts stay below 64 seats, a reward sum below 64 times a per-seat reward that the
    /// core or the appeal module holds, and gamma, canaryGamma <= 1e18 (checked where they are set)
    /// with repMul, repAdd <= 1e18, so every product stays below 1e36.
    function _scoreSeat(Ctx memory x, uint256 segment, uint256 j, Score memory sc) private pure {
        IAuditSessions.SettlementContext memory c = x.c;
        bool correct = false;
        unchecked {
            if (sc.revealed) {
                uint256 outcome = SegmentWord.outcome(
                    SegmentWord.lane(c.segmentWords[SegmentWord.wordOf(segment)], segment)
                );
                if (outcome == SegmentWord.OUTCOME_INCONCLUSIVE) return;
                uint256 verdicts = sc.verdicts;
                if (Verdicts.abstains(verdicts, j)) {
                    ++sc.abstained;
                } else if (Verdicts.fails(verdicts, j) == (outcome == SegmentWord.OUTCOME_FAIL)) {
                    correct = true;
                    ++sc.correct;
                    uint256[] memory rewards = x.p.rewards;
                    sc.reward += rewards.length == 0 ? c.reward : rewards[segment];
                } else {
                    ++sc.incorrect;
                    if (!c.hasSlashSeed || _coin(c.slashSeed, sc.auditor, sc.round, segment) < sc.pSlash) {
                        ++sc.slashes;
                    }
                }
            } else {
                ++sc.incorrect;
                ++sc.slashes;
            }
            // A revealed canary moves reputation by canaryGamma.
            uint256 gamma = _isCanary(x.p.canaryBits, segment) ? x.p.canaryGamma : c.gamma;
            uint256 keep = WAD - gamma;
            sc.repMul = sc.repMul * keep / WAD;
            sc.repAdd = (sc.repAdd * keep + (correct ? gamma * WAD : 0)) / WAD;
        }
    }

    function _isCanary(uint256[] memory bits, uint256 segment) private pure returns (bool) {
        return bits.length != 0 && (bits[segment >> 8] >> (segment & 255)) & 1 == 1;
    }

    /// @notice The slash coin of (auditor, round, segment) in [0, 1e18).
    function slashCoin(bytes32 slashSeed, address auditor, uint256 round, uint256 segment)
        external
        pure
        returns (uint256)
    {
        return _coin(slashSeed, auditor, round, segment);
    }

    function _coin(bytes32 slashSeed, address auditor, uint256 round, uint256 segment)
        private
        pure
        returns (uint256)
    {
        return uint256(keccak256(abi.encode(slashSeed, auditor, round, segment))) % WAD;
    }

    /// @inheritdoc ISettlementModule
    function isSettled(uint256 sessionId, uint256 round, address auditor) external view returns (bool) {
        uint256 key = PanelKey.keyOf(sessionId, round);
        uint256 seat = drawModule.seatWordOf(key, auditor);
        if (seat == 0) return false;
        uint256 index = SeatWord.index(seat);
        return _settled[key][index >> 8] & (uint256(1) << (index & 255)) != 0;
    }
}
