// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";
import {IAuditSessions} from "./interfaces/IAuditSessions.sol";
import {IDrawModule} from "./interfaces/IDrawModule.sol";
import {IRandomness} from "./interfaces/IRandomness.sol";
import {ICanaryModule} from "./interfaces/ICanaryModule.sol";
import {PanelKey} from "./libraries/PanelKey.sol";
import {SegmentWord} from "./libraries/SegmentWord.sol";

/// @title SessionStore
/// @notice The storage of AuditSessions with its read-only views and the pure checks the core runs on
/// it (parameter bounds, the draw module's job). Split from the session core so that each file keeps
/// one job; the deployed contract and its ABI are AuditSessions'.
/// @dev Holds no error or event that tests name through `AuditSessions.X`: those stay in the core.
abstract contract SessionStore is IAuditSessions, Ownable2Step, Pausable {
    uint256 internal constant WAD = 1e18;
    uint256 internal constant BPS = 10_000;
    /// @notice Share of each fee that funds the audit pool (the rest goes to the treasury).
    uint256 public constant AUDIT_POOL_BPS = 8_000;
    /// @notice Hard bounds.
    uint256 public constant MAX_SEGMENTS = 1024;
    uint256 public constant MAX_SEATS_PER_SEGMENT = 31;
    uint256 public constant MAX_SEAT_CAP = 64;
    uint256 public constant MAX_TIER_WEIGHT = 1000;
    uint256 public constant MAX_PHASE_BLOCKS = 100_000;
    uint256 public constant MAX_REWARD = 1e6 * 1e18;
    /// @notice Most blocks of a canary commit window: VRF v2.5 waits at most 200 confirmations, and a VRF
    /// source asks for one more than the window (`VRFRandomness.requestAfter`).
    uint256 public constant MAX_CANARY_COMMIT_BLOCKS = 199;
    /// @dev `Session.slashRequest` of a session whose source refused the slash-seed request (no seed).
    uint256 internal constant NO_SLASH_SEED = type(uint56).max;
    /// @dev Gas given to the slash-seed request (a VRF request at the coordinator costs well under it).
    uint256 internal constant SLASH_REQUEST_GAS = 500_000;

    /// @notice Receives the fee share and abandoned pools.
    address public treasury;
    /// @notice Sortition (set once by `setModules`).
    IDrawModule public drawModule;
    /// @notice Commit-reveal (set once by `setModules`).
    address public votingModule;
    /// @notice Settlement (set once by `setModules`).
    address public settlementModule;
    /// @notice Appeals (issue 15; set once by `setExtensions`, zero: no appeals, outcome final at finalize).
    address public appealModule;
    /// @notice Canaries (issue 15; set once by `setExtensions`).
    address public canaryModule;
    /// @notice The first session opened with the canary module wired (0: not wired). Only these sessions
    /// were asked what they owe at opening and got the canary commit window; earlier ones owe none.
    uint256 public canariesFromSession;

    IRandomness[] internal _sources;
    SessionParams[] internal _params;
    uint256 internal _sessionCount;
    mapping(uint256 => Session) internal _sessions;
    mapping(uint256 key => mapping(uint256 => uint256)) internal _segWords;

    error NoSeed(uint256 sessionId);

    /// @notice Wire the appeal and canary modules (once, after `setModules`; issue 15).
    function setExtensions(address appeals_, address canaries_) external onlyOwner {
        if (appealModule != address(0)) revert ExtensionsAlreadySet();
        if (appeals_ == address(0) || canaries_ == address(0)) revert ZeroExtension();
        appealModule = appeals_;
        canaryModule = canaries_;
        canariesFromSession = _sessionCount + 1;
        emit ExtensionsSet(appeals_, canaries_);
    }

    /// @dev Whether `p` is inside the hard bounds (quorum above half, seats, weights, probabilities,
    /// amounts, phase lengths, canary commit window).
    function _validParams(SessionParams memory p) internal pure returns (bool) {
        if (p.tauBps <= BPS / 2 || p.tauBps > BPS || p.betaBps == 0 || p.betaBps > BPS) {
            return false;
        }
        if (p.seatCap == 0 || p.seatCap > MAX_SEAT_CAP) return false;
        for (uint256 t = 0; t < 3; ++t) {
            if (p.seatsPerTier[t] == 0 || p.seatsPerTier[t] > MAX_SEATS_PER_SEGMENT) return false;
            if (p.tierWeight[t] > MAX_TIER_WEIGHT) return false;
        }
        if (p.gamma > WAD || p.pMin > p.pMax || p.pMax > WAD) return false;
        if (p.reward > MAX_REWARD || p.slashAmount > MAX_REWARD) return false;
        if (
            p.drawBlocks == 0 || p.keyBlocks == 0 || p.commitBlocks == 0 || p.revealBlocks == 0
                || p.drawBlocks > MAX_PHASE_BLOCKS || p.keyBlocks > MAX_PHASE_BLOCKS
                || p.commitBlocks > MAX_PHASE_BLOCKS || p.revealBlocks > MAX_PHASE_BLOCKS
                || p.canaryCommitBlocks > MAX_CANARY_COMMIT_BLOCKS
        ) return false;
        return true;
    }

    /// @dev Blocks the draw's randomness of a new session must stay unknown: `commitBlocks` (its params'
    /// `canaryCommitBlocks`) when it owes canaries, so the operator can commit them (`commitCanaries` needs
    /// the request Pending) before anyone can know the draw; 0 otherwise (no canary module, none owed).
    /// Asked before the session's record exists (`AppealSettlement.paramsOf` then skips capping
    /// `maxRounds` for it, ~64k gas the canary rate does not need).
    function _commitWindow(uint256 sessionId, uint256 n, uint256 commitBlocks)
        internal
        view
        returns (uint256)
    {
        address canaries = canaryModule;
        if (commitBlocks == 0 || canaries == address(0)) return 0;
        return ICanaryModule(canaries).canariesOwed(sessionId, n) == 0 ? 0 : commitBlocks;
    }

    /// @dev What the draw module needs for one call: the seed, the snapshot epoch, the bounds and the
    /// segment words from the cursor on (whole segments only).
    function _drawJob(uint256 sessionId, Session storage s, uint256 maxSeats)
        internal
        view
        returns (IDrawModule.DrawJob memory job)
    {
        SessionParams storage p = _params[s.paramsVersion];
        uint256 n = s.segmentCount;
        uint256 cursor = s.drawCursor;
        // A call touches at most maxSeats + 1 segments (it may finish one a previous call began).
        uint256 last = cursor + maxSeats < n ? cursor + maxSeats : n - 1;
        uint256 first = SegmentWord.wordOf(cursor);
        uint256[] memory words = new uint256[](SegmentWord.wordOf(last) - first + 1);
        uint256 key = PanelKey.keyOf(sessionId, 0);
        for (uint256 w = 0; w < words.length; ++w) {
            words[w] = _segWords[key][first + w];
        }
        job.sessionId = sessionId;
        job.seed = _sources[s.source].valueOf(s.drawRequest);
        job.epoch = s.epoch;
        job.provider = s.provider;
        job.maxSeats = maxSeats;
        job.segmentCount = n;
        job.cursor = cursor;
        job.drawnSeats = s.drawnSeats;
        job.auditorCount = s.auditorCount;
        job.seatCap = p.seatCap;
        job.lockAmount = p.slashAmount;
        job.seatsPerTier = p.seatsPerTier;
        job.segmentWords = words;
    }

    function _session(uint256 sessionId) internal view returns (Session storage s) {
        s = _sessions[sessionId];
        if (s.status == Status.None) revert UnknownSession(sessionId);
    }

    // ------------------------------------------------------------------ views

    /// @notice Whether segment `index` with (cid, tier, weight) is in the session's Merkle root and
    /// (tier, weight) are the ones stored for it, i.e. the ones that decided its verdict.
    function verifySegment(
        uint256 sessionId,
        uint256 index,
        string calldata cid,
        uint8 tier,
        uint16 weight,
        bytes32[] calldata proof
    ) external view returns (bool) {
        Session storage s = _sessions[sessionId];
        if (index >= s.segmentCount) return false;
        uint256 laneValue = SegmentWord.lane(_segWords[sessionId][SegmentWord.wordOf(index)], index);
        if (SegmentWord.tier(laneValue) != tier || SegmentWord.weight(laneValue) != weight) return false;
        bytes32 leaf = keccak256(bytes.concat(keccak256(abi.encode(index, cid, tier, weight))));
        return MerkleProof.verifyCalldata(proof, s.merkleRoot, leaf);
    }

    /// @inheritdoc IAuditSessions
    function sessionOf(uint256 sessionId) external view returns (Session memory) {
        return _sessions[sessionId];
    }

    /// @inheritdoc IAuditSessions
    function statusOf(uint256 sessionId) external view returns (Status) {
        return _sessions[sessionId].status;
    }

    /// @notice Number of sessions opened.
    function sessionCount() external view returns (uint256) {
        return _sessionCount;
    }

    /// @inheritdoc IAuditSessions
    function paramsAt(uint256 version) external view returns (SessionParams memory) {
        return _params[version];
    }

    /// @notice Current parameter version (applies to new sessions).
    function paramsVersion() external view returns (uint256) {
        return _params.length - 1;
    }

    /// @notice The randomness source new sessions use.
    function randomness() external view returns (IRandomness) {
        return _sources[_sources.length - 1];
    }

    /// @notice The randomness source a session pinned at opening.
    function sourceOf(uint256 sessionId) external view returns (IRandomness) {
        return _sources[_sessions[sessionId].source];
    }

    /// @inheritdoc IAuditSessions
    function segmentWord(uint256 sessionId, uint256 round, uint256 wordIndex)
        external
        view
        returns (uint256)
    {
        return _segWords[PanelKey.keyOf(sessionId, round)][wordIndex];
    }

    /// @notice The draw seed (reverts until the draw started).
    function seedOf(uint256 sessionId) external view returns (bytes32) {
        Session storage s = _sessions[sessionId];
        if (s.status == Status.None || s.status == Status.Created || s.drawDeadline == 0) {
            revert NoSeed(sessionId);
        }
        return _sources[s.source].valueOf(s.drawRequest);
    }
}
