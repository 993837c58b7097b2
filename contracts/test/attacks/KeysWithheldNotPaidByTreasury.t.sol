// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Vm} from "../utils/TestBase.sol";
import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {ISettlementModule} from "../../src/interfaces/ISettlementModule.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";

/// @notice Property: a panel whose keys were withheld is never paid from the Treasury's appeal budget
/// (review finding 2). Attack (a coalition of a provider and the auditors of an appeal panel): the provider
/// opens a one-segment session at the minimum fee (3 R / 0.8 = 3.75 R), appeals its own segment, and
/// withholds the panel's keys. The bond comes back whole (KEYS_WITHHELD); the panel's 7 locked seats were
/// paid R each, 3 R from the pot (round 0's freed rewards) and 4 R from the budget, so a coalition holding
/// the panel netted 7 R - 3.75 R = 3.25 R of Treasury money per appeal (any share above 3.75 / 7 = 54% of
/// the seats paid). Closed by paying a KEYS_WITHHELD panel from the pot only: at most the pot (here 3 R),
/// the rest a reported shortfall, so the coalition loses at least 0.75 R.
contract KeysWithheldNotPaidByTreasuryTest is AppealsFixture {
    uint256 internal constant MIN_FEE = 3 * R * 10_000 / 8000; // 3.75 R: the pool covers the 3 seats

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
        vm.prank(provider);
        token.approve(address(appeals), type(uint256).max);
    }

    function test_KeysWithheldNotPaidByTreasury() public {
        uint256 attack = _open(_uniform(1, 1), MIN_FEE); // one segment: no canary owed
        _drawAll(attack);
        _publish(attack);
        _voteRound0(attack, 0, 0, 0); // round 0: PASS
        _toAppealWindow(attack);
        uint256 providerBefore = token.balanceOf(provider);
        vm.prank(provider);
        uint256 round = appeals.appeal(attack, _segs(0), type(uint256).max); // its own segment
        _drawRound(attack, round);
        vm.roll(appeals.roundOf(attack, round).keyDeadline + 1); // the keys are never published
        appeals.advance(attack);
        assertEq(
            uint256(appeals.roundOf(attack, round).status), uint256(IAuditSessions.Status.Expired), "withheld"
        );
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        vm.recordLogs();
        _closeAndSettle(attack);
        uint256 panelPay = _roundRewards(attack, round, vm.getRecordedLogs());
        uint256 budgetUsed = escrow.sessionMoney(attack).budgetUsed;
        int256 appellantNet = int256(token.balanceOf(provider)) - int256(providerBefore);
        // The coalition holds every seat of the panel (the worst case): its take is the panel's pay plus the
        // appellant's net, against the fee it paid for the segment.
        int256 profit = int256(panelPay) + appellantNet - int256(MIN_FEE);
        if (budgetUsed != 0 || profit >= 0) {
            _fail(
                string.concat(
                    "withheld panel paid from the Treasury: budget used ",
                    Strings.toString(budgetUsed / 1e15),
                    " mTRUST, panel paid ",
                    Strings.toString(panelPay / 1e15),
                    " mTRUST; coalition profit ",
                    profit >= 0 ? "" : "-",
                    Strings.toString(uint256(profit >= 0 ? profit : -profit) / 1e15),
                    " mTRUST"
                )
            );
        }
        assertTrue(appellantNet == 0, "bond back whole");
        assertEq(panelPay, 7 * (3 * R / 7), "the panel gets the pot (3 R, floored per seat) and no more");
        assertEq(escrow.perVoteOf(attack, round, 0), 3 * R / 7, "per seat: pot / 7");
        assertEq(escrow.sessionMoney(attack).shortfall, 7 * R - 7 * (3 * R / 7), "the rest is a shortfall");
        assertTrue(profit == int256(7 * (3 * R / 7)) - int256(MIN_FEE), "the coalition loses 0.75 R");
        assertTrue(token.balanceOf(address(treasury)) >= treasuryBefore, "the Treasury paid nothing");
    }

    /// @dev Sum of the `reward` of every AuditorSettled of `round`.
    function _roundRewards(uint256 sid, uint256 round, Vm.Log[] memory logs)
        internal
        pure
        returns (uint256 sum)
    {
        bytes32 topic = ISettlementModule.AuditorSettled.selector;
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics.length < 2 || logs[i].topics[0] != topic) continue;
            if (uint256(logs[i].topics[1]) != sid) continue;
            (uint256 r,,,,, uint256 reward,,) = abi.decode(
                logs[i].data, (uint256, uint256, uint256, uint256, uint256, uint256, uint256, uint256)
            );
            if (r == round) sum += reward;
        }
    }
}
