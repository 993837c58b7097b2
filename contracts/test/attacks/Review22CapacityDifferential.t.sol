// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase} from "../utils/TestBase.sol";
import {AppealMath} from "../../src/libraries/AppealMath.sol";

/// @title Review22CapacityDifferential (outside review 22 of 0f4112d; holds)
/// @notice Property (the brief: "the Python mirror must agree with the Solidity exactly"; docs "Round size"):
/// `AppealMath.cappedCapacity` equals `appeal_admission.capped_capacity` everywhere, and every capped round it
/// admits keeps k seatable auditors on its last segment when floor(E / 2) refuse (the in-order draw's worst
/// case: floor((S - 1) k / seatCap) auditors at the cap, disjoint from the refusers).
/// Check: (1) a checksum of cappedCapacity over E 0..160, k 1..63, seatCap 1..8 (h = h x 1,000,003 + cap + 1
/// mod 2^64, E outermost) equals the constant that tests/consensus/test_review22_capacity_differential.py
/// computes with `capped_capacity` over the same grid (0x7c0c556a18e05328): a drift on either side breaks one
/// of the two tests; (2) fuzz (256 runs): admitted (S k <= capacity, S > seatCap) implies the worst case
/// fills; capacity 0 iff E - E / 2 < k; for seatCap 1 the bound is exactly the worst case (no slack).
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review22CapacityDiff*' -vv`): all pass;
/// the slack for seatCap >= 2 is Review22CapacityFloorSlack.
contract Review22CapacityDifferential is TestBase {
    uint256 internal constant GRID_CHECKSUM = 0x7c0c556a18e05328;

    function test_GridChecksumMatchesPython() public pure {
        uint256 h = 0;
        for (uint256 e = 0; e <= 160; ++e) {
            for (uint256 k = 1; k <= 63; ++k) {
                for (uint256 c = 1; c <= 8; ++c) {
                    h = (h * 1_000_003 + AppealMath.cappedCapacity(e, k, c) + 1) % (1 << 64);
                }
            }
        }
        assertEq(h, GRID_CHECKSUM, "cappedCapacity grid = capped_capacity grid");
    }

    function _worstCaseFills(uint256 e, uint256 k, uint256 c, uint256 s) internal pure returns (bool) {
        uint256 free = e - e / 2;
        return free >= k && (s - 1) * k / c <= free - k;
    }

    function testFuzz_admittedCappedRoundFillsUnlessAMajorityRefuses(
        uint256 e,
        uint256 k,
        uint256 c,
        uint256 s
    ) public pure {
        e = bound(e, 0, 4000);
        k = bound(k, 1, 63);
        c = bound(c, 1, 64);
        s = bound(s, c + 1, c + 600);
        uint256 cap = AppealMath.cappedCapacity(e, k, c);
        assertTrue((cap == 0) == (e - e / 2 < k), "capacity 0 iff E - E / 2 < k");
        if (s * k <= cap) assertTrue(_worstCaseFills(e, k, c, s), "admitted => worst case fills");
        if (c == 1) {
            assertTrue((s * k <= cap) == _worstCaseFills(e, k, c, s), "seat cap 1: bound = worst case");
        }
    }
}
