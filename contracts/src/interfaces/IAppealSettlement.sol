// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IAppealModule} from "./IAppealModule.sol";

/// @title IAppealSettlement (issue 15)
/// @notice The money of appeals, once a session's outcome is final: `settleAppeals` resolves every
/// appealed segment in index order (`consensus/appeals.py: settle_segment`): UPHELD - the bond pays the
/// panel's agreeing seats R each, the rest joins the segment's pot; OVERTURNED - bond back plus
/// `appealRewardBps * bond`, the panel's agreeing seats paid from the pot then the Treasury's appeal
/// budget (min(R, (pot + budget) / count) each; what neither covers is a reported shortfall); VOIDED -
/// bond back; KEYS_WITHHELD - bond back, every locked seat paid from the pot only, never the budget
/// (min(R, pot / count) each; the rest a reported shortfall), except over a decided FAIL at depth > 1,
/// which stands: the bond is forfeited, R per locked seat, the rest joins the pot; UNFILLABLE - bond
/// back minus R per drawn seat, which those seats earn. The pot starts as the part of the segment's
/// k_0 R reservation not paid to agreeing round-0 votes (taken from the core's pool) and ends in the
/// treasury. It holds the bonds from the appeal on, and each round's panel rewards until its auditors
/// settle through the settlement module, which reads `panelContext` and calls `payOut`.
/// @dev Deployed before its AppealModule, bound to the module's predicted address (`IAppealModule.settlement()`;
/// the module's constructor refuses a settlement bound to another module or core: `SettlementNotBound`).
interface IAppealSettlement {
    /// @notice What the settlement module needs besides the core's session context.
    struct PanelContext {
        /// The panel voted (false: keys withheld or unfillable; each drawn seat earns `rewards[segment]`).
        bool decided;
        uint256 canaryGamma;
        /// Round-0 segment words with each segment's FINAL outcome (a revealed canary: its truth).
        uint256[] finalWords;
        /// Revealed canaries: bit i % 256 of word i / 256 (only for round 0, else empty).
        uint256[] canaryBits;
        /// Round > 0: what one agreeing seat (or, undecided, one drawn seat) of each segment earns, by
        /// segment index; empty for round 0 (R per agreeing seat).
        uint256[] rewards;
    }

    /// @notice A round's money.
    struct RoundMoney {
        /// Panel rewards resolved for the round and not yet paid to settled auditors.
        uint96 held;
        uint16 settledCount;
        /// Named segments whose money is resolved (all of them once `settleAppeals` is done).
        uint16 resolvedSegments;
    }

    /// @notice A session's appeal money.
    struct SessionMoney {
        uint16 resolvedCount;
        /// Next segment index `settleAppeals` looks at.
        uint16 resolveCursor;
        uint96 budgetUsed;
        uint96 shortfall;
    }

    /// @notice One appeal of one segment resolved against the final outcome: `result` is an
    /// IAppealModule.AppealResult (1 Upheld, 2 Overturned, 3 Voided, 4 KeysWithheld, 5 Unfillable);
    /// `perVote` what each agreeing (decided) or drawn (undecided) seat of that segment's panel earns.
    event AppealSettled(
        uint256 indexed sessionId,
        uint256 indexed round,
        uint256 segment,
        address appellant,
        uint8 result,
        uint256 refund,
        uint256 rewardDue,
        uint256 rewardPaid,
        uint256 perVote
    );
    /// @notice A segment's money is resolved: `pot` (what was left) went to the treasury; `budgetUsed`
    /// came from the Treasury; `shortfall`: dues neither covered.
    event SegmentResolved(
        uint256 indexed sessionId, uint256 segment, uint256 pot, uint256 budgetUsed, uint256 shortfall
    );

    event ParamsSet(uint256 indexed version, uint256 fromSession, IAppealModule.AppealParams params);

    error OutcomeNotFinal(uint256 sessionId);
    error AppealsUnresolved(uint256 sessionId);
    error UnknownRound(uint256 sessionId, uint256 round);
    error NotModule(address caller);

    /// @notice Publish a parameter version for sessions opened from now on (owner). Refuses panels over
    /// 63 seats and parameters under which spoiling a round and appealing it pays
    /// (`appeals.check_appeal_params`, against the core's current parameters).
    function setParams(IAppealModule.AppealParams calldata params) external;

    /// @notice The parameters session `sessionId` runs under (the version in force when it opened).
    function paramsOf(uint256 sessionId) external view returns (IAppealModule.AppealParams memory);

    /// @notice The pinned version's `canaryRateBps` and `canaryRefundBps` of session `sessionId`: equal to
    /// `paramsOf`'s, without recomputing `maxRounds` against the core parameters (one version lookup).
    function canaryTermsOf(uint256 sessionId) external view returns (uint256 rateBps, uint256 refundBps);

    /// @notice `paramsOf(sessionId).canaryRateBps`, cheaply (see `canaryTermsOf`).
    function canaryRateOf(uint256 sessionId) external view returns (uint256);

    /// @notice After the outcome is final: resolve the money of up to `maxSegments` appealed segments in
    /// index order (anyone; repeat until `sessionMoney(sessionId).resolvedCount` equals the appealed count).
    /// @return resolved Segments resolved by this call.
    function settleAppeals(uint256 sessionId, uint256 maxSegments) external returns (uint256 resolved);

    /// @notice The settlement module's view of a panel (reverts until the outcome is final and every
    /// appealed segment's money is resolved).
    function panelContext(uint256 sessionId, uint256 round) external view returns (PanelContext memory);

    /// @notice The settlement module settled `auditors` more auditors of round `round` > 0 owed `rewards`:
    /// sends them to it (Staking pulls them). Only the settlement module.
    function payOut(uint256 sessionId, uint256 round, uint256 rewards, uint256 auditors) external;

    function roundMoney(uint256 sessionId, uint256 round) external view returns (RoundMoney memory);

    function sessionMoney(uint256 sessionId) external view returns (SessionMoney memory);

    /// @notice What one agreeing (or drawn, if the panel never voted) seat of `segment` in `round` earns.
    function perVoteOf(uint256 sessionId, uint256 round, uint256 segment) external view returns (uint256);
}
