// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "./utils/AppealsFixture.sol";
import {IAppealModule} from "../src/interfaces/IAppealModule.sol";
import {IAppealSettlement} from "../src/interfaces/IAppealSettlement.sol";
import {AppealMath} from "../src/libraries/AppealMath.sol";

/// @notice The bond and round arithmetic and the money of one appeal, fuzzed against values computed
/// here from the formulas of docs/appeals-canaries.md (the port cross-checks the same cases in Python
/// against `consensus/appeals.py` on anvil).
contract AppealsFuzzTest is AppealsFixture {
    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    /// forge-config: default.fuzz.runs = 512
    function testFuzz_panelSizesAndBonds(uint256 k0, uint256 depth, uint256 reward, uint256 mult)
        public
        pure
    {
        k0 = bound(k0, 1, 31);
        depth = bound(depth, 0, 4);
        reward = bound(reward, 0, 1e24);
        mult = bound(mult, 10_000, 100_000);
        uint256 k = k0;
        for (uint256 r = 1; r <= depth; ++r) {
            k = 2 * k + 1; // k_r = 2 k_{r-1} + 1
        }
        assertEq(AppealMath.panelSeats(k0, depth), k, "recurrence");
        assertEq(AppealMath.panelSeats(k0, depth), (2 ** depth) * (k0 + 1) - 1, "closed form");
        if (depth != 0) {
            assertEq(AppealMath.minBond(k0, depth, reward, mult), k * reward * mult / 10_000, "bond");
        }
    }

    /// forge-config: default.fuzz.runs = 256
    function testFuzz_setParams_refusesExactlyWhenFarmingPays(
        uint256 rewardBps,
        uint256 mult,
        uint8 maxRounds
    ) public {
        IAppealModule.AppealParams memory p = _appealParams();
        p.appealRewardBps = uint16(bound(rewardBps, 0, 10_000));
        p.appealBondMultiplierBps = uint32(bound(mult, 10_000, 100_000));
        p.maxRounds = uint8(bound(maxRounds, 0, 4));
        // Core parameters of the fixture: k_0 = 1, 3, 3; tau 60%; R 6; P 8; pMin 0.2.
        bool ok = true;
        uint8[3] memory seats = [uint8(1), uint8(3), uint8(3)];
        for (uint256 t = 0; t < 3 && p.maxRounds != 0; ++t) {
            if ((2 ** p.maxRounds) * (uint256(seats[t]) + 1) - 1 > 63) ok = false;
            for (uint256 r = 0; r < p.maxRounds; ++r) {
                uint256 k = (2 ** r) * (uint256(seats[t]) + 1) - 1;
                uint256 q = (6000 * k + 9999) / 10_000;
                uint256 m = q < k - q + 1 ? q : k - q + 1;
                uint256 bond =
                    ((2 ** (r + 1)) * (uint256(seats[t]) + 1) - 1) * R * p.appealBondMultiplierBps / 10_000;
                if (!(m * (R * 1e18 + 0.2e18 * P) * 10_000 > uint256(p.appealRewardBps) * bond * 1e18)) {
                    ok = false;
                }
            }
        }
        vm.prank(owner);
        if (!ok) vm.expectRevert(IAppealModule.InvalidParams.selector);
        escrow.setParams(p);
    }

    struct Expect {
        uint256 outcome0;
        uint256 fin;
        uint256 pot;
        uint256 budgetLeft;
        uint256 budgetUsed;
        uint256 shortfall;
        uint256 refund;
        uint256 paid;
        uint256 perVote;
    }

    /// @dev PASS if pass >= q, else FAIL if fail >= q, else INCONCLUSIVE.
    function _outcome(uint256 pass, uint256 fail, uint256 k) internal pure returns (uint256) {
        uint256 q = (6000 * k + 9999) / 10_000;
        if (pass >= q) return 1;
        if (fail >= q) return 2;
        return 3;
    }

    function _popcount(uint256 x, uint256 bits) internal pure returns (uint256 c) {
        for (uint256 i = 0; i < bits; ++i) {
            c += (x >> i) & 1;
        }
    }

    /// @dev docs/appeals-canaries.md, "Money: one rule", for one segment and one appeal of depth 1.
    function _expect(uint256 fails0, uint256 fails1, uint256 budget) internal pure returns (Expect memory e) {
        uint256 f0 = _popcount(fails0, 3);
        uint256 f1 = _popcount(fails1, 7);
        e.outcome0 = _outcome(3 - f0, f0, 3);
        e.fin = _outcome(7 - f1, f1, 7);
        uint256 agree0 = e.fin == 1 ? 3 - f0 : e.fin == 2 ? f0 : 0;
        uint256 agree1 = e.fin == 1 ? 7 - f1 : e.fin == 2 ? f1 : 0;
        uint256 bond = 7 * R;
        e.pot = (3 - agree0) * R;
        e.budgetLeft = budget;
        if (e.fin == e.outcome0) {
            // UPHELD: the bond pays the agreeing seats, the rest joins the pot.
            e.perVote = R;
            e.pot += bond - agree1 * R;
        } else if (e.fin == 3) {
            e.refund = bond; // VOIDED
        } else {
            // OVERTURNED: bond back; the panel from pot then budget; then the reward.
            e.refund = bond;
            if (agree1 != 0) {
                e.perVote = (e.pot + e.budgetLeft) / agree1;
                if (e.perVote > R) e.perVote = R;
                _take(e, e.perVote * agree1);
                e.shortfall += (R - e.perVote) * agree1;
            }
            uint256 due = bond * 2000 / 10_000;
            e.paid = due < e.pot + e.budgetLeft ? due : e.pot + e.budgetLeft;
            _take(e, e.paid);
            e.shortfall += due - e.paid;
        }
        e.budgetUsed = budget - e.budgetLeft;
    }

    function _take(Expect memory e, uint256 amount) internal pure {
        uint256 fromPot = amount < e.pot ? amount : e.pot;
        e.pot -= fromPot;
        e.budgetLeft -= amount - fromPot;
    }

    /// forge-config: default.fuzz.runs = 48
    function testFuzz_oneAppeal_moneyMatchesTheDoc(uint256 fails0, uint256 fails1, uint256 budget) public {
        fails0 = bound(fails0, 0, 7);
        fails1 = bound(fails1, 0, 127);
        budget = bound(budget, 0, 80e18);
        vm.prank(owner);
        treasury.setSpender(address(escrow), budget);
        // One LLM segment: round 0 has 3 auditors with one seat each, the panel 7.
        uint256 sid = _openReady(1, 1, new bytes32[](0));
        _voteRound0(sid, 1, ~fails0 & 7, 0); // failMask 1 inverted for the auditors not in fails0
        vm.roll(block.number + 1);
        Expect memory e = _expect(fails0, fails1, budget);
        assertEq(_round0Outcome(sid, 0), e.outcome0, "round-0 outcome");
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segs(0));
        _drawRound(sid, round);
        _publishRound(sid, round);
        _voteRound(sid, round, 1, ~fails1 & 127, 0);
        assertEq(_outcomeOf(sid, 0), e.fin, "final outcome");
        _closeAndSettle(sid);
        IAppealSettlement.SessionMoney memory m = escrow.sessionMoney(sid);
        assertEq(m.budgetUsed, e.budgetUsed, "budget used");
        assertEq(m.shortfall, e.shortfall, "shortfall");
        assertEq(escrow.perVoteOf(sid, round, 0), e.perVote, "reward per vote");
        assertEq(token.balanceOf(appellant) + 7 * R, before + e.refund + e.paid, "appellant");
        assertEq(token.balanceOf(address(escrow)), 0, "escrow empty");
        assertEq(token.balanceOf(address(sessions)), 0, "pool swept");
    }
}
