// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {IAuditSessions} from "./interfaces/IAuditSessions.sol";
import {IDrawModule} from "./interfaces/IDrawModule.sol";
import {IAppealModule} from "./interfaces/IAppealModule.sol";
import {IPanelHost} from "./interfaces/IPanelHost.sol";
import {IStaking} from "./interfaces/IStaking.sol";
import {IRandomness} from "./interfaces/IRandomness.sol";
import {PanelKey} from "./libraries/PanelKey.sol";
import {SegmentWord} from "./libraries/SegmentWord.sol";
import {SessionLifecycle} from "./SessionLifecycle.sol";
import {SessionOps} from "./SessionOps.sol";
import {Forward} from "./libraries/Forward.sol";

/// @title AuditSessions
/// @notice The session core: parameter versions, opening (fee, Merkle root, per-segment tier and
/// weight), the lifecycle and its deadlines, both randomness requests, key publication, segment and
/// trace verdicts. Sortition, voting and settlement are modules behind interfaces (IDrawModule,
/// IVotingModule, ISettlementModule); the core holds the audit pools and moves every token.
/// @dev No re-rolls: the draw's randomness is requested at opening and there is no cancel. A session
/// that ends without a verdict keeps R per drawn seat for those auditors (paid by settlement) and
/// sends the rest to the provider only when nobody could have prevented the end (`Termination`).
/// The slash coins' randomness is requested when the outcome becomes final (`_onOutcomeFinal`, where
/// issue 15's appeal window will sit), so no coin exists while anyone can still vote.
/// The owner's source and parameter changes and the opening run in `SessionOps` by DELEGATECALL on this
/// contract's storage (issue 12: EIP-170 room, as Staking's `StakingHoldsOps`): each keeps its signature
/// here, so the ABI is unchanged. The draw, the key publication, the module callbacks (every per-seat
/// path) and the verdict run here.
/// Segment leaf (OpenZeppelin StandardMerkleTree, sorted pairs):
/// `keccak256(bytes.concat(keccak256(abi.encode(uint256 index, string cid, uint8 tier, uint16 weight))))`.
contract AuditSessions is SessionLifecycle {
    using SafeERC20 for IERC20;

    /// @dev The code the cold entry points run (deployed by the constructor).
    address private immutable _ops;

    error ZeroAddress();
    error ModulesAlreadySet();
    error TooManySources();
    error InvalidParams();
    error InvalidSegments();
    error InvalidTier(uint256 index, uint256 tier);
    error InvalidWeight(uint256 index, uint256 weight);
    error FeeTooLow(uint256 pool, uint256 required);
    error FeeTooHigh(uint256 fee);
    /// @notice Appeals are enabled and the minimum stake of `tier` cannot back every seat lock the session can
    /// ask of one auditor of the tier (`required` = slashAmount x `AppealMath.sessionLockSeats`; run in
    /// `SessionOps`).
    error MinStakeBelowSessionLocks(uint256 tier, uint256 minStake, uint256 required);
    error NotProvider(uint256 sessionId);
    error DrawComplete(uint256 sessionId);
    error DrawIncomplete(uint256 sessionId);
    error EmptyManifest();
    error RevealOpen(uint256 sessionId, uint256 revealDeadline);
    error SlashSeedPending(uint256 sessionId);
    /// @notice The randomness source's delay (`max(minDelay, canary window)`) exceeds `limit` blocks: the
    /// epoch (configuration), or the blocks left before the opening's snapshot stops being readable.
    error RandomnessTooSlow(uint256 delay, uint256 limit);
    /// @notice Too little gas to give the slash-seed request its full `SLASH_REQUEST_GAS`.
    error SlashRequestGas(uint256 left);
    /// @notice OpenZeppelin SafeCast's error, raised by the opening in `SessionOps` (a request id beyond 56
    /// bits): declared so that AuditSessions' ABI, which callers decode reverts with, keeps it.
    error SafeCastOverflowedUintDowncast(uint8 bits, uint256 value);
    /// @notice The draw's randomness is fixed but usable only from block `obtainableAt` (a VRF value in its
    /// delivery block): draw again from that block (the selector is LookaheadRandomness's `TooEarly`).
    error TooEarly(uint256 requestId, uint256 obtainableAt);

    event TreasuryChanged(address treasury);
    event ModulesSet(address drawModule, address votingModule, address settlementModule);
    event DrawStarted(uint256 indexed sessionId, bytes32 seed, uint256 drawDeadline);
    event DrawCompleted(uint256 indexed sessionId, uint256 auditorCount, uint256 keyDeadline);
    event KeysPublished(
        uint256 indexed sessionId, string manifestCid, uint256 commitDeadline, uint256 revealDeadline
    );
    event SessionFinalized(
        uint256 indexed sessionId,
        bool passed,
        uint256 scoreBps,
        uint256 passWeight,
        uint256 totalWeight,
        bytes outcomes
    );
    event SlashSeedRequested(uint256 indexed sessionId, uint256 randomnessId);
    /// @notice The source refused the slash-seed request: the session has no slash seed (every incorrect
    /// vote is slashed, as for an Expired or Failed request).
    event SlashSeedRefused(uint256 indexed sessionId);
    event PoolRemainderToTreasury(uint256 indexed sessionId, uint256 amount);

    /// @param token_ The protocol token.
    /// @param staking_ The staking contract.
    /// @param randomness_ The first randomness source (index 0).
    /// @param treasury_ The treasury.
    /// @param owner_ Parameter owner.
    /// @param params_ Initial parameters (version 0).
    constructor(
        IERC20 token_,
        IStaking staking_,
        IRandomness randomness_,
        address treasury_,
        address owner_,
        SessionParams memory params_
    ) SessionLifecycle(_nonZero(token_, staking_, treasury_), staking_) Ownable(owner_) {
        treasury = treasury_;
        address ops = address(new SessionOps(token_, staking_));
        _ops = ops;
        // The first source and parameter version, by the code `setRandomness` and `setParams` run.
        (bool ok, bytes memory ret) =
            ops.delegatecall(abi.encodeCall(SessionOps.initialize, (randomness_, params_)));
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(ret, 32), mload(ret))
            }
        }
    }

    /// @dev `token_`, once it, `staking_` and `treasury_` are known non-zero (before any call to staking).
    function _nonZero(IERC20 token_, IStaking staking_, address treasury_) private pure returns (IERC20) {
        if (address(token_) == address(0) || address(staking_) == address(0) || treasury_ == address(0)) {
            revert ZeroAddress();
        }
        return token_;
    }

    /// @dev Run this call's own calldata (the same function of `SessionOps`) on this contract's storage and
    /// end the call with its return or revert data. Stubs name their parameters and results (no-op
    /// statements) so that AuditSessions' ABI stays what the callers decode.
    function _forward() private {
        Forward.toOps(_ops);
    }

    // ------------------------------------------------------------------ owner

    /// @notice Wire the three modules (once). They are deployed against this core's address.
    function setModules(IDrawModule draw_, address voting_, address settlement_) external onlyOwner {
        if (address(drawModule) != address(0)) revert ModulesAlreadySet();
        if (address(draw_) == address(0) || voting_ == address(0) || settlement_ == address(0)) {
            revert ZeroAddress();
        }
        drawModule = draw_;
        votingModule = voting_;
        settlementModule = settlement_;
        emit ModulesSet(address(draw_), voting_, settlement_);
    }

    /// @notice Publish a new parameter version (applies to sessions opened from now on).
    /// @dev Run in `SessionOps` (only the owner).
    function setParams(SessionParams calldata params_) external {
        params_;
        _forward();
    }

    /// @notice Change the randomness source for sessions opened from now on (open ones keep theirs).
    /// @dev Run in `SessionOps` (only the owner).
    function setRandomness(IRandomness source) external {
        source;
        _forward();
    }

    /// @notice Change the treasury.
    function setTreasury(address treasury_) external onlyOwner {
        if (treasury_ == address(0)) revert ZeroAddress();
        treasury = treasury_;
        emit TreasuryChanged(treasury_);
    }

    /// @notice Stop opening sessions; drawing, voting, finalizing and settling keep working (outside review 8).
    function pause() external onlyOwner {
        _pause();
    }

    /// @notice Resume.
    function unpause() external onlyOwner {
        _unpause();
    }

    // ------------------------------------------------------------------- open

    /// @notice Open a session; the fee is pulled with transferFrom (approve first). There is no
    /// cancel: the draw's randomness is requested now, so the session's fate is fixed from here.
    /// @param merkleRoot Root of the segment leaves.
    /// @param tiersWeights 3 bytes per segment: tier (uint8), weight (uint16 big-endian).
    /// @param fee Tokens paid; 80% funds the audit pool, 20% goes to the treasury.
    /// @return sessionId The new session's id (from 1).
    /// @dev Run in `SessionOps` (after the pause check there).
    function openSession(bytes32 merkleRoot, bytes calldata tiersWeights, uint256 fee)
        external
        returns (uint256 sessionId)
    {
        merkleRoot;
        tiersWeights;
        fee;
        sessionId;
        _forward();
    }

    /// @notice Open a session paying the fee with an EIP-2612 permit (no approval transaction).
    /// @dev A permit that fails (e.g. front-run) is ignored if the allowance already suffices.
    /// Run in `SessionOps` (after the pause check there).
    function openSessionWithPermit(
        bytes32 merkleRoot,
        bytes calldata tiersWeights,
        uint256 fee,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external returns (uint256 sessionId) {
        merkleRoot;
        tiersWeights;
        fee;
        deadline;
        v;
        r;
        s;
        sessionId;
        _forward();
    }

    // ------------------------------------------------------------------- draw

    /// @notice Draw up to `maxSeats` seats, rounded up to whole segments (anyone; repeat until complete).
    /// @dev The first call fixes the seed (reverts while the randomness is not ready). Seats are drawn by
    /// the draw module from the staking snapshot of the opening epoch.
    /// @return drawn Seats drawn by this call.
    /// Not pausable (outside review 8): a paid session's seed and snapshot are fixed, and a pause that held
    /// its draw past the snapshot would forfeit an honest fee; a pause stops openings only.
    function draw(uint256 sessionId, uint256 maxSeats) external returns (uint256 drawn) {
        Session storage s = _session(sessionId);
        Status was = s.status;
        _sync(sessionId, s);
        Status st = s.status;
        if (st == Status.Created) {
            _startDraw(sessionId, s);
        } else if (st != Status.Drawing) {
            // Ended undrawn by this very call (`_sync` past the snapshot): keep the ending.
            if (was == Status.Created) return 0;
            revert WrongStatus(sessionId, st);
        }
        uint256 before = s.drawnSeats;
        if (before == s.totalSeats) revert DrawComplete(sessionId);
        if (maxSeats == 0) maxSeats = 1;
        IDrawModule.DrawResult memory r = drawModule.draw(_drawJob(sessionId, s, maxSeats));
        s.drawnSeats = uint16(r.drawnSeats);
        s.auditorCount = uint16(r.auditorCount);
        s.drawCursor = uint16(r.cursor);
        drawn = r.drawnSeats - before;
        if (r.failed) {
            // Refusals are the sampled auditors' own choice after the seed is public (a provider's
            // accounts could refuse to force a refunded re-roll): only a draw the snapshot itself could
            // not fill is refunded.
            Termination why = r.lockRefusals == 0 ? Termination.DrawFailed : Termination.DrawRefused;
            _terminate(sessionId, s, Status.Cancelled, why);
        } else if (r.drawnSeats == s.totalSeats) {
            uint256 keyDeadline = block.number + _params[s.paramsVersion].keyBlocks;
            s.keyDeadline = uint40(keyDeadline);
            emit DrawCompleted(sessionId, r.auditorCount, keyDeadline);
        }
    }

    /// @dev Fix the seed; the draw must end while the snapshot is readable (`_sync` already ended a session
    /// past it: a seed that was obtainable in time is then the provider's abandonment, not a refund: anyone
    /// could have drawn, and a refund would let the provider look at the (public) seed first and re-roll).
    /// Never before `obtainableAt` (outside review 8): a VRF value delivered in the snapshot's last readable
    /// block is refunded, so a draw ordered behind the delivery in that block would let whoever can backrun
    /// it draw on a seed it likes and take the refund on one it does not.
    function _startDraw(uint256 sessionId, Session storage s) private {
        IRandomness source = _sources[s.source];
        uint256 id = s.drawRequest;
        bytes32 seed = source.fulfil(id);
        uint256 first = source.obtainableAt(id);
        if (block.number < first) revert TooEarly(id, first);
        uint256 readable = _readableUntil(s.epoch);
        uint256 deadline = block.number + _params[s.paramsVersion].drawBlocks;
        if (deadline > readable) deadline = readable;
        s.drawDeadline = uint40(deadline);
        _setStatus(sessionId, s, Status.Drawing);
        emit DrawStarted(sessionId, seed, deadline);
    }

    /// @notice The provider posts the CID of the key manifest (segment keys sealed to each drawn auditor).
    /// @dev Opens the commit phase; commitBlocks later the reveal phase follows for revealBlocks.
    function publishKeys(uint256 sessionId, string calldata manifestCid) external {
        Session storage s = _session(sessionId);
        _sync(sessionId, s);
        if (msg.sender != s.provider) revert NotProvider(sessionId);
        if (s.status != Status.Drawing) revert WrongStatus(sessionId, s.status);
        if (s.drawnSeats != s.totalSeats) revert DrawIncomplete(sessionId);
        if (bytes(manifestCid).length == 0) revert EmptyManifest();
        SessionParams storage p = _params[s.paramsVersion];
        uint256 commitDeadline = block.number + p.commitBlocks;
        uint256 revealDeadline = commitDeadline + p.revealBlocks;
        s.commitDeadline = uint40(commitDeadline);
        s.revealDeadline = uint40(revealDeadline);
        _setStatus(sessionId, s, Status.KeysPublished);
        emit KeysPublished(sessionId, manifestCid, commitDeadline, revealDeadline);
    }

    // ------------------------------------------------------- voting callbacks

    /// @inheritdoc IPanelHost
    function onCommits(uint256 sessionId, uint256 round, uint256 newCommitters)
        external
        onlyModule(votingModule)
    {
        Session storage s = _panel(sessionId, round);
        if (s.status != Status.KeysPublished && s.status != Status.Commit) {
            revert WrongStatus(sessionId, s.status);
        }
        uint256 committed = s.committedCount + newCommitters;
        s.committedCount = uint16(committed);
        if (committed != 0 && s.status == Status.KeysPublished) _setStatus(sessionId, s, Status.Commit);
        if (committed == s.auditorCount) {
            // Everyone committed: no reason to wait for the commit deadline.
            s.revealDeadline = uint40(block.number + _params[s.paramsVersion].revealBlocks);
            _setStatus(sessionId, s, Status.Reveal);
        }
    }

    /// @inheritdoc IPanelHost
    function onReveals(uint256 sessionId, uint256 round, uint256 revealers, uint256[] calldata tallyDeltas)
        external
        onlyModule(votingModule)
    {
        Session storage s = _panel(sessionId, round);
        if (s.status != Status.Reveal || block.number > s.revealDeadline) {
            revert WrongStatus(sessionId, s.status);
        }
        uint256 key = PanelKey.keyOf(sessionId, round);
        for (uint256 w = 0; w < tallyDeltas.length; ++w) {
            // Lanes never carry: each seat is revealed once and a segment has at most 31 seats.
            if (tallyDeltas[w] != 0) _segWords[key][w] += tallyDeltas[w];
        }
        s.revealedCount += uint16(revealers);
    }

    // --------------------------------------------------------------- finalize

    /// @notice Decide segment and trace verdicts once the reveal phase is over (or everyone revealed).
    /// @dev q_t = ceil(tau * k_t); PASS if pass >= q_t, else FAIL if fail >= q_t, else INCONCLUSIVE.
    /// Abstentions count in no tally. Trace PASS iff W * 10000 >= beta * sum(w), W = sum of w over PASS
    /// segments. O(segments).
    function finalize(uint256 sessionId) public {
        Session storage s = _session(sessionId);
        _sync(sessionId, s);
        if (s.status != Status.Reveal) revert WrongStatus(sessionId, s.status);
        if (block.number <= s.revealDeadline && s.revealedCount < s.auditorCount) {
            revert RevealOpen(sessionId, s.revealDeadline);
        }
        SessionParams storage p = _params[s.paramsVersion];
        uint256[3] memory q;
        for (uint256 t = 0; t < 3; ++t) {
            q[t] = (uint256(p.tauBps) * p.seatsPerTier[t] + BPS - 1) / BPS;
        }
        uint256 n = s.segmentCount;
        uint256 key = PanelKey.keyOf(sessionId, 0);
        bytes memory outcomes = new bytes(n);
        uint256 passW = 0;
        uint256 totalW = 0;
        for (uint256 w = 0; w < SegmentWord.wordCount(n); ++w) {
            uint256 word = _segWords[key][w];
            for (uint256 i = w << 3; i < n && i < (w + 1) << 3; ++i) {
                uint256 laneValue = SegmentWord.lane(word, i);
                uint256 qt = q[SegmentWord.tier(laneValue)];
                uint256 outcome = SegmentWord.OUTCOME_INCONCLUSIVE;
                if (SegmentWord.passVotes(laneValue) >= qt) outcome = SegmentWord.OUTCOME_PASS;
                else if (SegmentWord.failVotes(laneValue) >= qt) outcome = SegmentWord.OUTCOME_FAIL;
                uint256 weight = SegmentWord.weight(laneValue);
                totalW += weight;
                if (outcome == SegmentWord.OUTCOME_PASS) passW += weight;
                word = SegmentWord.withOutcome(word, i, outcome);
                outcomes[i] = bytes1(uint8(outcome));
            }
            _segWords[key][w] = word;
        }
        bool passed = passW * BPS >= uint256(p.betaBps) * totalW;
        uint256 score = passW * BPS / totalW;
        s.scoreBps = uint16(score);
        s.passed = passed;
        _setStatus(sessionId, s, Status.Finalized);
        emit SessionFinalized(sessionId, passed, score, passW, totalW, outcomes);
        address appeals = appealModule;
        if (appeals == address(0) || IAppealModule(appeals).onFinalized(sessionId)) {
            _onOutcomeFinal(sessionId, s);
        }
    }

    /// @inheritdoc IAuditSessions
    function onOutcomeFinal(uint256 sessionId) external onlyModule(appealModule) {
        Session storage s = _session(sessionId);
        if (s.status != Status.Finalized || s.slashRequest != 0) revert WrongStatus(sessionId, s.status);
        _onOutcomeFinal(sessionId, s);
    }

    /// @inheritdoc IAuditSessions
    function takePot(uint256 sessionId, uint256 amount) external onlyModule(appealModule) {
        Session storage s = _session(sessionId);
        if (s.slashRequest == 0) revert WrongStatus(sessionId, s.status);
        s.pool -= uint96(amount);
        emit PotTaken(sessionId, amount);
        token.safeTransfer(msg.sender, amount);
    }

    /// @dev The outcome is final (`IAuditSessions.onOutcomeFinal`): ask for the slash coins' randomness;
    /// settlement waits for it (`_fixSlashSeed` reverts while the request is unknown or pending). A source
    /// that refuses (requester revoked, subscription cancelled; outside review 5) must not strand the
    /// session: the refusal is recorded as NO_SLASH_SEED, read as "no seed" (every incorrect vote slashed,
    /// as for Expired/Failed), so nobody gains by it. The request gets exactly SLASH_REQUEST_GAS, checked
    /// before the call, so a caller cannot starve it (EIP-150's 63/64) to fake a refusal: the outcome of
    /// the try depends on the source alone.
    function _onOutcomeFinal(uint256 sessionId, Session storage s) private {
        uint256 left = gasleft();
        if (left < SLASH_REQUEST_GAS + SLASH_REQUEST_GAS / 63 + 20_000) revert SlashRequestGas(left);
        try _sources[s.source].request{gas: SLASH_REQUEST_GAS}() returns (uint256 requestId) {
            if (requestId != 0 && requestId < NO_SLASH_SEED) {
                s.slashRequest = uint56(requestId);
                emit SlashSeedRequested(sessionId, requestId);
                return;
            }
        } catch (bytes memory reason) {
            // A source busy for now (an outsider's VRF callback) is no lasting refusal: retry later.
            if (reason.length == 4 && bytes4(reason) == IRandomness.SourceBusy.selector) {
                revert IRandomness.SourceBusy();
            }
        }
        s.slashRequest = uint56(NO_SLASH_SEED);
        emit SlashSeedRefused(sessionId);
    }

    // --------------------------------------------------- settlement callbacks

    /// @inheritdoc IAuditSessions
    function settlementContext(uint256 sessionId, uint256 round)
        external
        onlyModule(settlementModule)
        returns (SettlementContext memory c)
    {
        Session storage s = _panel(sessionId, round);
        Status st = s.status;
        if (st != Status.Finalized && st != Status.Cancelled && st != Status.Expired) {
            revert WrongStatus(sessionId, st);
        }
        SessionParams storage p = _params[s.paramsVersion];
        c.reward = p.reward;
        c.slashAmount = p.slashAmount;
        c.segmentCount = s.segmentCount;
        if (st != Status.Finalized) return c;
        c.finalized = true;
        c.gamma = p.gamma;
        c.pMin = p.pMin;
        c.pMax = p.pMax;
        (c.hasSlashSeed, c.slashSeed) = _fixSlashSeed(sessionId, s);
        uint256 key = PanelKey.keyOf(sessionId, round);
        c.segmentWords = new uint256[](SegmentWord.wordCount(c.segmentCount));
        for (uint256 w = 0; w < c.segmentWords.length; ++w) {
            c.segmentWords[w] = _segWords[key][w];
        }
    }

    /// @dev The slash seed once it exists. A request that expired or failed, or that the source refused
    /// (NO_SLASH_SEED), yields none, and then every incorrect vote is slashed (SettlementModule, on
    /// `hasSlashSeed == false`): nobody profits from letting it lapse.
    function _fixSlashSeed(uint256 sessionId, Session storage s) private returns (bool, bytes32) {
        uint256 id = s.slashRequest;
        if (id == NO_SLASH_SEED) return (false, bytes32(0));
        IRandomness source = _sources[s.source];
        IRandomness.RequestStatus st = source.status(id);
        if (st == IRandomness.RequestStatus.Ready || st == IRandomness.RequestStatus.Fulfilled) {
            return (true, source.fulfil(id));
        }
        if (st == IRandomness.RequestStatus.Expired || st == IRandomness.RequestStatus.Failed) {
            return (false, bytes32(0));
        }
        revert SlashSeedPending(sessionId);
    }

    /// @inheritdoc IAuditSessions
    function payOut(uint256 sessionId, uint256 round, uint256 rewards, uint256 auditors)
        external
        onlyModule(settlementModule)
    {
        Session storage s = _panel(sessionId, round);
        s.pool -= uint96(rewards);
        uint256 settled = s.settledCount + auditors;
        s.settledCount = uint16(settled);
        if (rewards != 0) token.safeTransfer(msg.sender, rewards);
        if (settled == s.auditorCount) {
            uint256 rest = s.pool;
            if (rest != 0) {
                s.pool = 0;
                emit PoolRemainderToTreasury(sessionId, rest);
                token.safeTransfer(treasury, rest);
            }
        }
    }

    // -------------------------------------------------------------- deadlines

    /// @notice Apply every transition whose deadline has passed, and finalize when due (anyone may call).
    /// @return status The session's status afterwards.
    function advance(uint256 sessionId) external returns (Status status) {
        Session storage s = _session(sessionId);
        _sync(sessionId, s);
        if (
            s.status == Status.Reveal
                && (block.number > s.revealDeadline || s.revealedCount == s.auditorCount)
        ) {
            finalize(sessionId);
        }
        return s.status;
    }

    /// @dev A module's panel: the session brought up to date. Only round 0 exists until issue 15.
    function _panel(uint256 sessionId, uint256 round) private returns (Session storage s) {
        if (round != 0) revert UnsupportedRound(round);
        s = _session(sessionId);
        _sync(sessionId, s);
    }
}
