// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";

/// @notice Measurement only: the gas of one `sampleAt` as a function of the exclusion list's length.
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
        }
    }
}
