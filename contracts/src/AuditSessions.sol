// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Ownable, Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";
import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";
import {IStaking} from "./interfaces/IStaking.sol";
import {IRandomness} from "./interfaces/IRandomness.sol";

/// @title AuditSessions
/// @notice Audit sessions end to end: open (fee, Merkle root, per-segment tier and weight), sortition
/// of auditors per segment, key publication, one commit-reveal per auditor per session over a verdict
/// bitmap, segment and trace verdicts, and lazy per-auditor settlement of rewards, slashes and reputation.
/// @dev Storage is laid out for batched voting:
/// - Segments are packed 8 per slot, 32 bits each: fail votes (bits 0-5), pass votes (6-11),
///   outcome (12-13), tier (14-15), weight (16-31). A batch of reveals adds packed deltas, one SSTORE
///   per touched slot; finalize reads and writes segmentCount / 8 slots.
/// - Each (session, auditor) has one state word: commitment (top 192 bits of the keccak commitment,
///   replaced by the verdict bitmap on reveal; binding is 2^96 collision work), seat count, flags,
///   commit nonce and the last drawn segment. Seats (segment indices, uint16) are packed 16 per slot in
///   seat order, i.e. (segment index, draw order).
/// - Commits can be relayed in batches with EIP-712 signatures (`Commit(sessionId, auditor, commitment,
///   nonce)`, nonce = commits so far, so an old signature cannot overwrite a re-commit). Reveals need no
///   signature (the commitment authenticates them) and settlement is permissionless, so any relayer can
///   batch both.
/// Segment leaf (OpenZeppelin StandardMerkleTree, sorted pairs):
/// `keccak256(bytes.concat(keccak256(abi.encode(uint256 index, string cid, uint8 tier, uint16 weight))))`.
/// Room is left for appeals and canary segments: neither is built.
contract AuditSessions is Ownable2Step, Pausable {
    using SafeERC20 for IERC20;

    /// @notice Session lifecycle.
    enum Status {
        None,
        Created,
        Drawing,
        KeysPublished,
        Commit,
        Reveal,
        Finalized,
        Cancelled,
        Expired
    }

    /// @notice Segment outcome (matches trustnode.models.enums.SegmentOutcome).
    uint8 public constant OUTCOME_NONE = 0;
    uint8 public constant OUTCOME_PASS = 1;
    uint8 public constant OUTCOME_FAIL = 2;
    uint8 public constant OUTCOME_INCONCLUSIVE = 3;

    uint256 private constant WAD = 1e18;
    uint256 private constant BPS = 10_000;
    /// @notice Share of each fee that funds the audit pool (the rest goes to the treasury).
    uint256 public constant AUDIT_POOL_BPS = 8_000;
    /// @notice Hard bounds.
    uint256 public constant MAX_SEGMENTS = 1024;
    uint256 public constant MAX_SEATS_PER_SEGMENT = 31;
    uint256 public constant MAX_SEAT_CAP = 64;
    uint256 public constant MAX_TIER_WEIGHT = 1000;
    uint256 public constant MAX_PHASE_BLOCKS = 100_000;
    uint256 public constant MAX_REWARD = 1e6 * 1e18;
    /// @notice Sortition attempts per seat before the session is cancelled for lack of auditors.
    uint256 public constant MAX_DRAW_ATTEMPTS = 32;

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    /// @notice EIP-712 domain name and version of signed commits.
    string public constant EIP712_NAME = "TrustAuditSessions";
    string public constant EIP712_VERSION = "1";
    bytes32 public constant COMMIT_TYPEHASH =
        keccak256("Commit(uint256 sessionId,address auditor,bytes32 commitment,uint256 nonce)");

    uint256 private constant MASK192 = (uint256(1) << 192) - 1;
    uint256 private constant MASK128 = (uint256(1) << 128) - 1;
    uint256 private constant FLAG_COMMITTED = 1;
    uint256 private constant FLAG_REVEALED = 2;
    uint256 private constant FLAG_SETTLED = 4;

    /// @notice Owner-set protocol parameters; each session pins the version current at its opening.
    struct SessionParams {
        uint16 tauBps;
        uint16 betaBps;
        uint8 seatCap;
        uint8[3] seatsPerTier;
        uint16[3] tierWeight;
        uint64 gamma;
        uint64 pMin;
        uint64 pMax;
        uint96 reward;
        uint96 slashAmount;
        uint32 drawBlocks;
        uint32 keyBlocks;
        uint32 commitBlocks;
        uint32 revealBlocks;
    }

    struct Session {
        address provider;
        Status status;
        uint32 paramsVersion;
        uint16 segmentCount;
        uint16 auditorCount;
        uint16 settledCount;
        bytes32 merkleRoot;
        uint128 pool;
        uint64 randomnessId;
        uint32 totalSeats;
        uint32 drawnSeats;
        bytes32 seed;
        uint64 drawDeadline;
        uint64 keyDeadline;
        uint64 commitDeadline;
        uint64 revealDeadline;
        uint16 drawSegment;
        uint8 drawSeatInSegment;
        uint16 committedCount;
        uint16 revealedCount;
        uint32 passWeight;
        uint32 totalWeight;
        uint16 scoreBps;
        bool passed;
        uint96 fee;
        IRandomness randomnessSource;
        bytes32 keyManifestHash;
    }

    /// @notice A commitment signed by its auditor, submitted by any relayer.
    struct SignedCommit {
        address auditor;
        bytes32 commitment;
        bytes32 r;
        bytes32 vs;
    }

    /// @notice The opening of an auditor's commitment, submitted by anyone who knows it.
    struct RevealItem {
        address auditor;
        uint256 verdicts;
        bytes32 salt;
    }

    /// @notice The protocol token.
    IERC20 public immutable token;
    /// @notice Pools, locks, sortition and reputation.
    IStaking public immutable staking;
    /// @notice Source of session seeds.
    IRandomness public randomness;
    /// @notice Receives the fee share, slashes (via Staking) and pool remainders.
    address public treasury;

    SessionParams[] private _params;
    uint256 private _sessionCount;
    mapping(uint256 => Session) private _sessions;
    mapping(uint256 => mapping(uint256 => uint256)) private _segWords;
    mapping(uint256 => mapping(address => uint256)) private _votes;
    mapping(uint256 => mapping(address => mapping(uint256 => uint256))) private _seatWords;
    mapping(uint256 => address[]) private _auditors;

    error ZeroAddress();
    error InvalidParams();
    error InvalidSegments();
    error InvalidTier(uint256 index, uint256 tier);
    error InvalidWeight(uint256 index, uint256 weight);
    error FeeTooLow(uint256 pool, uint256 required);
    error FeeTooHigh(uint256 fee);
    error UnknownSession(uint256 sessionId);
    error WrongStatus(uint256 sessionId, Status status);
    error NotProvider(uint256 sessionId);
    error DrawComplete(uint256 sessionId);
    error DrawIncomplete(uint256 sessionId);
    error RandomnessExpired(uint256 sessionId);
    error EmptyManifest();
    error NotSeated(uint256 sessionId, address auditor);
    error BadSignature(address auditor);
    error AlreadyRevealed(uint256 sessionId, address auditor);
    error NotCommitted(uint256 sessionId, address auditor);
    error CommitmentMismatch(uint256 sessionId, address auditor);
    error InvalidVerdicts(uint256 verdicts, uint256 seatCount);
    error RevealOpen(uint256 sessionId, uint256 revealDeadline);
    error AlreadySettled(uint256 sessionId, address auditor);
    error EmptyBatch();
    error TooManyCommits(uint256 sessionId, address auditor);

    event ParamsChanged(uint256 indexed version, SessionParams params);
    event RandomnessSourceChanged(address source);
    event TreasuryChanged(address treasury);
    event SessionOpened(
        uint256 indexed sessionId,
        address indexed provider,
        bytes32 merkleRoot,
        uint256 segmentCount,
        uint256 totalSeats,
        uint256 fee,
        uint256 pool,
        uint256 paramsVersion,
        uint256 randomnessId,
        bytes tiersWeights
    );
    event StatusChanged(uint256 indexed sessionId, Status status);
    event DrawStarted(uint256 indexed sessionId, bytes32 seed, uint256 drawDeadline);
    event SeatAssigned(
        uint256 indexed sessionId, uint256 indexed segmentIndex, address indexed auditor, uint256 ordinal
    );
    event DrawCompleted(uint256 indexed sessionId, uint256 auditorCount, uint256 keyDeadline);
    event KeysPublished(
        uint256 indexed sessionId, string manifestCid, uint256 commitDeadline, uint256 revealDeadline
    );
    event Committed(uint256 indexed sessionId, address indexed auditor, bytes32 commitment, uint256 nonce);
    event Revealed(uint256 indexed sessionId, address indexed auditor, uint256 verdicts);
    event SessionFinalized(
        uint256 indexed sessionId,
        bool passed,
        uint256 scoreBps,
        uint256 passWeight,
        uint256 totalWeight,
        bytes outcomes
    );
    event AuditorSettled(
        uint256 indexed sessionId,
        address indexed auditor,
        uint256 correct,
        uint256 incorrect,
        uint256 slashes,
        uint256 reward,
        uint256 reputation
    );
    event PoolRefunded(uint256 indexed sessionId, address indexed provider, uint256 amount);
    event PoolRemainderToTreasury(uint256 indexed sessionId, uint256 amount);

    /// @param token_ The protocol token.
    /// @param staking_ The staking contract (must be wired to this contract).
    /// @param randomness_ The seed source.
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
    ) Ownable(owner_) {
        if (
            address(token_) == address(0) || address(staking_) == address(0)
                || address(randomness_) == address(0) || treasury_ == address(0)
        ) revert ZeroAddress();
        token = token_;
        staking = staking_;
        randomness = randomness_;
        treasury = treasury_;
        _pushParams(params_);
    }

    // ------------------------------------------------------------------ owner

    /// @notice Publish a new parameter version (applies to sessions opened from now on).
    function setParams(SessionParams calldata params_) external onlyOwner {
        _pushParams(params_);
    }

    /// @notice Change the seed source for sessions opened from now on (open ones keep theirs).
    function setRandomness(IRandomness source) external onlyOwner {
        if (address(source) == address(0)) revert ZeroAddress();
        randomness = source;
        emit RandomnessSourceChanged(address(source));
    }

    /// @notice Change the treasury.
    function setTreasury(address treasury_) external onlyOwner {
        if (treasury_ == address(0)) revert ZeroAddress();
        treasury = treasury_;
        emit TreasuryChanged(treasury_);
    }

    /// @notice Stop opening and drawing sessions; voting, finalizing and settling keep working.
    function pause() external onlyOwner {
        _pause();
    }

    /// @notice Resume.
    function unpause() external onlyOwner {
        _unpause();
    }

    function _pushParams(SessionParams memory p) private {
        if (p.tauBps <= BPS / 2 || p.tauBps > BPS || p.betaBps == 0 || p.betaBps > BPS) {
            revert InvalidParams();
        }
        if (p.seatCap == 0 || p.seatCap > MAX_SEAT_CAP) revert InvalidParams();
        for (uint256 t = 0; t < 3; ++t) {
            if (p.seatsPerTier[t] == 0 || p.seatsPerTier[t] > MAX_SEATS_PER_SEGMENT) revert InvalidParams();
            if (p.tierWeight[t] > MAX_TIER_WEIGHT) revert InvalidParams();
        }
        if (p.gamma > WAD || p.pMin > p.pMax || p.pMax > WAD) revert InvalidParams();
        if (p.reward > MAX_REWARD || p.slashAmount > MAX_REWARD) revert InvalidParams();
        if (
            p.drawBlocks == 0 || p.keyBlocks == 0 || p.commitBlocks == 0 || p.revealBlocks == 0
                || p.drawBlocks > MAX_PHASE_BLOCKS || p.keyBlocks > MAX_PHASE_BLOCKS
                || p.commitBlocks > MAX_PHASE_BLOCKS || p.revealBlocks > MAX_PHASE_BLOCKS
        ) revert InvalidParams();
        _params.push(p);
        emit ParamsChanged(_params.length - 1, p);
    }

    // ------------------------------------------------------------------- open

    /// @notice Open a session; the fee is pulled with transferFrom (approve first).
    /// @param merkleRoot Root of the segment leaves.
    /// @param tiersWeights 3 bytes per segment: tier (uint8), weight (uint16 big-endian).
    /// @param fee Tokens paid; 80% funds the audit pool, 20% goes to the treasury.
    /// @return sessionId The new session's id (from 1).
    function openSession(bytes32 merkleRoot, bytes calldata tiersWeights, uint256 fee)
        external
        whenNotPaused
        returns (uint256 sessionId)
    {
        return _open(merkleRoot, tiersWeights, fee);
    }

    /// @notice Open a session paying the fee with an EIP-2612 permit (no approval transaction).
    /// @dev A permit that fails (e.g. front-run) is ignored if the allowance already suffices.
    function openSessionWithPermit(
        bytes32 merkleRoot,
        bytes calldata tiersWeights,
        uint256 fee,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external whenNotPaused returns (uint256 sessionId) {
        try IERC20Permit(address(token)).permit(msg.sender, address(this), fee, deadline, v, r, s) {} catch {}
        return _open(merkleRoot, tiersWeights, fee);
    }

    function _open(bytes32 merkleRoot, bytes calldata tw, uint256 fee) private returns (uint256 sessionId) {
        uint256 n = tw.length / 3;
        if (n == 0 || n > MAX_SEGMENTS || tw.length % 3 != 0 || merkleRoot == bytes32(0)) {
            revert InvalidSegments();
        }
        uint256 version = _params.length - 1;
        sessionId = ++_sessionCount;
        uint256 totalSeats = _storeSegments(sessionId, tw, n, _params[version]);
        if (fee > type(uint96).max) revert FeeTooHigh(fee);
        uint256 pool = fee * AUDIT_POOL_BPS / BPS;
        uint256 required = totalSeats * _params[version].reward;
        if (pool < required) revert FeeTooLow(pool, required);
        Session storage s = _sessions[sessionId];
        s.provider = msg.sender;
        s.status = Status.Created;
        s.paramsVersion = uint32(version);
        s.segmentCount = uint16(n);
        s.merkleRoot = merkleRoot;
        s.pool = uint128(pool);
        s.fee = uint96(fee);
        s.totalSeats = uint32(totalSeats);
        IRandomness source = randomness;
        s.randomnessSource = source;
        s.randomnessId = uint64(source.request());
        _emitOpened(sessionId, s, tw);
        token.safeTransferFrom(msg.sender, address(this), fee);
        if (fee > pool) token.safeTransfer(treasury, fee - pool);
    }

    function _emitOpened(uint256 sessionId, Session storage s, bytes calldata tw) private {
        emit SessionOpened(
            sessionId,
            s.provider,
            s.merkleRoot,
            s.segmentCount,
            s.totalSeats,
            s.fee,
            s.pool,
            s.paramsVersion,
            s.randomnessId,
            tw
        );
        emit StatusChanged(sessionId, Status.Created);
    }

    function _storeSegments(uint256 sessionId, bytes calldata tw, uint256 n, SessionParams storage p)
        private
        returns (uint256 totalSeats)
    {
        uint256 word = 0;
        for (uint256 i = 0; i < n; ++i) {
            uint256 tier = uint8(tw[3 * i]);
            uint256 weight = (uint256(uint8(tw[3 * i + 1])) << 8) | uint8(tw[3 * i + 2]);
            if (tier > 2) revert InvalidTier(i, tier);
            uint256 fixedWeight = p.tierWeight[tier];
            if (weight == 0 || (fixedWeight != 0 && weight != fixedWeight)) revert InvalidWeight(i, weight);
            totalSeats += p.seatsPerTier[tier];
            word |= ((weight << 16) | (tier << 14)) << ((i & 7) * 32);
            if (i & 7 == 7 || i == n - 1) {
                _segWords[sessionId][i >> 3] = word;
                word = 0;
            }
        }
    }

    /// @notice The provider withdraws a session before its draw starts; the audit pool is refunded.
    function cancel(uint256 sessionId) external {
        Session storage s = _session(sessionId);
        if (msg.sender != s.provider) revert NotProvider(sessionId);
        if (s.status != Status.Created) revert WrongStatus(sessionId, s.status);
        _terminate(sessionId, s, Status.Cancelled);
    }

    // ------------------------------------------------------------------- draw

    /// @notice Draw up to `maxSeats` seats (anyone may call; repeat until complete).
    /// @dev The first call fixes the seed from the randomness source (reverts while it is not ready).
    /// Each seat samples by weight in its tier, rejecting the provider, auditors already on the segment,
    /// auditors at the seat cap and auditors whose free stake cannot back the slash amount; after
    /// MAX_DRAW_ATTEMPTS rejections the session is cancelled (not enough eligible auditors).
    /// @return drawn Seats drawn by this call.
    function draw(uint256 sessionId, uint256 maxSeats) external whenNotPaused returns (uint256 drawn) {
        Session storage s = _session(sessionId);
        _sync(sessionId, s);
        if (s.status == Status.Created) {
            bytes32 seed = s.randomnessSource.fulfil(s.randomnessId);
            s.seed = seed;
            uint256 deadline = block.number + _params[s.paramsVersion].drawBlocks;
            s.drawDeadline = uint64(deadline);
            _setStatus(sessionId, s, Status.Drawing);
            emit DrawStarted(sessionId, seed, deadline);
        } else if (s.status != Status.Drawing) {
            revert WrongStatus(sessionId, s.status);
        }
        if (s.drawnSeats == s.totalSeats) revert DrawComplete(sessionId);
        drawn = _drawSeats(sessionId, s, maxSeats);
        if (s.status == Status.Drawing && s.drawnSeats == s.totalSeats) {
            uint256 keyDeadline = block.number + _params[s.paramsVersion].keyBlocks;
            s.keyDeadline = uint64(keyDeadline);
            emit DrawCompleted(sessionId, s.auditorCount, keyDeadline);
        }
    }

    struct DrawCursor {
        uint256 segment;
        uint256 seatInSegment;
        uint256 drawnSeats;
        uint256 total;
        uint256 slashAmount;
        uint256 seatCap;
        address provider;
        bytes32 seed;
    }

    function _drawSeats(uint256 sessionId, Session storage s, uint256 maxSeats)
        private
        returns (uint256 drawn)
    {
        SessionParams storage p = _params[s.paramsVersion];
        DrawCursor memory c = DrawCursor({
            segment: s.drawSegment,
            seatInSegment: s.drawSeatInSegment,
            drawnSeats: s.drawnSeats,
            total: s.totalSeats,
            slashAmount: p.slashAmount,
            seatCap: p.seatCap,
            provider: s.provider,
            seed: s.seed
        });
        while (drawn < maxSeats && c.drawnSeats < c.total) {
            uint256 tier = (_segWords[sessionId][c.segment >> 3] >> ((c.segment & 7) * 32 + 14)) & 3;
            address auditor = _pick(sessionId, c, uint8(tier));
            if (auditor == address(0)) {
                _terminate(sessionId, s, Status.Cancelled);
                break;
            }
            _assignSeat(sessionId, s, auditor, c.segment);
            ++drawn;
            ++c.drawnSeats;
            if (++c.seatInSegment == p.seatsPerTier[tier]) {
                ++c.segment;
                c.seatInSegment = 0;
            }
        }
        s.drawSegment = uint16(c.segment);
        s.drawSeatInSegment = uint8(c.seatInSegment);
        s.drawnSeats = uint32(c.drawnSeats);
    }

    function _pick(uint256 sessionId, DrawCursor memory c, uint8 tier) private returns (address) {
        for (uint256 attempt = 0; attempt < MAX_DRAW_ATTEMPTS; ++attempt) {
            uint256 word = uint256(keccak256(abi.encode(c.seed, c.drawnSeats, attempt)));
            address a = staking.sample(tier, word);
            if (a == address(0)) return address(0);
            if (a == c.provider) continue;
            uint256 v = _votes[sessionId][a];
            if ((v >> 216) & 0xffff == c.segment + 1) continue;
            if ((v >> 192) & 0xff >= c.seatCap) continue;
            if (!staking.lock(a, tier, c.slashAmount)) continue;
            return a;
        }
        return address(0);
    }

    function _assignSeat(uint256 sessionId, Session storage s, address auditor, uint256 segment) private {
        uint256 v = _votes[sessionId][auditor];
        uint256 count = (v >> 192) & 0xff;
        if (count == 0) {
            _auditors[sessionId].push(auditor);
            s.auditorCount += 1;
        }
        uint256 slot = count >> 4;
        uint256 shift = (count & 15) * 16;
        _seatWords[sessionId][auditor][slot] |= segment << shift;
        v = (v & ~((uint256(0xffff) << 216) | (uint256(0xff) << 192))) | ((segment + 1) << 216)
            | ((count + 1) << 192);
        _votes[sessionId][auditor] = v;
        emit SeatAssigned(sessionId, segment, auditor, count);
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
        s.keyManifestHash = keccak256(bytes(manifestCid));
        s.commitDeadline = uint64(commitDeadline);
        s.revealDeadline = uint64(revealDeadline);
        _setStatus(sessionId, s, Status.KeysPublished);
        emit KeysPublished(sessionId, manifestCid, commitDeadline, revealDeadline);
    }

    // ----------------------------------------------------------------- voting

    /// @notice Commit (or re-commit during the commit phase) the caller's verdict bitmap.
    /// @param commitment keccak256(abi.encode(chainid, this, sessionId, auditor, verdicts, salt)).
    function commit(uint256 sessionId, bytes32 commitment) external {
        Session storage s = _commitPhase(sessionId);
        _recordCommit(sessionId, s, msg.sender, commitment, _votes[sessionId][msg.sender]);
        _maybeCloseCommit(sessionId, s);
    }

    /// @notice Submit many auditors' EIP-712 signed commitments in one transaction (any relayer).
    /// @dev Signatures are EIP-2098 compact (r, vs). The whole batch reverts on one bad signature.
    function commitBatch(uint256 sessionId, SignedCommit[] calldata items) external {
        if (items.length == 0) revert EmptyBatch();
        Session storage s = _commitPhase(sessionId);
        bytes32 domain = domainSeparator();
        for (uint256 i = 0; i < items.length; ++i) {
            SignedCommit calldata it = items[i];
            address auditor = it.auditor;
            bytes32 commitment = it.commitment;
            uint256 v = _votes[sessionId][auditor];
            bytes32 digest = MessageHashUtils.toTypedDataHash(
                domain,
                keccak256(abi.encode(COMMIT_TYPEHASH, sessionId, auditor, commitment, (v >> 208) & 0xff))
            );
            if (ECDSA.recover(digest, it.r, it.vs) != auditor) revert BadSignature(auditor);
            _recordCommit(sessionId, s, auditor, commitment, v);
        }
        _maybeCloseCommit(sessionId, s);
    }

    function _commitPhase(uint256 sessionId) private returns (Session storage s) {
        s = _session(sessionId);
        _sync(sessionId, s);
        if (s.status != Status.KeysPublished && s.status != Status.Commit) {
            revert WrongStatus(sessionId, s.status);
        }
    }

    function _recordCommit(
        uint256 sessionId,
        Session storage s,
        address auditor,
        bytes32 commitment,
        uint256 v
    ) private {
        if ((v >> 192) & 0xff == 0) revert NotSeated(sessionId, auditor);
        if (v & (FLAG_COMMITTED << 200) == 0) {
            s.committedCount += 1;
            if (s.status == Status.KeysPublished) _setStatus(sessionId, s, Status.Commit);
        }
        uint256 nonce = (v >> 208) & 0xff;
        if (nonce == 0xff) revert TooManyCommits(sessionId, auditor);
        v = (v & ~(MASK192 | (uint256(0xff) << 208))) | (uint256(commitment) >> 64) | (FLAG_COMMITTED << 200)
            | ((nonce + 1) << 208);
        _votes[sessionId][auditor] = v;
        emit Committed(sessionId, auditor, commitment, nonce);
    }

    /// @dev Every drawn auditor has committed: no reason to wait for the deadline.
    function _maybeCloseCommit(uint256 sessionId, Session storage s) private {
        if (s.committedCount == s.auditorCount) {
            s.revealDeadline = uint64(block.number + _params[s.paramsVersion].revealBlocks);
            _setStatus(sessionId, s, Status.Reveal);
        }
    }

    /// @notice Reveal many auditors' openings in one transaction; tallies are added once per slot.
    function revealBatch(uint256 sessionId, RevealItem[] calldata items) external {
        if (items.length == 0) revert EmptyBatch();
        _revealAll(sessionId, items);
    }

    function _revealAll(uint256 sessionId, RevealItem[] calldata items) private {
        Session storage s = _session(sessionId);
        _sync(sessionId, s);
        if (s.status != Status.Reveal || block.number > s.revealDeadline) {
            revert WrongStatus(sessionId, s.status);
        }
        uint256[] memory delta = new uint256[]((uint256(s.segmentCount) + 7) >> 3);
        for (uint256 i = 0; i < items.length; ++i) {
            _revealOne(sessionId, items[i], delta);
        }
        for (uint256 w = 0; w < delta.length; ++w) {
            if (delta[w] != 0) _segWords[sessionId][w] += delta[w];
        }
        s.revealedCount += uint16(items.length);
    }

    function _revealOne(uint256 sessionId, RevealItem calldata it, uint256[] memory delta) private {
        address auditor = it.auditor;
        uint256 verdicts = it.verdicts;
        uint256 v = _votes[sessionId][auditor];
        if (v & (FLAG_COMMITTED << 200) == 0) revert NotCommitted(sessionId, auditor);
        if (v & (FLAG_REVEALED << 200) != 0) revert AlreadyRevealed(sessionId, auditor);
        bytes32 c = computeCommitment(sessionId, auditor, verdicts, it.salt);
        if (uint256(c) >> 64 != v & MASK192) revert CommitmentMismatch(sessionId, auditor);
        uint256 count = (v >> 192) & 0xff;
        if (verdicts >> count != 0) revert InvalidVerdicts(verdicts, count);
        mapping(uint256 => uint256) storage seatWords = _seatWords[sessionId][auditor];
        uint256 seats;
        // Bounded arithmetic only: seg < 1024 indexes delta (checked by Solidity), lanes never carry
        // (at most 31 votes per 6-bit counter).
        unchecked {
            for (uint256 j = 0; j < count; ++j) {
                if (j & 15 == 0) seats = seatWords[j >> 4];
                uint256 seg = (seats >> ((j & 15) * 16)) & 0xffff;
                uint256 inc = (verdicts >> j) & 1 == 1 ? 1 : (1 << 6);
                delta[seg >> 3] += inc << ((seg & 7) * 32);
            }
        }
        // Up to 8 seats (the whole first seat word) are copied next to the bitmap so that
        // settlement reads one slot instead of two.
        if (count <= 8) verdicts |= seats << 64;
        _votes[sessionId][auditor] = (v & ~MASK192) | verdicts | (FLAG_REVEALED << 200);
        emit Revealed(sessionId, auditor, it.verdicts);
    }

    // --------------------------------------------------------------- finalize

    /// @notice Decide segment and trace verdicts once the reveal phase is over (or everyone revealed).
    /// @dev q_t = ceil(tau * k_t); PASS if pass >= q_t, else FAIL if fail >= q_t, else INCONCLUSIVE.
    /// Trace PASS iff W * 10000 >= beta * sum(w), W = sum of w over PASS segments. O(segments).
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
        bytes memory outcomes = new bytes(n);
        uint256 passW = 0;
        uint256 totalW = 0;
        for (uint256 w = 0; w < (n + 7) >> 3; ++w) {
            uint256 word = _segWords[sessionId][w];
            for (uint256 lane = 0; lane < 8 && (w << 3) + lane < n; ++lane) {
                uint256 shift = lane * 32;
                uint256 seg = word >> shift;
                uint256 weight = (seg >> 16) & 0xffff;
                uint256 qt = q[(seg >> 14) & 3];
                uint256 outcome;
                if ((seg >> 6) & 63 >= qt) outcome = OUTCOME_PASS;
                else if (seg & 63 >= qt) outcome = OUTCOME_FAIL;
                else outcome = OUTCOME_INCONCLUSIVE;
                totalW += weight;
                if (outcome == OUTCOME_PASS) passW += weight;
                word |= outcome << (shift + 12);
                outcomes[(w << 3) + lane] = bytes1(uint8(outcome));
            }
            _segWords[sessionId][w] = word;
        }
        bool passed = passW * BPS >= uint256(p.betaBps) * totalW;
        uint256 score = passW * BPS / totalW;
        s.passWeight = uint32(passW);
        s.totalWeight = uint32(totalW);
        s.scoreBps = uint16(score);
        s.passed = passed;
        _setStatus(sessionId, s, Status.Finalized);
        emit SessionFinalized(sessionId, passed, score, passW, totalW, outcomes);
        if (s.settledCount == s.auditorCount) _sweep(sessionId, s);
    }

    // ------------------------------------------------------------- settlement

    /// @notice Settle many auditors of a finished session in one transaction.
    function settleBatch(uint256 sessionId, address[] calldata auditorList) external {
        if (auditorList.length == 0) revert EmptyBatch();
        _settleAll(sessionId, auditorList);
    }

    struct SettleContext {
        bool finalized;
        bytes32 seed;
        uint256 gamma;
        uint256 pMin;
        uint256 pSpread;
        uint256 reward;
        uint256 slashAmount;
    }

    function _settleAll(uint256 sessionId, address[] calldata list) private {
        Session storage s = _session(sessionId);
        Status st = s.status;
        if (st != Status.Finalized && st != Status.Cancelled && st != Status.Expired) {
            revert WrongStatus(sessionId, st);
        }
        SessionParams storage p = _params[s.paramsVersion];
        SettleContext memory ctx = SettleContext({
            finalized: st == Status.Finalized,
            seed: s.seed,
            gamma: p.gamma,
            pMin: p.pMin,
            pSpread: p.pMax - p.pMin,
            reward: p.reward,
            slashAmount: p.slashAmount
        });
        uint256[] memory words;
        if (ctx.finalized) {
            words = new uint256[]((uint256(s.segmentCount) + 7) >> 3);
            for (uint256 w = 0; w < words.length; ++w) {
                words[w] = _segWords[sessionId][w];
            }
        }
        uint256[] memory reps = staking.reputationsOf(list);
        IStaking.SettlementDelta[] memory deltas = new IStaking.SettlementDelta[](list.length);
        uint256 totalReward = 0;
        for (uint256 i = 0; i < list.length; ++i) {
            deltas[i] = _settleOne(sessionId, list[i], reps[i], words, ctx);
            totalReward += deltas[i].reward;
        }
        s.settledCount += uint16(list.length);
        s.pool -= uint128(totalReward);
        if (totalReward != 0) token.safeTransfer(address(staking), totalReward);
        staking.applySettlements(deltas);
        if (ctx.finalized && s.settledCount == s.auditorCount) _sweep(sessionId, s);
    }

    struct SeatScore {
        uint256 correct;
        uint256 incorrect;
        uint256 slashes;
        uint256 reputation;
    }

    function _settleOne(
        uint256 sessionId,
        address auditor,
        uint256 r,
        uint256[] memory words,
        SettleContext memory ctx
    ) private returns (IStaking.SettlementDelta memory d) {
        uint256 v = _votes[sessionId][auditor];
        uint256 count = (v >> 192) & 0xff;
        if (count == 0) revert NotSeated(sessionId, auditor);
        if (v & (FLAG_SETTLED << 200) != 0) revert AlreadySettled(sessionId, auditor);
        _votes[sessionId][auditor] = v | (FLAG_SETTLED << 200);
        SeatScore memory sc = SeatScore({correct: 0, incorrect: 0, slashes: 0, reputation: r});
        if (ctx.finalized) _scoreSeats(sessionId, auditor, v, words, ctx, sc);
        d.auditor = auditor;
        d.unlock = uint96(count * ctx.slashAmount);
        d.reward = uint96(sc.correct * ctx.reward);
        d.slash = uint96(sc.slashes * ctx.slashAmount);
        d.reputation = uint64(sc.reputation);
        emit AuditorSettled(sessionId, auditor, sc.correct, sc.incorrect, sc.slashes, d.reward, sc.reputation);
    }

    /// @dev Seat by seat, in seat order: reputation moves once per counted vote; the slash
    /// probability uses the reputation from before this session.
    function _scoreSeats(
        uint256 sessionId,
        address auditor,
        uint256 v,
        uint256[] memory words,
        SettleContext memory ctx,
        SeatScore memory sc
    ) private view {
        uint256 r = sc.reputation;
        uint256 pSlash = ctx.pMin + ctx.pSpread * (WAD - r) / WAD;
        uint256 seats;
        // r, gamma <= 1e18 keep every product below 1e36 and counters below 256: no overflow.
        unchecked {
            uint256 keep = WAD - ctx.gamma;
            for (uint256 j = 0; j < (v >> 192) & 0xff; ++j) {
                if (j & 15 == 0) {
                    seats = (v >> 192) & 0xff <= 8 && v & (FLAG_REVEALED << 200) != 0
                        ? (v >> 64) & MASK128
                        : _seatWords[sessionId][auditor][j >> 4];
                }
                if (v & (FLAG_REVEALED << 200) == 0) {
                    ++sc.incorrect;
                    ++sc.slashes;
                    r = keep * r / WAD;
                    continue;
                }
                uint256 seg = (seats >> ((j & 15) * 16)) & 0xffff;
                uint256 outcome = (words[seg >> 3] >> ((seg & 7) * 32 + 12)) & 3;
                if (outcome == OUTCOME_INCONCLUSIVE) continue;
                if (((v >> j) & 1 == 1) == (outcome == OUTCOME_FAIL)) {
                    ++sc.correct;
                    r = (keep * r + ctx.gamma * WAD) / WAD;
                } else {
                    ++sc.incorrect;
                    r = keep * r / WAD;
                    if (_slashDraw(ctx.seed, auditor, seg) < pSlash) ++sc.slashes;
                }
            }
        }
        sc.reputation = r;
    }

    /// @dev The per-(auditor, segment) slash draw in [0, 1e18) from the session seed.
    function _slashDraw(bytes32 seed, address auditor, uint256 seg) private pure returns (uint256) {
        return uint256(keccak256(abi.encode(seed, auditor, seg))) % WAD;
    }

    function _sweep(uint256 sessionId, Session storage s) private {
        uint256 rest = s.pool;
        if (rest == 0) return;
        s.pool = 0;
        emit PoolRemainderToTreasury(sessionId, rest);
        token.safeTransfer(treasury, rest);
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

    function _sync(uint256 sessionId, Session storage s) private {
        Status st = s.status;
        if (st == Status.Created) {
            if (s.randomnessSource.status(s.randomnessId) == IRandomness.RequestStatus.Expired) {
                _terminate(sessionId, s, Status.Expired);
            }
        } else if (st == Status.Drawing) {
            bool complete = s.drawnSeats == s.totalSeats;
            if ((!complete && block.number > s.drawDeadline) || (complete && block.number > s.keyDeadline)) {
                _terminate(sessionId, s, Status.Expired);
            }
        } else if (st == Status.KeysPublished || st == Status.Commit) {
            if (block.number > s.commitDeadline) _setStatus(sessionId, s, Status.Reveal);
        }
    }

    function _terminate(uint256 sessionId, Session storage s, Status to) private {
        uint256 refund = s.pool;
        s.pool = 0;
        _setStatus(sessionId, s, to);
        if (refund != 0) {
            emit PoolRefunded(sessionId, s.provider, refund);
            token.safeTransfer(s.provider, refund);
        }
    }

    function _setStatus(uint256 sessionId, Session storage s, Status to) private {
        s.status = to;
        emit StatusChanged(sessionId, to);
    }

    function _session(uint256 sessionId) private view returns (Session storage s) {
        s = _sessions[sessionId];
        if (s.status == Status.None) revert UnknownSession(sessionId);
    }

    // ------------------------------------------------------------------ views

    /// @notice The commitment an auditor must submit for `verdicts` (bit j = 1: seat j votes FAIL).
    function computeCommitment(uint256 sessionId, address auditor, uint256 verdicts, bytes32 salt)
        public
        view
        returns (bytes32)
    {
        return keccak256(abi.encode(block.chainid, address(this), sessionId, auditor, verdicts, salt));
    }

    /// @notice EIP-712 digest an auditor signs to have `commitment` relayed.
    function commitDigest(uint256 sessionId, address auditor, bytes32 commitment, uint256 nonce)
        public
        view
        returns (bytes32)
    {
        bytes32 structHash = keccak256(abi.encode(COMMIT_TYPEHASH, sessionId, auditor, commitment, nonce));
        return MessageHashUtils.toTypedDataHash(domainSeparator(), structHash);
    }

    /// @notice Whether segment `index` with (cid, tier, weight) is in the session's Merkle root.
    function verifySegment(
        uint256 sessionId,
        uint256 index,
        string calldata cid,
        uint8 tier,
        uint16 weight,
        bytes32[] calldata proof
    ) external view returns (bool) {
        bytes32 leaf = keccak256(bytes.concat(keccak256(abi.encode(index, cid, tier, weight))));
        return MerkleProof.verifyCalldata(proof, _sessions[sessionId].merkleRoot, leaf);
    }

    /// @notice A session's record; the key manifest CID itself is in the KeysPublished event
    /// (keyManifestHash = keccak256 of its bytes).
    function sessionOf(uint256 sessionId) external view returns (Session memory) {
        return _sessions[sessionId];
    }

    /// @notice A session's status.
    function statusOf(uint256 sessionId) external view returns (Status) {
        return _sessions[sessionId].status;
    }

    /// @notice Number of sessions opened.
    function sessionCount() external view returns (uint256) {
        return _sessionCount;
    }

    /// @notice Parameters of `version`.
    function paramsAt(uint256 version) external view returns (SessionParams memory) {
        return _params[version];
    }

    /// @notice Current parameter version (applies to new sessions).
    function paramsVersion() external view returns (uint256) {
        return _params.length - 1;
    }

    /// @notice Packed word `wordIndex` of a session's segments: segment i is lane i % 8 of word i / 8,
    /// 32 bits per lane: fail votes (bits 0-5), pass votes (6-11), outcome (12-13), tier (14-15), weight (16-31).
    function segmentWord(uint256 sessionId, uint256 wordIndex) external view returns (uint256) {
        return _segWords[sessionId][wordIndex];
    }

    /// @notice The auditors drawn in a session, in first-seat order.
    function auditorsOf(uint256 sessionId) external view returns (address[] memory) {
        return _auditors[sessionId];
    }

    /// @notice `auditor`'s seats in seat order (segment index, then draw order): bit j of its verdicts.
    function seatsOf(uint256 sessionId, address auditor) external view returns (uint256[] memory segments) {
        uint256 count = (_votes[sessionId][auditor] >> 192) & 0xff;
        segments = new uint256[](count);
        uint256 seats;
        for (uint256 j = 0; j < count; ++j) {
            if (j & 15 == 0) seats = _seatWords[sessionId][auditor][j >> 4];
            segments[j] = (seats >> ((j & 15) * 16)) & 0xffff;
        }
    }

    /// @notice `auditor`'s packed vote state: bits 0-191 commitment prefix (top 192 bits) until
    /// revealed; after reveal bits 0-63 hold the verdict bitmap and, for at most 8 seats, bits
    /// 64-191 a copy of the seat list; 192-199 seat count; 200-207 flags (1 committed, 2 revealed,
    /// 4 settled); 208-215 commit nonce; 216-231 last drawn segment + 1.
    function voteWord(uint256 sessionId, address auditor) external view returns (uint256) {
        return _votes[sessionId][auditor];
    }

    /// @notice The EIP-712 domain separator of signed commits (recomputed, so a fork's chain id applies).
    function domainSeparator() public view returns (bytes32) {
        return keccak256(
            abi.encode(
                DOMAIN_TYPEHASH,
                keccak256(bytes(EIP712_NAME)),
                keccak256(bytes(EIP712_VERSION)),
                block.chainid,
                address(this)
            )
        );
    }
}
