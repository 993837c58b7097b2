// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingTestBase} from "./mocks/StakingTestBase.sol";
import {Staking} from "../src/Staking.sol";
import {StakingLedger} from "../src/StakingLedger.sol";
import {StakingHoldsOps} from "../src/StakingHoldsOps.sol";
import {IStaking} from "../src/interfaces/IStaking.sol";
import {LedgerPacking} from "../src/libraries/LedgerPacking.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";

/// @dev Cheatcodes this test needs beyond TestBase's `Vm`.
interface VmAccesses {
    function record() external;
    function accesses(address target) external returns (bytes32[] memory reads, bytes32[] memory writes);
}

/// @title StakingOpsTest (issue 12: every contract keeps 2 kB of EIP-170; docs/protocol-v2.md 5.1)
/// @notice Staking runs `stake`, `requestWithdrawal`, `onRegister`, `onDeregister` and the hold writes
/// (`unpark`) in `StakingHoldsOps` by DELEGATECALL.
/// Properties: (1) the ops contract cannot be used directly: every entry reverts `NotStaking` for any caller
/// (Staking's own address and the registry included), its own storage stays empty, and its code holds no
/// SELFDESTRUCT, DELEGATECALL or CALLCODE; (2) its code works on Staking's storage at Staking's slots:
/// after each forwarded operation Staking's views read what the operation wrote (registration, ledger
/// bounds, entry words, FLOW entries, positions, withdrawal records, parked batches and the hold, the
/// totals, the treasury that a drained slash pays), and its errors and events reach the caller unchanged
/// under Staking's address. Figures: Staking runtime 24,266 -> 19,809 B (`scripts/forge build --sizes`).
/// Run: `scripts/forge test --match-contract StakingOpsTest -vv`.
contract StakingOpsTest is StakingTestBase {
    address internal alice = address(0xA1);
    address internal bob = address(0xB0);
    address internal carol = address(0xC0);
    StakingHoldsOps internal ops;

    event Staked(
        address indexed auditor, address indexed holder, uint256 amount, uint256 shares, uint256 flow
    );
    event AuditorDeactivated(address indexed auditor);

    function setUp() public {
        _deployStaking();
        _fund(alice, 100_000e18);
        _fund(bob, 100_000e18);
        _fund(carol, 100_000e18);
        // Staking's constructor creates the trees (nonce 1), then the ops contract (nonce 2).
        ops = StakingHoldsOps(
            address(
                uint160(uint256(keccak256(abi.encodePacked(bytes2(0xd694), address(staking), bytes1(0x02)))))
            )
        );
    }

    function test_opsIsStakingsDeployedCopy() public view {
        assertGe(address(ops).code.length, 1, "deployed");
        assertEq(address(ops.sortition()), address(staking.sortition()), "same trees");
        assertEq(address(ops.token()), address(staking.token()), "same token");
    }

    /// @notice Every entry of the ops contract reverts when called directly, whoever calls.
    function test_directCallsRevert() public {
        _register(alice, 1);
        _stake(alice, alice, 1000e18);
        address[4] memory callers = [address(this), address(staking), address(registry), alice];
        for (uint256 i = 0; i < callers.length; ++i) {
            _expectDirect(callers[i], abi.encodeCall(StakingHoldsOps.unpark, (alice, 1, 1, 0)));
            _expectDirect(callers[i], abi.encodeCall(StakingHoldsOps.onRegister, (alice, 1)));
            _expectDirect(callers[i], abi.encodeCall(StakingHoldsOps.onDeregister, (alice)));
            _expectDirect(callers[i], abi.encodeCall(StakingHoldsOps.stake, (alice, 1e18)));
            _expectDirect(callers[i], abi.encodeCall(StakingHoldsOps.requestWithdrawal, (alice, 1e18)));
            _expectDirect(callers[i], abi.encodeCall(StakingHoldsOps.lockSeat, (alice, 1, 1, 1, 0)));
            _expectDirect(callers[i], abi.encodeCall(StakingHoldsOps.lockSeats, (alice, 1, 1, 1, 0)));
            _expectDirect(callers[i], abi.encodeCall(StakingHoldsOps.seatQuote, (alice)));
            _expectDirect(
                callers[i], abi.encodeCall(StakingHoldsOps.resolve, (1, _one(alice, 1, 0, 0, WAD, 0)))
            );
            _expectDirect(callers[i], abi.encodeCall(StakingHoldsOps.drain, (alice, 4)));
        }
        // Staking's other operations are not there at all.
        vm.prank(alice);
        (bool ok,) = address(ops).call(abi.encodeCall(Staking.claimWithdrawal, (0)));
        assertTrue(!ok, "no claimWithdrawal");
        (ok,) = address(ops).call(abi.encodeCall(Staking.wire, (alice, alice, alice)));
        assertTrue(!ok, "no wire");
        // Nothing was written to the ops contract's own storage.
        assertEq(ops.registry(), address(0), "registry slot empty");
        assertEq(ops.treasury(), address(0), "treasury slot empty");
        assertEq(ops.totalPooled(), 0, "no pooled");
        assertEq(ops.withdrawalReserve(), 0, "no reserve");
        assertEq(ops.pendingDeposits(), 0, "no deposits");
        assertEq(token.balanceOf(address(ops)), 0, "no tokens");
    }

    function _expectDirect(address caller, bytes memory data) internal {
        VmAccesses(address(vm)).record();
        vm.prank(caller);
        (bool ok, bytes memory ret) = address(ops).call(data);
        assertTrue(!ok, "direct call reverts");
        assertEq(
            keccak256(ret),
            keccak256(abi.encodeWithSelector(StakingHoldsOps.NotStaking.selector)),
            "NotStaking"
        );
        (, bytes32[] memory writes) = VmAccesses(address(vm)).accesses(address(ops));
        assertEq(writes.length, 0, "no storage write");
    }

    /// @notice The ops code has no instruction that could remove it or run other code in its context
    /// (Staking's code, which delegates, is the scanner's control).
    function test_opsCodeCannotSelfDestructOrDelegate() public view {
        bytes memory code = address(ops).code;
        assertTrue(!_hasOpcode(code, 0xff), "no SELFDESTRUCT");
        assertTrue(!_hasOpcode(code, 0xf4), "no DELEGATECALL");
        assertTrue(!_hasOpcode(code, 0xf2), "no CALLCODE");
        assertTrue(_hasOpcode(address(staking).code, 0xf4), "control: Staking delegates");
    }

    function _hasOpcode(bytes memory code, uint8 target) internal pure returns (bool) {
        uint256 i = 0;
        while (i < code.length) {
            uint8 op = uint8(code[i]);
            if (op == target) return true;
            // PUSH1..PUSH32 carry data, not instructions.
            i += (op >= 0x60 && op <= 0x7f) ? op - 0x5e : 1;
        }
        return false;
    }

    /// @notice Errors and events the ops code raises have Staking's selectors and topics.
    function test_sameSelectorsAsStaking() public pure {
        assertEq(StakingHoldsOps.ZeroAmount.selector, Staking.ZeroAmount.selector, "ZeroAmount");
        assertEq(StakingHoldsOps.NotRegistry.selector, Staking.NotRegistry.selector, "NotRegistry");
        assertEq(StakingHoldsOps.NotRegistered.selector, Staking.NotRegistered.selector, "NotRegistered");
        assertEq(StakingHoldsOps.InvalidTier.selector, Staking.InvalidTier.selector, "InvalidTier");
        assertEq(
            StakingHoldsOps.InsufficientShares.selector,
            Staking.InsufficientShares.selector,
            "InsufficientShares"
        );
        assertEq(StakingHoldsOps.DepositPending.selector, Staking.DepositPending.selector, "DepositPending");
        assertEq(StakingHoldsOps.TierHeld.selector, Staking.TierHeld.selector, "TierHeld");
        assertEq(StakingHoldsOps.AuditorActivated.selector, Staking.AuditorActivated.selector, "Activated");
        assertEq(
            StakingHoldsOps.AuditorDeactivated.selector, Staking.AuditorDeactivated.selector, "Deactivated"
        );
        assertEq(StakingHoldsOps.Staked.selector, Staking.Staked.selector, "Staked");
        assertEq(
            StakingHoldsOps.WithdrawalRequested.selector, Staking.WithdrawalRequested.selector, "Requested"
        );
        assertEq(Staking.stake.selector, StakingHoldsOps.stake.selector, "stake");
        assertEq(Staking.requestWithdrawal.selector, StakingHoldsOps.requestWithdrawal.selector, "request");
        assertEq(Staking.onRegister.selector, StakingHoldsOps.onRegister.selector, "onRegister");
        assertEq(Staking.onDeregister.selector, StakingHoldsOps.onDeregister.selector, "onDeregister");
    }

    /// @notice onRegister and a stake on an empty ledger write what Staking's views read.
    function test_registerAndStakeWriteStakingStorage() public {
        _register(alice, 1);
        (uint8 tier, bool registered,) = staking.auditorOf(alice);
        assertEq(tier, 1, "tier");
        assertTrue(registered, "registered");
        (uint256 head, uint256 tail) = staking.ledgerOf(alice);
        assertEq(head * 10 + tail, 11, "ledger [1, 1)");
        assertEq(staking.reputationOf(alice), _params().initialReputation, "initial reputation");
        vm.expectEmit(true, true, true, true, address(staking));
        emit Staked(alice, alice, 1000e18, 1000e18, 0);
        _stake(alice, alice, 1000e18);
        assertEq(staking.sharesOf(alice, alice), 1000e18, "shares");
        assertEq(_pool(alice).assets, 1000e18, "assets");
        assertEq(_pool(alice).backing, 1000e18, "backing");
        assertEq(staking.totalPooled(), 1000e18, "totalPooled");
        assertEq(staking.weightOf(alice), 1000e18 / 1e12, "weight written to Staking's trees");
        _assertConservation();
    }

    /// @dev Alice staked 1000, a session locked (entry 1), bob's 500 queued and alice's 100 shares requested
    /// in the FLOW behind it (entry 2). Returns the withdrawal id.
    function _queued() internal returns (uint256 id) {
        _register(alice, 1);
        _stake(alice, alice, 1000e18);
        assertEq(_lock(alice, 1, 100e18, 0), 1, "session entry");
        (, uint256 flow) = _stake(bob, alice, 500e18);
        assertEq(flow, 2, "queued behind the session");
        id = _withdraw(alice, alice, 100e18);
    }

    /// @notice A stake and a withdrawal request on a busy ledger write the FLOW, the positions and records.
    function test_queuedStakeAndRequestWriteTheLedger() public {
        uint256 id = _queued();
        (uint256 word,) = staking.entryWordOf(alice, 2);
        assertEq(LedgerPacking.kind(word), LedgerPacking.KIND_FLOW, "FLOW word in the ring");
        assertEq(staking.flowOf(alice, 2).deposits, 500e18, "FLOW deposits");
        assertEq(staking.flowOf(alice, 2).withdrawShares, 100e18, "FLOW withdraw shares");
        (, uint256 depositAmount, uint256 depositFlow) = staking.positionOf(alice, bob);
        assertEq(depositAmount, 500e18, "pending deposit");
        assertEq(depositFlow, 2, "its FLOW");
        assertEq(staking.pendingDeposits(), 500e18, "pendingDeposits");
        assertEq(staking.queuedAfter(alice, 1), 500e18, "queuedAfter reads the FLOW after entry 1");
        assertEq(staking.queuedAfter(alice, 2), 0, "none after the FLOW itself");
        (StakingLedger.Withdrawal memory rec, uint256 amount, uint256 readyAt) = staking.withdrawalOf(id);
        assertEq(rec.owner, alice, "record owner");
        assertEq(rec.flow, 2, "record flow");
        assertEq(rec.shares, 100e18, "record shares");
        assertEq(rec.parkEpoch, 0, "not parked (no readable snapshot counted it yet)");
        assertEq(amount + readyAt, 0, "pending");
        assertEq(staking.sharesOf(alice, alice), 900e18, "shares left");
        assertEq(_pool(alice).exitingShares, 100e18, "exiting");
        assertEq(staking.withdrawalCount(), 1, "count");
        (uint256 head, uint256 tail) = staking.ledgerOf(alice);
        assertEq(head * 10 + tail, 13, "ledger [1, 3)");
        _assertConservation();
    }

    /// @notice A slash that a stake drains (in the ops code) is paid to the treasury in Staking's slot.
    function test_slashDrainedByAStakePaysTheTreasury() public {
        uint256 id = _queued();
        // Five sessions behind the FLOW (entries 3..7), resolved early, the last one slashed; the head's
        // result applies entry 1, the FLOW and entries 3..5 (side drain 4), bob's next stake the last two.
        for (uint256 k = 2; k <= 6; ++k) {
            assertEq(_lock(alice, k, 100e18, 0), k + 1, "session entry");
        }
        for (uint256 k = 2; k <= 6; ++k) {
            _resolve(alice, k, k + 1, 0, k == 6 ? 200e18 : 0);
        }
        _resolve(alice, 1, 1, 0, 0);
        (uint256 head, uint256 tail) = staking.ledgerOf(alice);
        assertEq(head * 10 + tail, 68, "entries 6 and 7 left");
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        _stake(bob, alice, 50e18);
        assertEq(token.balanceOf(address(treasury)) - treasuryBefore, 200e18, "slash paid by the ops code");
        (head, tail) = staking.ledgerOf(alice);
        assertEq(head, tail, "drained");
        assertEq(_pool(alice).locked, 0, "unlocked");
        (, uint256 amount, uint256 readyAt) = staking.withdrawalOf(id);
        assertEq(amount, 100e18, "redeemed at the price before the slash");
        assertEq(readyAt, block.timestamp + 1 days, "cooldown");
        _assertConservation();
    }

    /// @notice A request standing in a readable snapshot parks its shares and a deregistration holds the
    /// pool (both in the ops code); Staking's quote, its `drain` (unpark) and claim read them.
    function test_parkAndDeregisterHoldInStakingStorage() public {
        _register(alice, 1);
        _stake(alice, alice, 1000e18);
        vm.roll(block.number + EPOCH_BLOCKS);
        uint256 freeBefore = staking.seatQuote(alice).free;
        uint256 id = _withdraw(alice, alice, 400e18);
        (StakingLedger.Withdrawal memory rec,,) = staking.withdrawalOf(id);
        uint256 epoch = block.number / EPOCH_BLOCKS + 1;
        assertEq(rec.parkEpoch, epoch, "parked in this epoch");
        assertEq(_pool(alice).exitingShares, 400e18, "parked shares exit");
        assertEq(staking.weightOf(alice), 600e18 / 1e12, "weight drops at once");
        _assertNear(staking.seatQuote(alice).free, freeBefore, 1, "held: the quote keeps them");

        vm.expectEmit(true, true, true, true, address(staking));
        emit AuditorDeactivated(alice);
        vm.prank(alice);
        registry.deregister();
        (, bool registered,) = staking.auditorOf(alice);
        assertTrue(!registered, "deregistered");
        assertEq(staking.weightOf(alice), 0, "weight 0");
        assertTrue(staking.seatQuote(alice).eligible, "held eligible");
        vm.prank(alice);
        vm.expectRevert(abi.encodeWithSelector(Staking.TierHeld.selector, alice, epoch + 2));
        registry.register(2, 1, keccak256("k"));

        // After the hold the batch joins a FLOW (`unpark`, run for Staking's own `drain`) and pays out.
        vm.roll(block.number + 3 * EPOCH_BLOCKS);
        staking.drain(alice, 4);
        uint256 amount;
        uint256 readyAt;
        (, amount, readyAt) = staking.withdrawalOf(id);
        assertEq(amount, 400e18, "parked batch redeemed");
        vm.warp(readyAt);
        uint256 before = token.balanceOf(alice);
        vm.prank(alice);
        staking.claimWithdrawal(id);
        assertEq(token.balanceOf(alice) - before, amount, "claimed");
        assertTrue(!staking.seatQuote(alice).eligible, "hold over");
        _assertConservation();
    }

    /// @notice Checks and errors reach the caller as before: Staking's pause first, then the ops code's.
    function test_forwardedChecksAndErrors() public {
        vm.expectRevert(Staking.NotRegistry.selector);
        staking.onRegister(alice, 1);
        vm.expectRevert(Staking.NotRegistry.selector);
        staking.onDeregister(alice);
        vm.prank(address(registry));
        vm.expectRevert(abi.encodeWithSelector(Staking.InvalidTier.selector, 3));
        staking.onRegister(alice, 3);
        vm.expectRevert(abi.encodeWithSelector(Staking.NotRegistered.selector, alice));
        _stake(bob, alice, 1e18);
        _register(alice, 1);
        vm.expectRevert(Staking.ZeroAmount.selector);
        _stake(bob, alice, 0);
        vm.expectRevert(abi.encodeWithSelector(Staking.InsufficientShares.selector, 1, 0));
        _withdraw(bob, alice, 1);
        vm.prank(owner);
        staking.pause();
        vm.expectRevert(Pausable.EnforcedPause.selector);
        _stake(bob, alice, 0);
        // Return data is passed through unchanged.
        vm.prank(owner);
        staking.unpause();
        (uint256 shares, uint256 flow) = _stake(bob, alice, 300e18);
        assertEq(shares * 10 + flow, 300e18 * 10, "returns (shares, flow)");
        assertEq(_withdraw(bob, alice, 100e18), 0, "returns the id");
        assertEq(_withdraw(bob, alice, 100e18), 1, "returns the next id");
        // A token failure inside the ops code reverts the whole call.
        vm.prank(carol);
        token.approve(address(staking), 0);
        vm.expectRevert();
        _stake(carol, alice, 1e18);
        assertEq(staking.sharesOf(alice, carol), 0, "nothing kept");
    }

    /// @notice IStaking through the interface type: unchanged signatures.
    function test_interfaceCallsReachTheOpsCode() public {
        _register(alice, 1);
        _stake(alice, alice, 1000e18);
        uint256 e = _lock(alice, 7, 100e18, 0);
        IStaking(address(staking)).resolve(7, _one(alice, e, 0, 0, WAD, 0));
        assertEq(IStaking(address(staking)).drain(alice, 4), 0, "already applied");
        vm.prank(address(registry));
        IStaking(address(staking)).onDeregister(alice);
        (, bool registered,) = staking.auditorOf(alice);
        assertTrue(!registered, "through IStaking");
    }
}
