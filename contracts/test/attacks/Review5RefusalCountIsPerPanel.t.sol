// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AttackBase} from "./AttackBase.sol";
import {Vm} from "../utils/TestBase.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IDrawModule} from "../../src/interfaces/IDrawModule.sol";

/// @title Review5RefusalCountIsPerPanel (outside review 5 of main edc6491, `_panelRefusals`)
/// @notice Properties (hold on main, regression tests):
/// - the panel-wide refusal count is keyed by (session, round): refusals in one session's draw, even one
///   drawn in the same transaction, never turn another session's genuinely short draw into DrawRefused
///   (it is refunded as DrawFailed);
/// - (by reading, not a test) the only exclusions the count skips (provider, seat cap, earlier panel) are
///   fixed by the snapshot and the seed; every other ineligibility (withdrawal, deregistration, tier change,
///   stake locked elsewhere, full ledger) goes through `_canLock` and is counted. After the seed an account
///   can only accept (top up) or refuse (counted), so exactly one refusal-free path exists per seed: no
///   uncounted choice re-rolls a refund.
contract Review5RefusalCountIsPerPanel is AttackBase {
    address internal refuser;

    function setUp() public {
        _deployProtocol();
        for (uint256 i = 0; i < 3; ++i) {
            _newAuditor(1, 100e18);
        }
        refuser = _newAuditor(1, 10_000e18); // sampled first with probability ~97%
        _newAuditor(2, 1000e18); // tier 2: two auditors for three seats, truly short
        _newAuditor(2, 1000e18);
    }

    function _reported(Vm.Log[] memory logs, uint256 a)
        internal
        pure
        returns (uint256 reported, bool found, uint256 refusalsA)
    {
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics[0] == IDrawModule.AuditorExcluded.selector && uint256(logs[i].topics[1]) == a)
            {
                (, uint256 reason) = abi.decode(logs[i].data, (uint256, uint256));
                if (reason == 3) ++refusalsA;
            }
            if (logs[i].topics[0] == IDrawModule.DrawFailed.selector) {
                (,,,,, reported) =
                    abi.decode(logs[i].data, (uint256, uint256, uint256, uint256, uint256, uint256));
                found = true;
            }
        }
    }

    function test_RefusalsOfOneSessionNeverReachAnother() public {
        uint256 a = _openUniform(2, 1, 0); // tier 1, drawn with a refusal
        uint256 before = _balance(_provider());
        uint256 b = _openUniform(1, 2, 0); // tier 2, short: 2 auditors for 3 seats
        uint256 feeB = before - _balance(_provider());
        _waitForRandomness(a);
        _waitForRandomness(b);
        _lockElsewhere(refuser); // its free stake is used by another session: its lock is refused
        vm.recordLogs();
        sessions.draw(a, 3); // first segment only: refusals stored in _panelRefusals[a]
        sessions.draw(b, 16); // same transaction context
        (uint256 reported, bool found, uint256 refusalsA) = _reported(vm.getRecordedLogs(), a);
        emit log_named_uint("session a lock refusals", refusalsA);
        assertTrue(refusalsA >= 1, "setup: session a's draw refused a lock");
        sessions.draw(a, 16);
        assertTrue(_drawDone(a), "session a drawn in full despite its refusal");
        assertTrue(found, "session b's draw failed");
        assertEq(reported, 0, "no refusal of session a counted for session b");
        IAuditSessions.Session memory s = _sessionRecord(b);
        assertEq(uint256(s.termination), uint256(IAuditSessions.Termination.DrawFailed), "refunded ending");
        _logTrust("session b refunded", _balance(_provider()) + feeB - before);
        emit log_named_uint("session b seats drawn (R each kept for them)", s.drawnSeats);
        assertEq(
            _balance(_provider()) + feeB - before,
            feeB * 8 / 10 - s.drawnSeats * 6e18,
            "pool refunded minus R per seat"
        );
    }
}
