// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IAuditSessions} from "../interfaces/IAuditSessions.sol";
import {IAppealModule} from "../interfaces/IAppealModule.sol";
import {SegmentWord} from "./SegmentWord.sol";
import {AppealWord} from "./AppealWord.sol";
import {PanelKey} from "./PanelKey.sol";

/// @title AppealMath
/// @notice The integer rules of `consensus/appeals.py`, one function each: panel sizes, bonds, the
/// farming inequality, the quorum outcome, agreeing votes and an appeal's result.
library AppealMath {
    uint256 internal constant BPS = 10_000;
    uint256 internal constant WAD = 1e18;
    /// @notice Panel tallies are 6-bit counters: no panel over 63 seats.
    uint256 internal constant MAX_PANEL_SEATS = 63;
    /// @notice Most appeal panels per segment.
    uint256 internal constant MAX_ROUNDS = 4;
    /// @notice The most proven leavers an appeal may name (bounds admission's seat reads: outside review 22).
    uint256 internal constant MAX_LEAVERS = 128;
    uint256 internal constant MAX_PHASE_BLOCKS = 100_000;
    uint256 internal constant MAX_CANARY_RATE_BPS = 3000;
    /// @notice Most canaryRefundBps (review finding 3): a canary's seats cost its provider k R of pool, paid
    /// with a fee of at least k R / 0.8 whose 20% treasury share (k R / 4) is all the provider loses when its
    /// own auditors hold those seats; a larger refund would pay the provider for canaries.
    uint256 internal constant MAX_CANARY_REFUND_BPS = 2500;

    /// @notice k_r = 2 k_{r-1} + 1 = 2^r (k_0 + 1) - 1.
    function panelSeats(uint256 k0, uint256 depth) internal pure returns (uint256) {
        return ((k0 + 1) << depth) - 1;
    }

    /// @notice k_0 + ... + k_{depth-1}: the seats of a segment's panels before depth `depth`
    /// (sum of 2^j (k_0 + 1) - 1 over j < depth).
    function earlierSeats(uint256 k0, uint256 depth) internal pure returns (uint256) {
        return ((uint256(1) << depth) - 1) * (k0 + 1) - depth;
    }

    /// @notice The most seats a round naming more segments than the seat cap may have, its segments each of
    /// `k` seats among the same `eligible` auditors (outside reviews 20, 22): `k + seatCap (free - k + 1) - 1`
    /// with free = eligible - eligible / 2, 0 when free < k (no such round is admitted). The draw fills
    /// segments in order and an auditor at the cap leaves it for the rest of the round, so before the last
    /// of S segments up to floor((S - 1) k / seatCap) auditors may be at the cap. With at most
    /// floor(eligible / 2) refusing, the last segment still finds free - floor((S - 1) k / seatCap) auditors,
    /// at least k iff (S - 1) k < seatCap (free - k + 1), i.e. iff S k is within this bound (exact:
    /// Review22CapacityFloorSlack); so the cap fails the draw only if more than half of the eligible refuse.
    /// Premise: every eligible account can take `seatCap` seats (the stake premise rule, SessionOps
    /// `_checkStakeBacksLocks`, rechecked at admission).
    function cappedCapacity(uint256 eligible, uint256 k, uint256 seatCap) internal pure returns (uint256) {
        uint256 free = eligible - eligible / 2;
        return free < k ? 0 : k + seatCap * (free - k + 1) - 1;
    }

    /// @notice The most seat locks one auditor can hold at once for one session whose `segmentCount` segments
    /// include `tierSegments` of its tier (outside review 22, the premise of `cappedCapacity`): one seat per
    /// segment of its tier over the whole session (a segment's later panels exclude its earlier panels'
    /// auditors) and at most `seatCap` per round, round 0 and up to min(maxRounds x segmentCount, 255) appeal
    /// rounds (`TooManyRounds`), every lock held until the session settles. Not (maxRounds + 1) x seatCap:
    /// maxRounds bounds a segment's depth, not the rounds, so sequential rounds naming disjoint segments each
    /// add up to `seatCap` seats of one auditor.
    function sessionLockSeats(uint256 tierSegments, uint256 segmentCount, uint256 seatCap, uint256 maxRounds)
        internal
        pure
        returns (uint256)
    {
        uint256 rounds = maxRounds * segmentCount;
        if (rounds > PanelKey.MAX_ROUND) rounds = PanelKey.MAX_ROUND;
        uint256 byRounds = seatCap * (rounds + 1);
        return tierSegments < byRounds ? tierSegments : byRounds;
    }

    /// @notice Whether a failed draw of a round whose segments each have `eligible` auditors for `k` seats
    /// is charged with its lock refusals (REFUSED): only with an honest-majority margin, `eligible >= 2 k`,
    /// so the draw fails only if more than `eligible - k >= k`, i.e. more than half of them, refused.
    function refusalsCharged(uint256 eligible, uint256 k) internal pure returns (bool) {
        return eligible >= 2 * k;
    }

    /// @notice Bond per segment of a panel of depth r >= 1: k_r * R * multiplierBps / 10000.
    function minBond(uint256 k0, uint256 depth, uint256 reward, uint256 multiplierBps)
        internal
        pure
        returns (uint256)
    {
        return panelSeats(k0, depth) * reward * multiplierBps / BPS;
    }

    /// @notice q = ceil(tau * k / 10000).
    function quorum(uint256 k, uint256 tauBps) internal pure returns (uint256) {
        return (tauBps * k + BPS - 1) / BPS;
    }

    /// @notice PASS if pass >= q, else FAIL if fail >= q, else INCONCLUSIVE (SegmentWord codes).
    function quorumOutcome(uint256 passVotes, uint256 failVotes, uint256 k, uint256 tauBps)
        internal
        pure
        returns (uint256)
    {
        uint256 q = quorum(k, tauBps);
        if (passVotes >= q) return SegmentWord.OUTCOME_PASS;
        if (failVotes >= q) return SegmentWord.OUTCOME_FAIL;
        return SegmentWord.OUTCOME_INCONCLUSIVE;
    }

    /// @notice Fewest wrong votes that make a k-seat panel wrong: min(q, k - q + 1).
    function cheapestSpoil(uint256 k, uint256 tauBps) internal pure returns (uint256) {
        uint256 q = quorum(k, tauBps);
        return q < k - q + 1 ? q : k - q + 1;
    }

    /// @notice Whether spoiling round `round` and appealing it loses money (`appeals.farming_loses`):
    /// m * (R * 1e18 + pMin * P) * 10000 > rewardBps * bond(round + 1) * 1e18.
    function farmingLoses(
        uint256 k0,
        uint256 round,
        uint256 tauBps,
        uint256 reward,
        uint256 penalty,
        uint256 pMin,
        uint256 multiplierBps,
        uint256 rewardBps
    ) internal pure returns (bool) {
        uint256 m = cheapestSpoil(panelSeats(k0, round), tauBps);
        uint256 perVote = reward * WAD + pMin * penalty;
        uint256 bond = minBond(k0, round + 1, reward, multiplierBps);
        return m * perVote * BPS > rewardBps * bond * WAD;
    }

    /// @notice Round-`lane`'s revealed votes that agree with `finalOutcome` (none if it is INCONCLUSIVE).
    function agreeing(uint256 laneValue, uint256 finalOutcome) internal pure returns (uint256) {
        if (finalOutcome == SegmentWord.OUTCOME_PASS) return SegmentWord.passVotes(laneValue);
        if (finalOutcome == SegmentWord.OUTCOME_FAIL) return SegmentWord.failVotes(laneValue);
        return 0;
    }

    /// @notice Whether a round whose keys were withheld at depth `depth` leaves its segment at `contested`
    /// (the outcome it appealed, the last decided one) rather than INCONCLUSIVE (second review: withholding
    /// the next depth's keys erased a decided overturn). Only the provider can withhold, so withholding must
    /// never help its segment: a decided FAIL (round 0's or an appeal panel's) stands and the withheld
    /// round's bond is forfeited to its seats; a contested PASS still becomes INCONCLUSIVE (keeping it would
    /// let the provider veto any appeal of a PASS for free). Depth 1 too (outside review 3: withholding an
    /// appeal of round 0's FAIL made it INCONCLUSIVE, unscored the wrong PASS votes and took 12 TRUST of
    /// round-0 rewards, for free). `depth` is kept for the callers' symmetry with the reference.
    function withheldKeeps(uint256 depth, uint256 contested) internal pure returns (bool) {
        depth;
        return contested == SegmentWord.OUTCOME_FAIL;
    }

    /// @notice Whether a round's keys were withheld: Expired after a full draw (an Expired round drawn short
    /// was abandoned: `abandoned`).
    function withheld(IAppealModule.Round memory rd) internal pure returns (bool) {
        return rd.status == IAuditSessions.Status.Expired && rd.drawnSeats == rd.totalSeats;
    }

    /// @notice Whether a round was abandoned by its appellant (outside review 6): its randomness was obtainable
    /// while the snapshot was readable and nobody drew (Expired, drawn short; `AuditSessions._endUndrawn` for
    /// round 0). The contested outcome stands and the bond is forfeited; only a late value ends Cancelled
    /// (UNFILLABLE, refunded).
    function abandoned(IAppealModule.Round memory rd) internal pure returns (bool) {
        return rd.status == IAuditSessions.Status.Expired && rd.drawnSeats < rd.totalSeats;
    }

    /// @notice What round 0 and every appeal of a segment are scored against (`appeal_resolution.
    /// scoring_outcome`), separate from the verdict outcome `AppealWord.outcome(w)`; `last` is the segment's
    /// last panel. Decided: its outcome. KEYS_WITHHELD over a contested PASS: FAIL (only the provider can
    /// withhold: adverse inference). Any other undecided end (REFUSED, UNFILLABLE, abandoned): the contested
    /// outcome, the last decided one (outside reviews 5 and 6: scoring earlier rounds against INCONCLUSIVE
    /// refunded lost appeals, left correct panels unpaid and wrong PASS votes unscored).
    function scoringOutcome(uint256 w, IAppealModule.Round memory last) internal pure returns (uint256) {
        if (last.status == IAuditSessions.Status.Finalized) return AppealWord.outcome(w);
        uint256 contested = AppealWord.appealedAt(w, AppealWord.depth(w));
        if (withheld(last) && contested == SegmentWord.OUTCOME_PASS) return SegmentWord.OUTCOME_FAIL;
        return contested;
    }

    /// @notice How an appeal ended (`appeals.appeal_result`): keys withheld, abandoned, refused (a Cancelled
    /// panel whose draw failed after lock refusals) and unfillable by the panel's status; else UPHELD if the
    /// scoring outcome is the one appealed, VOIDED if a decided outcome became INCONCLUSIVE, OVERTURNED
    /// otherwise.
    function result(uint256 appealed, uint256 finalOutcome, IAppealModule.Round memory rd)
        internal
        pure
        returns (IAppealModule.AppealResult)
    {
        if (abandoned(rd)) return IAppealModule.AppealResult.Abandoned;
        if (rd.status == IAuditSessions.Status.Expired) return IAppealModule.AppealResult.KeysWithheld;
        if (rd.status == IAuditSessions.Status.Cancelled) {
            return rd.refused ? IAppealModule.AppealResult.Refused : IAppealModule.AppealResult.Unfillable;
        }
        if (finalOutcome == appealed) return IAppealModule.AppealResult.Upheld;
        if (appealed != SegmentWord.OUTCOME_INCONCLUSIVE && finalOutcome == SegmentWord.OUTCOME_INCONCLUSIVE)
        {
            return IAppealModule.AppealResult.Voided;
        }
        return IAppealModule.AppealResult.Overturned;
    }
}
