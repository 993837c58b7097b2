// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";

/// @title Review12ExclusionCostCurve (outside review 12 of c0fad00; measurement for
/// Review12AdmittedRoundOutgrowsDrawWindow)
/// @notice Property measured: the gas of one `SnapshotSumTree.sampleAt` (through `SortitionTrees.sampleAt`) as a
/// function of the exclusion list's length n, on a tier of 400 members of equal stake.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review12ExclusionCost*' -vv`; in-test
/// `gasleft()` deltas, later calls on warm slots): n = 0: 20,652; 50: 290,576; 100: 829,521; 200: 2,786,883;
/// 392: 9,750,239 gas, i.e. about 63 n^2: `_exclusions`' duplicate scan is quadratic. A draw call samples
/// at least one whole segment, so at n of a few hundred one call exceeds a 30M-gas block.
/// The test fails if one sample with 200 exclusions costs more than 4M gas (a regression that makes it
/// worse); a linear `_exclusions` would bring it far below.
contract Review12ExclusionCostCurve is AppealsFixture {
    event log_named_uint(string key, uint256 val);

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 400, STAKE);
        _nextEpoch();
    }

    function test_SampleCostByExclusions() public {
        uint256 epoch = _sortition().epochOf(block.number);
        uint256[5] memory ns = [uint256(0), 50, 100, 200, 400 - 8];
        for (uint256 k = 0; k < ns.length; ++k) {
            uint256 n = ns[k];
            uint256[] memory ex = new uint256[](n);
            for (uint256 i = 0; i < n; ++i) {
                ex[i] = i;
            }
            uint256 g = gasleft();
            _sortition().sampleAt(1, epoch, 0, ex);
            g -= gasleft();
            emit log_named_uint("exclusions", n);
            emit log_named_uint("  gas of one sampleAt", g);
            if (n == 200) assertTrue(g < 4_000_000, "one sample with 200 exclusions stays below 4M gas");
        }
    }
}
