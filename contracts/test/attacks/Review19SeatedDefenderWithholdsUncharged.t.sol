// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {PanelKey} from "../../src/libraries/PanelKey.sol";
import {IDrawModule} from "../../src/interfaces/IDrawModule.sol";
import {Vm} from "../utils/TestBase.sol";

/// @title Review19SeatedDefenderWithholdsUncharged (attack on c3a2211, DrawModule reason 5)
/// @notice Property: a defender cannot turn a would-be REFUSED appeal draw into UNFILLABLE (contested PASS
/// stands, no refusal charged) by emptying the free stake of its own accounts after sortition seated them
/// in ANOTHER appeal round of the same session.
/// Attack: 20 tier-1 auditors of 100 TRUST, 24 PASS segments, two 8-segment appeal rounds A and B of the
/// session. A is drawn whole (56 seats over 20 auditors: sortition seats about every auditor, defender's
/// too). The defender owns K = 9 of the 20 (45% of the tier, under the honest-majority margin) and, before
/// B draws, locks all their free stake in another session (`_busyElsewhere(a, 0)`). Their B refusals are
/// reason 5 (not counted), and so are the honest auditors' (also seated in A), so B fails with no charged
/// refusal: UNFILLABLE. Control: the SAME 9 accounts make the SAME move before A draws (no seat in A): their
/// refusals are reason 3, counted, B is REFUSED. Without the defender's move B fills 56/56.
/// Measured before the fix (cd200f2, command below): K = 9 after A: B drawn 48/56, cancelled, refusalsCharged, NOT refused
/// (UNFILLABLE); B's lock exclusions: defender 40 reason 5, honest 4 reason 5, none reason 3 (nothing
/// counted). Control K = 9 before A: B drawn 27/56, REFUSED (defender 29 reason 3, honest 5 reason 5). K = 8 after A: B fills 56/56; K = 10 after
/// A: 41/56 UNFILLABLE (control 6/56 REFUSED). Cost to the defender: no slash, no bond; only its stake is
/// locked in another session's draw for the window (a session it may open itself).
/// Severity: medium. The documented limit (a) of `_sessionHeld` assumed the honest auditors left would be
/// charged; in a small tier every auditor, honest or not, is seated in A, so none was, and a minority
/// defender withheld for free what the same move before A would have charged.
/// Fix (DrawModule `_sessionHeld`): a stake-short refusal is uncounted (reason 5) only if the session's own
/// locks alone explain it: `limit - (seats in the session's other rounds, round 0 included, + this round's
/// seats so far) x lockAmount < lockAmount`, `limit` being what free stake is measured against
/// (`IStaking.SeatQuote.limit`, new). The defender's accounts are short because of another session's
/// locks: counted (reason 3).
/// Measured after the fix (command below): K = 9 after A: B drawn 48/56, cancelled, charged, REFUSED; B's
/// lock exclusions: defender 40 reason 3 (counted), honest 4 reason 5 (their stake is the session's own
/// locks). Control before A: 27/56, REFUSED (defender 29 reason 3, honest 5 reason 5). No withholding: 56/56. On main 2e066eb the attack test
/// fails (defender 40 / honest 4 reason 5, UNFILLABLE).
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review19*' -vv`.
contract Review19SeatedDefenderWithholdsUncharged is NoCanaryAppealsFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    event log_named_uint(string key, uint256 val);

    uint256 internal constant K = 9;

    uint256 internal sid;
    uint256 internal ra;
    uint256 internal rb;

    function _range(uint256 from, uint256 count) internal pure returns (uint256[] memory s) {
        s = new uint256[](count);
        for (uint256 i = 0; i < count; ++i) {
            s[i] = from + i;
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

    function _setUp() internal {
        _deployAppeals();
        _addAuditors(1, 20, 100e18);
        _nextEpoch();
        sid = _passedSession(24, FEE);
        vm.startPrank(appellant);
        ra = appeals.appeal(sid, _range(0, 8), type(uint256).max);
        rb = appeals.appeal(sid, _range(8, 8), type(uint256).max);
        vm.stopPrank();
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
    }

    /// @dev `afterA`: the defender (the first k auditors seated in A) empties stake after A is drawn; else the
    /// same accounts do it before A draws. Returns B and the accounts count.
    function _run(uint256 k, bool afterA) internal returns (IAppealModule.Round memory b, uint256 seatedInA) {
        _setUp();
        address[] memory mine = new address[](k);
        if (afterA) {
            _drawOut(ra);
            uint256 n = 0;
            for (uint256 i = 0; i < auditorAddrs.length && n < k; ++i) {
                if (drawModule.seatWordOf(PanelKey.keyOf(sid, ra), auditorAddrs[i]) != 0) {
                    mine[n++] = auditorAddrs[i];
                }
            }
            seatedInA = n;
            for (uint256 i = 0; i < n; ++i) {
                _busyElsewhere(mine[i], 0);
            }
        } else {
            // Same accounts as the attack run picks (deterministic world): compute them in a snapshot.
            uint256 snap = vm.snapshotState();
            _drawOut(ra);
            uint256 n = 0;
            for (uint256 i = 0; i < auditorAddrs.length && n < k; ++i) {
                if (drawModule.seatWordOf(PanelKey.keyOf(sid, ra), auditorAddrs[i]) != 0) {
                    mine[n++] = auditorAddrs[i];
                }
            }
            seatedInA = n;
            vm.revertToState(snap);
            for (uint256 i = 0; i < n; ++i) {
                _busyElsewhere(mine[i], 0);
            }
            _drawOut(ra);
        }
        vm.recordLogs();
        _drawOut(rb);
        _countReasons(vm.getRecordedLogs(), mine, seatedInA);
        b = appeals.roundOf(sid, rb);
        emit log_named_uint("K defender accounts", seatedInA);
        emit log_named_uint("round A drawn", appeals.roundOf(sid, ra).drawnSeats);
        emit log_named_uint("round B drawn", b.drawnSeats);
        emit log_named_uint("round B total", b.totalSeats);
        emit log_named_uint("round B cancelled", b.status == IAuditSessions.Status.Cancelled ? 1 : 0);
        emit log_named_uint("round B charged", b.refusalsCharged ? 1 : 0);
        emit log_named_uint("round B refused", b.refused ? 1 : 0);
    }

    /// @dev Logs B's lock exclusions by reason (3 counted, 5 not), defender's and honest auditors' apart.
    function _countReasons(Vm.Log[] memory logs, address[] memory mine, uint256 n) internal {
        uint256[4] memory c; // defender r3, defender r5, honest r3, honest r5
        bytes32 sig = IDrawModule.AuditorExcluded.selector;
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics.length < 3 || logs[i].topics[0] != sig) continue;
            (, uint256 reason) = abi.decode(logs[i].data, (uint256, uint256));
            if (reason != 3 && reason != 5) continue;
            address a = address(uint160(uint256(logs[i].topics[2])));
            bool own = false;
            for (uint256 j = 0; j < n; ++j) {
                if (mine[j] == a) own = true;
            }
            ++c[(own ? 0 : 2) + (reason == 5 ? 1 : 0)];
        }
        emit log_named_uint("B exclusions defender reason 3 (counted)", c[0]);
        emit log_named_uint("B exclusions defender reason 5 (not counted)", c[1]);
        emit log_named_uint("B exclusions honest reason 3 (counted)", c[2]);
        emit log_named_uint("B exclusions honest reason 5 (not counted)", c[3]);
    }

    /// @dev The attack: 9 defender accounts seated in A empty their free stake; B's refusals are charged.
    function test_SeatedDefenderRefusalsAreCharged() public {
        (IAppealModule.Round memory b,) = _run(K, true);
        assertTrue(b.status == IAuditSessions.Status.Cancelled, "B's draw failed");
        assertTrue(b.refusalsCharged, "admission charges refusals");
        assertTrue(b.refused, "a minority's free withholding must be REFUSED, not UNFILLABLE");
    }

    /// @dev Control: the same 9 accounts withhold before A draws (no seat in A): counted, REFUSED.
    function test_SameWithholdingBeforeAIsRefused() public {
        (IAppealModule.Round memory b, uint256 n) = _run(K, false);
        assertEq(n, K, "setup: K accounts");
        assertTrue(b.status == IAuditSessions.Status.Cancelled && b.refusalsCharged && b.refused, "REFUSED");
    }

    /// @dev Control: without the defender's move B fills.
    function test_NoWithholdingFills() public {
        _setUp();
        _drawOut(ra);
        _drawOut(rb);
        IAppealModule.Round memory b = appeals.roundOf(sid, rb);
        emit log_named_uint("no withholding: round B drawn", b.drawnSeats);
        assertEq(b.drawnSeats, b.totalSeats, "B fills");
    }
}
