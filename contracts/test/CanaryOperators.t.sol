// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "./utils/AppealsFixture.sol";
import {ICanaryModule} from "../src/interfaces/ICanaryModule.sol";

/// @notice The canary operator role (review finding 1): only the core's owner authorizes operators; only an
/// authorized operator that is not the session's provider commits; only the committing operator, while
/// authorized, reveals. Fuzzed over callers and over the moment governance authorizes or revokes.
contract CanaryOperatorsTest is AppealsFixture {
    uint8 internal constant PASS = 1;
    uint8 internal constant FAIL = 2;
    uint256 internal constant N = 10; // one canary at 10%
    address internal constant OTHER_OPERATOR = address(0xCA4B);

    event CanaryOperatorSet(address indexed operator, bool allowed);

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    function _one(uint256 sid) internal pure returns (bytes32[] memory c) {
        c = new bytes32[](1);
        c[0] = _canaryCommitment(sid, 4, FAIL);
    }

    function _item(uint256 sid) internal pure returns (ICanaryModule.CanaryReveal memory) {
        return ICanaryModule.CanaryReveal({slot: 0, index: 4, verdict: FAIL, salt: _canarySalt(sid, 4)});
    }

    function _setOperator(address who, bool allowed) internal {
        vm.prank(owner);
        canaries.setCanaryOperator(who, allowed);
    }

    function test_onlyCoreOwnerSetsOperators() public {
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.NotCoreOwner.selector, provider));
        vm.prank(provider);
        canaries.setCanaryOperator(provider, true);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.ZeroOperator.selector));
        vm.prank(owner);
        canaries.setCanaryOperator(address(0), true);
        vm.expectEmit(true, false, false, true, address(canaries));
        emit CanaryOperatorSet(OTHER_OPERATOR, true);
        _setOperator(OTHER_OPERATOR, true);
        assertTrue(canaries.isCanaryOperator(OTHER_OPERATOR), "authorized");
        _setOperator(OTHER_OPERATOR, false);
        assertTrue(!canaries.isCanaryOperator(OTHER_OPERATOR), "revoked");
        assertTrue(canaries.isCanaryOperator(canaryOperator), "the fixture's operator");
    }

    /// @dev Any caller that is not an authorized operator can neither commit nor reveal.
    function testFuzz_nonOperatorCannotCommitOrReveal(address caller) public {
        vm.assume(caller != canaryOperator && caller != address(0));
        uint256 sid = _open(_uniform(N, 1), FEE);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.NotCanaryOperator.selector, caller));
        vm.prank(caller);
        canaries.commitCanaries(sid, _one(sid));
        _commitCanaries(sid, _one(sid));
        assertEq(canaries.canariesOf(sid).operator, canaryOperator, "the operator recorded");
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 1 << 4, 0, 0);
        vm.roll(block.number + 1);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.NotCanaryOperator.selector, caller));
        vm.prank(caller);
        canaries.revealCanary(sid, _item(sid));
        ICanaryModule.CanaryReveal[] memory items = new ICanaryModule.CanaryReveal[](1);
        items[0] = _item(sid);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.NotCanaryOperator.selector, caller));
        vm.prank(caller);
        canaries.revealCanaries(sid, items);
        // Authorized, but not the one that committed: still refused.
        _setOperator(caller, true);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.NotCommittingOperator.selector, sid, caller));
        vm.prank(caller);
        canaries.revealCanary(sid, _item(sid));
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.NotCommittingOperator.selector, sid, caller));
        vm.prank(caller);
        canaries.revealCanaries(sid, items);
        _revealCanary(sid, 0, 4, FAIL);
        assertEq(canaries.canariesOf(sid).revealed, 1, "the committing operator revealed");
    }

    /// @dev The session's provider never commits, authorized or not, at any point of the commit window.
    function testFuzz_providerNeverCommits(bool authorized, uint256 wait) public {
        uint256 sid = _open(_uniform(N, 1), FEE);
        if (authorized) _setOperator(provider, true);
        vm.roll(block.number + bound(wait, 0, RANDOMNESS_DELAY - 1));
        vm.expectRevert(
            authorized
                ? abi.encodeWithSelector(ICanaryModule.ProviderIsCanaryOperator.selector, sid)
                : abi.encodeWithSelector(ICanaryModule.NotCanaryOperator.selector, provider)
        );
        vm.prank(provider);
        canaries.commitCanaries(sid, _one(sid));
        // An authorized provider is an operator for other providers' sessions only: this one is still open
        // to the real operator.
        _commitCanaries(sid, _one(sid));
    }

    /// @dev Governance revokes the operator at a fuzzed moment of the session's life (0 before the commit,
    /// 1 after it, 2 after round 0 finalized, 3 in the reveal window) and may authorize it again: commit and
    /// reveal succeed exactly when the operator is authorized at that moment.
    function testFuzz_operatorSetOrUnsetAtAnyMoment(uint8 moment, bool reauthorize) public {
        moment = uint8(bound(moment, 0, 3));
        uint256 sid = _open(_uniform(N, 1), FEE);
        if (moment == 0) _toggle(reauthorize);
        bool authorized = moment != 0 || reauthorize;
        if (!authorized) {
            vm.expectRevert(abi.encodeWithSelector(ICanaryModule.NotCanaryOperator.selector, canaryOperator));
        }
        vm.prank(canaryOperator);
        canaries.commitCanaries(sid, _one(sid));
        if (moment == 1) _toggle(reauthorize);
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 1 << 4, 0, 0);
        if (moment == 2) _toggle(reauthorize);
        vm.roll(block.number + 1);
        if (moment == 3) _toggle(reauthorize);
        bool canReveal = authorized && reauthorize;
        if (!canReveal) {
            // Revoked at reveal time (and, when revoked before the commit, it never committed either).
            vm.expectRevert(abi.encodeWithSelector(ICanaryModule.NotCanaryOperator.selector, canaryOperator));
        }
        vm.prank(canaryOperator);
        canaries.revealCanary(sid, _item(sid));
        (,, uint256 unrevealed) = canaries.canaryMasks(sid);
        assertEq(unrevealed, canReveal ? 0 : 1, "revealed exactly when authorized");
        _closeAndSettle(sid);
        assertEq(token.balanceOf(address(sessions)), 0, "settles either way");
    }

    /// @dev Revoke; authorize again when `back`.
    function _toggle(bool back) internal {
        _setOperator(canaryOperator, false);
        if (back) _setOperator(canaryOperator, true);
    }
}
