// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase, Vm} from "../utils/TestBase.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";
import {VRFRandomness} from "../../src/VRFRandomness.sol";
import {IVRFCoordinatorV2Plus} from "../../src/interfaces/IVRFCoordinatorV2Plus.sol";
import {MockVRFCoordinator} from "../mocks/MockVRFCoordinator.sol";

/// @title Review16VrfDelayBitsLeaveTheValue (outside review 16 of 8c2c336, f635524 `VRFRandomness.delayOf`)
/// @notice Property (VRFRandomness NatSpec): bits 247-254 of a request's slot keep the `requestConfirmations`
/// configured at the request "in both states", and "the value read by consumers (`fulfil`, `valueOf`, the
/// event) has them cleared, so it is exactly as before they were kept": FIXED | delivery block << 191 | the
/// first word's low 191 bits (191 random bits, as before f635524; every consumer hashes it: DrawModule
/// `_seatWord`, SettlementModule `_coin`), `obtainableAt` = delivery + 1, `delayOf` = the configured
/// confirmations (not the request's own `max(confirmations, minBlocks + 1)`), whatever `setConfig` does
/// before or after the delivery; pending bookkeeping (deadline, earliest block) unaffected by the delay bits.
/// Attack tried: a value with delay bits leaking into it (bits 247-254 set, a different seed than the event),
/// a delivery block read through the delay bits (`obtainableAt` shifted by `delay << 56`), a pending word whose
/// delay bits move the deadline or the earliest block (`uint64` reads), a delayOf that follows `setConfig` or
/// the request's own confirmations. None found: held for every fuzzed configuration, window, block and word.
/// Boundary (INFO): the delivery block has 56 bits (was 64); a delivery in block 2^56 - 2 reads back exactly;
/// in 2^56 - 1 `obtainableAt` panics (`uint56(..) + 1` is checked uint56 arithmetic: every ending and draw
/// on that request would revert); from 2^56 on the block would spill into the delay bits (`delayOf` gains
/// bit 0, `obtainableAt` wraps). 2^56 blocks are 5.7e8 years at 4 blocks/s: unreachable, noted only
/// (`uint256(uint56(..)) + 1` would remove the panic).
/// Severity: none (regression test).
/// How it can fail: dropping `& ~DELAY_BITS` in `valueOf` (tried, reverted) fails the fuzz test (`valueOf: the
/// pre-f635524 layout`, first run) and `test_DeliveryInBlock2pow56Minus2ReadsBack` (`bits 247-254 clear: 456 !=
/// 256`); storing the request's own `confirmations` instead of `c.requestConfirmations` fails "delayOf:
/// configured" whenever `minBlocks + 1 > requestConfirmations`; reading `uint64(word >> DELIVERY_SHIFT)` in
/// `obtainableAt` fails "obtainableAt"; an untruncated `word >> EARLIEST_SHIFT` in `rawFulfillRandomWords`
/// ignores every delivery ("delivered"). The same run confirmed Review14's mutation claim: `DrawWindow` reading
/// `src.minDelay()` again fails its two named tests (`3 != 2`, `2 != 3`) and its fuzz test (first run).
/// Command: scripts/forge test --match-path 'contracts/test/attacks/Review16VrfDelayBits*' -vv
contract Review16VrfDelayBitsLeaveTheValue is TestBase {
    uint256 internal constant FIXED = 1 << 255;
    uint256 internal constant RANDOM_MASK = (1 << 191) - 1;
    uint256 internal constant TIMEOUT = 400;

    MockVRFCoordinator internal coord;
    VRFRandomness internal vrf;

    function _config(uint256 confirmations) internal pure returns (VRFRandomness.Config memory c) {
        c.keyHash = keccak256("lane");
        c.subscriptionId = 1;
        c.requestConfirmations = uint16(confirmations);
        c.callbackGasLimit = 60_000;
        c.timeoutBlocks = uint32(TIMEOUT);
    }

    function _setUp(uint256 confirmations) internal {
        coord = new MockVRFCoordinator();
        vrf = new VRFRandomness(IVRFCoordinatorV2Plus(address(coord)), address(this), _config(confirmations));
        vrf.setRequester(address(this), true);
    }

    /// @dev The value the RandomnessFulfilled event carried in the last recorded logs.
    function _eventValue() internal returns (bytes32 value) {
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 i = 0; i < logs.length; ++i) {
            if (
                logs[i].emitter == address(vrf)
                    && logs[i].topics[0] == VRFRandomness.RandomnessFulfilled.selector
            ) {
                value = abi.decode(logs[i].data, (bytes32));
            }
        }
    }

    /// @dev One fuzzed case.
    struct Case {
        uint256 confirmations;
        uint256 minBlocks;
        uint256 later;
        uint256 id;
        uint256 requested;
        uint256 effective;
        uint256 deadline;
        uint256 delivery;
    }

    /// @dev Request per `c`; check the pending word's readings.
    function _request(Case memory c) internal {
        _setUp(c.confirmations);
        c.requested = block.number;
        c.id = c.minBlocks == 0 ? vrf.request() : vrf.requestAfter(c.minBlocks);
        c.effective =
            c.minBlocks == 0 || c.minBlocks + 1 < c.confirmations ? c.confirmations : c.minBlocks + 1;
        c.deadline = c.requested + TIMEOUT + c.effective - c.confirmations;
        assertEq(vrf.delayOf(c.id), c.confirmations, "delayOf: configured (pending)");
        assertEq(vrf.deadlineOf(c.id), c.deadline, "pending deadline unaffected by the delay bits");
        assertTrue(vrf.status(c.id) == IRandomness.RequestStatus.Pending, "pending");
        assertEq(vrf.obtainableAt(c.id), type(uint256).max, "not obtainable while pending");
    }

    /// @notice Any configured confirmations (0..200), window, request block, latency, later config and word.
    function testFuzz_DelayBitsNeverReachTheValue(
        uint256 confirmations,
        uint256 minBlocks,
        uint256 start,
        uint256 latency,
        uint256 laterConfirmations,
        bool changeBeforeDelivery,
        uint256 seed
    ) public {
        Case memory c;
        c.confirmations = bound(confirmations, 0, 200);
        c.minBlocks = bound(minBlocks, 0, 199);
        c.later = bound(laterConfirmations, 0, 200);
        vm.roll(bound(start, 1, 1 << 48));
        _request(c);

        if (changeBeforeDelivery) vrf.setConfig(_config(c.later));
        c.delivery = c.requested + c.effective + bound(latency, 0, c.deadline - c.requested - c.effective);
        vm.roll(c.delivery);
        vm.recordLogs();
        assertTrue(coord.fulfill(vrf.coordinatorRequestOf(c.id), seed), "delivered");
        bytes32 emitted = _eventValue();
        if (!changeBeforeDelivery) vrf.setConfig(_config(c.later));

        uint256 word = uint256(keccak256(abi.encode(seed, uint256(0))));
        bytes32 expected = bytes32(FIXED | (c.delivery << 191) | (word & RANDOM_MASK));
        assertTrue(vrf.status(c.id) == IRandomness.RequestStatus.Fulfilled, "fulfilled");
        assertEq(vrf.valueOf(c.id), expected, "valueOf: the pre-f635524 layout");
        assertEq(vrf.fulfil(c.id), expected, "fulfil: the same value");
        assertEq(emitted, expected, "the event: the same value");
        assertEq(uint256(expected) >> 247, 1 << 8, "bits 247-254 clear");
        assertEq(vrf.obtainableAt(c.id), c.delivery + 1, "obtainableAt");
        assertEq(vrf.delayOf(c.id), c.confirmations, "delayOf: configured (fulfilled)");
        assertEq(vrf.minDelay(), c.later, "minDelay follows the config");
        assertEq(vrf.deadlineOf(c.id), 0, "no deadline once fulfilled");
    }

    /// @dev A 200-confirmation request delivered in block `delivery`.
    function _deliveredIn(uint256 delivery) internal returns (uint256 id) {
        vm.roll(delivery - 200);
        _setUp(200);
        id = vrf.request();
        vm.roll(delivery);
        assertTrue(coord.fulfill(vrf.coordinatorRequestOf(id), 1), "delivered");
    }

    /// @notice INFO boundary: the last block whose delivery reads back exactly is 2^56 - 2.
    function test_DeliveryInBlock2pow56Minus2ReadsBack() public {
        uint256 last = (1 << 56) - 2;
        uint256 id = _deliveredIn(last);
        assertEq(vrf.obtainableAt(id), last + 1, "obtainableAt = delivery + 1");
        assertEq(vrf.delayOf(id), 200, "delayOf intact");
        assertEq(uint256(vrf.valueOf(id)) >> 247, 1 << 8, "bits 247-254 clear");
        assertEq((uint256(vrf.valueOf(id)) >> 191) & ((1 << 56) - 1), last, "delivery block in the value");
    }

    /// @notice INFO boundary: a delivery in block 2^56 - 1 reads back too. Fails on 8c2c336 (un-skipped:
    /// `obtainableAt` panics 0x11, `uint56 + 1` overflows, as `uint64 + 1` did at 2^64 - 1 before f635524);
    /// unreachable (5.7e8 years); fixed anyway (`uint256(uint56(..)) + 1` in `obtainableAt`).
    function test_DeliveryInBlock2pow56Minus1ReadsBack() public {
        uint256 id = _deliveredIn((1 << 56) - 1);
        assertEq(vrf.obtainableAt(id), 1 << 56, "obtainableAt = delivery + 1");
    }
}
