// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review17SybilsBuyTheRefusalMargin (outside review 17 of 92327f6, the admission-time 2k rule)
/// @notice Property (docs/appeals-canaries.md "Who counts, and when refusals are charged"): a failed draw
/// is charged with its refusals (REFUSED: a contested PASS becomes INCONCLUSIVE and final, the bond comes
/// back whole) only on "honest-majority ground": more than half of the eligible auditors refused.
/// Attack: the margin counts ACCOUNTS (`liveCountAt`: one per leaf with weight, whatever its stake), so
/// the appellant buys it with minimum-stake accounts. In a thin tier whose honest auditors cannot seat
/// the panel (9 tier-1 auditors of 1,000 TRUST, k_0 = 3: 6 eligible < k_1 = 7, so nobody can appeal),
/// the appellant stakes S accounts of the 100 TRUST tier minimum one epoch before its appeal. With
/// S = 8, eligible = 9 + 8 - 3 = 14 = 2 k_1: admitted with `refusalsCharged`. Its accounts then refuse
/// (their free stake locked elsewhere, as the existing refusal tests model it): the 6 honest auditors
/// are seated, the 8 accounts refuse, the draw fails, and the round is REFUSED.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review17SybilsBuy*' -vv`), 92327f6:
/// S = 0: NotEnoughEligibleAuditors(6 < 7); S = 7: quote `refusalsCharged` false (eligible 13), the same
/// refusals end UNFILLABLE (PASS stands, 36 TRUST = 6 seats x R lost); S = 8: REFUSED, appellant net
/// loss 0 (bond 42 TRUST back whole), segment 0 PASS -> INCONCLUSIVE (final), trace score
/// 10,000 -> 5,000 bps, for 8 x 100 = 800 TRUST of stake parked (not lost) against the honest tier's
/// 9,000 TRUST: the "majority" that refused holds 800 of the 6,800 TRUST eligible (11.8%, equal reputations).
/// In general (k_0 = 3, depth 1) the appellant needs S = 17 - H accounts for a tier of H honest live
/// auditors (H <= 9, where honest auditors alone cannot fill 7 seats): 8 to 13 minimum-stake accounts.
/// Severity: MEDIUM (a correct PASS was voided at no token cost in any thin tier; the accounts must have
/// their free stake locked at draw time, modelled here as in AppealRefusedPanels by a lock in another
/// session).
/// Fix (rule R, the honesty assumption is stake-weighted): a failed appeal draw is REFUSED iff admission
/// charged refusals (eligible accounts >= 2k, kept as the precondition) AND the counted refusers (reason 3)
/// of the failed segment hold more than half of its eligible SNAPSHOT WEIGHT, 2 W_R > W_E
/// (`IDrawModule.DrawResult.refusedWeight/eligibleWeight`, `AppealModule.drawPanel`).
/// Measured after the fix (same command): S = 8: quote `refusalsCharged` still 1, 6 of 7 seats drawn,
/// W_R = 800e6 of W_E = 6,800e6 snapshot weight (800 of 6,800 TRUST, equal reputations; 2 W_R <= W_E): UNFILLABLE, the PASS stands (outcome 1,
/// score 10,000 bps), appellant loses 36 TRUST (6 drawn seats x R) instead of 0. The same test on main
/// 2e066eb fails (`refused` 1, loss 0, outcome INCONCLUSIVE, score 5,000 bps). To buy the weight majority the
/// appellant must now stake more than the eligible honest stake it faces (here > 6,000 TRUST parked).
contract Review17SybilsBuyTheRefusalMargin is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    uint256 internal sid;
    address[] internal sybils;

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    /// @dev 9 honest tier-1 auditors, a 2-segment correct PASS session, then `s` minimum-stake accounts of
    /// the appellant staked before the appeal's epoch.
    function _world(uint256 s) internal {
        sid = _setUpPassedSession(9, 2, FEE);
        for (uint256 i = 0; i < s; ++i) {
            address a = vm.addr(0x517B00 + i);
            sybils.push(a);
            _joinTier(a, 1, 100e18);
        }
        _nextEpoch();
    }

    /// @dev Appeal segment 0, then every account of the appellant refuses (its stake locked elsewhere).
    function _attack() internal returns (uint256 round, uint256 loss) {
        uint256 before = token.balanceOf(appellant);
        round = _appeal(sid, _segs(0));
        for (uint256 i = 0; i < sybils.length; ++i) {
            _busyElsewhere(sybils[i], 0);
        }
        _drawRound(sid, round);
        _closeAndSettle(sid);
        loss = before - token.balanceOf(appellant);
    }

    /// @dev Rule R's weights for segment 0, from the snapshot: the accounts' (all refuse) and the eligible
    /// (every live leaf but the provider's and segment 0's round-0 auditors').
    function _weights(uint256 epoch) internal view returns (uint256 wr, uint256 we) {
        for (uint256 i = 0; i < sybils.length; ++i) {
            (, uint256 leaf) = _sortition().leafOf(1, sybils[i]);
            wr += _sortition().leafWeightAt(1, epoch, leaf);
        }
        we = _sortition().totalWeightAt(1, epoch);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            uint256[] memory segs = drawModule.seatsOf(sid, 0, auditorAddrs[i]);
            if (segs.length == 0 || segs[0] != 0) continue;
            (, uint256 leaf) = _sortition().leafOf(1, auditorAddrs[i]);
            we -= _sortition().leafWeightAt(1, epoch, leaf);
        }
    }

    function test_ControlNoAccountsNoAppeal() public {
        _world(0);
        vm.expectRevert(
            abi.encodeWithSelector(IAppealModule.NotEnoughEligibleAuditors.selector, sid, 0, 6, 7)
        );
        appeals.quote(sid, _segs(0));
    }

    function test_ControlSevenAccountsEndUnfillable() public {
        _world(7);
        assertTrue(!appeals.quote(sid, _segs(0)).refusalsCharged, "eligible 13 < 14");
        (uint256 round, uint256 loss) = _attack();
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        assertTrue(rd.status == IAuditSessions.Status.Cancelled && !rd.refused, "UNFILLABLE");
        assertEq(_outcomeOf(sid, 0), 1, "PASS stands");
        assertEq(loss, uint256(rd.drawnSeats) * R, "R per drawn seat");
        emit log_named_uint("S=7 appellant loss", loss);
    }

    function test_SybilAccountsCannotBuyTheRefusalMajority() public {
        _world(8);
        IAppealModule.Quote memory q = appeals.quote(sid, _segs(0));
        emit log_named_uint("quote refusalsCharged", q.refusalsCharged ? 1 : 0);
        (uint256 round, uint256 loss) = _attack();
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        (, uint256 score,,,) = escrow.verdictOf(sid);
        emit log_named_uint("seats drawn (of 7)", rd.drawnSeats);
        emit log_named_uint("refused", rd.refused ? 1 : 0);
        emit log_named_uint("appellant net loss", loss);
        emit log_named_uint("segment 0 outcome", _outcomeOf(sid, 0));
        emit log_named_uint("trace score bps", score);
        (uint256 wr, uint256 we) = _weights(rd.epoch);
        emit log_named_uint("W_R refusers' snapshot weight", wr);
        emit log_named_uint("W_E eligible snapshot weight", we);
        assertTrue(2 * wr <= we, "setup: the refusers hold a stake minority");
        assertTrue(!rd.refused, "minimum-stake accounts of the appellant cannot make refusals chargeable");
        assertEq(_outcomeOf(sid, 0), 1, "the correct PASS stands");
    }
}
