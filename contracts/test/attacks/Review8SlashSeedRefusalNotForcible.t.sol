// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfAppealsAttackFixture} from "./VrfAttackFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";
import {IVRFCoordinatorV2Plus, VRFV2PlusClient} from "../../src/interfaces/IVRFCoordinatorV2Plus.sol";
import {AppealModule} from "../../src/modules/AppealModule.sol";

interface IVRFConsumerRaw {
    function rawFulfillRandomWords(uint256 requestId, uint256[] calldata randomWords) external;
}

/// @notice The part of Chainlink's VRFCoordinatorV2_5 the attack uses, as upstream has it
/// (smartcontractkit/chainlink-evm, contracts/src/v0.8/vrf/dev/VRFCoordinatorV2_5.sol): `requestRandomWords`
/// is `nonReentrant` (`if (s_config.reentrancyLock) revert Reentrant()`), and `_deliverRandomness` sets
/// `s_config.reentrancyLock = true` around the consumer's callback (`_callWithExactGas(callbackGasLimit, ...)`,
/// whose failure does not revert the fulfilment). Any subscription owner's consumer gets such a callback.
/// (The project's MockVRFCoordinator now holds the same lock, `Review10MockVrfLockSpansDelivery`.)
contract ReentrancyLockedCoordinator is IVRFCoordinatorV2Plus {
    struct Req {
        address consumer;
        uint32 callbackGasLimit;
        uint16 confirmations;
        uint256 blockNumber;
    }

    bool public reentrancyLock;
    uint256 public nonce;
    mapping(uint256 => Req) public requests;

    error Reentrant();
    error TooEarly(uint256 requestId);

    function requestRandomWords(VRFV2PlusClient.RandomWordsRequest calldata req)
        external
        returns (uint256 requestId)
    {
        if (reentrancyLock) revert Reentrant();
        requestId = uint256(keccak256(abi.encode(req.keyHash, msg.sender, ++nonce)));
        requests[requestId] = Req(msg.sender, req.callbackGasLimit, req.requestConfirmations, block.number);
    }

    /// @notice The oracle's fulfilment (proof checking left out: the oracle is honest here).
    function fulfill(uint256 requestId, uint256 seed) external returns (bool success) {
        Req memory r = requests[requestId];
        if (block.number < r.blockNumber + r.confirmations) revert TooEarly(requestId);
        delete requests[requestId];
        uint256[] memory words = new uint256[](1);
        words[0] = uint256(keccak256(abi.encode(seed, 0)));
        reentrancyLock = true;
        (success,) = r.consumer.call{gas: r.callbackGasLimit}(
            abi.encodeCall(IVRFConsumerRaw.rawFulfillRandomWords, (requestId, words))
        );
        reentrancyLock = false;
    }
}

/// @notice The attacker: an ordinary VRF consumer on its own subscription whose callback pokes the session.
contract PokeInCallback is IVRFConsumerRaw {
    ReentrancyLockedCoordinator internal immutable coord;
    AppealModule internal immutable appeals;
    uint256 public target;

    constructor(ReentrancyLockedCoordinator coord_, AppealModule appeals_) {
        coord = coord_;
        appeals = appeals_;
    }

    function arm(uint256 sessionId) external returns (uint256) {
        target = sessionId;
        return coord.requestRandomWords(
            VRFV2PlusClient.RandomWordsRequest({
                keyHash: keccak256("attacker lane"),
                subId: 666,
                requestConfirmations: 3,
                callbackGasLimit: 2_000_000, // mainnet maxGasLimit is 2.5M
                numWords: 1,
                extraArgs: VRFV2PlusClient.argsToBytes(VRFV2PlusClient.ExtraArgsV1({nativePayment: false}))
            })
        );
    }

    function rawFulfillRandomWords(uint256, uint256[] calldata) external {
        appeals.advance(target); // -> core.onOutcomeFinal -> VRFRandomness.request -> Reentrant()
    }
}

/// @title Review8SlashSeedRefusalNotForcible (outside review 8 of main b23b820, slash coins; medium)
/// @notice Property (docs/protocol-v2.md, "2. Slash coins": "whether the sentinel is recorded depends on the
/// source alone"; `p_slash(r)`, between pMin and pMax by reputation, is the chance an incorrect vote is
/// slashed): no outsider can make a working source refuse the slash-seed request. It can with the real
/// VRF v2.5 coordinator: `requestRandomWords` is `nonReentrant`, and the coordinator holds its reentrancy
/// lock during EVERY consumer's fulfilment callback. Anyone can own a subscription and a consumer; a consumer
/// whose callback calls `AppealModule.advance(sid)` (or `AuditSessions.finalize`/`advance` without
/// extensions) as the session's outcome becomes final makes `_onOutcomeFinal`'s `try request{gas: 500000}()`
/// revert `Reentrant()` with plenty of gas; the core records `slashRequest = type(uint56).max` (no seed), and
/// every incorrect vote of the session is slashed with certainty instead of with probability p_slash(r).
/// The `gasleft()` floor does not help: the callback gets up to `maxGasLimit` (2.5M on mainnet).
/// @dev Attack (a griefer, a competitor auditor, a provider punishing dissenters): request one VRF word with
/// confirmations timed to land in the block the appeal windows close (or a few requests spread over the
/// next blocks, each callback checking the session is not final yet), callback = `appeals.advance(sid)`.
/// Cost: one VRF fulfilment (premium plus ~0.6M callback gas) per targeted block; one callback can advance
/// every session ripe in that block. Measured (`scripts/forge test --match-path
/// 'contracts/test/attacks/Review8SlashSeed*' -vv`, skip removed): 1 segment, 3 auditors, auditor 0 votes
/// against the outcome; the attacker's callback makes the outcome final; slashRequest = 72057594037927935
/// (no seed); settlement: 1 incorrect vote, 1 slash (certain; p_slash at r = 0.5 lies in [0.2, 0.5], so the
/// expected slash is 2x to 5x what the protocol intends). Control: the same `advance` outside a callback
/// records a real request.
/// Fix proposal: record "no seed" only for a refusal that persists, never for one caused by the calling
/// context: (a) `IRandomness.accepting(address requester) view` (VRF: `isRequester` and, at the coordinator,
/// subscription exists and consumer active via `getSubscription`); on a failed try the core records the
/// sentinel only if `!source.accepting(address(this))`, and otherwise reverts (`SlashRequestRetry`: nothing
/// recorded, an honest keeper retries outside any callback); or (b) the adapter maps the coordinator's
/// `Reentrant()` to a dedicated `SourceBusy()` error the core bubbles up instead of catching. Also give
/// MockVRFCoordinator upstream's reentrancy lock so the fuzz/invariant suites see this path.
/// Holds now (option B): VRFRandomness maps the coordinator's `Reentrant()` to `IRandomness.SourceBusy()`,
/// which `AuditSessions._onOutcomeFinal` bubbles up instead of recording "no seed"; MockVRFCoordinator has
/// the lock. Only a lasting refusal (requester revoked, subscription gone) records the sentinel.
contract Review8SlashSeedRefusalNotForcible is VrfAppealsAttackFixture {
    ReentrancyLockedCoordinator internal upstream;
    PokeInCallback internal attacker;

    event log_named_uint(string key, uint256 val);

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
        upstream = new ReentrancyLockedCoordinator();
        vrf = _newVrf(
            IVRFCoordinatorV2Plus(address(upstream)), _vrfConfig(VRF_CONFIRMATIONS, VRF_TIMEOUT), address(0)
        );
        vm.prank(owner);
        sessions.setRandomness(IRandomness(address(vrf)));
        attacker = new PokeInCallback(upstream, appeals);
    }

    /// @dev A voted session whose appeal windows close at the returned block; auditor 0 voted against.
    function _votedSession() internal returns (uint256 sid, uint256 finalAt) {
        sid = _drawnSession(FEE);
        _voteRound0(sid, 0, 1, 0); // auditor 0 votes FAIL, the other two PASS: PASS, 1 incorrect vote
        finalAt = appeals.sessionAppeals(sid).lastWindowEnd + 1;
    }

    function test_OutsiderCannotForceNoSlashSeed() public {
        (uint256 sid, uint256 finalAt) = _votedSession();
        uint256 req = attacker.arm(sid);
        if (block.number + 3 > finalAt) finalAt = block.number + 3;
        vm.roll(finalAt); // the attacker's word lands as the windows close, before any keeper's advance
        upstream.fulfill(req, 1); // its callback's advance reverts SourceBusy: the source is only busy
        emit log_named_uint(
            "slashRequest after the attacker's callback", sessions.sessionOf(sid).slashRequest
        );
        assertEq(sessions.sessionOf(sid).slashRequest, 0, "nothing recorded from inside the callback");
        assertTrue(appeals.advance(sid), "a keeper's advance, outside any callback, makes it final");
        uint256 slash = sessions.sessionOf(sid).slashRequest;
        assertTrue(
            slash != 0 && slash != type(uint56).max, "Review8: a real slash-seed request, not 'no seed'"
        );
        assertTrue(vrf.coordinatorRequestOf(slash) != 0, "at the coordinator");
    }

    /// @notice Fuzz: whenever the outsider's word lands (at or after the block the outcome can
    /// become final) and whether a keeper advanced first, a healthy source never yields "no seed".
    function testFuzz_BusySourceNeverRecordsNoSeed(uint8 offset, bool keeperFirst) public {
        (uint256 sid, uint256 finalAt) = _votedSession();
        uint256 req = attacker.arm(sid);
        uint256 at = finalAt + uint256(offset % 8);
        if (at < block.number + 3) at = block.number + 3;
        vm.roll(at);
        if (keeperFirst) {
            try appeals.advance(sid) {} catch {}
        }
        upstream.fulfill(req, 1);
        try appeals.advance(sid) {} catch {}
        uint256 slash = sessions.sessionOf(sid).slashRequest;
        assertTrue(slash != type(uint56).max, "a healthy source never records 'no seed'");
        assertTrue(slash != 0, "a keeper's advance outside any callback makes it final");
    }

    /// @dev Control (holds): the same `advance` outside a callback records a real coordinator request.
    function test_OutsideACallbackTheRequestIsReal() public {
        (uint256 sid, uint256 finalAt) = _votedSession();
        vm.roll(finalAt);
        assertTrue(appeals.advance(sid), "outcome final");
        uint256 slash = sessions.sessionOf(sid).slashRequest;
        assertTrue(slash != 0 && slash != type(uint56).max, "a real request");
        assertTrue(vrf.coordinatorRequestOf(slash) != 0, "at the coordinator");
    }
}
