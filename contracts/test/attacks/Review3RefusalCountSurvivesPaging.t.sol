// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AttackBase} from "./AttackBase.sol";
import {Vm} from "../utils/TestBase.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IDrawModule} from "../../src/interfaces/IDrawModule.sol";

/// @title Review3RefusalCountSurvivesPaging (outside review 3 of commit 5f0a62e, DrawRefused)
/// @notice Property: a failing segment's lock refusals are counted whole even when the draw of that
/// segment is split over calls by MAX_REJECTIONS_PER_CALL (64), and the last call, which finds the
/// segment empty, refuses nothing itself; and refusals by deregistration or by a partial withdrawal
/// that leaves the stake below the tier minimum count like a full withdrawal.
/// @dev The attack tried: the provider's 64 accounts refuse, and the provider's own address is a member
/// of the tier (excluded as REASON_PROVIDER, not a refusal). The first call stops after 64 rejections
/// with one leaf left; the second call samples it and fails. If the refusal count were lost at the call
/// boundary (`_resumeAt` bits 16-31) the failure would be refunded. It is not: DrawRefused, and the
/// DrawFailed event reports all 64 refusals. (The 16-bit field would wrap only past 65,535 refusals in
/// one segment, i.e. as many refusing leaves; a call loads every stored exclusion of the segment, so
/// that draw runs out of block gas long before.)
contract Review3RefusalCountSurvivesPaging is AttackBase {
    uint256 internal constant REFUSERS = 64;
    address[] internal refusers;

    function setUp() public {
        _deployProtocol();
        _newAuditor(1, 1000e18);
        _newAuditor(1, 1000e18);
        for (uint256 i = 0; i < REFUSERS; ++i) {
            refusers.push(_newAuditor(1, 100e18));
        }
        // The provider's own address is a tier-1 auditor too (excluded for the whole panel, reason 1).
        address p = _provider();
        vm.prank(p);
        registry.register(1, 2, keccak256("provider x25519"));
        vm.startPrank(p);
        token.approve(address(staking), 1000e18);
        staking.stake(p, 1000e18);
        vm.stopPrank();
    }

    function test_RefusalCountSurvivesPaging() public {
        uint256 fee = _feeFor(3);
        uint256 before = _balance(_provider());
        uint256 sid = _openUniform(1, 1, fee);
        _waitForRandomness(sid);
        // Each refuser's stake is locked by another session it drew first (a withdrawal request or a
        // deregistration no longer refuses snapshot stake, docs/protocol-v2.md 5.1).
        for (uint256 i = 0; i < REFUSERS; ++i) {
            _lockElsewhere(refusers[i]);
        }
        vm.recordLogs();
        uint256 calls = 0;
        for (; calls < 10; ++calls) {
            IAuditSessions.Session memory cur = _sessionRecord(sid);
            if (cur.status != IAuditSessions.Status.Drawing && cur.status != IAuditSessions.Status.Created) {
                break;
            }
            sessions.draw(sid, 16);
        }
        Vm.Log[] memory logs = vm.getRecordedLogs();
        uint256 reported = type(uint256).max;
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics[0] == IDrawModule.DrawFailed.selector) {
                (,,,,, reported) =
                    abi.decode(logs[i].data, (uint256, uint256, uint256, uint256, uint256, uint256));
            }
        }
        IAuditSessions.Session memory s = _sessionRecord(sid);
        emit log_named_uint("draw calls", calls);
        emit log_named_uint("refusals reported by DrawFailed", reported);
        _logTrust("refunded to the provider", _balance(_provider()) - (before - fee));
        assertEq(calls, 2, "the segment's draw spans two calls");
        assertEq(reported, REFUSERS, "every refusal counted across the call boundary");
        assertEq(uint256(s.termination), uint256(IAuditSessions.Termination.DrawRefused), "DrawRefused");
        assertEq(_balance(_provider()), before - fee, "nothing refunded");
    }
}
