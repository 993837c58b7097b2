// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IDrawModule} from "../../src/interfaces/IDrawModule.sol";
import {PanelKey} from "../../src/libraries/PanelKey.sol";
import {Vm} from "../utils/TestBase.sol";

/// @title Review21DustDepositChargesHonest (outside review 21 of 29b4b57: rule R / S' against a third party's
/// deposit; the queued-deposit lock rule of `Staking._lock` / `DrawModule._canLock`)
/// @notice Property (a): an appellant cannot void a correct PASS (REFUSED) without a real stake-weighted
/// majority of the eligible refusing.
/// Attack: anyone may stake into any registered pool. An active honest auditor's top-up is queued (its ledger
/// holds entries) and backs its seats while this round's entry e is its ledger's last; a deposit by anyone
/// into the pool pushes a FLOW after e, and from then on `_canLock` (as `_lock`) takes the queued top-up out
/// of what may back more seats of e. The appellant draws the round one segment per call (permissionless) and
/// after each call deposits 1 TRUST into the pool of every auditor the call seated. Honest auditors whose
/// applied stake other sessions hold (their spare capacity is their queued top-up) then refuse every later
/// segment, and the refusal is COUNTED (reason 3: their applied stake less this session's locks still backs a
/// lock, the rest is another session's), with their whole snapshot weight (top-up included) in W_R.
/// Set-up: 20 honest tier-1 auditors of 100 TRUST, a 24-segment PASS session (k_0 = 3); after round 0 each
/// tops up 200 TRUST (queued behind round 0's entry, in its backing and the appeal snapshot) and is busy in
/// another session for its applied stake but `spare` seats (lock 100 - 8 x (round-0 seats + spare)); an
/// 8-segment appeal of segments 16-23 (56 seats, eligible 17 >= 14: charged), drawn one segment per call.
/// Measured (command below), 1 TRUST per seated pool (20 TRUST in all, kept as the appellant's stake):
/// spare 1: 20/56 drawn, 17 counted exclusions (reason 3), none reason 5, Cancelled, REFUSED (8 correct
/// PASSes voided, the bond refunded); spare 2: 40/56, 27 counted, REFUSED; spare 3: 56/56 (19 counted, the
/// round fills); spare 4: 56/56. Control (no dust, spare 1): 56/56, nothing excluded: every honest auditor
/// would have sat, backed by its queued top-up. Nobody chose to refuse: W_R is honest weight the
/// appellant's dust disqualified. The same happens without an attacker whenever another session seats the
/// auditor after e (an entry after e is all it takes).
/// Severity: HIGH under its premise (busy tiers: honest auditors whose applied stake other sessions and round
/// 0 hold to within 1-2 seats, their spare capacity a queued top-up; the state is set up here, not reached by
/// organic traffic). Free and permissionless for the appellant (dust stays its stake, REFUSED refunds the
/// bond). Root: `Staking._lock`'s rule (queued deposits back no extension of an entry that later entries
/// follow) is a refusal any third party can trigger, and rule S' charges it.
/// Fixed (Staking.queuedAfter): an extension of an entry leaves out only the deposits queued AFTER it; those
/// queued before apply first and back it. The regression test below fails on 0f4112d and passes now.
/// Fix proposal: a refusal that only the queued-deposit ordering causes (`free >= amount` before `_canLock`
/// subtracts `queued`) is nobody's choice: exclude the auditor for the segment from BOTH W_R and W_E (like
/// reason 4; this also closes Review21QueuedDepositsUncountRefusal, whose D then leaves W_E), or let a lock
/// open a new ledger entry for the key when later entries follow e (queued deposits ahead of it back it).
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review21*' -vv`.
contract Review21DustDepositChargesHonest is NoCanaryAppealsFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    event log_named_uint(string key, uint256 val);

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

    function _run(bool dust, uint256 spare)
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
            staking.stake(a, 200e18); // queued top-up
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
        bool[] memory dusted = new bool[](auditorAddrs.length);
        vm.recordLogs();
        for (uint256 c = 0; c < 64; ++c) {
            rd = appeals.roundOf(sid, round);
            bool open = rd.status == IAuditSessions.Status.Created
                || (rd.status == IAuditSessions.Status.Drawing && rd.drawnSeats < rd.totalSeats);
            if (!open) break;
            appeals.drawPanel(sid, round, 1);
            if (!dust) continue;
            for (uint256 i = 0; i < auditorAddrs.length; ++i) {
                address a = auditorAddrs[i];
                if (dusted[i] || drawModule.seatWordOf(PanelKey.keyOf(sid, round), a) == 0) continue;
                dusted[i] = true;
                vm.prank(appellant);
                token.approve(address(stakingContract), type(uint256).max);
                vm.prank(appellant);
                staking.stake(a, 1e18);
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
        emit log_named_uint("drawn seats", rd.drawnSeats);
        emit log_named_uint("total seats", rd.totalSeats);
        emit log_named_uint("exclusions reason 3 (counted)", r3);
        emit log_named_uint("exclusions reason 5 (not counted)", r5);
        emit log_named_uint("cancelled", rd.status == IAuditSessions.Status.Cancelled ? 1 : 0);
        emit log_named_uint("refused", rd.refused ? 1 : 0);
    }

    /// @dev Attack: 1 TRUST into each seated pool, at spare 1 and 2 (measured on 0f4112d: REFUSED, 20/56 and
    /// 40/56, 17 and 27 counted exclusions). Fixed: a lock's entry is backed by every deposit queued before it
    /// (`Staking.queuedAfter` counts only the FLOWs after the entry), so the dust changes nothing: drawn whole.
    function test_DustDepositsChargeNoHonestRefusal_spare1() public {
        _assertDrawnWhole(1);
    }

    /// @dev The same with 2 spare seats (measured on 0f4112d: REFUSED, 40/56).
    function test_DustDepositsChargeNoHonestRefusal_spare2() public {
        _assertDrawnWhole(2);
    }

    function _assertDrawnWhole(uint256 spare) internal {
        (IAppealModule.Round memory rd, uint256 r3, uint256 r5) = _run(true, spare);
        assertTrue(!rd.refused, "a third party's dust must not void the PASSes");
        assertEq(rd.drawnSeats, rd.totalSeats, "the honest auditors sit, backed by their earlier top-ups");
        assertEq(r3 + r5, 0, "nobody excluded for stake");
    }

    /// @dev With 3 spare seats of applied stake the honest auditors outlast the dust: the round fills.
    function test_DustWithThreeSpareSeatsFills() public {
        (IAppealModule.Round memory rd,,) = _run(true, 3);
        assertEq(rd.drawnSeats, rd.totalSeats, "drawn whole");
    }

    /// @dev Control: without the dust every honest auditor sits (its queued top-up backs the seats).
    function test_WithoutDustDrawnWhole() public {
        (IAppealModule.Round memory rd,,) = _run(false, 1);
        assertEq(rd.drawnSeats, rd.totalSeats, "drawn whole");
    }
}
