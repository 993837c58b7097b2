// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review13EarlierCountSurvivesPaging (outside review 13 of 47db2d1; holds)
/// @notice Property (`DrawModule._decisiveRefusals`, `_resumeAt`): the earlier-panel members a failing
/// segment excluded are all counted, also those excluded by an earlier call that stopped inside the segment
/// (MAX_REJECTIONS_PER_CALL = 64). A lost count would let a refusal turn a live shortage into REFUSED.
/// Setup: 95 tier-1 auditors of 1,000 TRUST, k_0 = 31 (k_1 = 63, maxRounds 1), seat cap 8, 3 correct PASS
/// segments. One round-0 auditor of segment 0 only and one of segment 1 only leave before the appeal's
/// epoch (93 live); one auditor who sat on segments 0 and 1 but not 2 is busy. The appeal names 0, 1, 2
/// (189 seats; admission 95 - 31 = 64 >= 63). Segments 0 and 1 have 93 - 30 = 63 live eligible: seated
/// whole, every live member sampled, 30 earlier-panel rejections each; segment 2 has 93 - 31 = 62 live
/// eligible, the busy one among them: it fails. One call with maxSeats 1,000 stops after 64 rejections,
/// 4 of them inside segment 2; the next call resumes and fails it.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review13EarlierCount*' -vv`): the first
/// call seats 135 of 189 (126 + 9 of segment 2; 56.8 M gas), the second resumes, seats 52 more and fails
/// segment 2 at 61 of 63 (187 of 189; 25.7 M gas). The draw counts 93 live members and 31 earlier:
/// 93 < 31 + 63, UNFILLABLE, segment 2's PASS stands. Mutation (tried locally, then reverted): `_begin`
/// restoring `w.earlier = 0` instead of `(resumeAt >> 32) & 0xffff` loses the segment's earlier
/// exclusions of the first call and ends it REFUSED (this test fails "UNFILLABLE: 93 live < 31 earlier +
/// 63 seats"); Review11* all pass under that mutation.
contract Review13EarlierCountSurvivesPaging is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    uint256 internal sid;

    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatsPerTier = [uint8(1), uint8(31), uint8(3)];
    }

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams(); // no canaries
        p.maxRounds = 1;
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    function setUp() public {
        sid = _setUpPassedSession(95, 3, FEE);
        address gone0 = address(0);
        address gone1 = address(0);
        address busy = address(0);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address a = auditorAddrs[i];
            bool s0 = _seatedOn(sid, a, 0);
            bool s1 = _seatedOn(sid, a, 1);
            bool s2 = _seatedOn(sid, a, 2);
            if (s2) continue;
            if (s0 && s1) {
                if (busy == address(0)) busy = a;
            } else if (s0) {
                if (gone0 == address(0)) gone0 = a;
            } else if (s1) {
                if (gone1 == address(0)) gone1 = a;
            }
        }
        assertTrue(gone0 != address(0) && gone1 != address(0) && busy != address(0), "setup: roles");
        vm.prank(gone0);
        registry.deregister();
        vm.prank(gone1);
        registry.deregister();
        _nextEpoch();
        _busyElsewhere(busy, 7e18);
    }

    /// @notice Review 13's rule: admission subtracts every earlier-panel seat from the snapshot's live count
    /// (`ISortition.liveCountAt`), so this round is refused up front (62 eligible < 63 seats) and the draw
    /// keeps no earlier-panel count at all (`w.earlier` and its `_resumeAt` bits are gone; paging of the
    /// refusal count stays covered by Review3RefusalCountSurvivesPaging). Was: admitted, stopped inside
    /// segment 2, UNFILLABLE (93 live < 31 earlier + 63 seats).
    function test_EarlierExclusionsCountedAcrossCalls() public {
        uint256[] memory named = new uint256[](3);
        named[1] = 1;
        named[2] = 2;
        vm.expectRevert(
            abi.encodeWithSelector(IAppealModule.NotEnoughEligibleAuditors.selector, sid, 0, 62, 63)
        );
        appeals.quote(sid, named);
    }
}
