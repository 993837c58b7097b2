// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review28HighSeatWindows (outside review 28 of 59b8d36: proven leavers, seat windows)
/// @notice Property: `_sat` reads a leaver's seat of a segment >= 128 from the DrawModule's high window
/// (`highSeats(key, auditor, seg / 128)`), the same bit the draw's `_hasSeat` excludes with, so a leaver
/// seated on segment 1 only is not proven for segment 129 (same bit in window 0 vs window 1) and a leaver
/// seated on 129 only is not proven for 1.
/// Attack: a 130-segment session (60 auditors, k_0 = 3, fee 5,000 TRUST, slash 0.5 TRUST so the stake premise
/// holds); A sits on 129 not on 1, B on 1 not on 129; both and
/// all but 16 auditors leave; E read from `appeal(.., requireCharged = true, ..)` (k_1 = 7: charged iff
/// E >= 14). Measured: segment 129: E 13 unnamed, 13 naming B, charged (14) naming A; segment 1: 13 naming A,
/// charged naming B. HOLDS. Severity: none.
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review28*' -vv`
contract Review28HighSeatWindows is NoCanaryAppealsFixture {
    uint256 internal constant CHARGED = type(uint256).max;

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    /// @dev A slash small enough that 100 TRUST of minimum stake backs a 130-segment session's locks.
    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.slashAmount = 0.5e18;
    }

    function _eOf(uint256 sid, uint256 seg, address named) internal returns (uint256 e) {
        address[] memory l = new address[](named == address(0) ? 0 : 1);
        if (l.length == 1) l[0] = named;
        uint256 snap = vm.snapshotState();
        vm.prank(appellant);
        try appeals.appeal(sid, _segs(seg), type(uint256).max, true, l) {
            e = CHARGED;
        } catch (bytes memory err) {
            assertEq(bytes4(err), IAppealModule.RefusalsNotCharged.selector, "expected RefusalsNotCharged");
            assembly ("memory-safe") {
                e := mload(add(err, 68))
            }
        }
        vm.revertToState(snap);
    }

    function test_Review28HighWindowLeaversProvenPerSegment() public {
        uint256 sid = _setUpPassedSession(60, 130, 5000e18);
        address a;
        address b;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address x = auditorAddrs[i];
            bool on1 = _seatedOn(sid, x, 1);
            bool on129 = _seatedOn(sid, x, 129);
            if (a == address(0) && on129 && !on1) a = x;
            else if (b == address(0) && on1 && !on129) b = x;
        }
        assertTrue(a != address(0) && b != address(0), "setup: A and B");
        uint256 left = 0;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address x = auditorAddrs[i];
            if (x != a && x != b && left >= 42) continue;
            vm.prank(x);
            registry.deregister();
            if (x != a && x != b) ++left;
        }
        _nextEpoch();
        assertEq(_sortition().liveCountAtExcept(1, block.number / EPOCH_BLOCKS + 1, provider), 16, "16 live");
        assertEq(_eOf(sid, 129, address(0)), 13, "129 unnamed: 16 - 3");
        assertEq(_eOf(sid, 129, b), 13, "B (on 1 only) not proven for 129");
        assertEq(_eOf(sid, 129, a), CHARGED, "A (on 129) proven: 14");
        assertEq(_eOf(sid, 1, a), 13, "A (on 129 only) not proven for 1");
        assertEq(_eOf(sid, 1, b), CHARGED, "B (on 1) proven: 14");
    }
}
