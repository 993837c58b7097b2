// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "./utils/StakingFixture.sol";
import {SessionOps} from "../src/SessionOps.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../src/interfaces/IRandomness.sol";

/// @notice Issue 12: AuditSessions runs its cold entry points (owner's source/parameter changes, the opening)
/// in `SessionOps` by DELEGATECALL. The code deployed by the core's constructor (its first CREATE) answers
/// a direct call with `NotCore` only, and its `initialize` cannot run again through the core.
/// Command: scripts/forge test --match-path contracts/test/SessionOps.t.sol -vv
contract SessionOpsTest is StakingFixture {
    SessionOps internal ops;

    function setUp() public {
        _deploy();
        // A contract's first CREATE uses nonce 1 (EIP-161).
        ops = SessionOps(_createAddress(address(sessions), 1));
        assertTrue(address(ops).code.length != 0, "the core deployed its ops");
    }

    /// @dev RLP of [sender, nonce] for a nonce in 1..127.
    function _createAddress(address sender, uint256 nonce) internal pure returns (address) {
        return
            address(
                uint160(uint256(keccak256(abi.encodePacked(bytes2(0xd694), sender, bytes1(uint8(nonce))))))
            );
    }

    function test_DirectCallsRevertNotCore() public {
        IAuditSessions.SessionParams memory p = _sessionParams();
        vm.startPrank(address(sessions)); // ops' own owner: still refused
        vm.expectRevert(SessionOps.NotCore.selector);
        ops.setParams(p);
        vm.expectRevert(SessionOps.NotCore.selector);
        ops.setRandomness(IRandomness(address(randomness)));
        vm.expectRevert(SessionOps.NotCore.selector);
        ops.initialize(IRandomness(address(randomness)), p);
        vm.stopPrank();
        vm.prank(provider);
        vm.expectRevert(SessionOps.NotCore.selector);
        ops.openSession(keccak256("root"), _uniform(1, 1), 1000e18);
        vm.expectRevert(SessionOps.NotCore.selector);
        ops.payOut(1, 0, 0, 0);
    }

    function test_CoreForwardsItsColdEntriesWithTheirChecks() public {
        // The owner check runs in SessionOps on the core's storage: a stranger is refused, the owner is not.
        vm.expectRevert();
        sessions.setParams(_sessionParams());
        vm.prank(owner);
        sessions.setParams(_sessionParams());
        assertEq(sessions.paramsVersion(), 1, "a new version in the core's storage");
        // `initialize` has no stub in the core: its selector reaches no code there.
        (bool ok,) = address(sessions)
            .call(abi.encodeCall(SessionOps.initialize, (IRandomness(address(randomness)), _sessionParams())));
        assertTrue(!ok, "initialize is not reachable through the core");
        assertEq(sessions.paramsVersion(), 1, "unchanged");
    }
}
