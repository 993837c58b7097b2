// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @notice Property: a large appeal - 256 segments in one round - is admitted, and its round ended, each in
/// a call within half a block, so that an appeal cannot be made too big to end (gas griefing by size rather
/// than by number of rounds). Admission costs about 38k gas per named segment (an appellant naming more
/// than about 700 segments splits them over several appeals; only its own call would fail); the end of the
/// round writes each named segment's state and recomputes the trace verdict once.
contract AppealReviewLargeAppealFitsInABlockTest is AppealsFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    event log_named_uint(string key, uint256 val);

    uint256 internal constant N = 256;
    uint256 internal constant HALF_BLOCK = 15_000_000;

    /// @dev A seat cap high enough for one round of 256 x 3 seats among 40 auditors (`PanelTooLarge`: at most
    /// members * seatCap / 2 seats in a round of more segments than the cap; 40 * 64 / 2 = 1,280 >= 768).
    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatCap = 64; // SessionStore.MAX_SEAT_CAP
    }

    function setUp() public {
        _deployAppeals();
        _addAuditors(0, 40, STAKE);
        _nextEpoch();
    }

    function test_LargeAppealFitsInABlock() public {
        bytes32[] memory c = new bytes32[](N * 1000 / 10_000);
        for (uint256 i = 0; i < c.length; ++i) {
            c[i] = keccak256(abi.encode("never revealed", i));
        }
        uint256 sid = _open(_uniform(N, 0), 2000e18);
        _commitCanaries(sid, c);
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 0, 0, 0);
        _toAppealWindow(sid);
        uint256[] memory all = new uint256[](N);
        for (uint256 i = 0; i < N; ++i) {
            all[i] = i;
        }
        uint256 g = gasleft();
        _appeal(sid, all);
        uint256 admitted = g - gasleft();
        emit log_named_uint("gas of an appeal naming 256 segments", admitted);
        assertLe(admitted, HALF_BLOCK, "admitted within half a block");
        vm.roll(appeals.sessionAppeals(sid).lastWindowEnd + RANDOMNESS_DELAY + 300); // nobody drew
        g = gasleft();
        appeals.advance(sid);
        uint256 ended = g - gasleft();
        emit log_named_uint("gas of the advance ending it", ended);
        assertLe(ended, HALF_BLOCK, "ended within half a block");
        // A timely seed nobody drew: abandoned (Expired drawn short, outside review 6).
        assertEq(uint8(appeals.roundOf(sid, 1).status), uint8(IAuditSessions.Status.Expired), "abandoned");
        assertTrue(appeals.isOutcomeFinal(sid), "final");
    }
}
