// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @dev The cheatcode TestBase's `Vm` does not declare.
interface VmReview17Cap {
    function skip(bool) external;
}

/// @title Review17SeatCapMarginIgnoresEarlierPanels (outside review 17 of 92327f6)
/// @notice Property (docs/appeals-canaries.md "Round size": "Under the rule the cap fails a draw only if
/// more than half of the tier's members refuse"; "Who counts": a charged failure means more than half of
/// the eligible refused): a charged round naming more segments than the seat cap fails only if more than
/// half of the tier's live members refused.
/// Attack: `PanelTooLarge` compares the round's seats with half of what ALL live members can seat, but a
/// segment's earlier-panel auditors cannot sit on it; so the last segment can run dry with fewer
/// refusals. Seat cap 1, k_0 = 3, 16 honest tier-1 auditors, a 2-segment correct PASS session; the 10
/// honest auditors on neither round-0 panel hold 10,000 TRUST, the others 1,000 (the draw fills segment
/// 0 from the heavy ones first). The appellant adds 12 accounts of 100 TRUST: members 28, capacity
/// 28 x 1 / 2 = 14 = 2 x 7 seats, eligible 25 >= 14 (charged). Its 12 accounts refuse: segment 0 seats 7
/// heavy auditors (capped at 1 seat), segment 1 has 16 - 7 - 3 (its round-0 panel) = 6 < 7 left.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review17SeatCap*' -vv`), 92327f6:
/// quote totalSeats 14, refusalsCharged true; 13 of 14 seats drawn, REFUSED with 12 refusals of 28 members
/// (fewer than 14, half) and of 25 eligible (fewer than 13, half); both correct PASSes INCONCLUSIVE
/// (outcomes 3, 3), appellant net loss 0 (bond 84 TRUST back). The margin is short by up to the segment's
/// earlier seats minus one (by arithmetic for seat cap 1, not measured: depth 1: 2 accounts; depth 2: 9;
/// depth 3: 24).
/// Severity: LOW (a sharper form of Review17SybilsBuyTheRefusalMargin: it needs the sybils too, since 16
/// honest members alone are refused PanelTooLarge 14 > 8; the documented claim is off by the earlier seats).
/// Fix proposal: count the capacity on the auditors who can actually sit, e.g. capacity =
/// (members - earlierSeats(k0, d + 1)) * seatCap / 2, and measure the margin in weight (see the sybil file).
/// Skipped `_KNOWN`.
contract Review17SeatCapMarginIgnoresEarlierPanels is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    bool internal constant SKIP = true; // false: run the attack (fails on 92327f6 with the figures above)

    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatCap = 1;
    }

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    function test_FewerThanHalfRefusingFailsACappedRound_KNOWN() public {
        VmReview17Cap(address(vm)).skip(SKIP);
        uint256 sid = _setUpPassedSession(16, 2, FEE);
        // the auditors on neither round-0 panel stake 9,000 TRUST more
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address a = auditorAddrs[i];
            if (_seatedOn(sid, a, 0) || _seatedOn(sid, a, 1)) continue;
            token.transfer(a, 9000e18);
            vm.startPrank(a);
            token.approve(address(stakingContract), type(uint256).max);
            staking.stake(a, 9000e18);
            vm.stopPrank();
        }
        address[] memory mine = new address[](12);
        for (uint256 i = 0; i < 12; ++i) {
            address a = vm.addr(0xCA9000 + i);
            mine[i] = a;
            token.transfer(a, 100e18);
            vm.startPrank(a);
            registry.register(1, uint64(1) << 1, keccak256(abi.encode("x25519", a)));
            token.approve(address(stakingContract), type(uint256).max);
            staking.stake(a, 100e18);
            vm.stopPrank();
        }
        _nextEpoch();
        IAppealModule.Quote memory q = appeals.quote(sid, _segs(0, 1));
        emit log_named_uint("quote totalSeats", q.totalSeats);
        emit log_named_uint("quote refusalsCharged", q.refusalsCharged ? 1 : 0);
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segs(0, 1));
        for (uint256 i = 0; i < 12; ++i) {
            _busyElsewhere(mine[i], 0);
        }
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        emit log_named_uint("seats drawn (of 14)", rd.drawnSeats);
        emit log_named_uint("refused", rd.refused ? 1 : 0);
        _closeAndSettle(sid);
        emit log_named_uint("appellant net loss", before - token.balanceOf(appellant));
        emit log_named_uint("segment 0 outcome", _outcomeOf(sid, 0));
        emit log_named_uint("segment 1 outcome", _outcomeOf(sid, 1));
        assertTrue(
            rd.status != IAuditSessions.Status.Cancelled,
            "12 refusals of 28 members (fewer than half) do not fail a capped round"
        );
    }
}
