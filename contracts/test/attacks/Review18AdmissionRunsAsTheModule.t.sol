// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {Vm} from "../utils/TestBase.sol";
import {CreateCheats} from "../utils/AppealDeploy.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {AppealAdmission} from "../../src/modules/AppealAdmission.sol";
import {IERC20Errors} from "@openzeppelin/contracts/interfaces/draft-IERC6093.sol";

/// @dev Cheats the fixture's minimal Vm leaves out.
interface Review18Cheats {
    function record() external;
    function accesses(address target) external returns (bytes32[] memory reads, bytes32[] memory writes);
    function deal(address who, uint256 amount) external;
}

/// @title Review18AdmissionRunsAsTheModule (outside review 18 of 131b29c, appeal admission by DELEGATECALL)
/// @notice Property (AppealModule/AppealAdmission NatSpec, issue 12): `appeal` and `quote`, now run in
/// `AppealAdmission` by DELEGATECALL, behave as the code they replaced: the module's storage (never the
/// admission's own), the module's immutables (core, token, sortition, settlement, epoch length), the same
/// caller (`msg.sender` is the appellant; the bond is pulled from it under its allowance to the MODULE and
/// paid to the settlement), the same revert data (custom errors the node maps in revert_meanings.py reach the
/// caller byte for byte, from `appeal` and from `quote` alike), and `quote` stays read-only whether it is
/// reached by STATICCALL (`eth_call`, a view caller) or by a plain CALL, and refuses value; the events the
/// node reads (`AppealOpened`, `RoundStatusChanged`) are emitted at the module's address.
/// Attack tried: a storage layout mismatch (`scripts/forge inspect AppealModule storageLayout` and
/// `AppealAdmission`: identical, `_sessions`, `_rounds`, `_words`, `_seg`, `_appealed` in slots 0-4, no
/// state variable declared only in one; `_admission` and `_self` are immutables); immutables read in the
/// module's context from the admission's code (computed by AppealStore's constructor from the same core and
/// settlement in the same transaction: equal; `_epochBlocks` checked through the epoch the admission pins,
/// which the module's own draw then uses); the appellant or payer swapped by the DELEGATECALL (an
/// allowance to the admission pays nothing: the token sees the module as spender); the view function pointer
/// in `quote` used to reach a writing path (it forwards only `quote`'s own calldata to the admission's
/// `quote`, compiled `view`: a plain CALL writes nothing; under STATICCALL the DELEGATECALL stays static);
/// revert data re-wrapped or lost (`_forward` reverts with the callee's returndata: exact); value sent to
/// either entry (both non-payable at the module's dispatcher); reentrancy through the bond's transfer (the
/// token is the core's immutable TrustToken, no hooks, and the transfer is still the last step after every
/// write, as before); a direct call of the admission (`onlyDelegated` on both entries; its other functions
/// are stubs or views of its own empty storage, and nothing trusts its address); `SettlementNotBound` with
/// `module_` (the admission requires `settlement.appeals() == msg.sender`, its deployer: only the module
/// can deploy a bound admission, and a stranger's admission is never used); the randomness request the
/// delegated `appeal` opens (`VRFRandomness.request` checks `isRequester[msg.sender]`: it sees the module,
/// the address docs/appeals-canaries.md tells the owner to allow; a stranger DELEGATECALLing the admission
/// is refused as before); the error ABI the node decodes with (AppealModule.json's 30 errors, identical
/// before and after 131b29c, and AppealAdmission.json's). None found.
/// Measured (`scripts/forge build --sizes` at 024352a): AppealModule runtime 19,003 B (margin 5,573),
/// initcode 34,718 B (< 49,152); AppealAdmission runtime 13,156 B, initcode 14,349 B. One 1-segment appeal
/// here: bond 42 TRUST pulled from the appellant, settlement +42 TRUST, module and admission hold 0.
/// Severity: none (regression test).
/// How it can fail (mutations tried on src, then reverted): `_forward` ending `revert(0, 0)` instead of
/// `revert(0, returndatasize())` fails `test_RevertDataReachesTheCallerUnchanged` ("quote's revert data
/// unchanged") and `test_AllowanceToTheAdmissionPaysNothing` ("reverted as expected, but without data");
/// the admission's `_epochNow` computed with another epoch length (`_epochBlocks + 1`, as an admission built
/// with other immutables would) fails `testFuzz_EpochPinnedAsTheModuleComputes` ("epoch pinned as the
/// module computes it: 95 != 97", first run; at the fixture's early blocks both lengths agree, hence the
/// later session). Not tried: a write in the delegated `quote` would show in `vm.accesses`
/// (`test_QuoteIsReadOnlyEitherWay`); a CALL instead of DELEGATECALL reverts NotCore on every entry.
/// Command: scripts/forge test --match-path 'contracts/test/attacks/Review18AdmissionRunsAsTheModule*' -vv
contract Review18AdmissionRunsAsTheModule is AppealsFixture {
    event log_named_uint(string key, uint256 val);

    address internal constant STRANGER = address(0xBAD);

    AppealAdmission internal admission;
    uint256 internal sid;

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.canaryRateBps = 0; // no canary: every segment is real
    }

    function setUp() public {
        _deployAppeals();
        // The module's first CREATE (contract nonces start at 1).
        admission = AppealAdmission(CreateCheats(address(vm)).computeCreateAddress(address(appeals), 1));
        assertTrue(address(admission).code.length != 0, "the module deployed its admission");
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
        sid = _open(_uniform(4, 1), FEE);
        _commitCanaries(sid, new bytes32[](0));
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 0, 0, 0);
    }

    function _quote(uint256[] memory segs) internal view returns (bool ok, bytes memory ret) {
        (ok, ret) =
            address(appeals).staticcall(abi.encodeWithSignature("quote(uint256,uint256[])", sid, segs));
    }

    /// @notice The appellant is the caller, pays from its allowance to the module, the settlement receives the
    /// bond; the round and every word are in the module's storage, none in the admission's.
    function test_AppellantPaysAndModuleStores() public {
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
        IAppealModule.Quote memory q = appeals.quote(sid, _segs(1));
        uint256 before = token.balanceOf(appellant);
        uint256 held = token.balanceOf(address(escrow));
        vm.recordLogs();
        uint256 round = _appeal(sid, _segs(1));
        _assertOpenedByTheModule();
        emit log_named_uint("bond", q.bond);
        assertEq(round, 1, "round returned through the forwarder");
        assertEq(token.balanceOf(appellant), before - q.bond, "bond pulled from the appellant");
        assertEq(token.balanceOf(address(escrow)), held + q.bond, "bond paid to the settlement");
        assertEq(token.balanceOf(address(appeals)), 0, "module holds nothing");
        assertEq(token.balanceOf(address(admission)), 0, "admission holds nothing");
        IAppealModule.Round memory rd = appeals.roundOf(sid, 1);
        assertEq(rd.appellant, appellant, "msg.sender in the delegated code: the appellant");
        assertEq(uint256(rd.bond), q.bond, "bond as quoted");
        assertEq(uint256(rd.status), uint256(IAuditSessions.Status.Created), "round created");
        assertEq(appeals.sessionAppeals(sid).roundCount, 1, "module counts the round");
        assertTrue(appeals.appealWordOf(sid, 1) != 0, "module holds the segment word");
        // The admission's own storage: untouched.
        assertEq(admission.sessionAppeals(sid).roundCount, 0, "admission storage: no round count");
        assertEq(admission.sessionAppeals(sid).finalizedAt, 0, "admission storage: no session");
        assertEq(uint256(admission.roundOf(sid, 1).status), 0, "admission storage: no round");
        assertEq(admission.appealWordOf(sid, 1), 0, "admission storage: no segment word");
        // The module's own code reads what the admission wrote: the round draws.
        _drawRound(sid, 1);
        assertEq(uint256(appeals.roundOf(sid, 1).drawnSeats), q.totalSeats, "module draws the admitted round");
    }

    /// @notice An allowance to the admission pays nothing: the token sees the module as spender.
    function test_AllowanceToTheAdmissionPaysNothing() public {
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
        IAppealModule.Quote memory q = appeals.quote(sid, _segs(0));
        token.transfer(STRANGER, 1000e18);
        vm.prank(STRANGER);
        token.approve(address(admission), type(uint256).max);
        vm.prank(STRANGER);
        vm.expectRevert(
            abi.encodeWithSelector(
                IERC20Errors.ERC20InsufficientAllowance.selector, address(appeals), 0, q.bond
            )
        );
        appeals.appeal(sid, _segs(0), type(uint256).max);
    }

    /// @notice The round's snapshot epoch, computed by the admission's immutables, is the one the sortition
    /// (and so the module's own draw) computes for the appeal's block.
    function testFuzz_EpochPinnedAsTheModuleComputes(uint256 start, uint256 offset) public {
        // A later session, opened anywhere in 200 epochs: the appeal's epoch depends on the epoch length.
        vm.roll(bound(start, block.number + 1, block.number + 200 * EPOCH_BLOCKS));
        uint256 later = _open(_uniform(4, 1), FEE);
        _commitCanaries(later, new bytes32[](0));
        _drawAll(later);
        _publish(later);
        _voteRound0(later, 0, 0, 0);
        vm.roll(block.number + 1);
        _toAppealWindow(later);
        uint256 windowEnd = appeals.sessionAppeals(later).windowEnd;
        vm.roll(bound(offset, block.number, windowEnd));
        uint256 at = block.number;
        _appeal(later, _segs(2));
        emit log_named_uint("appealed at block", at);
        assertEq(
            uint256(appeals.roundOf(later, 1).epoch),
            _sortition().epochOf(at),
            "epoch pinned as the module computes it"
        );
        // The module's own code then draws the round from that epoch's snapshot.
        _drawRound(later, 1);
        IAppealModule.Round memory rd = appeals.roundOf(later, 1);
        assertEq(uint256(rd.drawnSeats), uint256(rd.totalSeats), "module draws the admitted round");
    }

    /// @notice `quote` by STATICCALL and by plain CALL return the same bytes and write nothing; the quote is
    /// what `appeal` then charges.
    function test_QuoteIsReadOnlyEitherWay() public {
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
        uint256[] memory segs = _segs(0, 3);
        (bool okS, bytes memory retS) = _quote(segs);
        Review18Cheats(address(vm)).record();
        (bool okC, bytes memory retC) =
            address(appeals).call(abi.encodeWithSignature("quote(uint256,uint256[])", sid, segs));
        (, bytes32[] memory writes) = Review18Cheats(address(vm)).accesses(address(appeals));
        assertTrue(okS && okC, "quote answers");
        assertEq(keccak256(retS), keccak256(retC), "same answer by STATICCALL and CALL");
        assertEq(writes.length, 0, "a plain CALL of quote writes nothing");
        IAppealModule.Quote memory q = abi.decode(retS, (IAppealModule.Quote));
        assertEq(q.round, 1, "round");
        assertEq(q.seats.length, 2, "seats per segment");
        uint256 before = token.balanceOf(appellant);
        _appeal(sid, segs);
        assertEq(before - token.balanceOf(appellant), q.bond, "appeal charges the quoted bond");
        assertEq(uint256(appeals.roundOf(sid, 1).totalSeats), q.totalSeats, "quoted seats");
    }

    /// @notice Both entries refuse value (non-payable at the module's dispatcher).
    function test_EntriesRefuseValue() public {
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
        Review18Cheats(address(vm)).deal(appellant, 1 ether);
        vm.prank(appellant);
        (bool ok,) = address(appeals).call{value: 1}(
            abi.encodeWithSignature("quote(uint256,uint256[])", sid, _segs(0))
        );
        assertTrue(!ok, "quote with value");
        vm.prank(appellant);
        (ok,) = address(appeals).call{value: 1}(
            abi.encodeWithSignature("appeal(uint256,uint256[],uint256)", sid, _segs(0), type(uint256).max)
        );
        assertTrue(!ok, "appeal with value");
        vm.prank(appellant);
        (ok,) = address(appeals).call{value: 1}(
            abi.encodeWithSignature(
                "appeal(uint256,uint256[],uint256,bool)", sid, _segs(0), type(uint256).max, true
            )
        );
        assertTrue(!ok, "appeal (requireCharged) with value");
        assertEq(address(appeals).balance, 0, "no ether kept");
    }

    /// @notice The custom errors the node maps reach the caller byte for byte, from `quote` and `appeal`.
    function test_RevertDataReachesTheCallerUnchanged() public {
        uint256 canaryEnd = appeals.sessionAppeals(sid).canaryEnd;
        if (block.number <= canaryEnd) {
            _expectBoth(
                _segs(0), abi.encodeWithSelector(IAppealModule.AppealWindowNotOpen.selector, sid, canaryEnd)
            );
        }
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
        _expectBoth(new uint256[](0), abi.encodeWithSelector(IAppealModule.EmptyAppeal.selector));
        _expectBoth(_segs(9), abi.encodeWithSelector(IAppealModule.InvalidSegment.selector, sid, 9));
        uint256[] memory desc = _segs(2, 1);
        _expectBoth(desc, abi.encodeWithSelector(IAppealModule.SegmentsNotAscending.selector, sid, 1));
        IAppealModule.Quote memory q = appeals.quote(sid, _segs(0));
        vm.prank(appellant);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.BondAboveLimit.selector, q.bond, q.bond - 1));
        appeals.appeal(sid, _segs(0), q.bond - 1);
        _appeal(sid, _segs(0));
        _expectBoth(_segs(0), abi.encodeWithSelector(IAppealModule.AppealPending.selector, sid, 0));
        vm.roll(appeals.sessionAppeals(sid).windowEnd + 1);
        _expectBoth(
            _segs(1),
            abi.encodeWithSelector(
                IAppealModule.AppealWindowClosed.selector, sid, 1, appeals.sessionAppeals(sid).windowEnd
            )
        );
    }

    /// @dev The node reads `AppealOpened` and `RoundStatusChanged` at the module's address: the delegated
    /// code's events must be the module's, with the appellant as the indexed caller.
    function _assertOpenedByTheModule() internal {
        Vm.Log[] memory logs = vm.getRecordedLogs();
        uint256 opened = 0;
        uint256 status = 0;
        for (uint256 i = 0; i < logs.length; ++i) {
            assertTrue(logs[i].emitter != address(admission), "no event from the admission");
            if (logs[i].topics[0] == IAppealModule.AppealOpened.selector) {
                assertEq(logs[i].emitter, address(appeals), "AppealOpened from the module");
                assertEq(logs[i].topics[3], bytes32(uint256(uint160(appellant))), "indexed appellant");
                ++opened;
            } else if (logs[i].topics[0] == IAppealModule.RoundStatusChanged.selector) {
                assertEq(logs[i].emitter, address(appeals), "RoundStatusChanged from the module");
                ++status;
            }
        }
        assertEq(opened, 1, "one AppealOpened");
        assertEq(status, 1, "one RoundStatusChanged");
    }

    function _expectBoth(uint256[] memory segs, bytes memory err) internal {
        (bool ok, bytes memory ret) = _quote(segs);
        assertTrue(!ok, "quote refused");
        assertEq(keccak256(ret), keccak256(err), "quote's revert data unchanged");
        vm.prank(appellant);
        (ok, ret) = address(appeals)
            .call(abi.encodeWithSignature("appeal(uint256,uint256[],uint256)", sid, segs, type(uint256).max));
        assertTrue(!ok, "appeal refused");
        assertEq(keccak256(ret), keccak256(err), "appeal's revert data unchanged");
    }
}
