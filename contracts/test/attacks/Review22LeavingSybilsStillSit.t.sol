// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Vm} from "../utils/TestBase.sol";
import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review22LeavingSybilsStillSit (outside review 22 of 0f4112d; holds)
/// @notice Property (docs "Round size", rule R): the capped capacity counts accounts and rule R counts stake, so
/// light accounts that inflate E must not be able to turn into counted refusals that end the round UNFILLABLE.
/// Attack tried (the counted-refusal version of Review22MinStakeSybilsInflateCapacity, at the fixture's min
/// stake 100 TRUST = 12 locks): 10 honest auditors of 1,000 TRUST, seat cap 4, k_0 = 3, a 13-segment PASS
/// session; the defender stakes 48 accounts of 100 TRUST (E 55, capacity 91: the 91-seat round is admitted,
/// refused up front without them: control) and deregisters all 48 right after the round is mined.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review22LeavingSybils*' -vv`): the
/// deregistered accounts are still seated (snapshot stake sticks): 91 of 91 drawn, 0 counted refusals, 0
/// session-held, 51 seats on the 48 accounts (the honest 10 at the cap of 4); status Drawing. So the lure needs
/// accounts that back fewer than seatCap locks (Review22MinStakeSybilsInflateCapacity), not leaving. Note:
/// the 48 accounts hold 4,800 of 14,800 TRUST (32%) and 51 of 91 seats (56%): the panel-capture side is
/// Review22LightAccountsOutdrawThinTier (the per-segment draw in a thin tier, not the cap: uncapped, 52).
contract Review22LeavingSybilsStillSit is NoCanaryAppealsFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    event log_named_uint(string key, uint256 val);

    uint256 internal constant MIN = 100e18; // the fixture's min stake
    uint256 internal constant SEGMENTS = 13;
    uint256 internal constant SYBILS = 48;

    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatCap = 4;
    }

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    function _segsN(uint256 n) internal pure returns (uint256[] memory s) {
        s = new uint256[](n);
        for (uint256 i = 0; i < n; ++i) {
            s[i] = i;
        }
    }

    function _setUp(uint256 sybils) internal returns (uint256 sid) {
        sid = _setUpPassedSession(10, SEGMENTS, FEE);
        for (uint256 i = 0; i < sybils; ++i) {
            _joinTier(vm.addr(0xD5B000 + i), 1, MIN);
        }
        _nextEpoch();
    }

    /// @dev Control: without the sybils the same round is refused up front (E 7: no capped round fits).
    function test_ControlWithoutSybilsRefusedUpFront() public {
        uint256 sid = _setUp(0);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.PanelTooLarge.selector, sid, 91, 0));
        appeals.quote(sid, _segsN(SEGMENTS));
    }

    function test_SybilsThatLeaveAfterTheSnapshotStillSit() public {
        uint256 sid = _setUp(SYBILS);
        IAppealModule.Quote memory q = appeals.quote(sid, _segsN(SEGMENTS));
        emit log_named_uint("quote total seats", q.totalSeats);
        uint256 round = _appeal(sid, _segsN(SEGMENTS));
        for (uint256 i = 0; i < SYBILS; ++i) {
            vm.prank(vm.addr(0xD5B000 + i));
            registry.deregister(); // after the round's snapshot: each sample of it is a counted refusal
        }
        vm.recordLogs();
        _drawRound(sid, round);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        uint256[6] memory reasons;
        bytes32 sig = keccak256("AuditorExcluded(uint256,uint256,address,uint256)");
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics.length == 0 || logs[i].topics[0] != sig) continue;
            (, uint256 reason) = abi.decode(logs[i].data, (uint256, uint256));
            ++reasons[reason];
        }
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        emit log_named_uint("seats drawn", rd.drawnSeats);
        emit log_named_uint("status", uint256(rd.status));
        emit log_named_uint("refused", rd.refused ? 1 : 0);
        emit log_named_uint("reason 2 cap", reasons[2]);
        emit log_named_uint("reason 3 counted", reasons[3]);
        emit log_named_uint("reason 4 earlier", reasons[4]);
        emit log_named_uint("reason 5 session-held", reasons[5]);
        uint256 sybilSeats = 0;
        for (uint256 i = 0; i < SYBILS; ++i) {
            sybilSeats += drawModule.seatsOf(sid, round, vm.addr(0xD5B000 + i)).length;
        }
        emit log_named_uint("seats held by the sybils", sybilSeats);
        assertEq(uint256(rd.status), uint256(IAuditSessions.Status.Drawing), "drawn, keys next");
        assertEq(rd.drawnSeats, q.totalSeats, "drawn in full: the leavers sit");
        assertEq(reasons[3] + reasons[5], 0, "no refusal of either kind");
    }
}
