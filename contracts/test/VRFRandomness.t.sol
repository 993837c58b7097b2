// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase} from "./utils/TestBase.sol";
import {VRFRandomness} from "../src/VRFRandomness.sol";
import {IRandomness} from "../src/interfaces/IRandomness.sol";
import {IVRFCoordinatorV2Plus, VRFV2PlusClient} from "../src/interfaces/IVRFCoordinatorV2Plus.sol";
import {MockVRFCoordinator} from "./mocks/MockVRFCoordinator.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

contract VRFRandomnessTest is TestBase {
    MockVRFCoordinator internal coord;
    VRFRandomness internal vrf;
    address internal owner = address(0x0A11);
    address internal core = address(0xC04E);
    uint32 internal constant TIMEOUT = 100;

    function _config() internal pure returns (VRFRandomness.Config memory c) {
        c.keyHash = keccak256("gas lane");
        c.subscriptionId = 77;
        c.requestConfirmations = 3;
        c.callbackGasLimit = 60_000;
        c.timeoutBlocks = TIMEOUT;
        c.nativePayment = true;
    }

    function setUp() public {
        vm.roll(1000);
        coord = new MockVRFCoordinator();
        vrf = new VRFRandomness(IVRFCoordinatorV2Plus(address(coord)), owner, _config());
        vm.prank(owner);
        vrf.setRequester(core, true);
    }

    function _request() internal returns (uint256 id) {
        vm.prank(core);
        id = vrf.request();
    }

    /// @dev The coordinator's id of local request `id`.
    function _cid(uint256 id) internal view returns (uint256) {
        return vrf.coordinatorRequestOf(id);
    }

    /// @dev Upstream request ids are 256-bit hashes; the consumer gets compact sequential ids (a session
    /// stores 56 bits), mapped both ways (before: the hash went through, and openSession reverted).
    function test_consumerIdsAreCompact() public {
        uint256 a = _request();
        uint256 b = _request();
        assertEq(a, 1, "first local id");
        assertEq(b, 2, "second local id");
        assertTrue(_cid(a) > type(uint64).max && _cid(b) > type(uint64).max, "upstream ids are hashes");
        vm.roll(block.number + 3);
        assertTrue(coord.fulfill(_cid(b), 9), "delivered under the upstream id");
        assertEq(_status(b), uint256(IRandomness.RequestStatus.Fulfilled), "b fulfilled");
        assertEq(_status(a), uint256(IRandomness.RequestStatus.Pending), "a untouched");
    }

    function _status(uint256 id) internal view returns (uint256) {
        return uint256(vrf.status(id));
    }

    function test_configAndRequesters() public {
        VRFRandomness.Config memory c = _config();
        vm.expectRevert(VRFRandomness.ZeroAddress.selector);
        new VRFRandomness(IVRFCoordinatorV2Plus(address(0)), owner, c);
        c.timeoutBlocks = 0;
        vm.expectRevert(VRFRandomness.InvalidConfig.selector);
        new VRFRandomness(coord, owner, c);
        c = _config();
        c.timeoutBlocks = 3;
        vm.expectRevert(VRFRandomness.InvalidConfig.selector);
        new VRFRandomness(coord, owner, c);
        c = _config();
        c.callbackGasLimit = 49_999;
        vm.expectRevert(VRFRandomness.InvalidConfig.selector);
        new VRFRandomness(coord, owner, c);
        c = _config();
        c.keyHash = bytes32(0);
        vm.expectRevert(VRFRandomness.InvalidConfig.selector);
        new VRFRandomness(coord, owner, c);
        vm.expectRevert(abi.encodeWithSelector(VRFRandomness.NotRequester.selector, address(this)));
        vrf.request();
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, address(this)));
        vrf.setRequester(address(this), true);
        vm.prank(owner);
        vm.expectRevert(VRFRandomness.ZeroAddress.selector);
        vrf.setRequester(address(0), true);
        vm.prank(owner);
        vrf.setRequester(core, false);
        vm.prank(core);
        vm.expectRevert(abi.encodeWithSelector(VRFRandomness.NotRequester.selector, core));
        vrf.request();
        c = _config();
        c.timeoutBlocks = 500;
        vm.prank(owner);
        vrf.setConfig(c);
        assertEq(vrf.config().timeoutBlocks, 500, "settings changed");
    }

    function test_requestIsAVersion25Request() public {
        uint256 id = _request();
        MockVRFCoordinator.Recorded memory r = coord.recorded(_cid(id));
        assertEq(r.consumer, address(vrf), "consumer");
        assertEq(r.keyHash, keccak256("gas lane"), "key hash");
        assertEq(r.subId, 77, "subscription");
        assertEq(r.requestConfirmations, 3, "confirmations");
        assertEq(r.callbackGasLimit, 60_000, "callback gas");
        assertEq(r.numWords, 1, "one word");
        assertTrue(r.nativePayment, "extraArgs decoded: native payment");
        assertEq(
            bytes32(VRFV2PlusClient.EXTRA_ARGS_V1_TAG),
            bytes32(bytes4(0x92fd1338)),
            "upstream extraArgs v1 tag"
        );
        assertEq(vrf.deadlineOf(id), block.number + TIMEOUT, "deadline");
        assertEq(_status(id), uint256(IRandomness.RequestStatus.Pending), "pending");
    }

    function test_fulfilledOnTime() public {
        uint256 id = _request();
        vm.expectRevert(abi.encodeWithSelector(VRFRandomness.NotFulfilled.selector, id));
        vrf.fulfil(id);
        vm.expectRevert(abi.encodeWithSelector(VRFRandomness.NotFulfilled.selector, id));
        vrf.valueOf(id);
        vm.roll(block.number + TIMEOUT);
        assertTrue(coord.fulfill(_cid(id), 42), "delivery accepted in the last block");
        assertEq(_status(id), uint256(IRandomness.RequestStatus.Fulfilled), "fulfilled");
        bytes32 v = vrf.valueOf(id);
        uint256 word = uint256(keccak256(abi.encode(uint256(42), uint256(0))));
        assertEq(
            v,
            bytes32((1 << 255) | (block.number << 191) | (word & ((1 << 191) - 1))),
            "the word, delivery block"
        );
        assertEq(vrf.obtainableAt(id), block.number + 1, "obtainable from the block after the delivery");
        assertEq(vrf.fulfil(id), v, "fulfil returns it");
        vm.roll(block.number + 10 * TIMEOUT);
        assertEq(_status(id), uint256(IRandomness.RequestStatus.Fulfilled), "fulfilled is final");
        assertEq(vrf.deadlineOf(id), 0, "no deadline once fixed");
        assertTrue(!coord.fulfill(_cid(id), 43), "a second delivery is refused");
        assertEq(vrf.valueOf(id), v, "the value never changes");
        uint256 other = _request();
        vm.roll(block.number + 3);
        coord.fulfill(_cid(other), 42);
        assertEq(
            uint256(vrf.valueOf(other)) & ((1 << 191) - 1),
            uint256(v) & ((1 << 191) - 1),
            "same word, same random bits (the word is the randomness)"
        );
        assertEq(vrf.obtainableAt(other), block.number + 1, "each value keeps its own delivery block");
    }

    function test_neverFulfilledFails() public {
        uint256 id = _request();
        vm.roll(block.number + TIMEOUT);
        assertEq(_status(id), uint256(IRandomness.RequestStatus.Pending), "pending through the deadline");
        vm.roll(block.number + 1);
        assertEq(_status(id), uint256(IRandomness.RequestStatus.Failed), "failed after it");
        vm.expectRevert(abi.encodeWithSelector(VRFRandomness.RequestFailed.selector, id, block.number - 1));
        vrf.fulfil(id);
    }

    function test_lateFulfilmentIsIgnored() public {
        uint256 id = _request();
        uint256 deadline = vrf.deadlineOf(id);
        vm.roll(deadline + 1);
        vm.expectEmit(true, false, false, true, address(vrf));
        emit VRFRandomness.LateFulfilmentIgnored(id, deadline);
        assertTrue(coord.fulfill(_cid(id), 7), "the callback itself succeeds");
        assertEq(_status(id), uint256(IRandomness.RequestStatus.Failed), "still failed");
        vm.expectRevert(abi.encodeWithSelector(VRFRandomness.NotFulfilled.selector, id));
        vrf.valueOf(id);
    }

    function test_wrongCallerAndWrongRequestId() public {
        uint256 id = _request();
        uint256[] memory words = new uint256[](1);
        words[0] = 5;
        vm.expectRevert(
            abi.encodeWithSelector(
                VRFRandomness.OnlyCoordinatorCanFulfill.selector, address(this), address(coord)
            )
        );
        vrf.rawFulfillRandomWords(id, words);
        assertTrue(!coord.deliver(address(vrf), _cid(id) + 1, words, 60_000), "unknown request id refused");
        assertEq(_status(id), uint256(IRandomness.RequestStatus.Pending), "the real request is untouched");
        assertTrue(!coord.deliver(address(vrf), _cid(id), new uint256[](0), 60_000), "no words refused");
        vm.expectRevert(abi.encodeWithSelector(VRFRandomness.UnknownRequest.selector, 12345));
        vrf.fulfil(12345);
        assertEq(_status(12345), uint256(IRandomness.RequestStatus.Unknown), "unknown");
    }

    function test_duplicateRequestIdRefused() public {
        uint256 id = _request();
        uint256 upstream = _cid(id);
        coord.forceNextId(upstream);
        vm.prank(core);
        vm.expectRevert(abi.encodeWithSelector(VRFRandomness.DuplicateRequest.selector, upstream));
        vrf.request();
    }

    /// @dev The callback fits the configured gas limit (the coordinator forwards no more).
    function test_callbackFitsItsGasLimit() public {
        VRFRandomness.Config memory c = _config();
        c.callbackGasLimit = 50_000;
        vm.prank(owner);
        vrf.setConfig(c);
        uint256 id = _request();
        vm.roll(block.number + 3);
        assertTrue(coord.fulfill(_cid(id), 1), "fulfilled within 50k gas");
        assertEq(_status(id), uint256(IRandomness.RequestStatus.Fulfilled), "fulfilled");
    }

    /// @dev Whatever the delivery block, a request ends Fulfilled iff delivered by its deadline,
    /// Failed otherwise, and never changes after that.
    function testFuzz_statusFollowsDeliveryBlock(uint256 delay, bool deliver) public {
        delay = bound(delay, 3, 3 * TIMEOUT);
        uint256 id = _request();
        uint256 deadline = vrf.deadlineOf(id);
        vm.roll(block.number + delay);
        if (deliver) coord.fulfill(_cid(id), delay);
        bool onTime = deliver && block.number <= deadline;
        vm.roll(deadline + 1 + delay);
        uint256 expected =
            uint256(onTime ? IRandomness.RequestStatus.Fulfilled : IRandomness.RequestStatus.Failed);
        assertEq(_status(id), expected, "final status");
    }
}
