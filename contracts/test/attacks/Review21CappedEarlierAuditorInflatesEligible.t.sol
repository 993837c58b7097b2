// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review21CappedEarlierAuditorInflatesEligible (outside review 21 of 29b4b57, DrawModule `_fail`)
/// @notice Property (rule R, docs/appeals-canaries.md "Who counts, and when refusals are charged"): a charged
/// appeal round whose draw fails on segment s ends REFUSED iff the counted refusers of s hold more than half of
/// W_E, the snapshot weight of the candidates eligible for s, which excludes the provider and s's
/// EARLIER-PANEL auditors whatever their stake. A defender must not keep a contested PASS (UNFILLABLE) while
/// its refusers hold more than half of W_E.
/// Attack: `_fail` computes W_E = total - provider - the weight of s's earlier-panel auditors SAMPLED on s
/// (reason 4). An earlier-panel auditor of s that reached the seat cap on the round's earlier segments is
/// excluded panel-wide before s and never sampled there, so its whole snapshot weight stays in W_E (the
/// NatSpec calls this a conservative error; the docs' rule R does not state it). The defender owns D0, a
/// round-0 auditor of s (it voted the contested PASS there), and tops D0's stake up before the appeal's
/// snapshot: D0 cannot sit on s, but in a round naming more segments than the seat cap (9 here, 63 seats;
/// admitted: members 20, PanelTooLarge bound 68, eligible 17 >= 14 charged) it takes a seat on each of the 8
/// named segments before s, reaches the cap, and its top-up is counted as eligible-and-not-refusing on s.
/// Set-up: tier 1 of 10 round-0 auditors (D0 100 TRUST, 9 honest of 300), a 20-segment PASS session, then
/// 10 defender refusers of 250 TRUST (free stake locked in another session before the draw). The 8 earlier
/// named segments are chosen with neither D0 nor one honest auditor H1 on their round-0 panels, so each seats
/// exactly its 7 non-refusing eligible auditors: D0 and H1 reach the cap (H1's cap is what makes s fail: 6
/// honest left for 7 seats). On s: W_R = 2,500 TRUST of weight, rule R's W_E = 7 honest x 300 + 2,500 =
/// 4,600 (2 W_R = 5,000 > 4,600: REFUSED by the rule).
/// Measured (command below; s = segment 13, 62 of 63 seats drawn, D0 and H1 at 8 appeal seats each):
/// control, D0 tops up 100 TRUST (200 in all, enough to back its 8 appeal seats): the contract's W_E = rule's
/// W_E + D0's 200 = 4,800 < 5,000, REFUSED. Attack, D0 tops up 2,900 TRUST (3,000 in all, a deposit it
/// keeps): the contract's W_E = 4,600 + 3,000 = 7,600 >= 5,000, UNFILLABLE: the 9 contested PASSes stand
/// although the refusers hold 54% of rule R's W_E (the contract voids them only if W_R > W_H + D0 = 5,100).
/// Without any top-up D0 (100 TRUST) runs short on its 8th appeal seat (reason 5) and the draw fails earlier.
/// Cost to the defender: none lost (the top-up is its own stake, D0 earns its 8 appeal seats), the refusers'
/// stake locked elsewhere for the window.
/// Severity: MEDIUM (needs a round naming more segments than the seat cap and the failing segment after 8
/// named segments D0 can sit on; the inflation is bounded by s's earlier-panel auditors' weight, which the
/// defender chooses).
/// Since review 20's capacity bound that round (members 20, E 17) is refused up front (`PanelTooLarge(63, 23)`, 30 since review 22's exact bound,
/// `test_MeasuredShapeRefusedUpFront`); the admitted re-shape has 20 refusers of 125 TRUST (members 30, E 27,
/// cappedCapacity(27, 7, 8) = 63 seats): same s = 13, 62 of 63 seats, W_R 2,500, rule R's W_E 4,600, old
/// contract's W_E 7,600 with the 2,900 top-up: UNFILLABLE on 55d381a (measured), REFUSED now.
/// Fix (DrawModule `_fail`, `_cappedEarlier`): W_E also leaves out the panel-wide exclusions (the auditors at
/// the seat cap; at most 1 + drawnSeats / seatCap) that sat on s in round 0 or an earlier appeal panel of s;
/// the reason-4 exclusions of s are segment-only, so each earlier-panel auditor is taken out exactly once.
/// After: the attack and the control are REFUSED; at the boundary (20 x 105 TRUST: W_R 2,100 = half of W_E
/// 4,200, D0 at 3,000) UNFILLABLE, one weight unit more REFUSED (fails on 55d381a: its W_E is 7,200).
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review21*' -vv`.
contract Review21CappedEarlierAuditorInflatesEligible is NoCanaryAppealsFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    uint256 internal constant SEGMENTS = 20;
    /// @dev The measured fixture of 29b4b57: 10 refusers of 250 TRUST (members 20, E 17), refused up front now.
    uint256 internal constant REFUSERS_MEASURED = 10;
    /// @dev The admitted re-shape: 20 refusers of 125 TRUST (members 30, E 27, capacity 63): the same W_R.
    uint256 internal constant REFUSERS = 20;

    event log_named_uint(string key, uint256 val);

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    function _weightOf(address a, uint256 epoch) internal view returns (uint256) {
        (bool exists, uint256 leaf) = _sortition().leafOf(1, a);
        return exists ? _sortition().leafWeightAt(1, epoch, leaf) : 0;
    }

    function _refuser(uint256 i) internal pure returns (address) {
        return address(uint160(0x21CA0000 + i));
    }

    /// @dev The named segments: 8 below s with neither d0 nor h1 on their round-0 panel, then s (d0 on it).
    function _pick(uint256 sid) internal view returns (uint256[] memory named, address d0, address h1) {
        d0 = auditorAddrs[0];
        uint256[] memory d0Segs = drawModule.seatsOf(sid, 0, d0);
        for (uint256 si = d0Segs.length; si > 0; --si) {
            uint256 s = d0Segs[si - 1];
            for (uint256 h = 1; h < auditorAddrs.length; ++h) {
                named = new uint256[](9);
                uint256 n = 0;
                for (uint256 g = 0; g < s && n < 8; ++g) {
                    if (!_seatedOn(sid, d0, g) && !_seatedOn(sid, auditorAddrs[h], g)) named[n++] = g;
                }
                if (n == 8) {
                    named[8] = s;
                    return (named, d0, auditorAddrs[h]);
                }
            }
        }
        revert("setup: no segment choice");
    }

    /// @dev The world up to the appeal: D0 topped up by `topUp`, the refusers staked (`stake` each, the first
    /// `extra0` more), the snapshot epoch begun.
    function _world(uint256 topUp, uint256 refusers, uint256 stake, uint256 extra0)
        internal
        returns (uint256 sid, uint256[] memory named, address d0, address h1)
    {
        _deployAppeals();
        _addAuditors(1, 1, 100e18); // D0 (the defender's round-0 account)
        _addAuditors(1, 9, 300e18); // honest
        _nextEpoch();
        sid = _passedSession(SEGMENTS, FEE);
        (named, d0, h1) = _pick(sid);
        if (topUp != 0) {
            token.transfer(d0, topUp);
            vm.prank(d0);
            staking.stake(d0, topUp);
        }
        for (uint256 i = 0; i < refusers; ++i) {
            _joinTier(_refuser(i), 1, i == 0 ? stake + extra0 : stake);
        }
        _nextEpoch();
    }

    function _run(uint256 topUp, uint256 stake, uint256 extra0)
        internal
        returns (IAppealModule.Round memory rd, uint256 wr, uint256 we)
    {
        (uint256 sid, uint256[] memory named, address d0, address h1) = _world(topUp, REFUSERS, stake, extra0);
        IAppealModule.Quote memory q = appeals.quote(sid, named);
        assertTrue(q.refusalsCharged, "setup: charged");
        assertEq(q.totalSeats, 63, "setup: admitted, 63 seats = cappedCapacity(27, 7, 8)");
        uint256 round = _appeal(sid, named);
        for (uint256 i = 0; i < REFUSERS; ++i) {
            _busyElsewhere(_refuser(i), 0);
        }
        _drawRound(sid, round);
        rd = appeals.roundOf(sid, round);
        uint256 epoch = rd.epoch;
        uint256 s = named[8];
        for (uint256 i = 0; i < REFUSERS; ++i) {
            wr += _weightOf(_refuser(i), epoch);
        }
        // Rule R's W_E: the tier's snapshot weight less s's round-0 auditors (no provider leaf here).
        we = _sortition().totalWeightAt(1, epoch);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            if (_seatedOn(sid, auditorAddrs[i], s)) we -= _weightOf(auditorAddrs[i], epoch);
        }
        emit log_named_uint("failing segment s", s);
        emit log_named_uint("D0 appeal seats (cap 8)", drawModule.seatsOf(sid, round, d0).length);
        emit log_named_uint("H1 appeal seats (cap 8)", drawModule.seatsOf(sid, round, h1).length);
        emit log_named_uint("D0 weight", _weightOf(d0, epoch));
        emit log_named_uint("drawn seats", rd.drawnSeats);
        emit log_named_uint("total seats", rd.totalSeats);
        emit log_named_uint("W_R (weight units)", wr);
        emit log_named_uint("rule R's W_E (weight units)", we);
        emit log_named_uint("old contract's W_E = rule's + D0", we + _weightOf(d0, epoch));
        emit log_named_uint("refused", rd.refused ? 1 : 0);
        assertTrue(
            rd.status == IAuditSessions.Status.Cancelled && rd.refusalsCharged, "setup: charged, failed"
        );
        assertEq(rd.drawnSeats, 62, "setup: the 8 earlier segments fill, s gets 6 of 7");
        assertEq(drawModule.seatsOf(sid, round, d0).length, 8, "setup: D0 at the cap before s");
        assertTrue(_seatedOn(sid, d0, s), "setup: D0 sat on s in round 0");
    }

    /// @dev Regression: D0's top-up no longer counts in W_E (D0 cannot sit on s); rule R says REFUSED (55d381a:
    /// UNFILLABLE).
    function test_CappedEarlierAuditorCountsInEligible() public {
        (IAppealModule.Round memory rd, uint256 wr, uint256 we) = _run(2900e18, 125e18, 0);
        assertTrue(2 * wr > we, "setup: the refusers hold most of rule R's W_E");
        assertTrue(rd.refused, "rule R: REFUSED (measured: UNFILLABLE, the PASSes stand)");
    }

    /// @dev Control: D0 tops up only what backs its 8 appeal seats; REFUSED before and after the fix.
    function test_SmallTopUpRefused() public {
        (IAppealModule.Round memory rd, uint256 wr, uint256 we) = _run(100e18, 125e18, 0);
        assertTrue(2 * wr > we, "setup: the refusers hold most of rule R's W_E");
        assertTrue(rd.refused, "rule R: REFUSED");
    }

    /// @dev Exactness at the boundary, with the attack's top-up: W_R = half of rule R's W_E (20 x 105 TRUST =
    /// 2,100 of 4,200) is UNFILLABLE; one weight unit more (10^12 wei) is REFUSED. So the contract's W_E is
    /// rule R's to the unit: D0 (3,000) neither kept in it nor taken out twice.
    function test_BoundaryIsExact() public {
        (IAppealModule.Round memory rd, uint256 wr, uint256 we) = _run(2900e18, 105e18, 0);
        assertEq(2 * wr, we, "setup: W_R is half of rule R's W_E");
        assertTrue(!rd.refused, "2 W_R = W_E: UNFILLABLE");
    }

    function test_BoundaryPlusOneUnitRefused() public {
        (IAppealModule.Round memory rd, uint256 wr, uint256 we) = _run(2900e18, 105e18, 1e12);
        assertEq(2 * wr, we + 1, "setup: W_R one unit above half of rule R's W_E");
        assertTrue(rd.refused, "2 W_R > W_E: REFUSED");
    }

    /// @dev Since review 20's capacity bound (k + seatCap (E - E/2 - k) = 7 + 8 x (17 - 8 - 7) = 23 seats) this
    /// round shape (9 segments, 63 seats, E = 17) is refused up front, so the attack as measured on 29b4b57
    /// cannot be admitted any more. A capped 9-segment round now needs E >= 27 eligible auditors: the tests
    /// above re-shape it with 20 refusers (E 27). Control of the measured configuration: `PanelTooLarge(sid, 63,
    /// 23)`.
    function test_MeasuredShapeRefusedUpFront() public {
        (uint256 sid, uint256[] memory named,,) = _world(100e18, REFUSERS_MEASURED, 250e18, 0);
        bytes memory refusal = abi.encodeWithSelector(IAppealModule.PanelTooLarge.selector, sid, 63, 30);
        vm.expectRevert(refusal);
        appeals.quote(sid, named);
    }
}
