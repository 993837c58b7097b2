// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Vm} from "../utils/TestBase.sol";
import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {ICanaryModule} from "../../src/interfaces/ICanaryModule.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";

/// @notice Outside review of the canary operator role (CanaryModule). Each test is one attack by an
/// adversary who reads the contract; all of them fail against the contract, and the tests pin down what the
/// contract guarantees and, as important, what it does NOT (it only compares addresses: governance's choice
/// of operators is trusted completely).
contract OperatorReviewCanaryTest is AppealsFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    uint8 internal constant PASS = 1;
    uint8 internal constant FAIL = 2;
    address internal rogue = address(0xB0B); // a second authorized operator (or the provider's sock puppet)

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    function _one(uint256 sid, uint256 index, uint8 verdict) internal pure returns (bytes32[] memory c) {
        c = new bytes32[](1);
        c[0] = _canaryCommitment(sid, index, verdict);
    }

    function _item(uint256 sid, uint256 index, uint8 verdict)
        internal
        pure
        returns (ICanaryModule.CanaryReveal memory)
    {
        return ICanaryModule.CanaryReveal({
            slot: 0, index: index, verdict: verdict, salt: _canarySalt(sid, index)
        });
    }

    function _authorize(address who, bool allowed) internal {
        vm.prank(owner);
        canaries.setCanaryOperator(who, allowed);
    }

    /// @dev Attack: the provider, or anyone but the core's owner, authorizes an operator; and the zero address.
    function test_OnlyOwnerAuthorizes() public {
        vm.prank(provider);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.NotCoreOwner.selector, provider));
        canaries.setCanaryOperator(provider, true);
        vm.prank(canaryOperator); // an operator cannot enrol a friend either
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.NotCoreOwner.selector, canaryOperator));
        canaries.setCanaryOperator(rogue, true);
        vm.prank(owner);
        vm.expectRevert(ICanaryModule.ZeroOperator.selector);
        canaries.setCanaryOperator(address(0), true);
        assertTrue(
            !canaries.isCanaryOperator(provider) && !canaries.isCanaryOperator(rogue), "nobody enrolled"
        );
    }

    /// @dev NOT guaranteed (documented): the contract tells operators apart by address only. A provider whose
    /// second address governance authorized as an operator commits its own session's canaries through it and
    /// replays review finding 1 (a copy of real segment 4, which it fears is wrong, committed as a PASS
    /// canary): segment 4 leaves the trace verdict. The same holds for any authorized operator that goes
    /// rogue, and any authorized operator may commit for ANY session (first come), so one rogue operator can
    /// front-run the operator the provider asked and write every session's canary truth. What the contract
    /// does guarantee: the provider's own address never commits or reveals (CanaryTruthNotWrittenByProvider)
    /// and only the first committer reveals. Closing the rest needs off-chain vetting by governance or a
    /// binding of the session to its operator (see the report).
    function test_SecondAddressOfProviderIsStoppedOnlyByGovernance() public {
        _authorize(rogue, true); // governance was fooled once
        uint256 sid = _open(_uniform(10, 1), FEE); // one canary owed
        vm.prank(rogue); // front-runs the honest operator's commit
        canaries.commitCanaries(sid, _one(sid, 4, PASS));
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CanariesAlreadyCommitted.selector, sid));
        _commitCanaries(sid, _one(sid, 7, PASS)); // the honest operator is locked out
        assertEq(canaries.canariesOf(sid).operator, rogue, "the first committer owns the session's canaries");
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 1 << 4, 0, 0); // the honest panel says FAIL on segment 4
        vm.roll(block.number + 1);
        vm.prank(canaryOperator); // the locked-out operator cannot reveal anything
        vm.expectRevert(
            abi.encodeWithSelector(ICanaryModule.NotCommittingOperator.selector, sid, canaryOperator)
        );
        canaries.revealCanary(sid, _item(sid, 7, PASS));
        vm.prank(rogue);
        canaries.revealCanary(sid, _item(sid, 4, PASS));
        (bool passed,, uint256 passW, uint256 totalW,) = escrow.verdictOf(sid);
        assertEq(totalW, 9, "the failing real segment left the verdict as a 'canary'");
        assertEq(passW, 9, "and the trace is all PASS");
        assertTrue(passed, "the sock puppet bought a passing trace");
    }

    /// @dev Attack: the committing operator is revoked between commit and reveal. Settlement is not blocked:
    /// the reveal reverts, the session settles after the canary window, the unrevealed canary takes the
    /// largest weight off the passed weight (the provider's cost) and its voters are scored as on a real
    /// segment (against the panel), never against a truth nobody revealed. Another authorized operator
    /// cannot step in, even with the right salt; re-authorizing the operator lets it reveal.
    function test_RevokedOperatorCannotRevealNorBlockSettlement() public {
        _authorize(rogue, true);
        uint256 sid = _open(_uniform(10, 1), FEE);
        _commitCanaries(sid, _one(sid, 7, FAIL));
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 0, 0, 0); // lazy panel: PASS on everything, the FAIL canary included
        vm.roll(block.number + 1);
        _authorize(canaryOperator, false);
        vm.prank(canaryOperator);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.NotCanaryOperator.selector, canaryOperator));
        canaries.revealCanary(sid, _item(sid, 7, FAIL));
        vm.prank(rogue); // knowing the salt is not enough
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.NotCommittingOperator.selector, sid, rogue));
        canaries.revealCanary(sid, _item(sid, 7, FAIL));
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        _closeAndSettle(sid); // never blocked
        (,,, uint256 unrevealed) = _masks(sid);
        assertEq(unrevealed, 1, "the canary stays owed");
        (,, uint256 passW, uint256 totalW,) = escrow.verdictOf(sid);
        assertEq(totalW, 10, "an unrevealed canary stays in T");
        assertEq(passW, 9, "and costs the provider the largest weight");
        assertEq(canaries.canariesOf(sid).refundPaid, 0, "no refund for an unrevealed canary");
        assertEq(
            _outcomeOf(sid, 7), PASS, "segment 7 keeps the panel's outcome: nobody scored on a hidden truth"
        );
        assertGe(token.balanceOf(address(treasury)), treasuryBefore, "the Treasury paid no canary refund");
    }

    /// @dev Re-authorization inside the window: the original committer (and only it) reveals again; a
    /// re-authorized operator cannot commit a second time over its own earlier commitment.
    function test_ReauthorizedOperatorRevealsOnlyItsOwn() public {
        uint256 sid = _open(_uniform(10, 1), FEE);
        _commitCanaries(sid, _one(sid, 7, FAIL));
        _authorize(canaryOperator, false);
        _authorize(canaryOperator, true);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CanariesAlreadyCommitted.selector, sid));
        _commitCanaries(sid, _one(sid, 4, PASS)); // no re-commit after a revoke/re-enrol cycle
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 1 << 7, 0, 0);
        vm.roll(block.number + 1);
        _revealCanary(sid, 0, 7, FAIL);
        assertEq(canaries.canariesOf(sid).revealed, 1, "revealed by the re-authorized committer");
        (,, uint256 passW, uint256 totalW,) = escrow.verdictOf(sid);
        assertEq(totalW, 9, "the canary left the verdict");
        assertEq(passW, 9, "the rest passes");
    }

    /// @dev An operator that commits and never reveals: the cost falls on the provider's trace (largest weight
    /// per canary) and on nobody's tokens; the Treasury pays no refund; auditors are scored on the panel.
    function test_SilentOperatorCostsOnlyTheProvidersScore() public {
        uint256 sid = _open(_uniform(20, 1), FEE); // two canaries owed
        bytes32[] memory c = new bytes32[](2);
        c[0] = _canaryCommitment(sid, 3, PASS);
        c[1] = _canaryCommitment(sid, 11, FAIL);
        _commitCanaries(sid, c);
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 0, 0, 0);
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        _closeAndSettle(sid);
        (,, uint256 passW, uint256 totalW,) = escrow.verdictOf(sid);
        assertEq(totalW, 20, "unrevealed canaries stay in T");
        assertEq(passW, 18, "each costs one largest weight");
        assertEq(canaries.canariesOf(sid).refundDue, 0, "no refund due");
        assertGe(token.balanceOf(address(treasury)), treasuryBefore, "the Treasury paid nothing for them");
    }

    /// @dev Committing in the wrong phase or shape: after the draw's randomness is known, after finalize, for
    /// a session that does not exist, with the wrong count, with a zero commitment.
    function test_CommitOnlyWhileDrawPending() public {
        vm.prank(canaryOperator);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CommitTooLate.selector, 99));
        canaries.commitCanaries(99, new bytes32[](0)); // no such session
        uint256 sid = _open(_uniform(10, 1), FEE);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.WrongCanaryCount.selector, sid, 0, 1));
        _commitCanaries(sid, new bytes32[](0));
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.ZeroCommitment.selector, sid, 0));
        _commitCanaries(sid, new bytes32[](1));
        _drawAll(sid); // randomness fixed: the seats are knowable
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CommitTooLate.selector, sid));
        _commitCanaries(sid, _one(sid, 7, PASS));
        _publish(sid);
        _voteRound0(sid, 0, 0, 0);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CommitTooLate.selector, sid));
        _commitCanaries(sid, _one(sid, 7, PASS));
        // An operator can also never reveal early (before round 0 finalized) - checked on a fresh session.
        uint256 s2 = _open(_uniform(10, 1), FEE);
        _commitCanaries(s2, _one(s2, 2, PASS));
        _drawAll(s2);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.CanaryRevealNotOpen.selector, s2, 0));
        _revealCanary(s2, 0, 2, PASS);
    }

    /// @dev Attack: read which segments are canaries from events or views before the reveal window. The
    /// commit emits only the 256-bit-salted hashes, the module emits nothing else, and the views expose only
    /// the count (public anyway: segmentCount * rate) and the hashes.
    function test_NothingBeforeRevealNamesACanary() public {
        uint256 sid = _open(_uniform(10, 1), FEE);
        bytes32[] memory c = _one(sid, 7, FAIL);
        vm.recordLogs();
        _commitCanaries(sid, c);
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 1 << 7, 0, 0);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        uint256 fromModule = 0;
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].emitter != address(canaries)) continue;
            ++fromModule;
            assertEq(logs[i].topics[0], ICanaryModule.CanariesCommitted.selector, "only the commit event");
            assertEq(keccak256(logs[i].data), keccak256(abi.encode(c)), "carrying only the hashes");
        }
        assertEq(fromModule, 1, "one event before the reveals");
        (uint256[] memory bits,, uint256 unrevealed) = canaries.canaryMasks(sid);
        assertEq(bits[0], 0, "no canary bit before the reveal");
        assertEq(unrevealed, 1, "only the count is known");
        (uint256[] memory idx,) = canaries.revealedOf(sid);
        assertEq(idx.length, 0, "no index before the reveal");
    }

    /// @dev Attack (second review; fixed): the commit window was only the draw's randomness delay.
    /// `commitCanaries` requires the draw request to be `Pending`, and LookaheadRandomness turns a request
    /// `Ready` by itself once `block.number` passes its target; with the target at `openSession +
    /// RANDOMNESS_DELAY` (2 blocks on the devnet) a placement round trip of 3 blocks (the provider sends the
    /// placement, the operator fetches the CIDs from IPFS, decrypts, checks every proof, sends its
    /// transaction; or an attacker flooding the operator) stripped the session of its canaries: the lazy panel
    /// voting PASS everywhere was never caught and the provider's trace lost the largest weight per canary
    /// owed (passW 9 of 10 before the fix). Now the core requests the draw's randomness for `openSession +
    /// max(delay, canaryCommitBlocks)` (8 here, as on the devnet): the operator commits in the LAST block of
    /// the window, the randomness is still unknown then, the planted FAIL canary catches the lazy panel, and
    /// the provider's trace keeps its full weight.
    function test_OperatorHasCanaryCommitBlocksToCommit() public {
        uint256 sid = _open(_uniform(10, 1), FEE); // 1 canary owed
        uint256 opened = block.number;
        uint256 target = randomness.targetBlockOf(sessions.sessionOf(sid).drawRequest);
        assertEq(target, opened + CANARY_COMMIT_BLOCKS, "draw randomness targets open + canaryCommitBlocks");
        vm.roll(opened + RANDOMNESS_DELAY + 1); // the 3-block round trip that used to close the window
        vm.roll(opened + CANARY_COMMIT_BLOCKS); // and a round trip of the whole window
        vm.prank(canaryOperator);
        (bool ok, bytes memory err) =
            address(canaries).call(abi.encodeCall(ICanaryModule.commitCanaries, (sid, _one(sid, 7, FAIL))));
        if (!ok) {
            _fail(
                string.concat(
                    "the operator's commit ",
                    Strings.toString(block.number - opened),
                    " blocks after the opening reverted (selector ",
                    Strings.toHexString(uint256(uint32(bytes4(err))), 4),
                    "): the canary window closed before canaryCommitBlocks"
                )
            );
        }
        _drawAll(sid);
        assertTrue(block.number > target, "the draw came after the commit");
        _publish(sid);
        _voteRound0(sid, 0, 0, 0); // lazy: PASS everywhere, the planted FAIL canary included
        vm.roll(block.number + 1); // the canary reveal window opens after the finalization block
        vm.prank(canaryOperator);
        canaries.revealCanary(sid, _item(sid, 7, FAIL));
        _toAppealWindow(sid);
        (,, uint256 passW, uint256 totalW,) = escrow.verdictOf(sid);
        (,, uint256 unrevealed) = canaries.canaryMasks(sid);
        assertEq(unrevealed, 0, "the canary was committed and revealed");
        assertEq(passW, totalW, "the provider keeps its full weight (the canary leaves the trace)");
        assertEq(totalW, 9, "nine real segments");
    }

    function _masks(uint256 sid)
        internal
        view
        returns (uint256[] memory, uint256[] memory, uint256, uint256)
    {
        (uint256[] memory a, uint256[] memory b, uint256 u) = canaries.canaryMasks(sid);
        return (a, b, 0, u);
    }
}
