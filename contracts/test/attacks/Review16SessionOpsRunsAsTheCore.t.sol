// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "../utils/StakingFixture.sol";
import {AuditSessions} from "../../src/AuditSessions.sol";
import {SessionOps} from "../../src/SessionOps.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";

/// @title Review16SessionOpsRunsAsTheCore (outside review 16 of 8c2c336, 57f103a SessionOps by DELEGATECALL)
/// @notice Property (AuditSessions/SessionOps NatSpec, issue 12): the cold entry points forwarded to
/// `SessionOps` behave as the code they replaced: same storage (the core's, never SessionOps' own), same
/// immutables (token, staking, sortition, epoch length and readable span), the same caller (`msg.sender` is
/// the core's caller: the provider, the owner), the same checks with the same revert data (owner, pause,
/// parameter and source errors with AuditSessions' selectors), and a copied or front-run permit buys the
/// copier nothing.
/// Attack tried: a storage layout mismatch (`forge inspect AuditSessions storageLayout` and `SessionOps`:
/// identical, 14 variables in slots 0-13, `_paused` at slot 1 offset 20 in both; no state variable declared in
/// only one, SessionLifecycle adds immutables only); immutables of SessionOps read in the core's context
/// (computed by SessionOps' constructor from the same token and staking in the same transaction: equal);
/// `msg.sender` in the delegated code (the provider is pinned and pays, the permit's owner is the caller);
/// `initialize` or any other SessionOps selector reached through the core (no fallback; `_forward` forwards
/// only the calldata of the stub the dispatcher matched); owner/pause checks lost in the move; reverts that
/// change selector (the node decodes them with AuditSessions' ABI: every error SessionOps can raise through
/// the core is in it; the only SessionOps-only error, `NotCore()`, is unreachable through the core).
/// None found.
/// Measured: AuditSessions runtime 18,465 B, initcode 35,225 B (< 49,152), per 57f103a.
/// Severity: none (regression test).
/// How it can fail: a state variable added to AuditSessions only (or SessionOps only) moves a slot and
/// `test_OpeningPinsTheCoresEpochAndEnding` / `test_OpsOwnStorageStaysEmpty` read wrong values; SessionOps
/// built from another staking (immutables) fails "epoch pinned as the core computes it"; `onlyOwner` dropped
/// from `SessionOps.setParams` and `whenNotPaused` from `openSession` (tried together, reverted) fails
/// `test_DelegatedChecksKeepTheCoresRevertData` (`next call did not revert as expected`); `_forward`
/// by CALL instead of DELEGATECALL reverts NotCore everywhere.
/// Command: scripts/forge test --match-path 'contracts/test/attacks/Review16SessionOpsRunsAsTheCore*' -vv
contract Review16SessionOpsRunsAsTheCore is StakingFixture {
    uint256 internal constant FEE = 1000e18;
    address internal constant STRANGER = address(0xBAD);

    SessionOps internal ops;

    function setUp() public {
        _deploy();
        // The core's first CREATE (nonce 1): RLP [sender, 1].
        ops = SessionOps(
            address(
                uint160(uint256(keccak256(abi.encodePacked(bytes2(0xd694), address(sessions), bytes1(0x01)))))
            )
        );
        assertTrue(address(ops).code.length != 0, "the core deployed its ops");
    }

    /// @notice SessionOps' immutables equal the core's; everything the forwarded code wrote is in the core's
    /// storage, none in SessionOps' own (owned by the core, no source, no parameters, no session).
    function test_OpsOwnStorageStaysEmpty() public {
        assertEq(address(ops.token()), address(sessions.token()), "token");
        assertEq(address(ops.staking()), address(sessions.staking()), "staking");
        assertEq(address(ops.sortition()), address(sessions.sortition()), "sortition");
        vm.prank(owner);
        sessions.setParams(_sessionParams());
        uint256 sid = _open(_uniform(1, 1), FEE);
        assertEq(sid, 1, "opened in the core");
        assertEq(sessions.sessionCount(), 1, "the core counts it");
        assertEq(sessions.paramsVersion(), 1, "the core's versions");
        assertEq(ops.sessionCount(), 0, "ops' own storage: no session");
        assertEq(ops.treasury(), address(0), "ops' own storage: no treasury");
        assertEq(ops.owner(), address(sessions), "ops' own owner: the core");
        vm.expectRevert(); // no parameter version in ops' own storage (length 0 - 1)
        ops.paramsVersion();
    }

    /// @notice The opening (delegated) pins the epoch the core's own code then reads: epoch of the opening
    /// block + 1, and the session lapses exactly after `snapshotReadableUntil(epoch)`.
    function testFuzz_OpeningPinsTheCoresEpochAndEnding(uint256 at) public {
        vm.roll(bound(at, block.number, block.number + 20 * EPOCH_BLOCKS));
        uint256 opened = block.number;
        uint256 sid = _open(_uniform(1, 1), FEE);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        assertEq(s.epoch, _sortition().epochOf(opened), "epoch pinned as the core computes it");
        assertEq(s.provider, provider, "msg.sender in the delegated code: the provider");
        assertEq(address(sessions.sourceOf(sid)), address(randomness), "source pinned");
        uint256 readable = _sortition().snapshotReadableUntil(s.epoch);
        vm.roll(readable);
        sessions.advance(sid);
        assertTrue(sessions.statusOf(sid) == IAuditSessions.Status.Created, "still open at readable");
        vm.roll(readable + 1);
        sessions.advance(sid);
        assertTrue(sessions.statusOf(sid) == IAuditSessions.Status.Expired, "ended after readable");
    }

    /// @notice Owner, pause and argument checks run in SessionOps on the core's storage with the revert data
    /// the core's ABI names.
    function test_DelegatedChecksKeepTheCoresRevertData() public {
        IAuditSessions.SessionParams memory p = _sessionParams();
        vm.startPrank(STRANGER);
        vm.expectRevert(abi.encodeWithSignature("OwnableUnauthorizedAccount(address)", STRANGER));
        sessions.setParams(p);
        vm.expectRevert(abi.encodeWithSignature("OwnableUnauthorizedAccount(address)", STRANGER));
        sessions.setRandomness(IRandomness(address(randomness)));
        vm.stopPrank();
        vm.startPrank(owner);
        vm.expectRevert(AuditSessions.ZeroAddress.selector);
        sessions.setRandomness(IRandomness(address(0)));
        p.tauBps = 5000;
        vm.expectRevert(AuditSessions.InvalidParams.selector);
        sessions.setParams(p);
        sessions.pause();
        vm.stopPrank();
        bytes memory tw = _uniform(1, 1);
        vm.startPrank(provider);
        token.approve(address(sessions), FEE);
        vm.expectRevert(abi.encodeWithSignature("EnforcedPause()"));
        sessions.openSession(keccak256("root"), tw, FEE);
        vm.expectRevert(abi.encodeWithSignature("EnforcedPause()"));
        sessions.openSessionWithPermit(keccak256("root"), tw, FEE, 0, 0, bytes32(0), bytes32(0));
        vm.stopPrank();
        // `initialize` has no stub: the core has no such function (and no fallback).
        (bool ok,) =
            address(sessions).call(abi.encodeCall(SessionOps.initialize, (IRandomness(address(0)), p)));
        assertTrue(!ok, "initialize unreachable through the core");
    }

    function _permit(uint256 deadline) internal view returns (uint8 v, bytes32 r, bytes32 s) {
        bytes32 structHash = keccak256(
            abi.encode(
                keccak256(
                    "Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)"
                ),
                provider,
                address(sessions),
                FEE,
                token.nonces(provider),
                deadline
            )
        );
        (v, r, s) = vm.sign(
            providerKey, keccak256(abi.encodePacked("\x19\x01", token.DOMAIN_SEPARATOR(), structHash))
        );
    }

    /// @notice The provider's permit, copied by a stranger into its own opening, opens nothing and spends
    /// nothing of the provider's; front-run into `token.permit`, the provider's opening still succeeds.
    function test_CopiedPermitBuysTheCopierNothing() public {
        bytes memory tw = _uniform(1, 1);
        uint256 deadline = block.timestamp + 1 hours;
        (uint8 v, bytes32 r, bytes32 s) = _permit(deadline);
        token.transfer(STRANGER, FEE);
        uint256 providerBefore = token.balanceOf(provider);
        vm.prank(STRANGER);
        (bool ok,) = address(sessions)
            .call(
                abi.encodeCall(
                    AuditSessions.openSessionWithPermit, (keccak256("root"), tw, FEE, deadline, v, r, s)
                )
            );
        assertTrue(!ok, "the copier opens nothing (its own permit is invalid, no allowance)");
        assertEq(sessions.sessionCount(), 0, "no session");
        assertEq(token.balanceOf(provider), providerBefore, "the provider paid nothing");
        // Front-run: the permit is spent directly on the token; the provider's opening falls back on it.
        vm.prank(STRANGER);
        token.permit(provider, address(sessions), FEE, deadline, v, r, s);
        vm.prank(provider);
        uint256 sid = sessions.openSessionWithPermit(keccak256("root"), tw, FEE, deadline, v, r, s);
        assertEq(sessions.sessionOf(sid).provider, provider, "opened for the signer");
        assertEq(providerBefore - token.balanceOf(provider), FEE, "the signer paid its fee once");
        assertEq(token.balanceOf(STRANGER), FEE, "the stranger kept its tokens");
    }
}
