// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {PanelKey} from "../../src/libraries/PanelKey.sol";

/// @notice Property: an appeal panel excludes the provider and every auditor of the segment's earlier
/// panels. With exactly k_0 + k_1 + k_2 = 3 + 7 + 15 auditors in the tier, the exclusion is binding at
/// every depth: the round-1 panel is 7 auditors outside round 0's 3, the round-2 panel is exactly the
/// 15 auditors who sat on neither.
contract AppealPanelExcludesEarlierAuditorsTest is AppealsFixture {
    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 25, STAKE);
        _nextEpoch();
    }

    function _on(uint256 sid, uint256 round, address a, uint256 segment) internal view returns (bool) {
        uint256 w = drawModule.seatWordOf(PanelKey.keyOf(sid, round), a);
        return w != 0 && (w >> segment) & 1 == 1;
    }

    /// forge-config: default.fuzz.runs = 8
    function testFuzz_AppealPanelExcludesEarlierAuditors(uint256 wait) public {
        vm.roll(block.number + bound(wait, 0, 20));
        uint256 sid = _openReady(1, 1, new bytes32[](0));
        _voteRound0(sid, 0, 0, 0);
        vm.roll(block.number + 1);
        uint256 r1 = _appeal(sid, _segs(0));
        _drawRound(sid, r1);
        _publishRound(sid, r1);
        _voteRound(sid, r1, 1, 0, 0); // FAIL: overturned, so depth 2 may follow
        uint256 r2 = _appeal(sid, _segs(0));
        _drawRound(sid, r2);
        uint256 on0 = 0;
        uint256 on1 = 0;
        uint256 on2 = 0;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address a = auditorAddrs[i];
            uint256 panels =
                (_on(sid, 0, a, 0) ? 1 : 0) + (_on(sid, r1, a, 0) ? 1 : 0) + (_on(sid, r2, a, 0) ? 1 : 0);
            assertEq(panels, 1, "every auditor of the tier sits on exactly one panel of the segment");
            if (_on(sid, 0, a, 0)) ++on0;
            if (_on(sid, r1, a, 0)) ++on1;
            if (_on(sid, r2, a, 0)) ++on2;
            assertTrue(a != provider, "provider");
        }
        assertEq(on0, 3, "k_0");
        assertEq(on1, 7, "k_1");
        assertEq(on2, 15, "k_2");
    }
}
