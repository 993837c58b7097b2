// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Ownable, Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {IRandomness} from "./interfaces/IRandomness.sol";
import {IVRFCoordinatorV2Plus, VRFV2PlusClient} from "./interfaces/IVRFCoordinatorV2Plus.sol";

/// @title VRFRandomness
/// @notice Production randomness behind IRandomness: a Chainlink VRF v2.5 consumer on a subscription.
/// @dev `request` asks the coordinator for one word and gives the request a deadline of
/// `timeoutBlocks`. The coordinator delivers through `rawFulfillRandomWords` (the upstream consumer
/// entry point, checked against the coordinator's address); a delivery by the deadline fixes the value
/// at once (`Fulfilled`), nothing to call. A request not delivered by its deadline is `Failed` (the
/// source never delivered: the consumer refunds); a later delivery is ignored with an event, so a
/// request never leaves `Failed`. There is no `Ready` or `Expired`: nobody has to fix a VRF value.
/// Only allowed requesters (the session core) may spend the subscription. Each request is one slot:
/// its deadline while pending, then the value: top bit set, the delivery block in bits 191-246
/// (`obtainableAt` is that block + 1) and the first word's low 191 bits. Bits 247-254 keep, in both
/// states, the `requestConfirmations` in force at the request (`delayOf`); the value read by consumers
/// (`fulfil`, `valueOf`, the event) has them cleared, so it is exactly as before they were kept.
contract VRFRandomness is IRandomness, Ownable2Step {
    /// @dev `VRFCoordinatorV2_5`'s `Reentrant()` selector.
    bytes4 private constant REENTRANT = bytes4(keccak256("Reentrant()"));

    uint256 private constant FIXED = 1 << 255;
    uint256 private constant DELIVERY_SHIFT = 191;
    uint256 private constant RANDOM_MASK = (1 << DELIVERY_SHIFT) - 1;
    /// @dev A pending request's word: its deadline (bits 0-63) and the first block a delivery counts in
    /// (bits 64-127: the request's block plus its confirmations).
    uint256 private constant EARLIEST_SHIFT = 64;
    /// @dev Either word: the configured confirmations at the request (bits 247-254, <= 200; outside
    /// review 14: an ending judged with today's `setConfig` moved the refund/forfeit line under a value
    /// already public).
    uint256 private constant DELAY_SHIFT = 247;
    uint256 private constant DELAY_BITS = uint256(type(uint8).max) << DELAY_SHIFT;
    /// @notice Bounds on the settings (the coordinator enforces its own as well).
    uint256 public constant MAX_TIMEOUT_BLOCKS = 1e6;
    uint256 public constant MIN_CALLBACK_GAS = 50_000;
    /// @notice The most confirmations VRF v2.5 accepts (the coordinator's MAX_REQUEST_CONFIRMATIONS).
    uint256 public constant MAX_REQUEST_CONFIRMATIONS = 200;

    /// @notice Request settings.
    struct Config {
        bytes32 keyHash;
        uint256 subscriptionId;
        uint16 requestConfirmations;
        uint32 callbackGasLimit;
        uint32 timeoutBlocks;
        bool nativePayment;
    }

    /// @notice The VRF v2.5 coordinator (deploy a new adapter to migrate).
    IVRFCoordinatorV2Plus public immutable coordinator;
    Config private _config;
    mapping(uint256 => uint256) private _requests;
    /// @dev The coordinator's request id (a 256-bit hash upstream) of each local id, and back.
    mapping(uint256 => uint256) private _coordinatorOf;
    mapping(uint256 => uint256) private _localOf;
    /// @notice Number of requests made so far (local ids start at 1).
    uint256 public requestCount;
    /// @notice Who may open requests.
    mapping(address => bool) public isRequester;

    error ZeroAddress();
    error InvalidConfig();
    error NotRequester(address caller);
    /// @notice Same error as upstream's VRFConsumerBaseV2Plus.
    error OnlyCoordinatorCanFulfill(address have, address want);
    error UnknownRequest(uint256 requestId);
    error DuplicateRequest(uint256 requestId);
    error AlreadyFulfilled(uint256 requestId);
    error NoRandomWords(uint256 requestId);
    error NotFulfilled(uint256 requestId);
    error RequestFailed(uint256 requestId, uint256 deadline);
    /// @notice `requestAfter` asked for more blocks than VRF v2.5 can wait (MAX_REQUEST_CONFIRMATIONS).
    error TooManyConfirmations(uint256 minBlocks);

    event ConfigChanged(Config config);
    event RequesterSet(address indexed requester, bool allowed);
    /// @notice A request was opened; it fails unless delivered by block `deadline`.
    event RandomnessRequested(uint256 indexed requestId, address indexed requester, uint256 deadline);
    /// @notice Local request `requestId` is the coordinator's request `coordinatorRequestId`.
    event CoordinatorRequest(uint256 indexed requestId, uint256 indexed coordinatorRequestId);
    /// @notice The coordinator delivered in time: the value is fixed.
    event RandomnessFulfilled(uint256 indexed requestId, bytes32 value);
    /// @notice The coordinator delivered after the deadline: ignored, the request stays Failed.
    event LateFulfilmentIgnored(uint256 indexed requestId, uint256 deadline);
    /// @notice The coordinator delivered before the confirmations asked: ignored, the request stays Pending
    /// and fails at its deadline unless a delivery comes in time.
    event EarlyFulfilmentIgnored(uint256 indexed requestId, uint256 earliest);

    /// @param coordinator_ The VRF v2.5 coordinator.
    /// @param owner_ Who sets the requesters and the request settings.
    /// @param config_ Request settings (checked by `setConfig`'s rules).
    constructor(IVRFCoordinatorV2Plus coordinator_, address owner_, Config memory config_) Ownable(owner_) {
        if (address(coordinator_) == address(0)) revert ZeroAddress();
        coordinator = coordinator_;
        _setConfig(config_);
    }

    /// @notice Change the request settings (requests already open keep their deadline).
    function setConfig(Config calldata config_) external onlyOwner {
        _setConfig(config_);
    }

    /// @notice Allow or forbid `requester` to open requests on the subscription.
    function setRequester(address requester, bool allowed) external onlyOwner {
        if (requester == address(0)) revert ZeroAddress();
        isRequester[requester] = allowed;
        emit RequesterSet(requester, allowed);
    }

    function _setConfig(Config memory c) private {
        if (
            c.keyHash == bytes32(0) || c.timeoutBlocks == 0 || c.timeoutBlocks > MAX_TIMEOUT_BLOCKS
                || c.timeoutBlocks <= c.requestConfirmations || c.callbackGasLimit < MIN_CALLBACK_GAS
                || c.requestConfirmations > MAX_REQUEST_CONFIRMATIONS
        ) revert InvalidConfig();
        _config = c;
        emit ConfigChanged(c);
    }

    /// @inheritdoc IRandomness
    function request() external returns (uint256 requestId) {
        return _request(0);
    }

    /// @inheritdoc IRandomness
    /// @dev Asks the coordinator for `max(requestConfirmations, minBlocks + 1)` confirmations: the oracle
    /// delivers in block `request + minBlocks + 1` at the earliest, so a consumer's transaction in block
    /// `request + minBlocks` still finds the request Pending (as LookaheadRandomness's target block). VRF
    /// v2.5 waits at most 200 confirmations: `minBlocks` >= 200 reverts `TooManyConfirmations`. The deadline
    /// grows by the extra confirmations, so the oracle keeps the configured slack after them.
    function requestAfter(uint256 minBlocks) external returns (uint256 requestId) {
        if (minBlocks >= MAX_REQUEST_CONFIRMATIONS) revert TooManyConfirmations(minBlocks);
        return _request(minBlocks == 0 ? 0 : minBlocks + 1);
    }

    /// @dev A request of at least `confirmations` confirmations.
    function _request(uint256 confirmations) private returns (uint256 requestId) {
        if (!isRequester[msg.sender]) revert NotRequester(msg.sender);
        Config memory c = _config;
        if (confirmations < c.requestConfirmations) confirmations = c.requestConfirmations;
        uint256 coordinatorId;
        try coordinator.requestRandomWords(
            VRFV2PlusClient.RandomWordsRequest({
                keyHash: c.keyHash,
                subId: c.subscriptionId,
                requestConfirmations: uint16(confirmations),
                callbackGasLimit: c.callbackGasLimit,
                numWords: 1,
                extraArgs: VRFV2PlusClient.argsToBytes(
                    VRFV2PlusClient.ExtraArgsV1({nativePayment: c.nativePayment})
                )
            })
        ) returns (
            uint256 id
        ) {
            coordinatorId = id;
        } catch (bytes memory reason) {
            // VRF v2.5 holds a reentrancy lock while it delivers to ANY consumer: a request made from
            // inside someone's callback fails for now only (outside review 8).
            if (reason.length == 4 && bytes4(reason) == REENTRANT) revert SourceBusy();
            assembly ("memory-safe") {
                revert(add(reason, 32), mload(reason))
            }
        }
        if (coordinatorId == 0 || _localOf[coordinatorId] != 0) revert DuplicateRequest(coordinatorId);
        // Upstream ids are keccak hashes; consumers store compact ids (AuditSessions keeps 56 bits), so
        // the consumer sees a local sequential id and the coordinator's id is mapped to it.
        requestId = ++requestCount;
        _localOf[coordinatorId] = requestId;
        _coordinatorOf[requestId] = coordinatorId;
        uint256 deadline = block.number + c.timeoutBlocks + (confirmations - c.requestConfirmations);
        _requests[requestId] = deadline | ((block.number + confirmations) << EARLIEST_SHIFT)
            | (uint256(c.requestConfirmations) << DELAY_SHIFT);
        emit RandomnessRequested(requestId, msg.sender, deadline);
        emit CoordinatorRequest(requestId, coordinatorId);
    }

    /// @notice The coordinator delivers the words of its request `coordinatorRequestId` (upstream entry point).
    /// @dev Reverts for a caller other than the coordinator, an unknown or already fulfilled request,
    /// or no words. A delivery after the deadline is ignored (event) so the request stays Failed; one before
    /// the confirmations asked is ignored too (event), so the request stays Pending.
    function rawFulfillRandomWords(uint256 coordinatorRequestId, uint256[] calldata randomWords) external {
        if (msg.sender != address(coordinator)) {
            revert OnlyCoordinatorCanFulfill(msg.sender, address(coordinator));
        }
        uint256 requestId = _localOf[coordinatorRequestId];
        if (requestId == 0) revert UnknownRequest(coordinatorRequestId);
        uint256 word = _requests[requestId];
        if (word & FIXED != 0) revert AlreadyFulfilled(requestId);
        if (randomWords.length == 0) revert NoRandomWords(requestId);
        if (block.number > uint64(word)) {
            emit LateFulfilmentIgnored(requestId, uint64(word));
            return;
        }
        // The coordinator does not enforce the confirmations on chain: a value delivered before them could
        // be known while a consumer still relies on Pending (the canary commit window; outside review 4).
        uint256 earliest = uint64(word >> EARLIEST_SHIFT);
        if (block.number < earliest) {
            emit EarlyFulfilmentIgnored(requestId, earliest);
            return;
        }
        // Block numbers stay far below 2^56: the delivery block never reaches the delay bits.
        uint256 value = FIXED | (block.number << DELIVERY_SHIFT) | (randomWords[0] & RANDOM_MASK);
        _requests[requestId] = value | (word & DELAY_BITS);
        emit RandomnessFulfilled(requestId, bytes32(value));
    }

    /// @inheritdoc IRandomness
    function fulfil(uint256 requestId) external view returns (bytes32 value) {
        uint256 word = _requests[requestId];
        if (word == 0) revert UnknownRequest(requestId);
        if (word & FIXED != 0) return bytes32(word & ~DELAY_BITS);
        if (block.number > uint64(word)) revert RequestFailed(requestId, uint64(word));
        revert NotFulfilled(requestId);
    }

    /// @inheritdoc IRandomness
    function status(uint256 requestId) external view returns (RequestStatus) {
        uint256 word = _requests[requestId];
        if (word == 0) return RequestStatus.Unknown;
        if (word & FIXED != 0) return RequestStatus.Fulfilled;
        if (block.number > uint64(word)) return RequestStatus.Failed;
        return RequestStatus.Pending;
    }

    /// @inheritdoc IRandomness
    function valueOf(uint256 requestId) external view returns (bytes32) {
        uint256 word = _requests[requestId];
        if (word & FIXED == 0) revert NotFulfilled(requestId);
        return bytes32(word & ~DELAY_BITS);
    }

    /// @inheritdoc IRandomness
    /// @dev The block after the delivery that fixed the value; not known before (the oracle chooses it). A
    /// transaction sent on seeing the delivery lands in the next block at the earliest: only one ordered
    /// behind the delivery inside its own block (a bundle) could use it there, so that block does not count
    /// (outside review 8: a delivery in the snapshot's last readable block left no keeper a block to draw
    /// in, and was forfeited). As lookahead's target + 1; consumers draw from this block on.
    function obtainableAt(uint256 requestId) external view returns (uint256) {
        uint256 word = _requests[requestId];
        return word & FIXED != 0 ? uint256(uint56(word >> DELIVERY_SHIFT)) + 1 : type(uint256).max;
    }

    /// @inheritdoc IRandomness
    /// @dev The configured `requestConfirmations`: a delivery counts from request + max(confirmations,
    /// w + 1) on (`requestAfter(w)`, w > 0) and is obtainable the block after, so a window w >= confirmations
    /// is obtainable one block later than `IRandomness.minDelay`'s bound (see there). The owner may raise it
    /// later; consumers check it at each request too, and judge a request by its own `delayOf`.
    function minDelay() external view returns (uint256) {
        return _config.requestConfirmations;
    }

    /// @inheritdoc IRandomness
    /// @dev The `requestConfirmations` configured when the request was made (kept in its slot, whatever
    /// `setConfig` did since); 0 for an unknown request.
    function delayOf(uint256 requestId) external view returns (uint256) {
        return uint8(_requests[requestId] >> DELAY_SHIFT);
    }

    /// @notice The last block in which a delivery of `requestId` counts (0 once fulfilled, or if unknown).
    function deadlineOf(uint256 requestId) external view returns (uint256) {
        uint256 word = _requests[requestId];
        return word & FIXED != 0 ? 0 : uint64(word);
    }

    /// @notice The coordinator's id of local request `requestId` (0 if unknown).
    function coordinatorRequestOf(uint256 requestId) external view returns (uint256) {
        return _coordinatorOf[requestId];
    }

    /// @notice The request settings.
    function config() external view returns (Config memory) {
        return _config;
    }
}
