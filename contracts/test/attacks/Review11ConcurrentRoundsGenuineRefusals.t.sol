// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {PanelKey} from "../../src/libraries/PanelKey.sol";
import {IDrawModule} from "../../src/interfaces/IDrawModule.sol";
import {Vm} from "../utils/TestBase.sol";

/// @title Review11ConcurrentRoundsGenuineRefusals (the fix of Review11ConcurrentRoundsExhaustStake, its limit)
/// @notice Property: a lock refused because the auditor's stake is held by another appeal panel of the same
/// session is not charged (DrawModule reason 5, `_sessionHeld`), but every other refusal in the same draw
/// still is: an auditor busy in ANOTHER session (stake short, no seat in the session's other rounds) or
/// deregistered (not eligible, whatever its seats elsewhere in the session) is excluded with reason 3
/// (counted). Since rule R (Review17SybilsBuyTheRefusalMargin) a failed draw is REFUSED only if the counted
/// refusers hold more than half of the failed segment's eligible stake: one busy auditor of 100 TRUST out
/// of about 1,700 eligible is counted but no majority, so round 3 now ends UNFILLABLE (was REFUSED).
/// Set-up (Review11ConcurrentRoundsExhaustStake's large tier): 20 tier-1 auditors of 100 TRUST, 24 correct
/// PASS segments, three 8-segment rounds; the first two drawn whole, then the genuine refusal, then the
/// third drawn until it fails (48/56 without the genuine refusal, UNFILLABLE after the fix).
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review11ConcurrentRoundsGenuine*' -vv`):
/// auditor 19 busy in another session before the appeals: round 3 drawn 39/56, charged, REFUSED on main
/// 92327f6 to 2e066eb; with rule R its refusals are still reason 3 (counted) and the round is UNFILLABLE
/// (100 TRUST of the eligible stake refused); control (own locks only): 48/56, charged, UNFILLABLE (main: REFUSED). Round 3's whole
/// draw (all drawPanel calls, 16 seats each, with the test's views): 4,760,068 gas on main, 4,777,930 with
/// the check (+17,862: one `sessionAppeals` read per call and one scan per refusing auditor per call).
contract Review11ConcurrentRoundsGenuineRefusals is NoCanaryAppealsFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    event log_named_uint(string key, uint256 val);

    uint256 internal sid;
    uint256[] internal rounds;

    function _range(uint256 from, uint256 count) internal pure returns (uint256[] memory s) {
        s = new uint256[](count);
        for (uint256 i = 0; i < count; ++i) {
            s[i] = from + i;
        }
    }

    /// @dev The world, `busy` (if not 0) made busy in another session before any appeal, three 8-segment
    /// rounds opened, the first two drawn whole.
    function _openThreeDrawTwo(uint256 busy) internal {
        _deployAppeals();
        _addAuditors(1, 20, 100e18);
        _nextEpoch();
        sid = _passedSession(24, FEE);
        if (busy != 0) _busyElsewhere(auditorAddrs[busy], 0);
        vm.startPrank(appellant);
        for (uint256 i = 0; i < 3; ++i) {
            rounds.push(appeals.appeal(sid, _range(8 * i, 8), type(uint256).max));
        }
        vm.stopPrank();
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        for (uint256 i = 0; i < 2; ++i) {
            _drawOut(rounds[i]);
        }
    }

    function _drawOut(uint256 r) internal {
        for (uint256 j = 0; j < 64; ++j) {
            IAppealModule.Round memory rd = appeals.roundOf(sid, r);
            bool open = rd.status == IAuditSessions.Status.Created
                || (rd.status == IAuditSessions.Status.Drawing && rd.drawnSeats < rd.totalSeats);
            if (!open) return;
            appeals.drawPanel(sid, r, 16);
        }
    }

    function _log(IAppealModule.Round memory last) internal {
        emit log_named_uint("round 1 drawn (of 56)", appeals.roundOf(sid, rounds[0]).drawnSeats);
        emit log_named_uint("round 2 drawn (of 56)", appeals.roundOf(sid, rounds[1]).drawnSeats);
        emit log_named_uint("round 3 drawn (of 56)", last.drawnSeats);
        emit log_named_uint("round 3 charged", last.refusalsCharged ? 1 : 0);
        emit log_named_uint("round 3 refused (1 = REFUSED)", last.refused ? 1 : 0);
    }

    /// @dev An auditor busy in another session (no seat in this session's rounds) refuses round 3's lock:
    /// charged, so the failed draw is REFUSED.
    function test_BusyInAnotherSessionIsStillCharged() public {
        _openThreeDrawTwo(19);
        address busy = auditorAddrs[19];
        assertEq(drawModule.seatWordOf(PanelKey.keyOf(sid, rounds[0]), busy), 0, "setup: not in round 1");
        assertEq(drawModule.seatWordOf(PanelKey.keyOf(sid, rounds[1]), busy), 0, "setup: not in round 2");
        vm.recordLogs();
        _drawOut(rounds[2]);
        (uint256 counted, uint256 uncounted) = _reasonsOf(vm.getRecordedLogs(), busy);
        emit log_named_uint("busy auditor: reason 3 (counted)", counted);
        emit log_named_uint("busy auditor: reason 5 (not counted)", uncounted);
        IAppealModule.Round memory last = appeals.roundOf(sid, rounds[2]);
        _log(last);
        assertTrue(last.status == IAuditSessions.Status.Cancelled, "round 3's draw failed");
        assertTrue(last.refusalsCharged, "eligible 17 >= 14");
        assertTrue(counted != 0 && uncounted == 0, "a refusal for another session's locks is counted");
        assertTrue(!last.refused, "rule R: one auditor's stake is no majority of the eligible stake");
    }

    /// @dev `a`'s lock exclusions in the recorded logs: reason 3 and reason 5.
    function _reasonsOf(Vm.Log[] memory logs, address a) internal pure returns (uint256 r3, uint256 r5) {
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics.length < 3 || logs[i].topics[0] != IDrawModule.AuditorExcluded.selector) {
                continue;
            }
            if (address(uint160(uint256(logs[i].topics[2]))) != a) continue;
            (, uint256 reason) = abi.decode(logs[i].data, (uint256, uint256));
            if (reason == 3) ++r3;
            if (reason == 5) ++r5;
        }
    }

    /// @dev Control: nothing but the session's own locks; round 3 fails UNFILLABLE (not REFUSED).
    function test_OwnLocksOnlyIsUnfillable() public {
        _openThreeDrawTwo(0);
        uint256 g = gasleft();
        _drawOut(rounds[2]);
        emit log_named_uint("round 3 draw gas (all calls, incl. views)", g - gasleft());
        IAppealModule.Round memory last = appeals.roundOf(sid, rounds[2]);
        _log(last);
        assertTrue(last.status == IAuditSessions.Status.Cancelled, "round 3's draw failed");
        assertTrue(last.refusalsCharged && !last.refused, "the session's own locks are no refusal");
    }
}
