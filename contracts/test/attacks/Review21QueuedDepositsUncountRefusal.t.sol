// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IDrawModule} from "../../src/interfaces/IDrawModule.sol";
import {Vm} from "../utils/TestBase.sol";

/// @title Review21QueuedDepositsUncountRefusal (outside review 21 of 29b4b57, DrawModule `_canLock` /
/// `_sessionHeld`, `SeatQuote.limit`)
/// @notice Property (rule S', docs/appeals-canaries.md): a lock refusal is uncounted (reason 5) only if the
/// locks THIS session holds on the auditor alone leave it less than one lock of its stake, `stake` being "what
/// its locks are checked against (free stake plus every lock it holds)". Every other refusal counts; the
/// `_canLock` NatSpec itself lists "queued deposits" among the LOCK_BARRED (counted) refusals.
/// Attack: when an auditor extends this round's ledger entry e and later entries follow it, `_canLock`
/// subtracts its queued deposits from BOTH `free` and `limit` (new in 29b4b57: `h.q.limit -= queued`) and
/// returns LOCK_SHORT; `_sessionHeld` then compares the session's locks with the deposit-less limit, so an
/// account whose snapshot weight is mostly queued deposits refuses as "session-held" (reason 5): not in W_R,
/// but its whole weight in W_E. The defender's account D (100 TRUST applied, 8 round-0 seats) deposits
/// 2,000 TRUST after round 0 (queued behind round 0's entry, so in D's backing and in the appeal snapshot's
/// weight: 2,100 of weight units x 1e6), sits on the round's earlier segments (one segment per `drawPanel`
/// call; the draw is permissionless), and after its first appeal seat a second address of the defender
/// deposits 1 TRUST into D's pool (a FLOW after e). On s D's session locks are 12 x 8 = 96 of its 100 applied
/// TRUST: reason 5. Set-up: tier 1 of D + 9 honest of 100 TRUST (equal weights put D at the round-0 seat cap,
/// 8 of 66 seats over 22 segments; the honest top up 100 TRUST each after round 0, queued, for room), 7
/// refusers of 100 TRUST (busy elsewhere; eligible 14 = 2 k_1: charged); the round names 4 segments D can sit
/// on before s, then s (7 seats each; on s: 6 honest + D eligible and not refusing).
/// Measured (command below): attack: 34 of 35 seats, D excluded on s with reason 5, round Cancelled,
/// charged, NOT refused (UNFILLABLE): the contested PASSes stand. Rule R's W_E on s = 4,000 (6 honest x 200 +
/// D 2,100 + refusers 700); counted W_R = 700 (2 x 700 <= 4,000). By the documented S' D's refusal counts
/// (its stake 2,101 less the session's 96 backs a lock; `_canLock`'s own NatSpec makes queued deposits a
/// LOCK_BARRED, counted, refusal): W_R = 2,800 of 4,000 (70%): REFUSED. Control (no 1-TRUST deposit, no entry
/// after e): D sits on s, the round is drawn whole (35/35; a panel decides, honest majority).
/// Cost to the defender: nothing lost (its deposits stay its stake); it needs D's applied stake filled by
/// the session's locks (12 seats at the minimum stake) and a call boundary between D's first appeal seat and
/// s: it calls `drawPanel(.., 1)` first once the seed is known (or any call stopped by 64 rejections serves).
/// Severity: MEDIUM (one defender account turns arbitrary queued stake into uncounted eligible weight,
/// beyond rule R/S' as documented; same effect class as Review21CappedEarlierAuditorInflatesEligible
/// without needing more segments than the seat cap).
/// Fixed (Staking.queuedAfter): an extension of an entry leaves out only the deposits queued AFTER it; those
/// queued before apply first and back it. The regression test below fails on 0f4112d and passes now.
/// Fix proposal: keep `h.q.limit` as quoted in `_canLock` (do not subtract `queued` from it), so `_sessionHeld`
/// compares the session's locks with the whole stake as the docs state: a shortfall that queued deposits
/// cause is then counted (reason 3), as `_canLock`'s NatSpec says. (Honest auditors whose top-ups are queued
/// are charged the same way, which is the documented rule; if that is unwanted, leave their queued stake
/// out of W_E instead, never only out of the S' limit.)
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review21*' -vv`.
contract Review21QueuedDepositsUncountRefusal is NoCanaryAppealsFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    uint256 internal constant SEGMENTS = 22;
    uint256 internal constant REFUSERS = 7;
    uint256 internal constant DEPOSIT = 2000e18;
    address internal constant FRIEND = address(0x21F0);

    event log_named_uint(string key, uint256 val);

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    function _refuser(uint256 i) internal pure returns (address) {
        return address(uint160(0x21DE0000 + i));
    }

    function _pick(uint256 sid, address d) internal view returns (uint256[] memory named) {
        uint256 r0 = drawModule.seatsOf(sid, 0, d).length;
        assertTrue(r0 >= 5 && r0 <= 8, "setup: D's round-0 seats");
        uint256 n = 12 - r0 + 1;
        named = new uint256[](n);
        uint256 j = 0;
        for (uint256 g = 0; g < SEGMENTS && j < n; ++g) {
            if (!_seatedOn(sid, d, g)) named[j++] = g;
        }
        assertEq(j, n, "setup: segments");
    }

    function _reasonOf(Vm.Log[] memory logs, address a) internal pure returns (uint256 reason) {
        bytes32 sig = IDrawModule.AuditorExcluded.selector;
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics.length < 3 || logs[i].topics[0] != sig) continue;
            if (address(uint160(uint256(logs[i].topics[2]))) != a) continue;
            (, reason) = abi.decode(logs[i].data, (uint256, uint256));
        }
    }

    function _weightOf(address a, uint256 epoch) internal view returns (uint256) {
        (bool exists, uint256 leaf) = _sortition().leafOf(1, a);
        return exists ? _sortition().leafWeightAt(1, epoch, leaf) : 0;
    }

    /// @dev Returns the round, D's last exclusion reason, the refusers' weight, D's weight and rule R's W_E.
    function _run(bool attack)
        internal
        returns (IAppealModule.Round memory rd, uint256 dReason, uint256 wr, uint256 wd, uint256 we)
    {
        _deployAppeals();
        _addAuditors(1, 1, 100e18); // D
        _addAuditors(1, 9, 100e18); // honest
        address d = auditorAddrs[0];
        _nextEpoch();
        uint256 sid = _passedSession(SEGMENTS, FEE);
        for (uint256 i = 1; i < auditorAddrs.length; ++i) {
            vm.prank(auditorAddrs[i]);
            staking.stake(auditorAddrs[i], 100e18); // honest top-up (queued): room for the appeal seats
        }
        uint256[] memory named = _pick(sid, d);
        token.transfer(d, DEPOSIT);
        token.transfer(FRIEND, 1e18);
        vm.prank(FRIEND);
        token.approve(address(stakingContract), type(uint256).max);
        vm.prank(d);
        staking.stake(d, DEPOSIT); // queued behind round 0's entry: in D's backing and the next snapshot
        for (uint256 i = 0; i < REFUSERS; ++i) {
            address a = _refuser(i);
            _joinTier(a, 1, 100e18);
        }
        _nextEpoch();
        assertTrue(appeals.quote(sid, named).refusalsCharged, "setup: charged");
        uint256 round = _appeal(sid, named);
        for (uint256 i = 0; i < REFUSERS; ++i) {
            _busyElsewhere(_refuser(i), 0);
        }
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        vm.recordLogs();
        for (uint256 c = 0; c < 32; ++c) {
            rd = appeals.roundOf(sid, round);
            bool open = rd.status == IAuditSessions.Status.Created
                || (rd.status == IAuditSessions.Status.Drawing && rd.drawnSeats < rd.totalSeats);
            if (!open) break;
            appeals.drawPanel(sid, round, 1); // one segment per call
            if (c == 0 && attack) {
                vm.prank(FRIEND); // the defender's second address (one pending deposit per holder)
                staking.stake(d, 1e18); // a FLOW after this round's entry
            }
        }
        dReason = _reasonOf(vm.getRecordedLogs(), d);
        rd = appeals.roundOf(sid, round);
        emit log_named_uint("D round-0 seats", drawModule.seatsOf(sid, 0, d).length);
        emit log_named_uint("D appeal seats", drawModule.seatsOf(sid, round, d).length);
        emit log_named_uint("D's last exclusion reason (0 none)", dReason);
        emit log_named_uint("named segments", named.length);
        emit log_named_uint("drawn seats", rd.drawnSeats);
        emit log_named_uint("total seats", rd.totalSeats);
        emit log_named_uint("cancelled", rd.status == IAuditSessions.Status.Cancelled ? 1 : 0);
        emit log_named_uint("refused", rd.refused ? 1 : 0);
        uint256 s = named[named.length - 1];
        for (uint256 i = 0; i < REFUSERS; ++i) {
            wr += _weightOf(_refuser(i), rd.epoch);
        }
        wd = _weightOf(d, rd.epoch);
        we = _sortition().totalWeightAt(1, rd.epoch);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            if (_seatedOn(sid, auditorAddrs[i], s)) we -= _weightOf(auditorAddrs[i], rd.epoch);
        }
        emit log_named_uint("D snapshot weight", wd);
        emit log_named_uint("refusers' weight (counted)", wr);
        emit log_named_uint("rule R's W_E", we);
    }

    /// @dev Attack: D's queued deposits make its refusal on s "session-held" (measured on 0f4112d: reason 5,
    /// 34/35, UNFILLABLE with W_R 700 of W_E 4,000). Fixed: D's 2,000 TRUST, queued before this round's
    /// entry, back the entry (`Staking.queuedAfter` counts only the friend's 1 TRUST after it), so D is not
    /// excluded at all and the round is drawn whole, as without the friend's deposit: a panel decides.
    function test_QueuedDepositsCannotUncountARefusal() public {
        (IAppealModule.Round memory rd, uint256 dReason,,,) = _run(true);
        assertEq(dReason, 0, "D is not excluded: its earlier deposits back the entry");
        assertEq(rd.drawnSeats, rd.totalSeats, "drawn whole despite the FLOW after the entry");
        assertTrue(!rd.refused && rd.status != IAuditSessions.Status.Cancelled, "not failed");
    }

    /// @dev Control: without the entry after e D sits on s and the round is drawn whole.
    function test_WithoutFollowingEntryDrawnWhole() public {
        (IAppealModule.Round memory rd,,,,) = _run(false);
        assertEq(rd.drawnSeats, rd.totalSeats, "drawn whole");
    }
}
