// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Vm} from "../utils/TestBase.sol";
import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {ISettlementModule} from "../../src/interfaces/ISettlementModule.sol";
import {IAppealSettlement} from "../../src/interfaces/IAppealSettlement.sol";

/// @title Review5SelfAppealThenWithholdDeeper (the trade-off of the scoring outcome, docs/appeals-canaries.md)
/// @notice The wider variant of the accepted adverse inference: a provider whose segment passed correctly
/// appeals its own PASS under one address (depth 1), the 7-seat panel upholds the PASS (the alias lost
/// 42 TRUST), it appeals again under a second address (depth 2) and withholds the keys. The segment is scored
/// as FAIL: the depth-1 appeal becomes OVERTURNED, the correct PASS voters of round 0 and of the depth-1 panel
/// are scored wrong. Measured here: what the provider's three addresses net together (fee included) and
/// where any reward came from. Properties: the provider never nets tokens by it, the escrow ends empty, and
/// (since this session's fix, `AppealSettlement._scoreRound`, `consensus.appeal_settlement.scoring_is_inferred`)
/// an overturn that rests only on the adverse inference of a later withheld PASS earns no reward and its seats
/// are owed by the pot only: on 481282f alias1 netted +8.4 TRUST (bond back plus 20% of 42, all from the
/// Treasury's appeal budget, budget used 8.4); now alias1 ends at 1,000 TRUST (bond back, no reward) and the
/// budget used is 0 (command: `scripts/forge test --match-path 'contracts/test/attacks/Review5SelfAppeal*' -vv`).
/// @dev Tier 1 (k0 = 3, panels 7 and 15), one segment, 40 auditors of 1,000 TRUST, R = 6 TRUST.
contract Review5SelfAppealThenWithholdDeeper is AppealsFixture {
    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);
    event log_named_int(string key, int256 val);

    address internal alias1 = address(0xA11A5);
    address internal alias2 = address(0xA11A6);

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 40, STAKE);
        _nextEpoch();
        for (uint256 i = 0; i < 2; ++i) {
            address a = i == 0 ? alias1 : alias2;
            token.transfer(a, 1000e18);
            vm.prank(a);
            token.approve(address(appeals), type(uint256).max);
        }
    }

    function _wrong(uint256 sid, Vm.Log[] memory logs) internal pure returns (uint256 r0, uint256 r1) {
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics.length < 2 || logs[i].topics[0] != ISettlementModule.AuditorSettled.selector) {
                continue;
            }
            if (uint256(logs[i].topics[1]) != sid) continue;
            (uint256 r,, uint256 incorrect,,,,,) = abi.decode(
                logs[i].data, (uint256, uint256, uint256, uint256, uint256, uint256, uint256, uint256)
            );
            if (r == 0) r0 += incorrect;
            if (r == 1) r1 += incorrect;
        }
    }

    function test_SelfAppealLostThenWithheldDeeperNetsTheProviderNothing() public {
        uint256 t0 = token.balanceOf(provider) + token.balanceOf(alias1) + token.balanceOf(alias2);
        uint256 sid = _openReady(1, 1, new bytes32[](0));
        _voteRound0(sid, 0, 0, 0); // unanimous PASS: correct
        _toAppealWindow(sid);
        vm.prank(alias1);
        uint256 r1 = appeals.appeal(sid, _segs(0), type(uint256).max);
        _drawRound(sid, r1);
        _publishRound(sid, r1);
        _voteRound(sid, r1, 0, 0, 0); // the panel upholds the PASS: alias1 lost
        vm.prank(alias2);
        uint256 r2 = appeals.appeal(sid, _segs(0), type(uint256).max);
        _drawRound(sid, r2);
        vm.roll(appeals.roundOf(sid, r2).keyDeadline + 1);
        appeals.advance(sid); // the provider withholds the depth-2 keys
        vm.recordLogs();
        _closeAndSettle(sid);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        (uint256 wrong0, uint256 wrong1) = _wrong(sid, logs);
        uint256 t1 = token.balanceOf(provider) + token.balanceOf(alias1) + token.balanceOf(alias2);
        IAppealSettlement.SessionMoney memory sm = escrow.sessionMoney(sid);
        emit log_named_int("provider's three addresses, net (wei)", int256(t1) - int256(t0));
        emit log_named_decimal_uint("alias1 balance after (TRUST, started 1000)", token.balanceOf(alias1), 18);
        emit log_named_decimal_uint("alias2 balance after (TRUST, started 1000)", token.balanceOf(alias2), 18);
        emit log_named_decimal_uint("appeal budget used (TRUST)", sm.budgetUsed, 18);
        emit log_named_uint("round-0 correct PASS votes scored wrong", wrong0);
        emit log_named_uint("depth-1 correct PASS votes scored wrong", wrong1);
        emit log_named_decimal_uint("depth-2 withheld pay per seat (TRUST)", escrow.perVoteOf(sid, r2, 0), 18);
        assertEq(_outcomeOf(sid, 0), 3, "the provider loses its PASS (INCONCLUSIVE)");
        assertTrue(t1 < t0, "the provider never nets tokens by it");
        assertEq(token.balanceOf(alias1), 1000e18, "an inferred overturn: bond back, no reward");
        assertEq(sm.budgetUsed, 0, "the Treasury's appeal budget pays nothing for an inference");
        assertEq(token.balanceOf(address(escrow)), 0, "escrow empty");
    }
}
