// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IDrawModule} from "../../src/interfaces/IDrawModule.sol";
import {PanelKey} from "../../src/libraries/PanelKey.sol";
import {Vm} from "../utils/TestBase.sol";

/// @title Review23QueuedScanFallbackChargesHonest (outside review 23 of 55d381a: `Staking._queuedAfter`'s
/// QUEUED_SCAN fallback, mirrored by `DrawModule._canLock`)
/// @notice Property (a) of rule R / S' (docs/appeals-canaries.md "Who counts"): an appellant cannot void a
/// correct PASS (REFUSED) without a real stake-weighted majority of the eligible refusing; in particular a
/// third party's deposit takes no backing away from an honest auditor (the property 55d381a restored,
/// Review21DustDepositChargesHonest).
/// Attack: 55d381a counts exactly the deposits queued after the round's entry e only while at most
/// QUEUED_SCAN = 8 entries follow e; with 9 or more, `queuedAfter` returns EVERY queued deposit of the pool
/// (those queued before e included), which is the pre-fix rule of Review21DustDepositChargesHonest (HIGH).
/// Entries after e alternate FLOW / SESSION (a FLOW per gap), so 9 entries are 5 FLOWs and 4 SESSION
/// entries: 5 deposits of 1 wei from 5 fresh addresses (a holder has one pending deposit per pool) and the
/// auditor seated in 4 other panels while this round is drawn (the appellant opening and drawing 4 sessions
/// or appeal rounds of the tier, or plain organic traffic in a busy tier). Here the 4 other panels are
/// stand-ins: one direct `lockSeat` of one 8 TRUST seat each (the draw module pranked, as
/// `_busyElsewhere` does), so the test measures the rule, not the cost of getting seated.
/// Set-up as Review21DustDepositChargesHonest (20 honest tier-1 auditors of 100 TRUST, a 24-segment PASS
/// session, each tops up 200 TRUST after round 0 (queued before e), busy elsewhere but `spare` seats of its
/// applied stake; an 8-segment appeal of 56 seats drawn one segment per call); after the call that seats an
/// auditor, the appellant pushes `sessions` stand-in SESSION entries on it, each followed by a 1-wei deposit
/// (plus one before the first).
/// Measured (command below), spare 1: sessions 4 (9 entries after e): 20/56 drawn, 17 counted exclusions
/// (reason 3), none reason 5, REFUSED - the 8 correct PASSes voided; spare 2: the same (20/56, 17 counted,
/// REFUSED). Controls (spare 1): sessions 3 with the dust (7 entries after e, exact scan): 56/56, no
/// exclusion; sessions 4 without the dust (4 entries after e, the same 32 TRUST of stand-in locks): 56/56,
/// no exclusion - the refusals are the fallback's, not the stake's (the queued 200 TRUST backs them).
/// Severity: MEDIUM. The HIGH of Review21DustDepositChargesHonest returns behind one precondition: 4 other
/// panels seat the honest auditors between their first seat of the round and the round's last segment. In a
/// thin tier one 24-segment session seats nearly every auditor, so 4 sessions (4 fees, which pay the
/// honest) or 4 organic sessions in a busy tier suffice; the 5 deposits cost 5 wei. The Review21 defender
/// attack (QueuedDepositsUncountRefusal: reason 5, uncounted) returns under the same precondition, since
/// `_canLock` subtracts the fallback from `limit` too.
/// Fix proposal: make `queuedAfter` exact in O(1): a pool counter of deposits ever queued (monotone) and,
/// in the SESSION entry (or a side word written at `_openEntry`), its value when the entry was pushed;
/// every deposit made after that joined a FLOW after the entry, so queuedAfter(e) = counter - counter(e).
/// Or raise QUEUED_SCAN to the ledger capacity's bound with a gas cap measured on the draw path.
/// Fixed (`Staking.queuedAfter` exact in O(1), QUEUED_SCAN and its fallback removed): a pool counter of the
/// deposits ever queued, recorded at a SESSION entry's push when deposits are pending, gives the deposits
/// queued after the entry however many entries follow it (Review23QueuedAfterExact). Measured after: spare
/// 1, spare 2 and 8 other panels (17 entries after e): 56/56 drawn, no exclusion (reason 3 or 5), not
/// refused. Before (the same tests on the code before the fix): 20/56, 17 counted exclusions, REFUSED in
/// all three.
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review23QueuedScan*' -vv`.
contract Review23QueuedScanFallbackChargesHonest is NoCanaryAppealsFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    event log_named_uint(string key, uint256 val);

    uint256 internal _fresh;
    bool internal _withDust = true;

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    function _range(uint256 from, uint256 count) internal pure returns (uint256[] memory s) {
        s = new uint256[](count);
        for (uint256 i = 0; i < count; ++i) {
            s[i] = from + i;
        }
    }

    /// @dev A 1-wei deposit from a fresh address: one more FLOW at the tail of `a`'s ledger.
    function _dust(address a) internal {
        address h = address(uint160(0x23D00000 + ++_fresh));
        token.transfer(h, 1);
        vm.startPrank(h);
        token.approve(address(stakingContract), 1);
        staking.stake(a, 1);
        vm.stopPrank();
    }

    /// @dev `sessions` other panels seat `a` (one 8 TRUST seat each), a dust FLOW after each.
    function _crowd(address a, uint256 sessions) internal {
        if (_withDust) _dust(a);
        for (uint256 k = 0; k < sessions; ++k) {
            vm.prank(address(drawModule));
            (bool ok,,) = staking.lockSeat(a, 1, 0xC0DE0 + k, 8e18, 0);
            assertTrue(ok, "setup: seated in another panel");
            if (_withDust) _dust(a);
        }
    }

    function _run(uint256 sessions, uint256 spare)
        internal
        returns (IAppealModule.Round memory rd, uint256 r3, uint256 r5)
    {
        _deployAppeals();
        _addAuditors(1, 20, 100e18);
        _nextEpoch();
        uint256 sid = _passedSession(24, FEE);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address a = auditorAddrs[i];
            token.transfer(a, 200e18);
            vm.prank(a);
            staking.stake(a, 200e18); // queued top-up, before the round's entry
        }
        _nextEpoch();
        uint256[] memory named = _range(16, 8);
        assertTrue(appeals.quote(sid, named).refusalsCharged, "setup: charged");
        uint256 round = _appeal(sid, named);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address a = auditorAddrs[i];
            uint256 r0 = drawModule.seatsOf(sid, 0, a).length;
            uint256 used = 8e18 * (r0 + spare);
            uint256 o = used < 100e18 ? 100e18 - used : 0;
            if (o != 0) {
                vm.prank(address(drawModule));
                (bool ok,,) = staking.lockSeat(a, 1, 0xB05E, o, 0);
                assertTrue(ok, "setup: busy elsewhere");
            }
        }
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        bool[] memory crowded = new bool[](auditorAddrs.length);
        uint256 key = PanelKey.keyOf(sid, round);
        vm.recordLogs();
        for (uint256 c = 0; c < 64; ++c) {
            rd = appeals.roundOf(sid, round);
            bool open = rd.status == IAuditSessions.Status.Created
                || (rd.status == IAuditSessions.Status.Drawing && rd.drawnSeats < rd.totalSeats);
            if (!open) break;
            appeals.drawPanel(sid, round, 1);
            for (uint256 i = 0; i < auditorAddrs.length; ++i) {
                address a = auditorAddrs[i];
                if (crowded[i] || drawModule.seatWordOf(key, a) == 0) continue;
                crowded[i] = true;
                _crowd(a, sessions);
            }
        }
        Vm.Log[] memory logs = vm.getRecordedLogs();
        bytes32 sig = IDrawModule.AuditorExcluded.selector;
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics.length < 3 || logs[i].topics[0] != sig) continue;
            (, uint256 reason) = abi.decode(logs[i].data, (uint256, uint256));
            if (reason == 3) ++r3;
            if (reason == 5) ++r5;
        }
        rd = appeals.roundOf(sid, round);
        emit log_named_uint("other panels per auditor", sessions);
        emit log_named_uint("drawn seats", rd.drawnSeats);
        emit log_named_uint("total seats", rd.totalSeats);
        emit log_named_uint("exclusions reason 3 (counted)", r3);
        emit log_named_uint("exclusions reason 5 (not counted)", r5);
        emit log_named_uint("refused", rd.refused ? 1 : 0);
    }

    /// @dev Attack: 4 other panels + 5 wei of dust per seated auditor (9 entries after e): fixed, the
    /// queued top-ups still back the honest auditors' seats (measured: 56/56, no exclusion).
    function test_QueuedScanFallbackChargesHonest_spare1() public {
        (IAppealModule.Round memory rd, uint256 r3, uint256 r5) = _run(4, 1);
        assertTrue(!rd.refused, "entries after e must not void the PASSes");
        assertEq(rd.drawnSeats, rd.totalSeats, "the honest auditors sit, backed by their earlier top-ups");
        assertEq(rd.drawnSeats, 56, "56 seats");
        assertEq(r3, 0, "nobody charged");
        assertEq(r5, 0, "nobody excluded for stake");
    }

    /// @dev The same with 2 spare seats: fixed (measured: 56/56, no exclusion).
    function test_QueuedScanFallbackChargesHonest_spare2() public {
        (IAppealModule.Round memory rd, uint256 r3, uint256 r5) = _run(4, 2);
        assertTrue(!rd.refused, "entries after e must not void the PASSes");
        assertEq(rd.drawnSeats, rd.totalSeats, "drawn whole");
        assertEq(r3 + r5, 0, "nobody excluded for stake");
    }

    /// @dev Beyond the attack's 9 entries: 8 other panels and 9 wei of dust (17 entries after e): the same.
    function test_QueuedScanFallbackChargesHonest_eightPanels() public {
        (IAppealModule.Round memory rd, uint256 r3, uint256 r5) = _run(8, 1);
        assertTrue(!rd.refused, "entries after e must not void the PASSes");
        assertEq(rd.drawnSeats, rd.totalSeats, "drawn whole");
        assertEq(r3 + r5, 0, "nobody excluded for stake");
    }

    /// @dev Control: the same 4 other panels (32 TRUST locked) without the dust (4 entries after e, the exact
    /// scan): drawn whole, so the 32 TRUST locks alone refuse nothing.
    function test_FourPanelsWithoutDustDrawnWhole() public {
        _withDust = false;
        (IAppealModule.Round memory rd, uint256 r3, uint256 r5) = _run(4, 1);
        assertTrue(!rd.refused, "not refused");
        assertEq(rd.drawnSeats, rd.totalSeats, "drawn whole");
        assertEq(r3 + r5, 0, "nobody excluded for stake");
    }

    /// @dev Control: 3 other panels (7 entries after e, the exact scan) with the same dust: drawn whole.
    function test_ExactScanDrawnWhole() public {
        (IAppealModule.Round memory rd, uint256 r3, uint256 r5) = _run(3, 1);
        assertTrue(!rd.refused, "not refused");
        assertEq(rd.drawnSeats, rd.totalSeats, "drawn whole");
        assertEq(r3 + r5, 0, "nobody excluded for stake");
    }
}
