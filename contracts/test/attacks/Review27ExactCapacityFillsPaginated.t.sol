// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Vm} from "../utils/TestBase.sol";
import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review27ExactCapacityFillsPaginated (outside review 27 of 043042c: `AppealMath.cappedCapacity`)
/// @notice Property: a round admitted at EXACTLY the capped capacity (S k = k + c (free - k + 1) - 1 would be
/// over by one seat with one eligible auditor fewer) fills with floor(E / 2) of the eligible refusing, its
/// draw paged one seat per call (the seat cap and the refusals carried across calls).
/// World: seatCap 2; 30 tier-1 members (provider excluded); a 3-segment session (k_0 3, round 0: 9 seats);
/// the appeal names all 3 segments at depth 1 (k 7, S k 21); E = 30 - 3 = 27, free 14, capacity
/// 7 + 2 x 8 - 1 = 22 >= 21: admitted; 13 = floor(27 / 2) members that hold no round-0 seat are made to
/// refuse (their free stake locked elsewhere: charged refusals). The control with 29 members (E 26, free 13,
/// capacity 20 < 21) is refused PanelTooLarge(sid, 21, 20).
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review27*' -vv`): 21 of 21 seats drawn in
/// 3 `drawPanel(.., 1)` calls (a call completes at least its segment), status 2 (Drawing, complete), 21
/// counted refusals (reason 3), 4 earlier-panel (reason 4), 0 seat-cap exclusions (reason 2): this seed did
/// not reach the worst case (auditors at the cap), so the test shows only that the bound admits and the
/// draw fills with the refusers present. Result: HOLDS; the exactness against EVERY draw order (the worst
/// case included) is the exhaustive search in tests/consensus/test_review27_capacity_exact.py.
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review27ExactCapacity*' -vv`.
contract Review27ExactCapacityFillsPaginated is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatCap = 2;
    }

    function _segs3() internal pure returns (uint256[] memory s) {
        s = new uint256[](3);
        s[1] = 1;
        s[2] = 2;
    }

    function _hasRound0Seat(uint256 sid, address a) internal view returns (bool) {
        return drawModule.seatsOf(sid, 0, a).length != 0;
    }

    function _setUp(uint256 members) internal returns (uint256 sid) {
        _deployAppeals();
        _addAuditors(1, members, STAKE);
        _nextEpoch();
        sid = _passedSession(3, FEE);
    }

    function test_ExactCapacityFillsWithHalfRefusing() public {
        uint256 sid = _setUp(30);
        uint256 refusing = 0;
        for (uint256 i = 0; i < auditorAddrs.length && refusing < 13; ++i) {
            address a = auditorAddrs[i];
            if (_hasRound0Seat(sid, a)) continue;
            _busyElsewhere(a, 1e18);
            ++refusing;
        }
        assertEq(refusing, 13, "setup: 13 refusing");
        IAppealModule.Quote memory q = appeals.quote(sid, _segs3());
        assertEq(q.totalSeats, 21, "setup: 3 x 7 seats");
        uint256 round = _appeal(sid, _segs3());
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        vm.recordLogs();
        uint256 calls = 0;
        for (uint256 i = 0; i < 400; ++i) {
            IAppealModule.Round memory r = appeals.roundOf(sid, round);
            bool open = r.status == IAuditSessions.Status.Created
                || (r.status == IAuditSessions.Status.Drawing && r.drawnSeats < r.totalSeats);
            if (!open) break;
            appeals.drawPanel(sid, round, 1);
            ++calls;
        }
        Vm.Log[] memory logs = vm.getRecordedLogs();
        bytes32 sig = keccak256("AuditorExcluded(uint256,uint256,address,uint256)");
        uint256[6] memory reasons;
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics.length == 0 || logs[i].topics[0] != sig) continue;
            (, uint256 reason) = abi.decode(logs[i].data, (uint256, uint256));
            ++reasons[reason];
        }
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        emit log_named_uint("draw calls", calls);
        emit log_named_uint("seats drawn", rd.drawnSeats);
        emit log_named_uint("counted refusals (reason 3)", reasons[3]);
        emit log_named_uint("seat cap (reason 2)", reasons[2]);
        emit log_named_uint("earlier panel (reason 4)", reasons[4]);
        emit log_named_uint("status", uint256(rd.status));
        assertEq(rd.drawnSeats, 21, "filled at the exact capacity");
        assertTrue(rd.status != IAuditSessions.Status.Cancelled, "not cancelled");
    }

    function test_ControlOneFewerRefused() public {
        uint256 sid = _setUp(29);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.PanelTooLarge.selector, sid, 21, 20));
        appeals.quote(sid, _segs3());
    }
}
