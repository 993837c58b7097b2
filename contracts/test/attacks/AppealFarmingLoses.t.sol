// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";

/// @notice Property: spoiling a panel and appealing it loses money. A coalition holds two of the three
/// round-0 seats of a segment whose truth is PASS; it votes FAIL (the cheapest spoil of a 3-seat panel
/// at tau 60%), appeals the wrong outcome itself and wins the overturn before an honest panel. Its
/// wealth (appellant balance, the coalition auditors' stake and commission) ends below what honest
/// voting would have left it, whatever the slash coins say: the forgone rewards alone exceed the
/// appellant reward, and `setParams` refuses any parameters where that would not hold.
contract AppealFarmingLosesTest is AppealsFixture {
    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    function _wealth(address[] memory coalition) internal returns (uint256 w) {
        w = token.balanceOf(appellant);
        for (uint256 i = 0; i < coalition.length; ++i) {
            staking.drain(coalition[i], 256);
            w += _backing(coalition[i]) + token.balanceOf(coalition[i]);
        }
    }

    /// forge-config: default.fuzz.runs = 16
    function testFuzz_AppealFarmingLoses(uint256 wait) public {
        vm.roll(block.number + bound(wait, 0, 20)); // a different draw and slash seed per run
        uint256 sid = _openReady(1, 1, new bytes32[](0));
        address[] memory r0 = _roundAuditors(sid, 0);
        address[] memory coalition = new address[](2);
        coalition[0] = r0[0];
        coalition[1] = r0[1];
        uint256 snap = vm.snapshotState();

        // Honest: everyone votes PASS, nobody appeals.
        _voteRound0(sid, 0, 0, 0);
        _closeAndSettle(sid);
        uint256 honest = _wealth(coalition);
        vm.revertToState(snap);

        // Attack: the coalition spoils (FAIL), then appeals its own spoiled outcome.
        _voteRound0(sid, 0, 0x3, 0); // auditors 0 and 1 invert PASS into FAIL
        assertEq(_round0Outcome(sid, 0), 2, "spoiled");
        vm.roll(block.number + 1);
        uint256 round = _appeal(sid, _segs(0));
        _drawRound(sid, round);
        _publishRound(sid, round);
        _voteRound(sid, round, 0, 0, 0); // the honest panel restores PASS
        assertEq(_outcomeOf(sid, 0), 1, "overturned");
        _closeAndSettle(sid);
        uint256 attacked = _wealth(coalition);
        assertTrue(attacked < honest, "farming an appeal must lose");
        // At least the two forgone rewards minus the appellant's reward.
        assertTrue(honest - attacked >= 2 * R - 7 * R * 2000 / 10_000, "loss at least 2R - reward");
    }
}
